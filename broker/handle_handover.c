// SPDX-License-Identifier: MIT
/*  HANDOVER -> WORKFLOW_INFO: the turn holder's writes and the next role
    in one atomic request (OP_HANDOVER; turns.c picks the next agent).
    Its ops are held to WRITE's rights (rights.h). */
#include "broker_internal.h"

//  A HANDOVER with `turn` remembers its WORKFLOW_INFO (a few hundred bytes).
#define S_INFO_RESERVE 4096

void
handle_handover (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow "
                        "(start it with --scenario and a scenario with a workflow section)");
        return;
    }
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, S_INFO_RESERVE);
    turns_handover (self, req->msg, req->agent, req->id);
    call_end (self);
}
