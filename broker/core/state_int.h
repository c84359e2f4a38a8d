// SPDX-License-Identifier: MIT
/*  state_int - the state_t internals shared by state.c (store, batches),
    state_ops.c (parsing WRITE ops) and state_read.c (GET, SNAPSHOT).
    Not for use outside those files.
*/
#ifndef PARLEY_STATE_INT_H
#define PARLEY_STATE_INT_H

#include <czmq.h>
#include "reducer.h"
#include "state.h"

#define STATE_MAX_PROTECT 8
//  Batches of up to this many ops parse into the state's own scratch
//  (state_ops.c) instead of buffers allocated per WRITE.
#define STATE_SCRATCH_OPS 16
//  Up to this many changed keys in a batch are found by a linear scan of
//  the change records; the touched hash is filled only above it.
#define STATE_TOUCH_LINEAR 16

typedef struct {
    char *key;                  //  also the zhashx key (borrowed)
    state_reducer_t reducer;
    uint64_t seq;
    sval_t val;
    bool owned;                 //  under a protected prefix: the broker's
                                //  key, outside the client-facing limits
} entry_t;

typedef enum { UNDO_CREATE, UNDO_DELETE, UNDO_SWAP, UNDO_EXTEND } undo_kind_t;

typedef struct {
    undo_kind_t kind;
    entry_t *entry;
    sval_t old_val;             //  UNDO_SWAP: the value before
    size_t old_size;            //  UNDO_EXTEND: buffer size and count before
    uint32_t old_count;
} undo_t;

//  One parsed op (pass 1 output). key is NUL-terminated.
typedef struct {
    state_op_t op;
    const char *key;
    state_reducer_t reducer;    //  declare only
    const msgpack_object *value;        //  update and set
} iop_t;

struct _state_t {
    state_limits_t limits;
    zhashx_t *entries;          //  key -> entry_t
    size_t bytes;               //  every key, as counted for max_bytes
    size_t owned_bytes;         //  of which owned (protected) keys
    size_t owned_keys;          //  owned keys in entries
    uint64_t seq;
    uint64_t batches;
    uint64_t rejected;
    uint64_t rejected_full;
    //  This batch
    undo_t *undo;
    size_t undo_count, undo_cap;
    state_change_t *changes;    //  keys owned (strdup)
    size_t change_count, change_cap;
    zhashx_t *touched;          //  key -> index + 1 in changes, past STATE_TOUCH_LINEAR
    char *protect [STATE_MAX_PROTECT];
    size_t protect_len [STATE_MAX_PROTECT];
    size_t protect_count;
    //  Pass 1's scratch for small batches: no allocation per WRITE.
    iop_t scratch_ops [STATE_SCRATCH_OPS];
    char scratch_keys [STATE_SCRATCH_OPS][PROTO_MAX_KEY + 1];
};

//  Starts a batch: forgets the last batch's change records.
void state_begin (state_t *self);
//  Pass 2 and commit/rollback, counting stats. `why` must not be NULL.
perr_t state_run (state_t *self, const iop_t *ops, size_t count,
                  state_result_t *result, char *why, size_t why_size);
bool state_is_protected (state_t *self, const char *key);

#endif
