// SPDX-License-Identifier: MIT
/*  WORKFLOW -> WORKFLOW_INFO: status, holder, turn and revisions. */
#include "broker_internal.h"

void
handle_workflow (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    turns_encode_info (self, req->id);
}
