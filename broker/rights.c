// SPDX-License-Identifier: MIT
/*  rights - the rights table and the check. See rights.h. */
#include "broker_internal.h"
#include "rights.h"
#include "pcurve.h"

//  The right each request needs (0: none beyond being a request).
static const unsigned s_needs [PMSG__COUNT] = {
    [PMSG_HELLO] = PCURVE_RIGHT_AGENT,
    [PMSG_HEARTBEAT] = PCURVE_RIGHT_AGENT,
    [PMSG_BYE] = PCURVE_RIGHT_AGENT,
    [PMSG_AGENTS] = PCURVE_RIGHT_AGENT,
    [PMSG_SEND] = PCURVE_RIGHT_AGENT,
    [PMSG_FETCH] = PCURVE_RIGHT_AGENT,
    [PMSG_ACK] = PCURVE_RIGHT_AGENT,
    [PMSG_LISTEN] = PCURVE_RIGHT_AGENT,
    [PMSG_UNLISTEN] = PCURVE_RIGHT_AGENT,
    [PMSG_WRITE] = PCURVE_RIGHT_AGENT,
    [PMSG_GET] = PCURVE_RIGHT_AGENT,
    [PMSG_SNAPSHOT] = PCURVE_RIGHT_AGENT,
    [PMSG_PERCEIVE] = PCURVE_RIGHT_AGENT,
    [PMSG_ACT] = PCURVE_RIGHT_AGENT,
    [PMSG_WORLD_RESET] = PCURVE_RIGHT_ADMIN,
    [PMSG_STATS] = PCURVE_RIGHT_AGENT,
    [PMSG_HANDOVER] = PCURVE_RIGHT_AGENT,
    [PMSG_WORKFLOW] = PCURVE_RIGHT_AGENT,
    [PMSG_CHECKPOINTS] = PCURVE_RIGHT_AGENT,
    [PMSG_CHECKPOINT] = PCURVE_RIGHT_AGENT,
    [PMSG_RESUME] = PCURVE_RIGHT_ADMIN,
    [PMSG_STEP] = PCURVE_RIGHT_AGENT,
    [PMSG_CONSUME] = PCURVE_RIGHT_AGENT,
};

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
rights_allow (broker_t *self, request_t *req)
{
    if (self->replaying || req->type >= PMSG__COUNT)
        return true;
    if (req->type == PMSG_HELLO && pmsg_bool (req->msg, "observe", false))
        return dispatch_may (self, req, PCURVE_RIGHT_TAP, "HELLO observe");
    unsigned need = s_needs [req->type];
    if (need && !dispatch_may (self, req, need, pmsg_type_name (req->type)))
        return false;
    //  STEP asks for its ops part itself: a refusal is that part's error.
    if (req->type == PMSG_WRITE || req->type == PMSG_HANDOVER)
        return rights_allow_ops (self, req, pmsg_field (req->msg, "ops"));
    return true;
}

bool
rights_allow_ops (broker_t *self, request_t *req, const msgpack_object *ops)
{
    if (self->replaying || !s_destroys (ops))
        return true;
    char what [64];
    snprintf (what, sizeof what, "%s delete/clear", pmsg_type_name (req->type));
    return dispatch_may (self, req, PCURVE_RIGHT_ADMIN, what);
}
