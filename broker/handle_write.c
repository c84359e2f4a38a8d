// SPDX-License-Identifier: MIT
/*  WRITE -> WRITTEN: apply a batch of state ops atomically (state.c does
    the work and the rollback), then publish one STATE_UPDATE per changed key
    on "state.<key>" so replicas can follow (Clone pattern). A failed batch
    changes nothing, publishes nothing, and its ERROR names the op.
    Deleting shared state (ops delete and clear) takes a key with the admin
    right in CURVE mode: a batch holding one is refused whole. */
#include <string.h>

#include "broker_internal.h"
#include "pcurve.h"

//  True if any op of the (schema-checked) batch deletes or clears.
static bool
s_destroys (const msgpack_object *ops)
{
    for (uint32_t i = 0; ops && ops->type == MSGPACK_OBJECT_ARRAY && i < ops->via.array.size; i++) {
        const msgpack_object *op = pobj_get (&ops->via.array.ptr [i], "op");
        if (pobj_streq (op, "delete") || pobj_streq (op, "clear"))
            return true;
    }
    return false;
}

void
handle_write (broker_t *self, request_t *req)
{
    if (s_destroys (pmsg_field (req->msg, "ops"))
    &&  !dispatch_may (self, req, PCURVE_RIGHT_ADMIN, "WRITE delete/clear"))
        return;
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
