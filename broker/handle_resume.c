/*  RESUME -> WORKFLOW_INFO: fork the run from a checkpoint
    (workflow_resume.c). */
#include "broker_internal.h"

void
handle_resume (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    workflow_resume (self, pmsg_uint (req->msg, "number", 0), req->id);
}
