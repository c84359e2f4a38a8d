// SPDX-License-Identifier: MIT
/*  connector - the connector interface. See connector.h. */
#include <assert.h>
#include "connector.h"

struct _connector_t {
    char id[CONNECTOR_MAX_ID + 1];
    const connector_ops_t *ops;
    void *impl;
};

connector_t *
connector_new (const char *id, const connector_ops_t *ops, void *impl)
{
    assert (id && ops && ops->observe && ops->render);
    connector_t *self = (connector_t *) zmalloc (sizeof (connector_t));
    snprintf (self->id, sizeof (self->id), "%s", id);
    self->ops = ops;
    self->impl = impl;
    return self;
}

void
connector_destroy (connector_t **self_p)
{
    assert (self_p);
    connector_t *self = *self_p;
    if (self) {
        if (self->ops->destroy)
            self->ops->destroy (self->impl);
        free (self);
        *self_p = NULL;
    }
}

const char *
connector_id (const connector_t *self)
{
    assert (self);
    return self->id;
}

void *
connector_impl (connector_t *self)
{
    assert (self);
    return self->impl;
}

int
connector_capture (connector_t *self, char *err, size_t err_size)
{
    assert (self);
    if (!self->ops->capture)
        return 0;
    return self->ops->capture (self->impl, err, err_size);
}

size_t
connector_observe (connector_t *self, zlistx_t *out)
{
    assert (self);
    assert (out);
    size_t before = zlistx_size (out);
    self->ops->observe (self->impl, self->id, out);
    return zlistx_size (out) - before;
}

char *
connector_render (connector_t *self)
{
    assert (self);
    return self->ops->render (self->impl);
}

zlistx_t *
connector_observation_list (void)
{
    zlistx_t *list = zlistx_new ();
    zlistx_set_destructor (list, observation_destroy_item);
    return list;
}
