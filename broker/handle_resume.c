// SPDX-License-Identifier: MIT
/*  RESUME -> WORKFLOW_INFO: fork the run from a checkpoint
    (workflow_resume.c). It rewrites the shared state and the workflow for
    every agent, so on a CURVE broker it is an operator's request: the
    admin right, like WORLD_RESET (docs/SECURITY.md). */
#include "broker_internal.h"
#include "pcurve.h"

void
handle_resume (broker_t *self, request_t *req)
{
    if (!dispatch_may (self, req, PCURVE_RIGHT_ADMIN, "RESUME"))
        return;
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    workflow_resume (self, pmsg_uint (req->msg, "number", 0), req->id);
}
