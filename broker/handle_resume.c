// SPDX-License-Identifier: MIT
/*  RESUME -> WORKFLOW_INFO: fork the run from a checkpoint (OP_RESUME). It
    rewrites the shared state and the workflow for every agent, so on a
    CURVE broker it is an operator's request: the admin right, like
    WORLD_RESET (rights.h, docs/SECURITY.md). */
#include "broker_internal.h"

void
handle_resume (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, 0);
    turns_resume (self, pmsg_uint (req->msg, "number", 0), req->id);
    call_end (self);
}
