// SPDX-License-Identifier: MIT
/*  state_ops - pass 1 of a state batch: turn the WRITE request's write_op
    maps (or the broker's raw ops) into checked iop_t, before anything in
    the store is touched. Shape errors (BAD_FIELD, BAD_REDUCER) are found
    here for the whole batch; semantic ones (conflict, mismatch, full) in
    pass 2 (state.c), which can roll back.
*/
#include "state_int.h"
#include <string.h>

//  Keys are copied NUL-terminated into one arena per batch: the state's
//  scratch for a batch of up to STATE_SCRATCH_OPS ops (a WRITE of one op
//  then allocates nothing here), else buffers of the batch's own.
typedef struct {
    iop_t *ops;
    char *keys;                 //  count * (PROTO_MAX_KEY + 1)
    msgpack_unpacked *raw;      //  state_apply_raw: decoded values
    size_t count;
    bool scratch;               //  ops and keys are the state's
} batch_t;

static void
s_batch_free (batch_t *batch)
{
    if (batch->raw)
        for (size_t i = 0; i < batch->count; i++)
            msgpack_unpacked_destroy (&batch->raw [i]);
    if (!batch->scratch) {
        free (batch->ops);
        free (batch->keys);
    }
    free (batch->raw);
}

static perr_t
s_batch_alloc (state_t *self, batch_t *batch, size_t count, bool raw,
               char *why, size_t why_size)
{
    memset (batch, 0, sizeof (*batch));
    batch->count = count;
    if (count <= STATE_SCRATCH_OPS) {
        batch->scratch = true;
        batch->ops = self->scratch_ops;
        batch->keys = &self->scratch_keys [0][0];
        memset (batch->ops, 0, count * sizeof (iop_t));
    }
    else {
        batch->ops = (iop_t *) calloc (count, sizeof (iop_t));
        batch->keys = (char *) malloc (count * (PROTO_MAX_KEY + 1));
    }
    if (raw) {
        batch->raw = (msgpack_unpacked *) calloc (count, sizeof (msgpack_unpacked));
        for (size_t i = 0; batch->raw && i < count; i++)
            msgpack_unpacked_init (&batch->raw [i]);
    }
    if (batch->ops && batch->keys && (!raw || batch->raw))
        return PERR_NONE;
    snprintf (why, why_size, "out of memory");
    return PERR_INTERNAL;
}

//  1..PROTO_MAX_KEY bytes of valid UTF-8 without NUL.
static bool
s_key_valid (const char *key, size_t len, char *why, size_t why_size)
{
    if (len == 0 || len > PROTO_MAX_KEY) {
        snprintf (why, why_size, "a state key must be 1-%d bytes, got %zu",
                  PROTO_MAX_KEY, len);
        return false;
    }
    const unsigned char *s = (const unsigned char *) key;
    for (size_t i = 0; i < len; ) {
        size_t extra = s [i] < 0x80? 0: (s [i] >> 5) == 6? 1: (s [i] >> 4) == 14? 2:
                       (s [i] >> 3) == 30? 3: 9;
        bool ok = s [i] != 0 && extra != 9;
        for (size_t k = 1; ok && k <= extra; k++)
            ok = i + k < len && (s [i + k] & 0xc0) == 0x80;
        if (!ok) {
            snprintf (why, why_size, "a state key must be UTF-8 without NUL "
                      "(bad byte at offset %zu)", i);
            return false;
        }
        i += extra + 1;
    }
    return true;
}

//  The value field, nil included (nil is a legal replace value), or NULL.
static const msgpack_object *
s_find_value (const msgpack_object *map)
{
    for (uint32_t i = 0; i < map->via.map.size; i++)
        if (pobj_streq (&map->via.map.ptr [i].key, "value"))
            return &map->via.map.ptr [i].val;
    return NULL;
}

static perr_t
s_parse_key (const char *key, size_t len, char *dest, char *why, size_t why_size)
{
    if (!key) {
        snprintf (why, why_size, "field 'key' is missing or not a string");
        return PERR_BAD_FIELD;
    }
    if (!s_key_valid (key, len, why, why_size))
        return PERR_BAD_FIELD;
    memcpy (dest, key, len);
    dest [len] = 0;
    return PERR_NONE;
}

static perr_t
s_parse_one (state_t *self, const msgpack_object *map, iop_t *op, char *key_buf,
           char *why, size_t why_size)
{
    if (map->type != MSGPACK_OBJECT_MAP) {
        snprintf (why, why_size, "a write_op must be a map");
        return PERR_BAD_FIELD;
    }
    size_t len;
    const char *name = pobj_str (map, "op", &len);
    if (!name || !state_op_from_name (name, len, &op->op)) {
        snprintf (why, why_size, "field 'op' must be declare, update, set, clear or delete");
        return PERR_BAD_FIELD;
    }
    const char *key = pobj_str (map, "key", &len);
    perr_t rc = s_parse_key (key, len, key_buf, why, why_size);
    if (rc)
        return rc;
    op->key = key_buf;
    if (state_is_protected (self, op->key)) {
        snprintf (why, why_size, "key '%s' is written by the broker only", op->key);
        return PERR_BAD_FIELD;
    }
    if (op->op == STATE_OP_DECLARE) {
        const char *reducer = pobj_str (map, "reducer", &len);
        if (!reducer) {
            snprintf (why, why_size, "declare needs a string field 'reducer'");
            return PERR_BAD_FIELD;
        }
        if (!state_reducer_from_name (reducer, len, &op->reducer)) {
            snprintf (why, why_size, "unknown reducer '%.*s' (replace, append, union, "
                      "merge or add)", (int) (len > 64? 64: len), reducer);
            return PERR_BAD_REDUCER;
        }
    }
    if (op->op == STATE_OP_UPDATE || op->op == STATE_OP_SET) {
        op->value = s_find_value (map);
        if (!op->value) {
            snprintf (why, why_size, "%s needs a field 'value'", state_op_name (op->op));
            return PERR_BAD_FIELD;
        }
    }
    return PERR_NONE;
}

static perr_t
s_finish (state_t *self, perr_t rc, size_t index, state_result_t *result,
        char *why, size_t why_size)
{
    if (rc) {
        char reason [256];
        snprintf (reason, sizeof (reason), "%s", why);
        snprintf (why, why_size, "op %zu: %s; nothing was written", index, reason);
        self->rejected++;
        if (result) {
            result->seq = self->seq;
            result->changed = 0;
            result->failed_op = index;
        }
    }
    return rc;
}

//  The end of both entry points: pass 2 if pass 1 (rc) went well, else the
//  rejection of the op it stopped at (`parsed` ops were looked at); frees
//  the batch either way.
static perr_t
s_batch_apply (state_t *self, batch_t *batch, perr_t rc, size_t parsed,
             state_result_t *result, char *why, size_t why_size)
{
    if (rc)
        rc = s_finish (self, rc, parsed? parsed - 1: 0, result, why, why_size);
    else
        rc = state_run (self, batch->ops, batch->count, result, why, why_size);
    s_batch_free (batch);
    return rc;
}

perr_t
state_apply (state_t *self, const msgpack_object *ops, state_result_t *result,
             char *why, size_t why_size)
{
    assert (self);
    char local [256];
    if (!why) {
        why = local;
        why_size = sizeof (local);
    }
    state_begin (self);
    if (!ops || ops->type != MSGPACK_OBJECT_ARRAY || ops->via.array.size == 0
    ||  ops->via.array.size > PROTO_MAX_BATCH) {
        snprintf (why, why_size, "field 'ops' must be an array of 1-%d write_ops",
                  PROTO_MAX_BATCH);
        return s_finish (self, PERR_BAD_FIELD, 0, result, why, why_size);
    }
    size_t count = ops->via.array.size;
    batch_t batch;
    perr_t rc = s_batch_alloc (self, &batch, count, false, why, why_size);
    size_t i = 0;
    for (i = 0; i < count && !rc; i++)
        rc = s_parse_one (self, &ops->via.array.ptr [i], &batch.ops [i],
                        batch.keys + i * (PROTO_MAX_KEY + 1), why, why_size);
    return s_batch_apply (self, &batch, rc, i, result, why, why_size);
}

static perr_t
s_parse_raw (const state_raw_op_t *raw, iop_t *op, msgpack_unpacked *decoded,
           char *key_buf, char *why, size_t why_size)
{
    if ((unsigned) raw->op >= STATE_OP__COUNT
    ||  (unsigned) raw->reducer >= STATE_REDUCER__COUNT) {
        snprintf (why, why_size, "bad op or reducer number");
        return PERR_BAD_FIELD;
    }
    op->op = raw->op;
    op->reducer = raw->reducer;
    perr_t rc = s_parse_key (raw->key, raw->key? strlen (raw->key): 0, key_buf,
                           why, why_size);
    if (rc)
        return rc;
    op->key = key_buf;
    if (raw->op == STATE_OP_UPDATE || raw->op == STATE_OP_SET) {
        size_t offset = 0;
        if (!raw->value
        ||  msgpack_unpack_next (decoded, (const char *) raw->value, raw->size, &offset)
                != MSGPACK_UNPACK_SUCCESS
        ||  offset != raw->size) {
            snprintf (why, why_size, "value of '%s' is not one msgpack value", op->key);
            return PERR_BAD_FIELD;
        }
        op->value = &decoded->data;
    }
    return PERR_NONE;
}

perr_t
state_apply_raw (state_t *self, const state_raw_op_t *ops, size_t count,
                 state_result_t *result, char *why, size_t why_size)
{
    assert (self);
    assert (ops || count == 0);
    char local [256];
    if (!why) {
        why = local;
        why_size = sizeof (local);
    }
    state_begin (self);
    if (count == 0 || count > PROTO_MAX_BATCH) {
        snprintf (why, why_size, "a batch must have 1-%d ops", PROTO_MAX_BATCH);
        return s_finish (self, PERR_BAD_FIELD, 0, result, why, why_size);
    }
    batch_t batch;
    perr_t rc = s_batch_alloc (self, &batch, count, true, why, why_size);
    size_t i = 0;
    for (i = 0; i < count && !rc; i++)
        rc = s_parse_raw (&ops [i], &batch.ops [i], &batch.raw [i],
                        batch.keys + i * (PROTO_MAX_KEY + 1), why, why_size);
    return s_batch_apply (self, &batch, rc, i, result, why, why_size);
}
