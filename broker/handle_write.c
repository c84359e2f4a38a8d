// SPDX-License-Identifier: MIT
/*  WRITE -> WRITTEN: apply a batch of state ops atomically (state.c does
    the work and the rollback), then publish one STATE_UPDATE per changed key
    on "state.<key>" so replicas can follow (Clone pattern). A failed batch
    changes nothing, publishes nothing, and its ERROR names the op.
    STEP's ops go through write_apply too.
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

bool
write_apply (broker_t *self, request_t *req, const msgpack_object *ops, state_result_t *result)
{
    if (s_destroys (ops) && !dispatch_may (self, req, PCURVE_RIGHT_ADMIN, "WRITE delete/clear"))
        return false;
    if (workflow_rejects_write (self, req->id, ops))
        return false;
    char why [512] = "";
    uint64_t before = state_seq (self->state);
    perr_t err = state_apply (self->state, ops, result, why, sizeof why);
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the write was rejected");
        return false;
    }
    publish_state_changes (self, before);
    return true;
}

void
handle_write (broker_t *self, request_t *req)
{
    state_result_t result = { 0 };
    if (!write_apply (self, req, pmsg_field (req->msg, "ops"), &result))
        return;
    penc_begin (&self->reply, PMSG_WRITTEN, req->id, 2);
    penc_kv_uint (&self->reply, "seq", result.seq);
    penc_kv_uint (&self->reply, "changed", result.changed);
}
