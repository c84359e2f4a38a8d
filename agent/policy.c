// SPDX-License-Identifier: MIT
/*  policy - the policy interface. See policy.h. */
#include <assert.h>
#include <czmq.h>
#include "policy.h"

struct _policy_t {
    char name[32];
    const policy_ops_t *ops;
    void *impl;
};

policy_t *
policy_new (const char *name, const policy_ops_t *ops, void *impl)
{
    assert (name && ops && ops->decide);
    policy_t *self = (policy_t *) zmalloc (sizeof (policy_t));
    snprintf (self->name, sizeof (self->name), "%s", name);
    self->ops = ops;
    self->impl = impl;
    return self;
}

void
policy_destroy (policy_t **self_p)
{
    assert (self_p);
    policy_t *self = *self_p;
    if (self) {
        if (self->ops->destroy)
            self->ops->destroy (self->impl);
        free (self);
        *self_p = NULL;
    }
}

const char *
policy_name (const policy_t *self)
{
    assert (self);
    return self->name;
}

char *
policy_decide (policy_t *self, const policy_input_t *input, char *err, size_t err_size)
{
    assert (self && input);
    *err = 0;
    return self->ops->decide (self->impl, input, err, err_size);
}

bool
policy_reads_context (const policy_t *self)
{
    return !self || self->ops->reads_context;
}

void *
policy_impl (policy_t *self)
{
    assert (self);
    return self->impl;
}
