// SPDX-License-Identifier: MIT
/*  CHECKPOINTS -> CHECKPOINT_LIST: every kept checkpoint, oldest first,
    with the workflow fields and what each one stored. */
#include "broker_internal.h"

void
checkpoint_encode_info (const checkpoint_info_t *info, penc_t *enc)
{
    msgpack_pack_map (penc_packer (enc), 7);
    penc_kv_uint (enc, "number", info->number);
    penc_kv_uint (enc, "turn", info->meta.turn);
    penc_kv_cstr (enc, "status", wf_status_name (info->meta.status));
    penc_kv_cstr (enc, "holder", info->meta.holder);
    penc_kv_uint (enc, "revisions", info->meta.revisions);
    penc_kv_uint (enc, "changed", info->changed);
    penc_kv_uint (enc, "bytes", info->bytes);
}

void
handle_checkpoints (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    checkpoints_t *checkpoints = workflow_checkpoints (self->workflow);
    //  The retention bound keeps the list within PROTO_MAX_BATCH entries
    //  only when --checkpoints allows it; list the newest that fit.
    size_t count = checkpoints_count (checkpoints);
    size_t first = count > PROTO_MAX_BATCH ? count - PROTO_MAX_BATCH : 0;
    penc_begin (&self->reply, PMSG_CHECKPOINT_LIST, req->id, 2);
    penc_kv_uint (&self->reply, "dropped", checkpoints_dropped (checkpoints) + first);
    penc_key (&self->reply, "checkpoints");
    msgpack_pack_array (penc_packer (&self->reply), (uint32_t) (count - first));
    for (size_t i = first; i < count; i++)
        checkpoint_encode_info (checkpoints_at (checkpoints, i), &self->reply);
}
