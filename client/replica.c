// SPDX-License-Identifier: MIT
/*  replica - the state replica's copy. See replica.h. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "hash.h"
#include "mem.h"
#include "plog.h"
#include "replica.h"

//  One key (the value owned), or one held update (the event's body).
typedef struct {
    uint64_t seq;
    size_t size;
    char value [];
} s_entry_t;

struct _client_replica_t {
    bool on;
    char prefixes [PARLEY_REPLICA_PREFIXES][PROTO_MAX_KEY + 1];
    size_t prefix_count;
    client_hash_t *keys;        //  key -> s_entry_t
    client_hash_t *held;        //  key -> s_entry_t: its newest update, not yet decoded
    uint64_t seq;               //  highest seq applied (for gaps, prefix "")
    uint64_t epoch;             //  session of the last snapshot
    bool stale;
    uint64_t updates, resnapshots, bad_frames, nomem;
};

static void
s_entry_destroy (void **item_p)
{
    client_mem_free (*item_p);
    *item_p = NULL;
}

static s_entry_t *
s_entry_new (uint64_t seq, const void *value, size_t size)
{
    s_entry_t *entry = (s_entry_t *) client_mem_alloc (sizeof (s_entry_t) + size);
    if (entry) {
        entry->seq = seq;
        entry->size = size;
        if (size)
            memcpy (entry->value, value, size);
    }
    return entry;
}

client_replica_t *
client_replica_new (void)
{
    client_replica_t *self = (client_replica_t *) client_mem_zalloc (sizeof (client_replica_t));
    if (!self)
        return NULL;
    self->keys = client_hash_new (s_entry_destroy);
    self->held = client_hash_new (s_entry_destroy);
    if (!self->keys || !self->held)
        client_replica_destroy (&self);
    return self;
}

void
client_replica_destroy (client_replica_t **self_p)
{
    assert (self_p);
    client_replica_t *self = *self_p;
    if (self) {
        client_hash_destroy (&self->keys);
        client_hash_destroy (&self->held);
        client_mem_free (self);
        *self_p = NULL;
    }
}

bool
client_replica_on (const client_replica_t *self)
{
    assert (self);
    return self->on;
}

parley_err_t
client_replica_follow (client_replica_t *self, const char *prefix, bool first, bool *added,
                       char *why, size_t why_size)
{
    assert (self && prefix && added);
    *added = false;
    if (strlen (prefix) > PROTO_MAX_KEY) {
        snprintf (why, why_size, "replica prefix longer than %d bytes", PROTO_MAX_KEY);
        return PARLEY_ERR_INVALID;
    }
    if (first)
        self->prefix_count = 0;
    for (size_t i = 0; i < self->prefix_count; i++)
        if (strcmp (self->prefixes [i], prefix) == 0)
            return PARLEY_OK;
    if (self->prefix_count == PARLEY_REPLICA_PREFIXES) {
        snprintf (why, why_size, "a replica follows at most %d prefixes", PARLEY_REPLICA_PREFIXES);
        return PARLEY_ERR_INVALID;
    }
    snprintf (self->prefixes [self->prefix_count++], PROTO_MAX_KEY + 1, "%s", prefix);
    self->on = true;
    *added = true;
    return PARLEY_OK;
}

size_t
client_replica_prefix_count (const client_replica_t *self)
{
    assert (self);
    return self->prefix_count;
}

const char *
client_replica_prefix (const client_replica_t *self, size_t index)
{
    assert (self && index < self->prefix_count);
    return self->prefixes [index];
}

void
client_replica_begin (client_replica_t *self, uint64_t epoch, bool refresh)
{
    assert (self);
    //  Keys deleted since the last copy disappear because the table
    //  starts empty.
    client_hash_purge (self->keys);
    self->stale = false;
    self->epoch = epoch;
    if (refresh)
        self->resnapshots++;
}

void
client_replica_copied (client_replica_t *self, uint64_t epoch)
{
    assert (self);
    self->epoch = epoch;
}

parley_err_t
client_replica_put (client_replica_t *self, const char *key, uint64_t seq, const void *value,
                    size_t size)
{
    assert (self && key);
    s_entry_t *entry = (s_entry_t *) client_hash_lookup (self->keys, key);
    if (entry && entry->seq >= seq)
        return PARLEY_OK;       //  the copy is newer than this
    s_entry_t *fresh = s_entry_new (seq, value, size);
    if (!fresh || client_hash_update (self->keys, key, fresh) != 0) {
        client_mem_free (fresh);
        self->nomem++;
        self->stale = true;
        return PARLEY_ERR_NOMEM;
    }
    return PARLEY_OK;
}

void
client_replica_set_seq (client_replica_t *self, uint64_t seq)
{
    assert (self);
    self->seq = seq;
}

bool
client_replica_stale (const client_replica_t *self, uint64_t epoch, bool up)
{
    assert (self);
    return self->on && (self->stale || (up && self->epoch != epoch));
}

void
client_replica_mark_stale (client_replica_t *self)
{
    assert (self);
    self->stale = true;
}

//  A gap in the seqs tells a lost update only when every update is seen.
static bool
s_sees_all (const client_replica_t *self)
{
    return self->prefix_count == 1 && self->prefixes [0][0] == 0;
}

//  A STATE_UPDATE applied to the copy.
static void
s_apply (client_replica_t *self, const void *body, size_t size)
{
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *update = pmsg_decode (body, size, pwire_default_limits (), &code, &id, why, sizeof why);
    char key [PROTO_MAX_KEY + 1];
    if (!update || pmsg_type (update) != PMSG_STATE_UPDATE
    ||  !pmsg_strcpy (update, "key", key, sizeof key)) {
        if (!update && code == PERR_INTERNAL) {
            self->nomem++;
            self->stale = true;
        }
        else
            self->bad_frames++;
        pmsg_destroy (&update);
        return;
    }
    uint64_t seq = pmsg_uint (update, "seq", 0);
    if (s_sees_all (self) && seq > self->seq + 1 && !self->stale) {
        plog_info ("state replica missed updates %" PRIu64 "..%" PRIu64 "; taking a snapshot",
                   self->seq + 1, seq - 1);
        self->stale = true;
    }
    if (seq > self->seq)
        self->seq = seq;
    self->updates++;
    size_t len = 0;
    const char *op = pmsg_str (update, "op", &len);
    if (op && len == 6 && memcmp (op, "delete", 6) == 0) {
        s_entry_t *entry = (s_entry_t *) client_hash_lookup (self->keys, key);
        if (entry && entry->seq < seq)
            client_hash_delete (self->keys, key);
        pmsg_destroy (&update);
        return;
    }
    //  The update carries the key's full new value: packed back to bytes.
    const msgpack_object *value = pmsg_field (update, "value");
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    bool packed = true;
    if (value) {
        msgpack_packer packer;
        msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
        packed = msgpack_pack_object (&packer, *value) == 0;
    }
    if (packed)
        client_replica_put (self, key, seq, buffer.data, buffer.size);
    else {
        self->nomem++;
        self->stale = true;
    }
    msgpack_sbuffer_destroy (&buffer);
    pmsg_destroy (&update);
}

void
client_replica_update (client_replica_t *self, const char *key, const void *body, size_t size)
{
    assert (self && key);
    if (!self->on)
        return;
    if (s_sees_all (self) || strlen (key) > PROTO_MAX_KEY) {
        s_apply (self, body, size);
        return;
    }
    //  Updates of one key come in the order they were published: the last
    //  one holds the newest value.
    s_entry_t *held = s_entry_new (0, body, size);
    if (!held || client_hash_update (self->held, key, held) != 0) {
        client_mem_free (held);
        self->nomem++;
        self->stale = true;
    }
}

static void
s_apply_one (const char *key, void *item, void *arg)
{
    (void) key;
    s_entry_t *held = (s_entry_t *) item;
    s_apply ((client_replica_t *) arg, held->value, held->size);
}

//  The held update of `key` (every key when NULL) applied.
static void
s_apply_held (client_replica_t *self, const char *key)
{
    if (client_hash_size (self->held) == 0)
        return;
    if (key) {
        s_entry_t *held = (s_entry_t *) client_hash_lookup (self->held, key);
        if (held) {
            s_apply (self, held->value, held->size);
            client_hash_delete (self->held, key);
        }
        return;
    }
    client_hash_foreach (self->held, s_apply_one, self);
    client_hash_purge (self->held);
}

bool
client_replica_get (client_replica_t *self, const char *key, const void **value,
                    size_t *value_size, uint64_t *seq)
{
    assert (self && key);
    s_apply_held (self, key);
    s_entry_t *entry = (s_entry_t *) client_hash_lookup (self->keys, key);
    if (!entry)
        return false;
    if (value)
        *value = entry->size ? entry->value : NULL;
    if (value_size)
        *value_size = entry->size;
    if (seq)
        *seq = entry->seq;
    return true;
}

size_t
client_replica_size (client_replica_t *self)
{
    assert (self);
    s_apply_held (self, NULL);
    return client_hash_size (self->keys);
}

uint64_t
client_replica_counter (const client_replica_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_STATE_UPDATES:  return self->updates;
        case PARLEY_COUNTER_RESNAPSHOTS:    return self->resnapshots;
        case PARLEY_COUNTER_BAD_FRAMES:     return self->bad_frames;
        case PARLEY_COUNTER_NOMEM:          return self->nomem;
        default:                            return 0;
    }
}
