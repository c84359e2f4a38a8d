// SPDX-License-Identifier: MIT
/*  state - the shared-state blackboard.

    A key -> msgpack value store owned by the broker. Each key has a reducer
    that says how an `update` combines with the old value:

        replace  the value replaces the old one          (empty: nil)
        append   array; the elements are appended         (empty: [])
        union    array; elements not present are added   (empty: [])
        merge    map with str keys; keys overwrite        (empty: {})
        add      number; int + int stays int, else float  (empty: 0)

    Ops (PROTOCOL.md WRITE): declare, update, set (overwrite, bypassing the
    reducer), clear (empty value, reducer stays), delete (key and reducer go).
    The seed's append-only lists could never be emptied; `clear` and `set`
    fix that.

    One WRITE is one batch: state_apply() checks every op's shape first,
    then applies them in order with an undo log, and on any error rolls all
    of them back. Either every op takes effect or none does, and a failed
    batch does not bump the sequence.

    Sequence: each key changed by a successful batch gets the next value of
    one global counter (contiguous, from 1), recorded as the key's `seq`. A
    key changed several times in one batch gets one seq and one change
    record carrying its final value. The change records of the LAST batch are
    listed by state_change_count()/state_change_at(); the daemon publishes
    each as STATE_UPDATE on "state.<key>" (state_encode_change() writes the
    fields), so a replica can follow: SNAPSHOT at seq S, then updates > S.

    Values are stored encoded, in canonical msgpack (re-packed by msgpack-c,
    so ints take their smallest form): snapshots and updates copy bytes with
    penc_raw(). Equality for `union` is equality of canonical encodings:
    integers by value, floats by width and bits, maps key order included.

    Limits (state_limits_t, fixed at state_new, 0 = default) are checked
    after every op, so a batch cannot exceed them even transiently; a write
    over a limit fails the batch with STATE_FULL and is counted. max_keys
    and max_bytes are the clients' budget: keys under a protected prefix
    (the broker's world.*) are counted apart and only held to max_value, so
    a client that fills the store cannot make the world's own writes fail.
    Those keys are bounded by what writes them (the world: 4096 positions
    and the agent limit).

    Not thread-safe: the broker's single event loop is the lock.
*/
#ifndef PARLEY_STATE_H
#define PARLEY_STATE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "perr.h"
#include "pmsg.h"
#include "state_reducer.h"

typedef struct _state_t state_t;

typedef enum {
    STATE_OP_DECLARE = 0,
    STATE_OP_UPDATE,
    STATE_OP_SET,
    STATE_OP_CLEAR,
    STATE_OP_DELETE,
    STATE_OP__COUNT
} state_op_t;

//  Wire names: "update", ... (the reducers' are in state_reducer.h)
const char *state_op_name (state_op_t op);
bool state_op_from_name (const char *name, size_t len, state_op_t *op);

//  Defaults used for a 0 field.
#define STATE_DEFAULT_MAX_KEYS   100000
#define STATE_DEFAULT_MAX_BYTES  (256u * 1024 * 1024)
//  A value must fit in one STATE_UPDATE frame with its envelope and key.
#define STATE_DEFAULT_MAX_VALUE  (PROTO_MAX_FRAME - 2048)

typedef struct {
    size_t max_keys;        //  keys in the store, protected ones aside
    size_t max_bytes;       //  protected keys aside: sum of key lengths + encoded value sizes,
                            //  + for union keys the membership set (element
                            //  bytes + SVAL_MEMBER_COST each); other
                            //  allocator overhead and spare capacity are
                            //  not counted (roughly +100 B/key, up to 2x on
                            //  growing append/union lists)
    size_t max_value;       //  one encoded value; never above the default
} state_limits_t;

//  limits may be NULL (all defaults).
state_t *state_new (const state_limits_t *limits);
void state_destroy (state_t **self_p);
//  The limits from now on (OP_LIMITS; 0 fields: the defaults).
void state_set_limits (state_t *self, const state_limits_t *limits);

//  Keys starting with `prefix` become read-only for state_apply() (clients):
//  such ops fail with BAD_FIELD. state_apply_raw() (the broker) may write
//  them. The world protects "world.". At most 8 prefixes; protecting a
//  prefix twice is a no-op.
void state_protect_prefix (state_t *self, const char *prefix);

// ---------------------------------------------------------------------------
//  Writes

typedef struct {
    uint64_t seq;           //  state seq after the batch (unchanged on error)
    size_t changed;         //  keys changed (= state_change_count())
    size_t failed_op;       //  on error: index of the op that failed
} state_result_t;

//  Applies a WRITE: `ops` is the decoded msgpack array of write_op maps
//  (pmsg_field (msg, "ops")). Returns PERR_NONE, or the error with a
//  sentence in `why` naming the op index, and nothing changed:
//    BAD_FIELD         op not a map, unknown op, bad/missing key or value,
//                      empty batch or more than PROTO_MAX_BATCH ops,
//                      protected key
//    BAD_REDUCER       declare with an unknown reducer name
//    REDUCER_CONFLICT  declare of a key declared with another reducer
//    REDUCER_MISMATCH  update/set value of the wrong shape, add overflow
//    NO_SUCH_KEY       clear or delete of a missing key
//    STATE_FULL        a key, byte or value limit would be exceeded
//  result and why may be NULL.
perr_t state_apply (state_t *self, const msgpack_object *ops,
                    state_result_t *result, char *why, size_t why_size);

//  The broker's own writes (the world), same semantics, no protection
//  check. `value` is one encoded msgpack value (NULL/0 for clear, delete
//  and declare). For `declare`, reducer is the one declared; for update and
//  set it is ignored (an undeclared key is declared replace, as on the
//  wire): put a declare op first in the batch to fix the reducer.
typedef struct {
    state_op_t op;
    const char *key;                //  NUL-terminated
    state_reducer_t reducer;
    const void *value;
    size_t size;
} state_raw_op_t;

perr_t state_apply_raw (state_t *self, const state_raw_op_t *ops, size_t count,
                        state_result_t *result, char *why, size_t why_size);

// ---------------------------------------------------------------------------
//  Change records of the last successful batch (state_apply or
//  state_apply_raw; a failed batch leaves none). Valid until the next write.
//  In order of first touch within the batch; seqs are contiguous.

typedef struct {
    const char *key;
    uint64_t seq;
    state_op_t op;                  //  the last op that touched the key
    state_reducer_t reducer;        //  after the batch (of the old key if deleted)
    bool deleted;                   //  key absent after the batch
    const void *value;              //  full new value; "nil" (0xc0) if deleted
    size_t size;
} state_change_t;

size_t state_change_count (state_t *self);
const state_change_t *state_change_at (state_t *self, size_t index);
//  Forgets the change records (a caller that published them, or the world
//  after a call that wrote nothing, so stale records are not republished).
void state_changes_reset (state_t *self);

//  STATE_UPDATE fields, STATE_CHANGE_FIELDS pairs: key, seq, op, reducer,
//  value. Usage:
//      penc_begin (&enc, PMSG_STATE_UPDATE, 0, STATE_CHANGE_FIELDS);
//      state_encode_change (change, &enc);
//  Note: op may be "declare" (a new key declared, value its empty value).
#define STATE_CHANGE_FIELDS 5
void state_encode_change (const state_change_t *change, penc_t *enc);

// ---------------------------------------------------------------------------
//  Reads. Entries are valid until the next write.

typedef struct {
    const char *key;
    state_reducer_t reducer;
    uint64_t seq;                   //  last write to this key
    const void *value;              //  encoded msgpack
    size_t size;
} state_entry_t;

uint64_t state_seq (state_t *self);
bool state_get (state_t *self, const char *key, state_entry_t *entry);

//  Calls fn for every key starting with prefix (len bytes; NULL/0 = all),
//  sorted by key (bytewise). Returns the count. The store is a zhashx (O(1)
//  get/write); a snapshot collects and sorts the matches, O(k log k) - fine
//  as snapshots are rare next to writes.
typedef void (state_visit_fn) (const state_entry_t *entry, void *arg);
size_t state_foreach_prefix (state_t *self, const char *prefix, size_t len,
                             state_visit_fn *fn, void *arg);

//  STATE reply helpers: write ONE value, the `entries` array of state_entry
//  maps (key, reducer, seq, value). Usage:
//      penc_begin (&enc, PMSG_STATE, id, 2);
//      penc_kv_uint (&enc, "seq", state_seq (state));
//      penc_key (&enc, "entries");
//      state_encode_prefix (state, &enc, prefix, len);
//  `keys` for GET is the decoded array of str; missing keys are skipped and
//  non-str elements ignored. Both return the number of entries written.
size_t state_encode_prefix (state_t *self, penc_t *enc, const char *prefix, size_t len);
size_t state_encode_keys (state_t *self, penc_t *enc, const msgpack_object *keys);
void state_encode_entry (const state_entry_t *entry, penc_t *enc);

//  A page of a SNAPSHOT: keys starting with prefix, after after_key (NULL:
//  from the first), at most `limit` entries and `max_bytes` encoded (at
//  least one entry always fits when max_bytes allows the largest value).
//  strict: a client that did not ask for paging must get everything or
//  nothing - then if anything would be left out nothing is written and
//  SIZE_MAX is returned. *more says entries were left out; *need (may be
//  NULL) gets the encoded size of all the matching entries after after_key.
//  Every page collects and sorts the prefix's keys again: O(k log k) per
//  page - fine for occasional snapshots, slow for paging a huge store in
//  tiny pages.
typedef struct {
    const char *prefix;
    size_t prefix_len;
    const char *after_key;          //  NUL-terminated, or NULL
    size_t limit;
    size_t max_bytes;
    bool strict;
} state_page_t;
size_t state_encode_page (state_t *self, penc_t *enc, const state_page_t *page, bool *more,
                          size_t *need);
//  The encoded size (upper bound) of the entries a GET of `keys` returns.
size_t state_keys_cost (state_t *self, const msgpack_object *keys);

typedef struct {
    size_t keys;
    size_t bytes;                   //  every key's footprint
    size_t owned_bytes;             //  of which the broker's own (protected)
                                    //  keys; bytes - owned_bytes is what
                                    //  max_bytes limits
    size_t owned_keys;              //  keys under a protected prefix
    uint64_t seq;
    uint64_t batches;               //  successful batches
    uint64_t rejected;              //  failed batches, any error
    uint64_t rejected_full;         //  of which STATE_FULL (limits)
    state_limits_t limits;          //  effective limits
} state_stats_t;

void state_stats (state_t *self, state_stats_t *stats);

//  The journal's restore (state_restore.c): empties the store (before a
//  snapshot's keys), puts a key back with its reducer, value and seq; and
//  the store's seq (never moved back). None of them consumes a seq.
void state_restore_begin (state_t *self);
perr_t state_restore_entry (state_t *self, const char *key, state_reducer_t reducer, uint64_t seq,
                            const void *value, size_t size, char *why, size_t why_size);
void state_restore_seq (state_t *self, uint64_t seq);

#endif
