/*  WRITE -> WRITTEN: apply a batch of state ops atomically (state.c does
    the work and the rollback), then publish one STATE_UPDATE per changed key
    on "state.<key>" so replicas can follow (Clone pattern). A failed batch
    changes nothing, publishes nothing, and its ERROR names the op. */
#include "broker_internal.h"

void
handle_write (broker_t *self, request_t *req)
{
    char why [512] = "";
    state_result_t result = { 0 };
    if (workflow_rejects_write (self, req->id, pmsg_field (req->msg, "ops")))
        return;
    uint64_t before = state_seq (self->state);
    perr_t err = state_apply (self->state, pmsg_field (req->msg, "ops"), &result,
                              why, sizeof why);
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the write was rejected");
        return;
    }
    //  Journal hook: a durable broker would record the batch here.
    publish_state_changes (self, before);
    penc_begin (&self->reply, PMSG_WRITTEN, req->id, 2);
    penc_kv_uint (&self->reply, "seq", result.seq);
    penc_kv_uint (&self->reply, "changed", result.changed);
}
