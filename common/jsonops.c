// SPDX-License-Identifier: MIT
/*  jsonops - JSON write ops as parley_ops_t. See jsonops.h. */
#include "jsonops.h"

#include <assert.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjs.h"

typedef struct {
    jsonops_kind_t kind;
    const char *key;
    const char *reducer;
} s_op_t;

struct _jsonops_t {
    s_op_t *ops;
    size_t count;
    msgpack_sbuffer *values;        //  one per op (empty when it has none)
};

static const struct {
    const char *name;
    jsonops_kind_t kind;
} s_kinds [] = {
    { "declare", JSONOPS_DECLARE }, { "update", JSONOPS_UPDATE },
    { "set", JSONOPS_SET }, { "clear", JSONOPS_CLEAR }, { "delete", JSONOPS_DELETE },
};

static bool
s_kind (const char *name, jsonops_kind_t *kind)
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
        self->ops = calloc (count, sizeof (s_op_t));
        self->values = calloc (count, sizeof (msgpack_sbuffer));
        if (!self->ops || !self->values) {
            snprintf (why, why_size, "out of memory");
            jsonops_destroy (&self);
            return NULL;
        }
    }
    for (size_t i = 0; i < count; i++) {
        const json_t *item = json_array_get (ops, i);
        s_op_t *op = &self->ops [i];
        msgpack_sbuffer_init (&self->values [i]);
        self->count = i + 1;
        const char *name = json_string_value (json_object_get (item, "op"));
        op->key = json_string_value (json_object_get (item, "key"));
        op->reducer = json_string_value (json_object_get (item, "reducer"));
        const json_t *value = json_object_get (item, "value");
        if (!json_is_object (item) || !s_kind (name, &op->kind)) {
            snprintf (why, why_size, "ops[%zu]: \"op\" must be declare, update, set, clear or "
                      "delete", i);
            jsonops_destroy (&self);
            return NULL;
        }
        bool needs_value = op->kind == JSONOPS_UPDATE || op->kind == JSONOPS_SET;
        if (!op->key || (needs_value && !value) || (op->kind == JSONOPS_DECLARE && !op->reducer)) {
            snprintf (why, why_size, "ops[%zu] (%s) needs a \"key\"%s", i, name,
                      needs_value ? " and a \"value\""
                      : op->kind == JSONOPS_DECLARE ? " and a \"reducer\"" : "");
            jsonops_destroy (&self);
            return NULL;
        }
        if (value) {
            msgpack_packer packer;
            msgpack_packer_init (&packer, &self->values [i], msgpack_sbuffer_write);
            mpjs_pack (&packer, value);
        }
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

size_t
jsonops_count (const jsonops_t *self)
{
    assert (self);
    return self->count;
}

jsonops_kind_t
jsonops_kind (const jsonops_t *self, size_t index)
{
    assert (self && index < self->count);
    return self->ops [index].kind;
}

const char *
jsonops_key (const jsonops_t *self, size_t index)
{
    assert (self && index < self->count);
    return self->ops [index].key;
}

const char *
jsonops_reducer (const jsonops_t *self, size_t index)
{
    assert (self && index < self->count);
    return self->ops [index].reducer;
}

const void *
jsonops_value (const jsonops_t *self, size_t index, size_t *size)
{
    assert (self && index < self->count && size);
    *size = self->values [index].size;
    return *size ? self->values [index].data : NULL;
}

parley_err_t
jsonops_fill (const jsonops_t *self, parley_ops_t *ops)
{
    assert (self && ops);
    parley_err_t rc = PARLEY_OK;
    for (size_t i = 0; i < self->count && rc == PARLEY_OK; i++) {
        const s_op_t *op = &self->ops [i];
        size_t size;
        const void *value = jsonops_value (self, i, &size);
        switch (op->kind) {
            case JSONOPS_DECLARE: rc = parley_ops_declare (ops, op->key, op->reducer); break;
            case JSONOPS_UPDATE:  rc = parley_ops_update (ops, op->key, value, size); break;
            case JSONOPS_SET:     rc = parley_ops_set (ops, op->key, value, size); break;
            case JSONOPS_CLEAR:   rc = parley_ops_clear (ops, op->key); break;
            case JSONOPS_DELETE:  rc = parley_ops_delete (ops, op->key); break;
        }
    }
    return rc;
}
