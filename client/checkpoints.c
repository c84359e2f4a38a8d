// SPDX-License-Identifier: MIT
/*  checkpoints - parley_checkpoint_t (one checkpoint's workflow fields),
    parley_checkpoint_list_t (CHECKPOINTS) and parley_checkpoint_state_t
    (CHECKPOINT, whole or as a diff), parley/workflow.h. A checkpoint's
    entries are STATE's parley_entry_t, with `removed`.
*/
#include <assert.h>
#include <string.h>
#include "arena.h"
#include "checkpoints_int.h"
#include "mem.h"
#include "state_int.h"
#include "workflow_int.h"

struct _parley_checkpoint_t {
    uint64_t number, turn, revisions, changed, bytes;
    parley_wf_status_t status;
    char status_name [PARLEY_NAME_MAX + 1];
    char holder [PARLEY_NAME_MAX + 1];
};

struct _parley_checkpoint_list_t {
    parley_checkpoint_t *items;
    size_t count, cap;
    uint64_t dropped;
};

struct _parley_checkpoint_state_t {
    client_arena_t *arena;
    uint64_t number, since;
    bool has_since;
    parley_checkpoint_t info;
    parley_entry_t *entries;
    size_t count, cap;
};

static void
s_checkpoint (parley_checkpoint_t *self, const msgpack_object *map)
{
    memset (self, 0, sizeof (*self));
    if (!map)
        return;
    self->number = pobj_uint (map, "number", 0);
    self->turn = pobj_uint (map, "turn", 0);
    self->status = client_wf_status_of (map, self->status_name, sizeof self->status_name);
    if (!pobj_strcpy (map, "holder", self->holder, sizeof self->holder))
        self->holder [0] = 0;
    self->revisions = pobj_uint (map, "revisions", 0);
    self->changed = pobj_uint (map, "changed", 0);
    self->bytes = pobj_uint (map, "bytes", 0);
}

#define S_FIELD(type, field) \
    type parley_checkpoint_##field (const parley_checkpoint_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (uint64_t, number)
S_FIELD (uint64_t, turn)
S_FIELD (parley_wf_status_t, status)
S_FIELD (uint64_t, revisions)
S_FIELD (uint64_t, changed)
S_FIELD (uint64_t, bytes)
#undef S_FIELD

const char *
parley_checkpoint_status_name (const parley_checkpoint_t *self)
{
    assert (self);
    return self->status_name;
}

const char *
parley_checkpoint_holder (const parley_checkpoint_t *self)
{
    assert (self);
    return self->holder;
}

//  ---------------------------------------------------------------------

parley_checkpoint_list_t *
client_checkpoint_list_new (void)
{
    return (parley_checkpoint_list_t *) client_mem_zalloc (sizeof (parley_checkpoint_list_t));
}

void
parley_checkpoint_list_destroy (parley_checkpoint_list_t **self_p)
{
    assert (self_p);
    parley_checkpoint_list_t *self = *self_p;
    if (self) {
        client_mem_free (self->items);
        client_mem_free (self);
        *self_p = NULL;
    }
}

parley_err_t
client_checkpoint_list_decode (parley_checkpoint_list_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    self->count = 0;
    self->dropped = 0;
    const msgpack_object *all = pmsg_field (reply, "checkpoints");
    size_t n = all && all->type == MSGPACK_OBJECT_ARRAY ? all->via.array.size : 0;
    if (n > self->cap) {
        parley_checkpoint_t *grown = (parley_checkpoint_t *)
            client_mem_array (self->items, n, sizeof (parley_checkpoint_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->items = grown;
        self->cap = n;
    }
    for (size_t i = 0; i < n; i++)
        s_checkpoint (&self->items [i], &all->via.array.ptr [i]);
    self->count = n;
    self->dropped = pmsg_uint (reply, "dropped", 0);
    return PARLEY_OK;
}

size_t
parley_checkpoint_list_count (const parley_checkpoint_list_t *self)
{
    assert (self);
    return self->count;
}

const parley_checkpoint_t *
parley_checkpoint_list_at (const parley_checkpoint_list_t *self, size_t index)
{
    assert (self);
    return index < self->count ? &self->items [index] : NULL;
}

uint64_t
parley_checkpoint_list_dropped (const parley_checkpoint_list_t *self)
{
    assert (self);
    return self->dropped;
}

//  ---------------------------------------------------------------------

parley_checkpoint_state_t *
client_checkpoint_state_new (void)
{
    parley_checkpoint_state_t *self = (parley_checkpoint_state_t *)
        client_mem_zalloc (sizeof (parley_checkpoint_state_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_checkpoint_state_destroy (parley_checkpoint_state_t **self_p)
{
    assert (self_p);
    parley_checkpoint_state_t *self = *self_p;
    if (self) {
        client_arena_destroy (&self->arena);
        client_mem_free (self->entries);
        client_mem_free (self);
        *self_p = NULL;
    }
}

parley_err_t
client_checkpoint_state_decode (parley_checkpoint_state_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    client_arena_reset (self->arena);
    self->number = pmsg_uint (reply, "number", 0);
    self->has_since = pmsg_field (reply, "since") != NULL;
    self->since = pmsg_uint (reply, "since", 0);
    s_checkpoint (&self->info, pmsg_field (reply, "info"));
    parley_err_t rc = client_entries_decode (self->arena, pmsg_field (reply, "entries"),
                                             &self->entries, &self->cap, &self->count);
    if (rc != PARLEY_OK) {
        self->number = self->since = 0;
        self->has_since = false;
        s_checkpoint (&self->info, NULL);
    }
    return rc;
}

uint64_t
parley_checkpoint_state_number (const parley_checkpoint_state_t *self)
{
    assert (self);
    return self->number;
}

bool
parley_checkpoint_state_has_since (const parley_checkpoint_state_t *self)
{
    assert (self);
    return self->has_since;
}

uint64_t
parley_checkpoint_state_since (const parley_checkpoint_state_t *self)
{
    assert (self);
    return self->since;
}

const parley_checkpoint_t *
parley_checkpoint_state_info (const parley_checkpoint_state_t *self)
{
    assert (self);
    return &self->info;
}

size_t
parley_checkpoint_state_count (const parley_checkpoint_state_t *self)
{
    assert (self);
    return self->count;
}

const parley_entry_t *
parley_checkpoint_state_at (const parley_checkpoint_state_t *self, size_t index)
{
    assert (self);
    return client_entries_at (self->entries, self->count, index);
}
