// SPDX-License-Identifier: MIT
/*  state_restore - putting a key back as the journal's snapshot recorded
    it: its reducer, its value and its own seq (state_apply_raw gives a
    fresh seq; a restored store must answer GET with the seq it had).

    A restore consumes no seq: the store's seq after it is the snapshot's
    (state_restore_seq), not the snapshot's plus one per key put back,
    or the operations journaled after the snapshot would meet other seqs
    than they recorded. And it starts from an empty store, the world's
    protected keys aside: the keys a fresh core writes (the scenario's
    initial state) that the snapshot does not have were deleted before it
    was taken. */
#include <string.h>

#include "state_int.h"

perr_t
state_restore_entry (state_t *self, const char *key, state_reducer_t reducer, uint64_t seq,
                     const void *value, size_t size, char *why, size_t why_size)
{
    assert (self && key && value);
    state_raw_op_t ops [3];
    size_t count = 0;
    //  A key the store already has (the world's, drawn at start) is
    //  replaced whole, whatever its reducer.
    if (zhashx_lookup (self->entries, key))
        ops [count++] = (state_raw_op_t) { .op = STATE_OP_DELETE, .key = key };
    ops [count++] = (state_raw_op_t) { .op = STATE_OP_DECLARE, .key = key, .reducer = reducer };
    ops [count++] = (state_raw_op_t) { .op = STATE_OP_SET, .key = key, .value = value, .size = size };
    //  The key was there under the limits in force (a lowered limit keeps
    //  what is there and refuses only new keys): it comes back whatever
    //  they say now.
    state_limits_t limits = self->limits;
    self->limits.max_keys = self->limits.max_bytes = self->limits.max_value = SIZE_MAX;
    uint64_t seq_before = self->seq;
    perr_t rc = state_apply_raw (self, ops, count, NULL, why, why_size);
    self->seq = seq_before;
    self->limits = limits;
    state_changes_reset (self);
    if (rc)
        return rc;
    entry_t *entry = zhashx_lookup (self->entries, key);
    assert (entry);
    entry->seq = seq;
    return PERR_NONE;
}

void
state_restore_begin (state_t *self)
{
    assert (self);
    uint64_t seq_before = self->seq;
    zlistx_t *keys = zhashx_keys (self->entries);
    assert (keys);
    for (const char *key = zlistx_first (keys); key; key = zlistx_next (keys)) {
        //  The world's own keys (protected: no client deletes them) stay
        //  for a snapshot written without a world.
        if (state_is_protected (self, key))
            continue;
        state_raw_op_t op = { .op = STATE_OP_DELETE, .key = key };
        perr_t rc = state_apply_raw (self, &op, 1, NULL, NULL, 0);
        assert (rc == PERR_NONE);
    }
    zlistx_destroy (&keys);
    self->seq = seq_before;
    state_changes_reset (self);
}

void
state_restore_seq (state_t *self, uint64_t seq)
{
    assert (self);
    if (seq > self->seq)
        self->seq = seq;
}
