// SPDX-License-Identifier: MIT
/*  jsonops - JSON write ops as parley_op_t. See jsonops.h. */
#include "jsonops.h"

#include <assert.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjs.h"

struct _jsonops_t {
    parley_op_t *ops;
    size_t count;
    msgpack_sbuffer *values;        //  one per op (empty when it has none)
};

static const struct {
    const char *name;
    parley_op_kind_t kind;
} s_kinds [] = {
    { "declare", PARLEY_OP_DECLARE }, { "update", PARLEY_OP_UPDATE },
    { "set", PARLEY_OP_SET }, { "clear", PARLEY_OP_CLEAR }, { "delete", PARLEY_OP_DELETE },
};

static bool
s_kind (const char *name, parley_op_kind_t *kind)
{
    for (size_t i = 0; name && i < sizeof s_kinds / sizeof s_kinds [0]; i++)
        if (strcmp (name, s_kinds [i].name) == 0) {
            *kind = s_kinds [i].kind;
            return true;
        }
    return false;
}

jsonops_t *
jsonops_new (const json_t *ops, char *why, size_t why_size)
{
    if (ops && !json_is_array (ops)) {
        snprintf (why, why_size, "the ops are not an array");
        return NULL;
    }
    jsonops_t *self = calloc (1, sizeof (jsonops_t));
    size_t count = ops ? json_array_size (ops) : 0;
    if (!self)
        return NULL;
    if (count) {
        self->ops = calloc (count, sizeof (parley_op_t));
        self->values = calloc (count, sizeof (msgpack_sbuffer));
        if (!self->ops || !self->values) {
            snprintf (why, why_size, "out of memory");
            jsonops_destroy (&self);
            return NULL;
        }
    }
    for (size_t i = 0; i < count; i++) {
        const json_t *item = json_array_get (ops, i);
        parley_op_t *op = &self->ops [i];
        msgpack_sbuffer_init (&self->values [i]);
        self->count = i + 1;
        const char *name = json_string_value (json_object_get (item, "op"));
        op->key = json_string_value (json_object_get (item, "key"));
        op->reducer = json_string_value (json_object_get (item, "reducer"));
        const json_t *value = json_object_get (item, "value");
        if (!json_is_object (item) || !s_kind (name, &op->op)) {
            snprintf (why, why_size, "ops[%zu]: \"op\" must be declare, update, set, clear or "
                      "delete", i);
            jsonops_destroy (&self);
            return NULL;
        }
        bool needs_value = op->op == PARLEY_OP_UPDATE || op->op == PARLEY_OP_SET;
        if (!op->key || (needs_value && !value) || (op->op == PARLEY_OP_DECLARE && !op->reducer)) {
            snprintf (why, why_size, "ops[%zu] (%s) needs a \"key\"%s", i, name,
                      needs_value ? " and a \"value\""
                      : op->op == PARLEY_OP_DECLARE ? " and a \"reducer\"" : "");
            jsonops_destroy (&self);
            return NULL;
        }
        if (value) {
            msgpack_packer packer;
            msgpack_packer_init (&packer, &self->values [i], msgpack_sbuffer_write);
            mpjs_pack (&packer, value);
        }
    }
    //  Pointers last: the buffers no longer move.
    for (size_t i = 0; i < count; i++) {
        self->ops [i].value = self->values [i].size ? self->values [i].data : NULL;
        self->ops [i].value_size = self->values [i].size;
    }
    return self;
}

void
jsonops_destroy (jsonops_t **self_p)
{
    assert (self_p);
    jsonops_t *self = *self_p;
    if (self) {
        for (size_t i = 0; self->values && i < self->count; i++)
            msgpack_sbuffer_destroy (&self->values [i]);
        free (self->values);
        free (self->ops);
        free (self);
        *self_p = NULL;
    }
}

const parley_op_t *
jsonops_ops (const jsonops_t *self)
{
    assert (self);
    return self->count ? self->ops : NULL;
}

size_t
jsonops_count (const jsonops_t *self)
{
    assert (self);
    return self->count;
}
