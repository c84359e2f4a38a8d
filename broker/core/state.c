// SPDX-License-Identifier: MIT
/*  state - the shared-state blackboard: store, atomic batches, sequence.

    Keys live in a zhashx (string keys, borrowed from the entry, so a key is
    stored once). O(1) get and write; snapshots collect and sort the
    matching keys (state_read.c). A sorted tree would make prefix scans
    cheaper, but writes are the hot path and czmq has no ordered map.

    A batch runs in two passes. Pass 1 (parse_ops) checks the shape of every
    op - op name, key, reducer name, value presence, protected prefixes -
    without touching the store. Pass 2 applies the ops in order, writing an
    undo record for each change; the first error rolls every record back in
    reverse order. Undo is cheap: an append is undone by truncation, a
    rebuilt value by swapping the old buffer back, a delete by re-inserting
    the detached entry. Only when every op succeeded does the batch commit:
    seqs are assigned and change records made.
*/
#include "state.h"
#include "state_int.h"
#include <string.h>

static const char *s_op_names [STATE_OP__COUNT] = {
    "declare", "update", "set", "clear", "delete"
};

const char *
state_op_name (state_op_t op)
{
    return (unsigned) op < STATE_OP__COUNT? s_op_names [op]: "?";
}

static bool
s_name_lookup (const char **names, int count, const char *name, size_t len, int *index)
{
    for (int i = 0; i < count; i++)
        if (strlen (names [i]) == len && memcmp (names [i], name, len) == 0) {
            *index = i;
            return true;
        }
    return false;
}

bool
state_op_from_name (const char *name, size_t len, state_op_t *op)
{
    int index;
    if (!name || !s_name_lookup (s_op_names, STATE_OP__COUNT, name, len, &index))
        return false;
    *op = (state_op_t) index;
    return true;
}

// ---------------------------------------------------------------------------

static void
s_entry_free (entry_t **entry_p)
{
    entry_t *entry = *entry_p;
    if (entry) {
        sval_free (&entry->val);
        free (entry->key);
        free (entry);
        *entry_p = NULL;
    }
}

//  The footprint of an entry goes in (add) or out (sub) of the counts;
//  an owned entry's also in owned_bytes, which the client-facing limit
//  leaves out.
static void
s_charge_add (state_t *self, const entry_t *entry, size_t bytes)
{
    self->bytes += bytes;
    if (entry->owned)
        self->owned_bytes += bytes;
}

static void
s_charge_sub (state_t *self, const entry_t *entry, size_t bytes)
{
    self->bytes -= bytes;
    if (entry->owned)
        self->owned_bytes -= bytes;
}

static size_t
s_entry_footprint (const entry_t *entry)
{
    return strlen (entry->key) + sval_footprint (&entry->val);
}

static void
s_changes_reset (state_t *self)
{
    for (size_t i = 0; i < self->change_count; i++)
        free ((char *) self->changes [i].key);
    //  zhashx_purge walks every bucket: only when the hash was used.
    if (self->change_count > STATE_TOUCH_LINEAR)
        zhashx_purge (self->touched);
    self->change_count = 0;
}

state_t *
state_new (const state_limits_t *limits)
{
    state_t *self = (state_t *) zmalloc (sizeof (state_t));
    assert (self);
    const state_limits_t defaults = { 0 };
    state_set_limits (self, limits ? limits : &defaults);
    self->entries = zhashx_new ();
    assert (self->entries);
    zhashx_set_key_duplicator (self->entries, NULL);   //  borrowed entry->key
    zhashx_set_key_destructor (self->entries, NULL);
    self->touched = zhashx_new ();                     //  key -> change index + 1
    assert (self->touched);
    return self;
}

void
state_set_limits (state_t *self, const state_limits_t *limits)
{
    assert (self && limits);
    self->limits = *limits;
    if (!self->limits.max_keys)
        self->limits.max_keys = STATE_DEFAULT_MAX_KEYS;
    if (!self->limits.max_bytes)
        self->limits.max_bytes = STATE_DEFAULT_MAX_BYTES;
    if (!self->limits.max_value || self->limits.max_value > STATE_DEFAULT_MAX_VALUE)
        self->limits.max_value = STATE_DEFAULT_MAX_VALUE;
}

void
state_destroy (state_t **self_p)
{
    assert (self_p);
    state_t *self = *self_p;
    if (!self)
        return;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        s_entry_free (&entry);
    zhashx_destroy (&self->entries);
    s_changes_reset (self);
    zhashx_destroy (&self->touched);
    free (self->changes);
    free (self->undo);
    for (size_t i = 0; i < self->protect_count; i++)
        free (self->protect [i]);
    free (self);
    *self_p = NULL;
}

void
state_protect_prefix (state_t *self, const char *prefix)
{
    assert (self && prefix);
    for (size_t i = 0; i < self->protect_count; i++)
        if (streq (self->protect [i], prefix))
            return;
    assert (self->protect_count < STATE_MAX_PROTECT);
    self->protect_len [self->protect_count] = strlen (prefix);
    self->protect [self->protect_count++] = strdup (prefix);
    //  Keys already there become the broker's too.
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (!entry->owned && state_is_protected (self, entry->key)) {
            size_t bytes = s_entry_footprint (entry);
            entry->owned = true;
            self->owned_bytes += bytes;
            self->owned_keys++;
        }
}

bool
state_is_protected (state_t *self, const char *key)
{
    for (size_t i = 0; i < self->protect_count; i++)
        if (strncmp (key, self->protect [i], self->protect_len [i]) == 0)
            return true;
    return false;
}

// ---------------------------------------------------------------------------
//  Pass 2: apply one op with undo

static int
s_undo_push (state_t *self, undo_kind_t kind, entry_t *entry)
{
    if (self->undo_count == self->undo_cap) {
        size_t cap = self->undo_cap? self->undo_cap * 2: 16;
        undo_t *undo = (undo_t *) realloc (self->undo, cap * sizeof (undo_t));
        if (!undo)
            return -1;
        self->undo = undo;
        self->undo_cap = cap;
    }
    undo_t *rec = &self->undo [self->undo_count++];
    memset (rec, 0, sizeof (*rec));
    rec->kind = kind;
    rec->entry = entry;
    rec->old_size = entry->val.size;
    rec->old_count = entry->val.count;
    return 0;
}

//  The change record index + 1 of `key` in this batch, 0: none yet. A
//  small batch (the usual WRITE of one op) scans its few records; past
//  STATE_TOUCH_LINEAR the touched hash holds them all.
static uintptr_t
s_touched (state_t *self, const char *key)
{
    if (self->change_count > STATE_TOUCH_LINEAR)
        return (uintptr_t) zhashx_lookup (self->touched, key);
    for (size_t i = 0; i < self->change_count; i++)
        if (strcmp (self->changes [i].key, key) == 0)
            return i + 1;
    return 0;
}

//  Remembers the key (first touch) and the op, for the change records.
static int
s_touch (state_t *self, const char *key, state_op_t op, state_reducer_t reducer)
{
    uintptr_t at = s_touched (self, key);
    if (!at) {
        if (self->change_count == self->change_cap) {
            size_t cap = self->change_cap? self->change_cap * 2: 16;
            state_change_t *changes = (state_change_t *)
                realloc (self->changes, cap * sizeof (state_change_t));
            if (!changes)
                return -1;
            self->changes = changes;
            self->change_cap = cap;
        }
        state_change_t *change = &self->changes [self->change_count];
        memset (change, 0, sizeof (*change));
        if (!(change->key = strdup (key)))
            return -1;
        at = ++self->change_count;
        if (self->change_count == STATE_TOUCH_LINEAR + 1)
            for (uintptr_t i = 0; i < STATE_TOUCH_LINEAR; i++)
                zhashx_insert (self->touched, self->changes [i].key, (void *) (i + 1));
        if (self->change_count > STATE_TOUCH_LINEAR)
            zhashx_insert (self->touched, change->key, (void *) at);
    }
    self->changes [at - 1].op = op;
    self->changes [at - 1].reducer = reducer;
    return 0;
}

static perr_t
s_oom (char *why, size_t why_size)
{
    snprintf (why, why_size, "out of memory");
    return PERR_INTERNAL;
}

//  New entry with a value built from `value` (NULL: the empty value).
static perr_t
s_op_create (state_t *self, const iop_t *op, state_reducer_t reducer,
           const msgpack_object *value, char *why, size_t why_size)
{
    bool owned = state_is_protected (self, op->key);
    if (!owned && zhashx_size (self->entries) - self->owned_keys >= self->limits.max_keys) {
        snprintf (why, why_size, "the state holds its maximum of %zu keys",
                  self->limits.max_keys);
        return PERR_STATE_FULL;
    }
    entry_t *entry = (entry_t *) calloc (1, sizeof (entry_t));
    if (!entry || !(entry->key = strdup (op->key))) {
        free (entry);
        return s_oom (why, why_size);
    }
    entry->reducer = reducer;
    entry->owned = owned;
    perr_t rc = sval_build (&entry->val, reducer, value, why, why_size);
    if (!rc && (zhashx_insert (self->entries, entry->key, entry)
                || s_undo_push (self, UNDO_CREATE, entry)))
        rc = s_oom (why, why_size);
    if (rc) {
        zhashx_delete (self->entries, entry->key);
        s_entry_free (&entry);
        return rc;
    }
    s_charge_add (self, entry, s_entry_footprint (entry));
    if (owned)
        self->owned_keys++;
    return PERR_NONE;
}

//  Replaces the entry's value by `fresh`, keeping the old one for undo.
static perr_t
s_op_swap (state_t *self, entry_t *entry, sval_t *fresh, char *why, size_t why_size)
{
    if (s_undo_push (self, UNDO_SWAP, entry)) {
        sval_free (fresh);
        return s_oom (why, why_size);
    }
    undo_t *rec = &self->undo [self->undo_count - 1];
    rec->old_val = entry->val;
    s_charge_sub (self, entry, sval_footprint (&entry->val));
    entry->val = *fresh;
    s_charge_add (self, entry, sval_footprint (&entry->val));
    return PERR_NONE;
}

static perr_t
s_op_update (state_t *self, entry_t *entry, const msgpack_object *value,
           char *why, size_t why_size)
{
    sval_t fresh;
    sval_init (&fresh);
    perr_t rc;
    switch (entry->reducer) {
        case STATE_APPEND:
        case STATE_UNION: {
            size_t before = sval_footprint (&entry->val);
            if (s_undo_push (self, UNDO_EXTEND, entry))
                return s_oom (why, why_size);
            rc = sval_extend (&entry->val, entry->reducer, value, why, why_size);
            if (rc)
                self->undo_count--;         //  unchanged on error
            else
                s_charge_add (self, entry, sval_footprint (&entry->val) - before);
            return rc;
        }
        case STATE_MERGE:
            rc = sval_merge (&entry->val, value, &fresh, why, why_size);
            break;
        case STATE_ADD:
            rc = sval_add (&entry->val, value, &fresh, why, why_size);
            break;
        default:
            rc = sval_build (&fresh, STATE_REPLACE, value, why, why_size);
            break;
    }
    return rc? rc: s_op_swap (self, entry, &fresh, why, why_size);
}

static perr_t
s_op_apply (state_t *self, const iop_t *op, char *why, size_t why_size)
{
    entry_t *entry = (entry_t *) zhashx_lookup (self->entries, op->key);
    sval_t fresh;
    sval_init (&fresh);
    perr_t rc = PERR_NONE;
    if (!entry && (op->op == STATE_OP_CLEAR || op->op == STATE_OP_DELETE)) {
        snprintf (why, why_size, "%s of key '%s', which does not exist",
                  state_op_name (op->op), op->key);
        return PERR_NO_SUCH_KEY;
    }
    switch (op->op) {
        case STATE_OP_DECLARE:
            if (entry && entry->reducer != op->reducer) {
                snprintf (why, why_size, "key '%s' is declared %s, not %s",
                          op->key, state_reducer_name (entry->reducer),
                          state_reducer_name (op->reducer));
                return PERR_REDUCER_CONFLICT;
            }
            if (entry)
                return PERR_NONE;           //  same reducer: a no-op
            rc = s_op_create (self, op, op->reducer, NULL, why, why_size);
            break;
        case STATE_OP_UPDATE:
        case STATE_OP_SET:
            if (!entry)
                rc = s_op_create (self, op, STATE_REPLACE, op->value, why, why_size);
            else
            if (op->op == STATE_OP_UPDATE)
                rc = s_op_update (self, entry, op->value, why, why_size);
            else {
                rc = sval_build (&fresh, entry->reducer, op->value, why, why_size);
                if (!rc)
                    rc = s_op_swap (self, entry, &fresh, why, why_size);
            }
            break;
        case STATE_OP_CLEAR:
            rc = sval_build (&fresh, entry->reducer, NULL, why, why_size);
            if (!rc)
                rc = s_op_swap (self, entry, &fresh, why, why_size);
            break;
        default:                            //  delete
            if (s_undo_push (self, UNDO_DELETE, entry))
                return s_oom (why, why_size);
            zhashx_delete (self->entries, op->key);
            s_charge_sub (self, entry, s_entry_footprint (entry));
            if (entry->owned)
                self->owned_keys--;
            if (s_touch (self, op->key, op->op, entry->reducer))
                return s_oom (why, why_size);
            return PERR_NONE;
    }
    if (rc)
        return rc;
    entry = (entry_t *) zhashx_lookup (self->entries, op->key);
    if (sval_size (&entry->val) > self->limits.max_value) {
        snprintf (why, why_size, "the value of '%s' would be %zu bytes, over the "
                  "limit of %zu", op->key, sval_size (&entry->val), self->limits.max_value);
        return PERR_STATE_FULL;
    }
    //  The broker's own keys (the world) are not held to max_bytes: a
    //  client filling the store must not stop PERCEIVE, ACT or an agent
    //  leaving the world. They are bounded by the world's own limits
    //  (4096 positions, the agent limit) and max_value per key.
    if (!entry->owned && self->bytes - self->owned_bytes > self->limits.max_bytes) {
        snprintf (why, why_size, "the state would hold %zu bytes, over its limit "
                  "of %zu", self->bytes - self->owned_bytes, self->limits.max_bytes);
        return PERR_STATE_FULL;
    }
    if (s_touch (self, op->key, op->op, entry->reducer))
        return s_oom (why, why_size);
    return PERR_NONE;
}

// ---------------------------------------------------------------------------
//  Rollback and commit

static void
s_rollback (state_t *self)
{
    while (self->undo_count) {
        undo_t *rec = &self->undo [--self->undo_count];
        entry_t *entry = rec->entry;
        switch (rec->kind) {
            case UNDO_CREATE:
                zhashx_delete (self->entries, entry->key);
                s_entry_free (&entry);
                break;
            case UNDO_DELETE:
                zhashx_insert (self->entries, entry->key, entry);
                break;
            case UNDO_SWAP:
                sval_free (&entry->val);
                entry->val = rec->old_val;
                break;
            case UNDO_EXTEND:
                sval_truncate (&entry->val, rec->old_size, rec->old_count);
                break;
        }
    }
}

static const unsigned char nil_value [1] = { 0xc0 };

static void
s_commit (state_t *self)
{
    //  JOURNAL HOOK: a write-ahead journal appends the batch here - the
    //  parsed ops, or the change records below - and syncs per its policy
    //  BEFORE the caller replies WRITTEN or publishes. Replaying the ops in
    //  order on an empty store rebuilds it with the same seqs, since
    //  failed batches never reach this point and consume no seq.
    for (size_t i = 0; i < self->undo_count; i++) {
        undo_t *rec = &self->undo [i];
        if (rec->kind == UNDO_SWAP)
            sval_free (&rec->old_val);
        else
        if (rec->kind == UNDO_DELETE)
            s_entry_free (&rec->entry);
    }
    self->undo_count = 0;
    for (size_t i = 0; i < self->change_count; i++) {
        state_change_t *change = &self->changes [i];
        entry_t *entry = (entry_t *) zhashx_lookup (self->entries, change->key);
        change->seq = ++self->seq;
        change->deleted = entry == NULL;
        if (entry) {
            entry->seq = change->seq;
            change->reducer = entry->reducer;
            change->value = sval_bytes (&entry->val);
            change->size = sval_size (&entry->val);
        }
        else {
            change->value = nil_value;
            change->size = sizeof (nil_value);
        }
    }
    self->batches++;
}

perr_t
state_run (state_t *self, const iop_t *ops, size_t count,
           state_result_t *result, char *why, size_t why_size)
{
    perr_t rc = PERR_NONE;
    size_t bytes_before = self->bytes;
    size_t owned_bytes_before = self->owned_bytes, owned_keys_before = self->owned_keys;
    size_t i;
    for (i = 0; i < count && !rc; i++)
        rc = s_op_apply (self, &ops [i], why, why_size);
    if (rc) {
        s_rollback (self);
        s_changes_reset (self);
        self->bytes = bytes_before;
        self->owned_bytes = owned_bytes_before;
        self->owned_keys = owned_keys_before;
        if (result)
            result->failed_op = i - 1;
        self->rejected++;
        if (rc == PERR_STATE_FULL)
            self->rejected_full++;
        //  Prefix the op index to the reason, for the client.
        char reason [256];
        snprintf (reason, sizeof (reason), "%s", why);
        snprintf (why, why_size, "op %zu: %s; nothing was written", i - 1, reason);
    }
    else
        s_commit (self);
    if (result) {
        result->seq = self->seq;
        result->changed = self->change_count;
    }
    return rc;
}

void
state_begin (state_t *self)
{
    s_changes_reset (self);
    self->undo_count = 0;
}

void
state_changes_reset (state_t *self)
{
    assert (self);
    s_changes_reset (self);
}

size_t
state_change_count (state_t *self)
{
    assert (self);
    return self->change_count;
}

const state_change_t *
state_change_at (state_t *self, size_t index)
{
    assert (self);
    return index < self->change_count? &self->changes [index]: NULL;
}

uint64_t
state_seq (state_t *self)
{
    assert (self);
    return self->seq;
}

void
state_stats (state_t *self, state_stats_t *stats)
{
    assert (self && stats);
    stats->keys = zhashx_size (self->entries);
    stats->bytes = self->bytes;
    stats->owned_bytes = self->owned_bytes;
    stats->owned_keys = self->owned_keys;
    stats->seq = self->seq;
    stats->batches = self->batches;
    stats->rejected = self->rejected;
    stats->rejected_full = self->rejected_full;
    stats->limits = self->limits;
}
