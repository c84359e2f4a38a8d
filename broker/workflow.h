// SPDX-License-Identifier: MIT
/*  workflow - turns on the blackboard: who holds the turn, hand-over,
    revisions, limits, checkpoints (PROTOCOL.md section 4.1).

    The broker runs a workflow when its scenario (--scenario) has one. The
    workflow's fields live here and are mirrored in four state keys the
    scenario names (holder, status, revisions, turn), which only the broker
    writes. One role holds the turn; the broker gives it to one online
    agent of that role (HELLO caps "role:<name>") and publishes
    WORKFLOW_EVENT on "workflow.<event>", which is all a waiting agent
    listens to. The holder ends its turn with HANDOVER: its writes, the
    workflow keys and the revision's clears in ONE state batch.

    Failure is never silent: a revision past max_revisions, a turn past
    max_turns, a holder that leaves or expires with no replacement, or one
    that holds the turn past turn_timeout_ms ends the workflow `failed`
    with the reason in WORKFLOW_INFO, the event and the log.

    Checkpoints (checkpoint.h) are recorded at the start, at each turn's
    start and at the end; RESUME forks the run from any of them.
*/
#ifndef PARLEY_BROKER_WORKFLOW_H
#define PARLEY_BROKER_WORKFLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <czmq.h>
#include "core/checkpoint.h"
#include "pmsg.h"
#include "scenario.h"

typedef struct _workflow_t workflow_t;
typedef struct _broker_t broker_t;
typedef struct _agent_t agent_t;

//  A HANDOVER's own ops: one state batch (PROTO_MAX_BATCH) less the four
//  workflow keys and the most clear_on_revision keys a scenario may name.
#define WORKFLOW_MAX_OPS (PROTO_MAX_BATCH - 4 - SCENARIO_MAX_CLEAR)

//  Checkpoints kept by default (--checkpoints).
#define WORKFLOW_DEFAULT_RETAIN 1000

//  The scenario must outlive the workflow and have a workflow section.
workflow_t *workflow_new (const scenario_t *scenario, size_t retain);
void workflow_destroy (workflow_t **self_p);

//  Writes the scenario's initial state and the workflow keys, records
//  checkpoint 0 (status pending). -1 with why on failure.
int workflow_start (broker_t *broker, char *why, size_t why_size);

//  The scenario's initial state: declares and values, one batch (any
//  scenario, with or without a workflow).
int workflow_write_initial (broker_t *broker, const scenario_t *scenario,
                            char *why, size_t why_size);

//  The role an agent plays: its "role:<name>" capability, or NULL.
const char *workflow_agent_role (const agent_t *agent);

//  Session hooks: an agent said HELLO (it may take the turn, or start the
//  workflow), an agent's connection went away (its turn moves or fails).
void workflow_on_hello (broker_t *broker, agent_t *agent);
//  `event` is "left" or "expired".
void workflow_on_detach (broker_t *broker, agent_t *agent, const char *event);
//  The turn timeout check, from a loop timer.
int workflow_on_timer (zloop_t *loop, int timer_id, void *arg);

//  True (with an ERROR written into the reply) when a WRITE's ops touch a
//  workflow key: only HANDOVER moves the workflow.
bool workflow_rejects_write (broker_t *broker, uint64_t id, const msgpack_object *ops);

//  The requests, each writing one reply (handle_<request>.c call these).
void workflow_handover (broker_t *broker, const pmsg_t *msg, agent_t *agent, uint64_t id);
void workflow_encode_info (broker_t *broker, uint64_t id);
void workflow_resume (broker_t *broker, uint64_t number, uint64_t id);
checkpoints_t *workflow_checkpoints (workflow_t *self);

#endif
