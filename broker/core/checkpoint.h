// SPDX-License-Identifier: MIT
/*  checkpoint - the workflow's checkpoints: the shared state and the
    workflow fields at every turn boundary, stored as differences.

    checkpoint_record() compares the state with a shadow copy of the last
    checkpoint's state and keeps only the keys whose value or reducer
    changed, and the keys removed. So storage grows with what changed, not
    with turns x state size: the cost is one extra copy of the state (the
    shadow) plus a second one (the base) once the retention bound folds
    old checkpoints away, and a compare of the whole state per turn
    (memcmp of the encoded values; O(k log k) to walk the keys in order).

    The state at checkpoint N is rebuilt as base + the differences of the
    kept checkpoints up to N, so `show N`, `diff N M` and `resume N` cost
    one pass over those differences.

    The broker's world.* keys are not recorded: the world is restored by
    WORLD_RESET, not by a checkpoint.

    Not thread-safe: the broker's loop is the lock.
*/
#ifndef PARLEY_BROKER_CHECKPOINT_H
#define PARLEY_BROKER_CHECKPOINT_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>
#include "state.h"
#include "pmsg.h"

typedef enum {
    WF_PENDING = 0,
    WF_IN_PROGRESS,
    WF_REVISION,
    WF_DONE,
    WF_FAILED,
    WF__COUNT
} wf_status_t;

const char *wf_status_name (wf_status_t status);
bool wf_status_from_name (const char *name, size_t len, wf_status_t *status);

//  The workflow fields kept with each checkpoint.
typedef struct {
    uint64_t turn;
    uint64_t revisions;
    wf_status_t status;
    char holder [PROTO_MAX_NAME + 1];       //  "" for none
    char reason [256];
} checkpoint_meta_t;

//  One key of a rebuilt state (the value is encoded msgpack).
typedef struct {
    state_reducer_t reducer;
    size_t size;
    bool removed;                           //  only in differences
    uint8_t value [];
} checkpoint_value_t;

typedef struct {
    uint64_t number;
    checkpoint_meta_t meta;
    size_t changed;                         //  keys in its difference
    size_t bytes;                           //  key + value bytes stored
} checkpoint_info_t;

typedef struct _checkpoints_t checkpoints_t;

//  Keeps at most `retain` checkpoints (>= 1); older ones are folded into
//  the base.
checkpoints_t *checkpoints_new (size_t retain);
void checkpoints_destroy (checkpoints_t **self_p);

//  Records the state and meta as the next checkpoint; returns its number.
//  -1 on out of memory (nothing recorded).
int64_t checkpoint_record (checkpoints_t *self, state_t *state, const checkpoint_meta_t *meta);

size_t checkpoints_count (checkpoints_t *self);
//  Checkpoints folded away by the retention bound.
uint64_t checkpoints_dropped (checkpoints_t *self);
//  index 0 is the oldest kept.
const checkpoint_info_t *checkpoints_at (checkpoints_t *self, size_t index);
const checkpoint_info_t *checkpoints_find (checkpoints_t *self, uint64_t number);
//  Every kept checkpoint's stored bytes (differences + base).
size_t checkpoints_bytes (checkpoints_t *self);

//  The state at checkpoint `number`: a zhashx of key -> checkpoint_value_t
//  (caller destroys). NULL when the number is not kept.
zhashx_t *checkpoints_state_at (checkpoints_t *self, uint64_t number);

//  What differs from `from` to `to`: key -> checkpoint_value_t, `removed`
//  for keys gone at `to`. NULL when a number is not kept.
zhashx_t *checkpoints_diff (checkpoints_t *self, uint64_t from, uint64_t to);

//  Forks at `number`: later checkpoints are discarded and the next record
//  compares with the state at `number`. -1 when the number is not kept.
int checkpoints_fork (checkpoints_t *self, uint64_t number);

//  The retention bound from now on (older checkpoints fold at the next
//  record).
void checkpoints_set_retain (checkpoints_t *self, size_t retain);

//  Everything kept, for the journal's snapshot and the canonical dump:
//  the base's keys (number UINT64_MAX), then each checkpoint's info and
//  its difference's keys, keys sorted bytewise. `key_fn` gets removed
//  keys with value->removed set.
typedef int (checkpoints_info_fn) (const checkpoint_info_t *info, void *arg);
typedef int (checkpoints_key_fn) (uint64_t number, const char *key,
                                  const checkpoint_value_t *value, void *arg);
int checkpoints_visit (checkpoints_t *self, checkpoints_info_fn *info_fn,
                       checkpoints_key_fn *key_fn, void *arg);
uint64_t checkpoints_next_number (checkpoints_t *self);

//  Restoring what checkpoints_visit gave, in the same order; then
//  checkpoints_restore_end rebuilds the comparison state. -1: out of
//  memory or a key before its checkpoint.
int checkpoints_restore_info (checkpoints_t *self, const checkpoint_info_t *info);
int checkpoints_restore_key (checkpoints_t *self, uint64_t number, const char *key,
                             state_reducer_t reducer, const void *value, size_t size,
                             bool removed);
int checkpoints_restore_end (checkpoints_t *self, uint64_t next_number, uint64_t dropped);

#endif
