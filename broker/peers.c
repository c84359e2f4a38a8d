// SPDX-License-Identifier: MIT
/*  peers - connections by descriptor, with their keys. See peers.h.

    A zhashx keyed by the descriptor (as a pointer-sized integer). What is
    slow: nothing per frame but one lookup of the descriptor; a cut walks
    every connection, once per allowlist change.
*/
#include <czmq.h>
#include <sys/socket.h>

#include "peers.h"

struct _peers_t {
    zhashx_t *by_fd;            //  (void *) (fd + 1) -> char * key (owned)
    size_t max;
    uint64_t cut;
};

static void
s_free_key (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static size_t
s_hash (const void *key)
{
    return (size_t) key;
}

static int
s_compare (const void *a, const void *b)
{
    return a < b ? -1 : a > b;
}

static void *
s_dup (const void *key)
{
    return (void *) key;
}

static void
s_forget_key (void **key)
{
    *key = NULL;
}

peers_t *
peers_new (size_t max)
{
    peers_t *self = calloc (1, sizeof (peers_t));
    if (!self)
        return NULL;
    self->max = max;
    self->by_fd = zhashx_new ();
    if (!self->by_fd) {
        free (self);
        return NULL;
    }
    zhashx_set_key_hasher (self->by_fd, s_hash);
    zhashx_set_key_comparator (self->by_fd, s_compare);
    zhashx_set_key_duplicator (self->by_fd, s_dup);
    zhashx_set_key_destructor (self->by_fd, s_forget_key);
    zhashx_set_destructor (self->by_fd, s_free_key);
    return self;
}

void
peers_destroy (peers_t **self_p)
{
    peers_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->by_fd);
        free (self);
        *self_p = NULL;
    }
}

static void *
s_slot (int fd)
{
    return (void *) (intptr_t) (fd + 1);
}

bool
peers_note (peers_t *self, int fd, const char *key)
{
    if (fd < 0 || zhashx_lookup (self->by_fd, s_slot (fd)))
        return true;
    if (self->max && zhashx_size (self->by_fd) >= self->max) {
        self->cut++;
        shutdown (fd, SHUT_RDWR);
        return false;
    }
    char *copy = strdup (key ? key : "");
    if (copy)
        zhashx_insert (self->by_fd, s_slot (fd), copy);
    return true;
}

void
peers_forget (peers_t *self, int fd)
{
    if (fd >= 0)
        zhashx_delete (self->by_fd, s_slot (fd));
}

size_t
peers_size (peers_t *self)
{
    return zhashx_size (self->by_fd);
}

uint64_t
peers_cut_count (peers_t *self)
{
    return self->cut;
}

size_t
peers_cut (peers_t *self, peers_keep_fn *keep, void *arg)
{
    zlistx_t *gone = zlistx_new ();
    if (!gone)
        return 0;
    for (char *key = zhashx_first (self->by_fd); key; key = zhashx_next (self->by_fd))
        if (!keep (key, arg))
            zlistx_add_end (gone, (void *) zhashx_cursor (self->by_fd));
    size_t count = 0;
    for (void *slot = zlistx_first (gone); slot; slot = zlistx_next (gone)) {
        shutdown ((int) ((intptr_t) slot - 1), SHUT_RDWR);
        zhashx_delete (self->by_fd, slot);
        count++;
    }
    zlistx_destroy (&gone);
    self->cut += count;
    return count;
}
