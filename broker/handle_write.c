// SPDX-License-Identifier: MIT
/*  WRITE -> WRITTEN: apply a batch of state ops atomically (OP_WRITE:
    state.c does the work and the rollback), then publish one STATE_UPDATE
    per changed key on "state.<key>" so replicas can follow (Clone
    pattern). A failed batch changes nothing, publishes nothing, and its
    ERROR names the op. STEP's ops go through write_apply too.
    Deleting shared state (ops delete and clear) takes a key with the
    admin right in CURVE mode (rights.h). */
#include <string.h>

#include "broker_internal.h"

bool
write_apply (broker_t *self, request_t *req, const msgpack_object *ops, state_result_t *result)
{
    if (turns_rejects_write (self, req->id, ops))
        return false;
    op_t op = { .kind = OP_WRITE, .u = state_seq (self->state) };
    core_outcome_t out;
    perr_t err = call_apply (self, &op, &out);
    if (err) {
        dispatch_error (self, req->id, err, "%s", out.why);
        return false;
    }
    *result = out.written;
    return true;
}

void
handle_write (broker_t *self, request_t *req)
{
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, 0);
    state_result_t result = { 0 };
    bool ok = write_apply (self, req, pmsg_field (req->msg, "ops"), &result);
    call_end (self);
    if (!ok)
        return;
    penc_begin (&self->reply, PMSG_WRITTEN, req->id, 2);
    penc_kv_uint (&self->reply, "seq", result.seq);
    penc_kv_uint (&self->reply, "changed", result.changed);
}
