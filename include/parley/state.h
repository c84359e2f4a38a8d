// SPDX-License-Identifier: MIT
/*  parley/state.h - the shared state: WRITE, GET, SNAPSHOT, a replica kept
    up to date from events, and msgpack values. Included by
    parley/client.h.

    Values are msgpack bytes: parley_pack_* and parley_value_* cover the
    scalars, any msgpack library does the rest.

        unsigned char value [16];
        size_t size = parley_pack_int (value, sizeof value, 5);
        parley_ops_t *ops = parley_ops_new ();
        parley_ops_declare (ops, "team.count", "add");
        parley_ops_update (ops, "team.count", value, size);
        parley_client_write (client, ops, NULL);
        parley_ops_destroy (&ops);
*/
#ifndef PARLEY_API_STATE_H
#define PARLEY_API_STATE_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

//  ---------------------------------------------------------------------
//  The ops of one WRITE (or STEP, or HANDOVER), built by the caller. Keys,
//  reducers and values are copied: the caller's may go at once. A value
//  must be exactly one msgpack object (PARLEY_ERR_INVALID otherwise: it
//  would make the whole frame unreadable).

parley_ops_t *parley_ops_new (void);
void parley_ops_destroy (parley_ops_t **self_p);
//  Empties the ops (and forgets a refusal), keeping their memory.
void parley_ops_reset (parley_ops_t *self);
//  Declares `key` with a reducer: "replace", "append", "union", "merge", "add".
parley_err_t parley_ops_declare (parley_ops_t *self, const char *key, const char *reducer);
//  Folds `value` into the key by its reducer (an undeclared key is
//  declared "replace").
parley_err_t parley_ops_update (parley_ops_t *self, const char *key, const void *value,
                                size_t value_size);
//  Replaces the key's value, bypassing the reducer.
parley_err_t parley_ops_set (parley_ops_t *self, const char *key, const void *value,
                             size_t value_size);
//  Clears the key to its reducer's empty value; deletes the key.
parley_err_t parley_ops_clear (parley_ops_t *self, const char *key);
parley_err_t parley_ops_delete (parley_ops_t *self, const char *key);
size_t parley_ops_count (const parley_ops_t *self);

//  WRITE: the ops are applied atomically. `result_p` may be NULL.
parley_err_t parley_client_write (parley_client_t *self, const parley_ops_t *ops,
                                  parley_written_t **result_p);
void parley_written_destroy (parley_written_t **self_p);
uint64_t parley_written_seq (const parley_written_t *self);       //  state seq after the write
uint64_t parley_written_changed (const parley_written_t *self);   //  keys changed

//  GET of `count` keys.
parley_err_t parley_client_get (parley_client_t *self, const char *const *keys, size_t count,
                                parley_state_t **result_p);
//  SNAPSHOT: `prefix`, `after_key` may be NULL, `limit` 0 (no paging).
parley_err_t parley_client_snapshot (parley_client_t *self, const char *prefix,
                                     const char *after_key, size_t limit,
                                     parley_state_t **result_p);

//  STATE: entries in key order.
void parley_state_destroy (parley_state_t **self_p);
uint64_t parley_state_seq (const parley_state_t *self);
size_t parley_state_count (const parley_state_t *self);
const parley_entry_t *parley_state_at (const parley_state_t *self, size_t index);
//  The entry of `key`, or NULL.
const parley_entry_t *parley_state_find (const parley_state_t *self, const char *key);
//  A page of SNAPSHOT: ask again after the last key.
bool parley_state_more (const parley_state_t *self);

//  One key (of a STATE, or of a checkpoint: parley/workflow.h).
const char *parley_entry_key (const parley_entry_t *self);
const char *parley_entry_reducer (const parley_entry_t *self);    //  "" when removed
uint64_t parley_entry_seq (const parley_entry_t *self);           //  0 in a checkpoint
//  The value, msgpack; NULL when absent or removed.
const void *parley_entry_value (const parley_entry_t *self);
size_t parley_entry_value_size (const parley_entry_t *self);
//  A checkpoint's entry for a key that does not exist there.
bool parley_entry_removed (const parley_entry_t *self);

//  ---------------------------------------------------------------------
//  State replica: keys under `prefix` ("" for all) kept up to date from
//  a SNAPSHOT and the STATE_UPDATE events after it. A gap in the state
//  seq (an update lost) or a new session takes a fresh snapshot.
parley_err_t parley_client_replica (parley_client_t *self, const char *prefix);
//  The replica's copy of `key`; false if absent. Pointers valid until the
//  next call on the client. Any out-pointer may be NULL.
bool parley_client_replica_get (parley_client_t *self, const char *key,
                                const void **value, size_t *value_size, uint64_t *seq);
size_t parley_client_replica_size (parley_client_t *self);
//  Adds a prefix to the replica (after parley_client_replica; at most
//  PARLEY_REPLICA_PREFIXES in all): its keys are copied (SNAPSHOT with
//  that prefix) and followed too. A replica of several prefixes, like one
//  of a prefix other than "", cannot tell a lost update by a seq gap: a
//  key it missed is current again with its next update (which carries the
//  whole value) or the snapshot a new session takes. So an agent follows
//  just the keys it reads, and only their updates reach it.
#define PARLEY_REPLICA_PREFIXES 8
parley_err_t parley_client_replica_add (parley_client_t *self, const char *prefix);

//  ---------------------------------------------------------------------
//  Scalar msgpack values. Each pack returns the bytes written, 0 if `size`
//  is too small (9 bytes always suffice for numbers, 5 + strlen for
//  strings).
size_t parley_pack_str (void *buf, size_t size, const char *text);
size_t parley_pack_int (void *buf, size_t size, int64_t value);
size_t parley_pack_bool (void *buf, size_t size, bool value);
//  Reads a value packed as a str / an integer; false for other types.
bool parley_value_str (const void *value, size_t size, char *out, size_t out_size);
bool parley_value_int (const void *value, size_t size, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
