// SPDX-License-Identifier: MIT
/*  workflow_core - the workflow's durable part: status, the role holding
    the turn, turns, revisions, the reason, and the checkpoints
    (PROTOCOL.md section 4.1).

    Each change is one state batch with the four workflow keys the
    scenario names (holder, status, revisions, turn), so the blackboard
    mirrors the workflow and only these functions write those keys:
        start      pending, the entry role holds; checkpoint 0
        begin      pending -> in_progress, turn 1 (the entry role's agent came)
        handover   the holder's ops, the revision's clears and the keys
        fail       failed, with the reason (a holder gone, a timeout)
        resume     the state and fields of a checkpoint; later ones dropped
    and each records a checkpoint but resume, which forks at one.

    Which agent acts for the holding role is the edge's business (who is
    connected; broker/turns.c), not the core's: after a restart nobody is
    connected and the role's next agent takes the turn.
*/
#ifndef PARLEY_CORE_WORKFLOW_CORE_H
#define PARLEY_CORE_WORKFLOW_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <msgpack.h>
#include "checkpoint.h"
#include "perr.h"
#include "pmsg.h"
#include "scenario.h"
#include "state.h"

typedef struct _workflow_t workflow_t;

//  A HANDOVER's own ops: one state batch (PROTO_MAX_BATCH) less the four
//  workflow keys and the most clear_on_revision keys a scenario may name.
#define WORKFLOW_MAX_OPS (PROTO_MAX_BATCH - 4 - SCENARIO_MAX_CLEAR)
//  Checkpoints kept by default (--checkpoints).
#define WORKFLOW_DEFAULT_RETAIN 1000
//  The HELLO capability that names an agent's role: "role:critic".
#define WORKFLOW_ROLE_CAP "role:"

//  The scenario must outlive the workflow and have a workflow section.
workflow_t *workflow_new (const scenario_t *scenario, size_t retain);
void workflow_destroy (workflow_t **self_p);

//  The revision and turn limits in force (the core's limits).
void workflow_set_limits (workflow_t *self, uint32_t max_turns, uint32_t max_revisions,
                          size_t retain);

//  The scenario's initial state: declares and values, one batch (any
//  scenario, with or without a workflow).
perr_t workflow_write_initial (state_t *state, const scenario_t *scenario,
                               char *why, size_t why_size);

perr_t workflow_start (workflow_t *self, state_t *state, char *why, size_t why_size);
perr_t workflow_begin (workflow_t *self, state_t *state, char *why, size_t why_size);
//  A HANDOVER's fields from its frame (ops, next, status, reason), checked
//  against the scenario; the turn holder is the edge's check. On error
//  nothing changed; `result` has the batch's seq.
perr_t workflow_handover (workflow_t *self, state_t *state, const pmsg_t *msg,
                          state_result_t *result, char *why, size_t why_size);
perr_t workflow_fail (workflow_t *self, state_t *state, const char *reason,
                      char *why, size_t why_size);
perr_t workflow_resume (workflow_t *self, state_t *state, uint64_t number,
                        char *why, size_t why_size);

//  Reading.
const scenario_t *workflow_scenario (workflow_t *self);
wf_status_t workflow_status (workflow_t *self);
bool workflow_ended (workflow_t *self);
const role_t *workflow_holder (workflow_t *self);      //  NULL once ended
uint64_t workflow_turn (workflow_t *self);
uint64_t workflow_revisions (workflow_t *self);
uint32_t workflow_max_turns (workflow_t *self);
uint32_t workflow_max_revisions (workflow_t *self);
const char *workflow_reason (workflow_t *self);
uint64_t workflow_checkpoint_number (workflow_t *self);
checkpoints_t *workflow_checkpoints (workflow_t *self);
bool workflow_is_key (workflow_t *self, const char *key, size_t len);
//  The role named by an agent's "role:<name>" capability, or NULL.
const char *workflow_role_of_caps (zlistx_t *caps);

//  The journal's snapshot: the fields and every kept checkpoint, as
//  records handed to `emit`; restore takes them back in order.
typedef int (workflow_emit_fn) (msgpack_sbuffer *record, void *arg);
int workflow_snapshot (workflow_t *self, int kind_fields, int kind_key,
                       msgpack_sbuffer *buf, workflow_emit_fn *emit, void *arg);
int workflow_restore_fields (workflow_t *self, const msgpack_object *items, uint32_t count,
                             char *why, size_t why_size);
int workflow_restore_key (workflow_t *self, const msgpack_object *items, uint32_t count,
                          char *why, size_t why_size);
//  After the last restore record: rebuilds what follows from them.
int workflow_restore_end (workflow_t *self, char *why, size_t why_size);
//  Canonical dump: one map.
void workflow_dump (workflow_t *self, msgpack_packer *pk);

#endif
