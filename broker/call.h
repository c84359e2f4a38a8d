// SPDX-License-Identifier: MIT
/*  call - execute, then propagate: the one way the edge changes the core.

    A request (or a broker event: a timer's failure of the workflow, an
    agent forgotten) becomes a call: its operations are applied to the
    core one by one (core_apply) and written to the journal together, as
    ONE record, so a crash keeps all of a request's effects or none of
    them. Redis's call() executes a command and then feeds the AOF; here
    the journal's room for the record is reserved first (call_begin), so
    an operation that took effect can always be written: a full disk
    refuses the request before anything changed, with STORAGE.

        call_begin (self, agent_id, req->msg, req->frame, req->frame_size, 0);
        if (!call_reserve (self, req->id)) {     //  STORAGE written
            call_end (self);
            return;
        }
        op_t op = { .kind = OP_WRITE, .u = state_seq (state) };
        core_outcome_t out = { 0 };
        if (call_apply (self, &op, &out) == PERR_NONE)
            ...                                  //  encode the reply
        call_end (self);

    The room is reserved by call_reserve, or by the call's first
    operation: a request that may change nothing (a FETCH with nothing new
    to hand out, a HELLO that refreshes an id) works on a full disk, and
    its operation, when there is one, fails with STORAGE on its own.

    call_apply stamps the operation with the call's time, agent and frame,
    records it, applies it and queues its events (STATE_UPDATEs, the
    world's `explored` and `reset`) in the outbox, where they wait for the
    durability point with the replies. An operation that fails changed
    nothing and is not recorded. During recovery (broker.replaying) the
    same code applies operations and records nothing.

    While the journal is unhealthy (a failed write or sync, until a fresh
    snapshot is safely on disk) nothing that changes the core is accepted:
    the reservation fails with STORAGE; reads go on.
*/
#ifndef PARLEY_BROKER_CALL_H
#define PARLEY_BROKER_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include "core/core.h"

typedef struct _broker_t broker_t;
typedef struct _call_t call_t;

call_t *call_new (void);
void call_destroy (call_t **self_p);

//  Starts a call for `agent` ("" for the broker's own) on behalf of the
//  request being handled (`frame`, `size` and its decoded `msg`; NULL for
//  a broker event). `reserve`: journal bytes to make sure of besides the
//  frame (an idempotent request's remembered answer).
void call_begin (broker_t *self, const char *agent, const pmsg_t *msg, const void *frame,
                 size_t size, size_t reserve);
//  Reserves the record's room now: false, with ERROR STORAGE written for
//  request `id`, when the journal cannot take it (nothing applied yet).
bool call_reserve (broker_t *self, uint64_t id);
//  Applies `op` (its ts, agent and frame are the call's) and records it;
//  PERR_STORAGE when the journal cannot take it.
perr_t call_apply (broker_t *self, op_t *op, core_outcome_t *outcome);
//  True between call_begin and call_end.
bool call_active (broker_t *self);
//  Writes the call's record into the journal (nothing when no operation
//  took effect).
void call_end (broker_t *self);
//  A call of one operation of the broker's own: begin, apply, end. A
//  journal that cannot take it is logged (the caller is a timer).
perr_t call_one (broker_t *self, const char *agent, op_t *op, core_outcome_t *outcome);

#endif
