// SPDX-License-Identifier: MIT
/*  HANDOVER -> WORKFLOW_INFO: the turn holder's writes and the next role
    in one atomic request (workflow_batch.c does the work). */
#include "broker_internal.h"

void
handle_handover (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow "
                        "(start it with --scenario and a scenario with a workflow section)");
        return;
    }
    workflow_handover (self, req->msg, req->agent, req->id);
}
