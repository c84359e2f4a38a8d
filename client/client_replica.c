// SPDX-License-Identifier: MIT
/*  client_replica - a local copy of the shared state under one prefix
    (or a few: parley_client_replica_add), kept by the Clone pattern
    PROTOCOL.md describes: subscribe to state.<prefix> first, then
    SNAPSHOT (paged), then apply each STATE_UPDATE whose seq is greater
    than that key's.

    Pages of one walk may carry different seqs, so every key keeps its own
    seq. A replica of the whole store ("") decodes each update as it
    comes, to see the gaps; one of a few prefixes (an agent's keys) only
    keeps the newest update frame of each key and decodes it when the key
    is read: an update carries the key's whole value, so the ones in
    between would be decoded for nothing (with ten agents writing, most
    of them). State seqs are contiguous over the whole store, so with the prefix
    "" a jump in the seq of the updates means one was lost (or the
    subscription became live after the snapshot started): the replica
    takes a fresh snapshot at the next wait. With a narrower prefix other
    keys' updates are not seen and no gap can be told; a new session (the
    broker may have restarted) takes a fresh snapshot either way.
*/
#include <assert.h>
#include "client_internal.h"
#include "plog.h"

#define REPLICA_PAGE 1000               //  entries per SNAPSHOT page

static void
s_entry_destroy (void **item_p)
{
    client_replica_entry_t *entry = (client_replica_entry_t *) *item_p;
    if (entry) {
        free (entry->value);
        free (entry);
        *item_p = NULL;
    }
}

static void
s_put (parley_client_t *self, const char *key, uint64_t seq, const void *value, size_t size)
{
    client_replica_entry_t *entry = (client_replica_entry_t *) zhashx_lookup (self->replica, key);
    if (entry && entry->seq >= seq)
        return;                 //  the copy is newer than this
    if (!entry) {
        entry = (client_replica_entry_t *) zmalloc (sizeof (client_replica_entry_t));
        zhashx_insert (self->replica, key, entry);
    }
    free (entry->value);
    entry->value = size? client_alloc (NULL, size): NULL;
    if (size)
        memcpy (entry->value, value, size);
    entry->value_size = size;
    entry->seq = seq;
}

//  Every page of a SNAPSHOT walk of one prefix into the copy.
static parley_err_t
s_snapshot_prefix (parley_client_t *self, const char *prefix, bool set_seq)
{
    char after [PROTO_MAX_KEY + 1] = "";
    bool first = true;
    while (true) {
        parley_state_t page;
        parley_err_t rc = parley_client_snapshot (self, prefix,
                                                  first? NULL: after, REPLICA_PAGE, &page);
        if (rc != PARLEY_OK) {
            self->replica_stale = true;
            return rc;
        }
        if (first && set_seq)
            self->replica_seq = page.seq;
        first = false;
        for (size_t i = 0; i < page.count; i++)
            s_put (self, page.entries [i].key, page.entries [i].seq,
                   page.entries [i].value, page.entries [i].value_size);
        if (!page.more || page.count == 0)
            break;
        snprintf (after, sizeof (after), "%s", page.entries [page.count - 1].key);
    }
    return PARLEY_OK;
}

//  A fresh copy of every prefix. Keys deleted since the last copy
//  disappear because the table starts empty.
static parley_err_t
s_snapshot (parley_client_t *self)
{
    zhashx_purge (self->replica);
    self->replica_stale = false;
    self->replica_epoch = self->epoch;
    for (size_t i = 0; i < self->replica_prefix_count; i++) {
        parley_err_t rc = s_snapshot_prefix (self, self->replica_prefixes [i], i == 0);
        if (rc != PARLEY_OK)
            return rc;
    }
    self->replica_epoch = self->epoch;
    return PARLEY_OK;
}

//  A gap in the seqs tells a lost update only when every update is seen.
static bool
s_sees_all (const parley_client_t *self)
{
    return self->replica_prefix_count == 1 && *self->replica_prefixes [0] == 0;
}

parley_err_t
parley_client_replica (parley_client_t *self, const char *prefix)
{
    assert (self);
    prefix = prefix? prefix: "";
    if (strlen (prefix) > PROTO_MAX_KEY)
        return client_fail (self, PARLEY_ERR_INVALID, "replica prefix longer than %d bytes",
                            PROTO_MAX_KEY);
    if (!self->replica) {
        self->replica = zhashx_new ();
        zhashx_set_destructor (self->replica, s_entry_destroy);
    }
    snprintf (self->replica_prefixes [0], sizeof (self->replica_prefixes [0]), "%s", prefix);
    self->replica_prefix_count = 1;
    self->replica_on = true;
    //  Subscribe before the snapshot, so no update after it is missed.
    if (self->sub) {
        char topic [PROTO_MAX_KEY + 8];
        snprintf (topic, sizeof (topic), "state.%s", prefix);
        zsock_set_subscribe (self->sub, topic);
    }
    parley_err_t rc = client_ensure_session (self);
    if (rc == PARLEY_OK && !self->sub)
        client_open_sub (self);
    return rc == PARLEY_OK? s_snapshot (self): rc;
}

parley_err_t
parley_client_replica_add (parley_client_t *self, const char *prefix)
{
    assert (self);
    prefix = prefix? prefix: "";
    if (!self->replica_on)
        return parley_client_replica (self, prefix);
    if (strlen (prefix) > PROTO_MAX_KEY)
        return client_fail (self, PARLEY_ERR_INVALID, "replica prefix longer than %d bytes",
                            PROTO_MAX_KEY);
    for (size_t i = 0; i < self->replica_prefix_count; i++)
        if (streq (self->replica_prefixes [i], prefix))
            return PARLEY_OK;
    if (self->replica_prefix_count == PARLEY_REPLICA_PREFIXES)
        return client_fail (self, PARLEY_ERR_INVALID, "a replica follows at most %d prefixes",
                            PARLEY_REPLICA_PREFIXES);
    snprintf (self->replica_prefixes [self->replica_prefix_count],
              sizeof (self->replica_prefixes [0]), "%s", prefix);
    self->replica_prefix_count++;
    if (self->sub) {
        char topic [PROTO_MAX_KEY + 8];
        snprintf (topic, sizeof (topic), "state.%s", prefix);
        zsock_set_subscribe (self->sub, topic);
    }
    parley_err_t rc = client_ensure_session (self);
    if (rc == PARLEY_OK && !self->sub)
        client_open_sub (self);
    if (rc == PARLEY_OK)
        rc = s_snapshot_prefix (self, prefix, false);
    if (rc != PARLEY_OK)
        self->replica_stale = true;
    return rc;
}

void
client_replica_apply (parley_client_t *self, const pmsg_t *update)
{
    char key [PROTO_MAX_KEY + 1];
    if (!pmsg_strcpy (update, "key", key, sizeof (key)))
        return;
    uint64_t seq = pmsg_uint (update, "seq", 0);
    if (s_sees_all (self) && seq > self->replica_seq + 1 && !self->replica_stale) {
        plog_info ("state replica missed updates %" PRIu64 "..%" PRIu64 "; taking a snapshot",
                   self->replica_seq + 1, seq - 1);
        self->replica_stale = true;
    }
    if (seq > self->replica_seq)
        self->replica_seq = seq;
    self->stats.state_updates++;
    size_t len = 0;
    const char *op = pmsg_str (update, "op", &len);
    if (op && len == 6 && memcmp (op, "delete", 6) == 0) {
        client_replica_entry_t *entry = (client_replica_entry_t *) zhashx_lookup (self->replica, key);
        if (entry && entry->seq < seq)
            zhashx_delete (self->replica, key);
        return;
    }
    //  The update carries the key's full new value: packed back to bytes.
    const msgpack_object *value = pmsg_field (update, "value");
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    if (value && value->type != MSGPACK_OBJECT_NIL) {
        msgpack_packer pk;
        msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
        msgpack_pack_object (&pk, *value);
    }
    s_put (self, key, seq, buffer.data, buffer.size);
    msgpack_sbuffer_destroy (&buffer);
}

static void
s_frame_destroy (void **item_p)
{
    zframe_destroy ((zframe_t **) item_p);
}

static void
s_apply_frame (parley_client_t *self, zframe_t *frame)
{
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *update = frame? pmsg_decode (zframe_data (frame), zframe_size (frame),
                                         pwire_default_limits (), &code, &id,
                                         why, sizeof (why)): NULL;
    if (update && pmsg_type (update) == PMSG_STATE_UPDATE)
        client_replica_apply (self, update);
    else
        self->stats.bad_frames++;
    pmsg_destroy (&update);
}

void
client_replica_update (parley_client_t *self, const char *key, zframe_t *frame)
{
    if (s_sees_all (self) || !frame || strlen (key) > PROTO_MAX_KEY) {
        s_apply_frame (self, frame);
        return;
    }
    if (!self->replica_held) {
        self->replica_held = zhashx_new ();
        zhashx_set_destructor (self->replica_held, s_frame_destroy);
    }
    //  Frames of one key come in the order they were published: the last
    //  one holds the newest value.
    zhashx_update (self->replica_held, key, zframe_dup (frame));
}

//  The held update of `key` (every key when NULL) applied.
static void
s_apply_held (parley_client_t *self, const char *key)
{
    if (!self->replica_held || zhashx_size (self->replica_held) == 0)
        return;
    if (key) {
        zframe_t *frame = (zframe_t *) zhashx_lookup (self->replica_held, key);
        if (frame) {
            s_apply_frame (self, frame);
            zhashx_delete (self->replica_held, key);
        }
        return;
    }
    for (zframe_t *frame = (zframe_t *) zhashx_first (self->replica_held); frame;
         frame = (zframe_t *) zhashx_next (self->replica_held))
        s_apply_frame (self, frame);
    zhashx_purge (self->replica_held);
}

//  Called from the waits: a fresh snapshot after a gap or a new session.
void
client_replica_refresh (parley_client_t *self)
{
    if (!self->replica_on || self->busy)
        return;
    if (self->replica_stale || (self->session && self->replica_epoch != self->epoch)) {
        self->stats.resnapshots++;
        s_snapshot (self);
    }
}

void
client_replica_destroy (parley_client_t *self)
{
    zhashx_destroy (&self->replica);
    zhashx_destroy (&self->replica_held);
}

bool
parley_client_replica_get (parley_client_t *self, const char *key, const void **value,
                           size_t *value_size, uint64_t *seq)
{
    assert (self && key);
    s_apply_held (self, key);
    client_replica_entry_t *entry = self->replica
        ? (client_replica_entry_t *) zhashx_lookup (self->replica, key): NULL;
    if (!entry)
        return false;
    if (value)
        *value = entry->value;
    if (value_size)
        *value_size = entry->value_size;
    if (seq)
        *seq = entry->seq;
    return true;
}

size_t
parley_client_replica_size (parley_client_t *self)
{
    assert (self);
    s_apply_held (self, NULL);
    return self->replica? zhashx_size (self->replica): 0;
}
