// SPDX-License-Identifier: MIT
/*  AGENTS -> AGENT_LIST: every registered agent, online or not. O(agents);
    it is an introspection request, not a hot path. */
#include "broker_internal.h"

void
handle_agents (broker_t *self, request_t *req)
{
    penc_t *enc = &self->reply;
    msgpack_packer *pk = penc_packer (enc);
    size_t count = agents_size (self->agents);
    if (count > PROTO_MAX_BATCH)
        count = PROTO_MAX_BATCH;        //  the reply's array limit
    penc_begin (enc, PMSG_AGENT_LIST, req->id, 1);
    penc_key (enc, "agents");
    msgpack_pack_array (pk, (uint32_t) count);
    for (size_t i = 0; i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        uint32_t reported = (uint32_t) __builtin_popcount (agent->model_mask);
        msgpack_pack_map (pk, 5 + reported + 4);
        penc_kv_str (enc, "agent", agent->id, agent->id_len);
        penc_kv_bool (enc, "online", agent->online);
        int64_t idle = self->now_ms - agent->last_seen_ms;
        penc_kv_uint (enc, "idle_ms", idle > 0 ? (uint64_t) idle : 0);
        penc_kv_uint (enc, "pending", mailbox_count (agent->inbox));
        penc_key (enc, "caps");
        msgpack_pack_array (pk, (uint32_t) zlistx_size (agent->caps));
        for (char *cap = zlistx_first (agent->caps); cap; cap = zlistx_next (agent->caps))
            penc_cstr (enc, cap);
        for (size_t f = 0; f < AGENTS_MODEL_FIELDS; f++)
            if (agent->model_mask & (1u << f))
                penc_kv_uint (enc, agents_model_fields [f], agent->model [f]);
        //  Handed out by FETCH and not acknowledged: the head of the inbox
        //  up to the highest seq delivered (a binary search, O(log n)).
        size_t unacked = mailbox_find_after (agent->inbox, agent->delivered);
        penc_kv_uint (enc, "unacked", unacked);
        penc_kv_uint (enc, "inbox_bytes", mailbox_bytes (agent->inbox));
        penc_kv_uint (enc, "step", agent->step);
        penc_kv_uint (enc, "acts", agent->acts);
    }
}
