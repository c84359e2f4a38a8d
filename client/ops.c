// SPDX-License-Identifier: MIT
/*  ops - parley_ops_t: the ops of one WRITE, STEP or HANDOVER, built by
    the caller (parley/state.h). Keys, reducers and values are copied into
    the builder's arena (ops are few and small, and a caller often builds
    them from short-lived buffers); each value is checked to be exactly
    one msgpack object, since it goes into the frame as it is.
*/
#include <assert.h>
#include <string.h>
#include "arena.h"
#include "mem.h"
#include "ops_int.h"
#include "refusal.h"

typedef enum { S_DECLARE, S_UPDATE, S_SET, S_CLEAR, S_DELETE } s_op_t;

static const char *s_op_names [] = { "declare", "update", "set", "clear", "delete" };

typedef struct {
    s_op_t op;
    size_t key, reducer, value;     //  offsets in the arena
    size_t value_size;
    bool has_reducer;
} s_item_t;

struct _parley_ops_t {
    client_arena_t *arena;
    s_item_t *items;
    size_t count, cap;
    parley_err_t error;         //  the first refusal
    char why [128];
};

parley_ops_t *
parley_ops_new (void)
{
    parley_ops_t *self = (parley_ops_t *) client_mem_zalloc (sizeof (parley_ops_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_ops_destroy (parley_ops_t **self_p)
{
    assert (self_p);
    parley_ops_t *self = *self_p;
    if (self) {
        client_arena_destroy (&self->arena);
        client_mem_free (self->items);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
parley_ops_reset (parley_ops_t *self)
{
    assert (self);
    client_arena_reset (self->arena);
    self->count = 0;
    self->error = PARLEY_OK;
    self->why [0] = 0;
}

static parley_err_t
s_refuse (parley_ops_t *self, parley_err_t code, const char *why)
{
    return client_refusal_set (&self->error, self->why, sizeof self->why, code, "op",
                               self->count, why);
}

//  True if `value` is exactly one msgpack object: anything else would
//  make the whole frame unreadable.
static bool
s_one_object (const void *value, size_t size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    bool ok = msgpack_unpack_next (&unpacked, (const char *) value, size, &offset)
              == MSGPACK_UNPACK_SUCCESS && offset == size;
    msgpack_unpacked_destroy (&unpacked);
    return ok;
}

static parley_err_t
s_add (parley_ops_t *self, s_op_t op, const char *key, const char *reducer, const void *value,
       size_t value_size)
{
    assert (self);
    if (!key)
        return s_refuse (self, PARLEY_ERR_INVALID, "needs a key");
    if ((op == S_UPDATE || op == S_SET) && (!value || value_size == 0))
        return s_refuse (self, PARLEY_ERR_INVALID, "needs a value");
    if (op == S_DECLARE && !reducer)
        return s_refuse (self, PARLEY_ERR_INVALID, "needs a reducer");
    if (value && value_size && !s_one_object (value, value_size))
        return s_refuse (self, PARLEY_ERR_INVALID, "the value is not one msgpack object");
    s_item_t *items = (s_item_t *) client_refusal_room (self->items, &self->cap, self->count,
                                                        sizeof (s_item_t), 8);
    if (!items)
        return s_refuse (self, PARLEY_ERR_NOMEM, "out of memory");
    self->items = items;
    s_item_t item = { .op = op };
    item.key = client_arena_text (self->arena, key, strlen (key));
    if (reducer) {
        item.reducer = client_arena_text (self->arena, reducer, strlen (reducer));
        item.has_reducer = true;
    }
    if (value && value_size) {
        item.value = client_arena_text (self->arena, (const char *) value, value_size);
        item.value_size = value_size;
    }
    if (client_arena_failed (self->arena))
        return s_refuse (self, PARLEY_ERR_NOMEM, "out of memory");
    self->items [self->count++] = item;
    return PARLEY_OK;
}

parley_err_t
parley_ops_declare (parley_ops_t *self, const char *key, const char *reducer)
{
    return s_add (self, S_DECLARE, key, reducer, NULL, 0);
}

parley_err_t
parley_ops_update (parley_ops_t *self, const char *key, const void *value, size_t value_size)
{
    return s_add (self, S_UPDATE, key, NULL, value, value_size);
}

parley_err_t
parley_ops_set (parley_ops_t *self, const char *key, const void *value, size_t value_size)
{
    return s_add (self, S_SET, key, NULL, value, value_size);
}

parley_err_t
parley_ops_clear (parley_ops_t *self, const char *key)
{
    return s_add (self, S_CLEAR, key, NULL, NULL, 0);
}

parley_err_t
parley_ops_delete (parley_ops_t *self, const char *key)
{
    return s_add (self, S_DELETE, key, NULL, NULL, 0);
}

size_t
parley_ops_count (const parley_ops_t *self)
{
    assert (self);
    return self->count;
}

parley_err_t
client_ops_error (const parley_ops_t *self, const char **why)
{
    assert (self);
    if (why)
        *why = self->why;
    return self->error;
}

void
client_ops_encode (const parley_ops_t *self, penc_t *enc)
{
    assert (self && enc);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), self->count);
    for (size_t i = 0; i < self->count; i++) {
        const s_item_t *item = &self->items [i];
        size_t fields = 2 + (item->value_size ? 1 : 0) + (item->has_reducer ? 1 : 0);
        msgpack_pack_map (penc_packer (enc), fields);
        penc_kv_cstr (enc, "op", s_op_names [item->op]);
        penc_kv_cstr (enc, "key", client_arena_at (self->arena, item->key));
        if (item->value_size)
            penc_kv_raw (enc, "value", client_arena_at (self->arena, item->value), item->value_size);
        if (item->has_reducer)
            penc_kv_cstr (enc, "reducer", client_arena_at (self->arena, item->reducer));
    }
}
