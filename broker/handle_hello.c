/*  HELLO -> WELCOME: register the agent id on this connection.

    - A new id is registered (AGENT_EVENT joined).
    - An id whose connection is gone (BYE, expired, or silent for longer than
      the liveness timeout even if the sweep has not run yet) is taken over,
      with its queued mail and channel memberships.
    - An id held by another live connection is ID_IN_USE.
    - HELLO again on the same connection with the same id refreshes it (an
      agent that lost the WELCOME may simply retry); with another id it is
      BAD_FIELD: one connection speaks for one agent.
    From here on the id is this connection's identity: the broker stamps it
    as the sender of everything sent on it.
*/
#include <string.h>

#include "broker_internal.h"

static void
s_set_caps (agent_t *agent, const pmsg_t *msg)
{
    const msgpack_object *caps = pmsg_field (msg, "caps");
    if (!caps || caps->type != MSGPACK_OBJECT_ARRAY)
        return;
    const char *texts [64];
    size_t lens [64], count = 0;
    for (uint32_t i = 0; i < caps->via.array.size && count < 64; i++) {
        const msgpack_object *cap = &caps->via.array.ptr [i];
        if (cap->type == MSGPACK_OBJECT_STR) {
            texts [count] = cap->via.str.ptr;
            lens [count++] = cap->via.str.size;
        }
    }
    agents_set_caps (agent, texts, lens, count);
}

static void
s_welcome (broker_t *self, request_t *req, agent_t *agent)
{
    penc_t *enc = &self->reply;
    penc_begin (enc, PMSG_WELCOME, req->id, self->world ? 13 : 12);
    penc_kv_uint (enc, "version", PROTO_VERSION);
    penc_kv_str (enc, "agent", agent->id, agent->id_len);
    penc_kv_cstr (enc, "pub", self->pub_advertised);
    penc_kv_cstr (enc, "tap", self->tap ? self->tap_advertised : "");
    penc_kv_uint (enc, "heartbeat_ms", self->config.heartbeat_ms);
    penc_kv_uint (enc, "liveness_ms", self->config.liveness_ms);
    penc_kv_uint (enc, "max_body", self->config.max_body);
    penc_kv_uint (enc, "max_batch", self->config.max_batch);
    penc_kv_uint (enc, "acked", agent->acked);
    penc_kv_uint (enc, "mail_seq", mailroom_counters (self->mailroom)->mail_seq);
    penc_kv_uint (enc, "state_seq", state_seq (self->state));
    if (self->world) {
        penc_key (enc, "world");
        world_encode_summary (self->world, enc);
    }
    penc_key (enc, "channels");
    msgpack_pack_array (penc_packer (enc), (uint32_t) zlistx_size (agent->channels));
    for (channel_t *channel = zlistx_first (agent->channels); channel;
         channel = zlistx_next (agent->channels))
        penc_str (enc, channel->name, channel->name_len);
}

void
handle_hello (broker_t *self, request_t *req)
{
    char id [PROTO_MAX_NAME + 1];
    if (!pmsg_strcpy (req->msg, "agent", id, sizeof id)) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "HELLO needs an agent id");
        return;
    }
    if (strcmp (id, "all") == 0 || id [0] == '$') {
        dispatch_error (self, req->id, PERR_RESERVED_NAME,
                        "\"%s\" is reserved for the broker; choose another agent id", id);
        return;
    }
    if (req->agent) {
        if (strcmp (req->agent->id, id) != 0) {
            dispatch_error (self, req->id, PERR_BAD_FIELD,
                            "this connection already speaks for %s; send BYE before "
                            "saying HELLO as %s", req->agent->id, id);
            return;
        }
        s_set_caps (req->agent, req->msg);
        s_welcome (self, req, req->agent);
        workflow_on_hello (self, req->agent);
        return;
    }
    agent_t *agent = agents_lookup (self->agents, id);
    if (agent && agent->online) {
        if (self->now_ms - agent->last_seen_ms <= (int64_t) self->config.liveness_ms) {
            dispatch_error (self, req->id, PERR_ID_IN_USE,
                            "agent id %s is in use by another live connection", id);
            return;
        }
        session_detach (self, agent, "expired");
    }
    if (!agent) {
        agent = agents_create (self->agents, id);
        if (!agent) {
            dispatch_error (self, req->id, PERR_TOO_MANY_AGENTS,
                            "the broker's limit of %zu agents is reached",
                            agents_max (self->agents));
            return;
        }
    }
    agents_attach (self->agents, agent, req->conn, self->now_ms);
    s_set_caps (agent, req->msg);
    req->agent = agent;
    //  A takeover is a join too: the id has a live connection again.
    publish_agent_event (self, agent, "joined");
    s_welcome (self, req, agent);
    workflow_on_hello (self, agent);
}
