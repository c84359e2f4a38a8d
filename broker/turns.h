// SPDX-License-Identifier: MIT
/*  turns - the workflow's live side: which connected agent acts for the
    role holding the turn, the turn timeout, a holder going away, and the
    WORKFLOW_EVENTs (PROTOCOL.md section 4.1).

    The workflow itself (status, holder role, turns, revisions,
    checkpoints) is the core's (core/workflow_core.h) and moves only by
    operations: OP_WF_BEGIN when the entry role's first agent says HELLO,
    OP_HANDOVER, OP_WF_FAIL when a holder leaves or times out with no
    replacement, OP_RESUME. Who acts for the role is not durable: after a
    restart nobody is connected, and the role's next agent to say HELLO
    takes the turn.

    One role holds the turn; the broker gives it to one online agent of
    that role (HELLO caps "role:<name>") and publishes WORKFLOW_EVENT on
    "workflow.<event>", which is all a waiting agent listens to. Failure is
    never silent: a holder that leaves or expires with no replacement, or
    one that holds the turn past turn_timeout_ms, ends the workflow
    `failed` with the reason in WORKFLOW_INFO, the event and the log.
*/
#ifndef PARLEY_BROKER_TURNS_H
#define PARLEY_BROKER_TURNS_H

#include <stdbool.h>
#include <stdint.h>
#include <czmq.h>
#include "core/workflow_core.h"

typedef struct _broker_t broker_t;
typedef struct _agent_t agent_t;
typedef struct _turns_t turns_t;

turns_t *turns_new (void);
void turns_destroy (turns_t **self_p);

//  The agent acting for the holding role ("" for none).
const char *turns_agent (broker_t *broker);

//  Session hooks: an agent said HELLO (it may take the turn, or begin the
//  workflow: within the HELLO's call), an agent's connection went away
//  (its turn moves or fails). `event` is "left" or "expired".
void turns_on_hello (broker_t *broker, agent_t *agent);
void turns_on_detach (broker_t *broker, agent_t *agent, const char *event);
//  The turn timeout check, from a loop timer.
int turns_on_timer (zloop_t *loop, int timer_id, void *arg);

//  True (with an ERROR written into the reply) when a WRITE's ops touch a
//  workflow key: only HANDOVER moves the workflow.
bool turns_rejects_write (broker_t *broker, uint64_t id, const msgpack_object *ops);

//  HANDOVER and RESUME, within the request's call: the operation, its
//  events and the next holder's agent; each writes one reply.
void turns_handover (broker_t *broker, const pmsg_t *msg, agent_t *agent, uint64_t id);
void turns_resume (broker_t *broker, uint64_t number, uint64_t id);
//  WORKFLOW_INFO into the reply.
void turns_encode_info (broker_t *broker, uint64_t id);

#endif
