// SPDX-License-Identifier: MIT
/*  state - parley_state_t (GET's and SNAPSHOT's STATE), parley_entry_t (one
    key, of a STATE or a checkpoint) and parley_written_t (WRITE's
    WRITTEN), parley/state.h. Keys, reducers and values are copied into
    the result's arena: a value arrives as a msgpack object inside the
    reply and is packed back to its bytes.
*/
#include <assert.h>
#include <string.h>
#include "mem.h"
#include "state_int.h"

struct _parley_entry_t {
    const client_arena_t *arena;
    size_t key, reducer, value;     //  offsets
    size_t value_size;
    uint64_t seq;
    bool removed;
};

struct _parley_state_t {
    client_arena_t *arena;
    parley_entry_t *entries;
    size_t count, cap;
    uint64_t seq;
    bool more;
};

struct _parley_written_t {
    uint64_t seq;
    uint64_t changed;
};

parley_err_t
client_entries_decode (client_arena_t *arena, const msgpack_object *array,
                       parley_entry_t **entries_p, size_t *cap_p, size_t *count_p)
{
    *count_p = 0;
    size_t n = array && array->type == MSGPACK_OBJECT_ARRAY ? array->via.array.size : 0;
    if (n > *cap_p) {
        parley_entry_t *grown = (parley_entry_t *)
            client_mem_array (*entries_p, n, sizeof (parley_entry_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        *entries_p = grown;
        *cap_p = n;
    }
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *e = &array->via.array.ptr [i];
        parley_entry_t *entry = &(*entries_p) [i];
        *entry = (parley_entry_t) {
            .arena = arena,
            .key = client_arena_str (arena, pobj_get (e, "key")),
            .reducer = client_arena_str (arena, pobj_get (e, "reducer")),
            .seq = pobj_uint (e, "seq", 0),
            .removed = pobj_bool (e, "removed", false)
        };
        const msgpack_object *value = pobj_get (e, "value");
        if (value && !entry->removed)
            entry->value = client_arena_pack (arena, value, &entry->value_size);
    }
    if (client_arena_failed (arena))
        return PARLEY_ERR_NOMEM;
    *count_p = n;
    return PARLEY_OK;
}

const parley_entry_t *
client_entries_at (const parley_entry_t *entries, size_t count, size_t index)
{
    return index < count ? &entries [index] : NULL;
}

//  ---------------------------------------------------------------------

parley_state_t *
client_state_new (void)
{
    parley_state_t *self = (parley_state_t *) client_mem_zalloc (sizeof (parley_state_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_state_destroy (parley_state_t **self_p)
{
    assert (self_p);
    parley_state_t *self = *self_p;
    if (self) {
        client_arena_destroy (&self->arena);
        client_mem_free (self->entries);
        client_mem_free (self);
        *self_p = NULL;
    }
}

parley_err_t
client_state_decode (parley_state_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    client_arena_reset (self->arena);
    self->seq = pmsg_uint (reply, "seq", 0);
    self->more = pmsg_bool (reply, "more", false);
    parley_err_t rc = client_entries_decode (self->arena, pmsg_field (reply, "entries"),
                                             &self->entries, &self->cap, &self->count);
    if (rc != PARLEY_OK)
        self->seq = 0, self->more = false;
    return rc;
}

uint64_t
parley_state_seq (const parley_state_t *self)
{
    assert (self);
    return self->seq;
}

size_t
parley_state_count (const parley_state_t *self)
{
    assert (self);
    return self->count;
}

const parley_entry_t *
parley_state_at (const parley_state_t *self, size_t index)
{
    assert (self);
    return client_entries_at (self->entries, self->count, index);
}

const parley_entry_t *
parley_state_find (const parley_state_t *self, const char *key)
{
    assert (self && key);
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (parley_entry_key (&self->entries [i]), key) == 0)
            return &self->entries [i];
    return NULL;
}

bool
parley_state_more (const parley_state_t *self)
{
    assert (self);
    return self->more;
}

const char *
parley_entry_key (const parley_entry_t *self)
{
    assert (self);
    return client_arena_at (self->arena, self->key);
}

const char *
parley_entry_reducer (const parley_entry_t *self)
{
    assert (self);
    return client_arena_at (self->arena, self->reducer);
}

uint64_t
parley_entry_seq (const parley_entry_t *self)
{
    assert (self);
    return self->seq;
}

const void *
parley_entry_value (const parley_entry_t *self)
{
    assert (self);
    return self->value_size ? client_arena_at (self->arena, self->value) : NULL;
}

size_t
parley_entry_value_size (const parley_entry_t *self)
{
    assert (self);
    return self->value_size;
}

bool
parley_entry_removed (const parley_entry_t *self)
{
    assert (self);
    return self->removed;
}

//  ---------------------------------------------------------------------

parley_written_t *
client_written_new (void)
{
    return (parley_written_t *) client_mem_zalloc (sizeof (parley_written_t));
}

void
parley_written_destroy (parley_written_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

void
client_written_decode (parley_written_t *self, const msgpack_object *map)
{
    assert (self && map);
    self->seq = pobj_uint (map, "seq", 0);
    self->changed = pobj_uint (map, "changed", 0);
}

uint64_t
parley_written_seq (const parley_written_t *self)
{
    assert (self);
    return self->seq;
}

uint64_t
parley_written_changed (const parley_written_t *self)
{
    assert (self);
    return self->changed;
}
