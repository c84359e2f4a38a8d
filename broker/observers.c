// SPDX-License-Identifier: MIT
/*  observers - connections that said HELLO observe; see observers.h.

    A small table: serial -> descriptor. Closing connections are looked
    up by descriptor with a scan, which is O(observers) per close; there
    are few observers and closes are rare next to requests.
*/
#include <assert.h>
#include <czmq.h>
#include "observers.h"

struct _observers_t {
    zhashx_t *by_serial;        //  "serial" -> fd + 2 (never NULL, even for fd -1)
};

observers_t *
observers_new (void)
{
    observers_t *self = (observers_t *) zmalloc (sizeof (observers_t));
    self->by_serial = zhashx_new ();
    assert (self->by_serial);
    return self;
}

void
observers_destroy (observers_t **self_p)
{
    assert (self_p);
    observers_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->by_serial);
        free (self);
        *self_p = NULL;
    }
}

bool
observers_add (observers_t *self, uint64_t serial, int fd)
{
    assert (self);
    char key [24];
    snprintf (key, sizeof key, "%" PRIu64, serial);
    if (!zhashx_lookup (self->by_serial, key) && zhashx_size (self->by_serial) >= OBSERVERS_MAX)
        return false;
    zhashx_update (self->by_serial, key, (void *) (intptr_t) (fd + 2));
    return true;
}

bool
observers_has (observers_t *self, uint64_t serial)
{
    assert (self);
    char key [24];
    snprintf (key, sizeof key, "%" PRIu64, serial);
    return zhashx_lookup (self->by_serial, key) != NULL;
}

void
observers_drop_fd (observers_t *self, int fd)
{
    assert (self);
    if (fd < 0)
        return;
    zlistx_t *keys = zhashx_keys (self->by_serial);
    for (const char *key = (const char *) zlistx_first (keys); key;
         key = (const char *) zlistx_next (keys))
        if ((intptr_t) zhashx_lookup (self->by_serial, key) == fd + 2)
            zhashx_delete (self->by_serial, key);
    zlistx_destroy (&keys);
}

size_t
observers_size (observers_t *self)
{
    assert (self);
    return zhashx_size (self->by_serial);
}
