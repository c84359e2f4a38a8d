// SPDX-License-Identifier: MIT
/*  core - the broker's state machine: everything a restart must give back,
    and the one function that changes it.

    The core holds the agents' registrations (ids, resume tokens, caps,
    acknowledged and handed-out positions, channel memberships, the
    remembered answers of idempotent requests), the mail, the shared
    state, the world, the workflow with its checkpoints, the limits all of
    these were applied under, and the counters' origin.

    It changes only through core_apply, one operation at a time (op.h).
    An operation's outcome is a function of the core and the operation
    alone: the core has no clock (an operation carries its time), no
    socket, no journal, no notion of who is connected. So the journal can
    hold operations and a replay of them rebuilds the same core byte for
    byte (core_dump), whatever the broker's flags are at the restart: the
    limits an operation was applied under are themselves part of the core,
    changed by an operation (OP_LIMITS) that the edge journals whenever a
    start brings different ones.

    The edge (broker/) decides: it decodes requests, checks rights,
    parks, counts, and turns a request into operations; it journals each
    operation before applying it (call.c) and releases replies and events
    only once the journal's durability point is reached (outbox.c).

    What a caller may read directly: core_agents, core_mailroom,
    core_state, core_world, core_workflow. Writing through them is a bug
    that the replay test (replay equals live) finds.

    Memory: an operation that cannot get memory aborts the process (the
    journal holds every acknowledged change; a restart recovers them).
    What bounds memory are the limits, which the edge checks before it
    applies anything sized by input.
*/
#ifndef PARLEY_CORE_H
#define PARLEY_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include "perr.h"
#include "scenario.h"
#include "agents.h"
#include "mailroom.h"
#include "state.h"
#include "world.h"
#include "workflow_core.h"
#include "limits.h"
#include "op.h"

typedef struct _core_t core_t;

//  No snapshot record the core writes is larger (the journal's record
//  limit; the edge checks they agree).
#define CORE_RECORD_MAX (2u * 1024 * 1024)

//  What a core is built from: the limits, the world (NULL config and no
//  file: a line of 10; `no_world`: none), the scenario (may be NULL; not
//  owned, must outlive the core).
typedef struct {
    core_limits_t limits;
    bool no_world;
    const char *world_file;
    world_config_t world;
    int world_start;                //  world_start_t
    const scenario_t *scenario;
} core_config_t;

//  Builds the world, writes the scenario's initial state and starts its
//  workflow (checkpoint 0): the state a journal's history is applied to.
//  NULL with a sentence in `why`.
core_t *core_new (const core_config_t *config, char *why, size_t why_size);
void core_destroy (core_t **self_p);

agents_t *core_agents (core_t *self);
mailroom_t *core_mailroom (core_t *self);
state_t *core_state (core_t *self);
world_t *core_world (core_t *self);             //  NULL: the scenario has none
workflow_t *core_workflow (core_t *self);       //  NULL: no workflow
const scenario_t *core_scenario (core_t *self);
const core_limits_t *core_limits (core_t *self);
uint64_t core_origin (core_t *self);            //  0: none recorded yet
uint64_t core_ops (core_t *self);               //  operations applied

//  What an operation did, for the reply and the events. Filled by
//  core_apply; `why` holds the error's sentence.
typedef struct {
    perr_t err;
    char why [512];
    bool diverged;                  //  the op's recorded seq is not this core's
    char divergence [256];          //  (a replay's finding; it applied all the same)
    uint64_t state_seq_before;      //  state changes to publish: past this
    //  OP_SEND: seqs (0: refused) into the caller's array, the mailroom
    //  holds the item errors; accepted messages.
    uint64_t *seqs;
    size_t seq_room;
    uint64_t accepted;
    //  OP_WRITE, OP_HANDOVER
    state_result_t written;
    //  OP_MOVE
    world_obs_t obs;
    //  OP_HELLO: the agent was registered by this operation
    agent_t *agent;
    bool created;
    //  OP_HANDOVER, OP_WF_BEGIN, OP_WF_FAIL, OP_RESUME: the workflow moved
    bool workflow_moved;
} core_outcome_t;

//  Applies one operation. Returns its outcome's error (PERR_NONE: it took
//  effect); an operation that fails changed nothing. `outcome` may be
//  NULL (replay).
perr_t core_apply (core_t *self, const op_t *op, core_outcome_t *outcome);

//  ---------------------------------------------------------------------
//  The journal's snapshot (core_snapshot.c): the whole core as records
//  handed to `emit` (0, or -1 to stop), in the compaction child; and back,
//  record by record, into a core just built by core_new.
typedef int (core_record_fn) (const void *payload, size_t size, void *arg);
int core_snapshot_write (core_t *self, core_record_fn *emit, void *arg);

//  True when `payload` (a journal record, or a msgpack value kept in one)
//  is exactly one msgpack value whose declared counts its bytes can hold:
//  only then may msgpack-c's unpacker read it, since that unpacker
//  reserves what a count claims before it reads a byte of it. False with
//  the reason in `why`.
bool core_record_check (const void *payload, size_t size, char *why, size_t why_size);

typedef struct _core_restore_t core_restore_t;
typedef struct {
    bool snapshot;                  //  there was one
    bool origin, limits;            //  it carried them
    uint64_t agents, keys, messages;
    uint64_t failed;                //  keys or messages that did not fit
    char why [256];                 //  the last thing that did not fit
} core_restore_report_t;
core_restore_t *core_restore_new (core_t *core);
//  -1 when the record has the wrong shape (core_restore_why says which).
int core_restore_record (core_restore_t *restore, const void *payload, size_t size);
const char *core_restore_why (core_restore_t *restore);
//  -1 with why when the snapshot was cut short.
int core_restore_end (core_restore_t **restore_p, core_restore_report_t *report,
                      char *why, size_t why_size);

//  The canonical dump: every durable fact of the core, in a fixed order
//  (agents by id, messages by seq, keys by name, ...), as msgpack. Two
//  cores that would behave the same from here on dump the same bytes.
void core_dump (core_t *self, msgpack_packer *pk);

#endif
