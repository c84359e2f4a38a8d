// SPDX-License-Identifier: MIT
/*  HELLO -> WELCOME: register the agent id on this connection.

    - A new id is registered (AGENT_EVENT joined).
    - Who may take over an id that is registered (docs/SECURITY.md):
      CURVE mode: any connection whose key names the id, at once, even from
      a live connection (a restarted agent need not wait for its old
      session to expire). Plain mode: the connection presenting the resume
      token this broker issued to the id in an earlier WELCOME, at once;
      without it, nobody while the token stands (until BYE, or the
      registration is forgotten): ID_IN_USE, or UNAUTHORIZED for a wrong
      token. An id without a token (after BYE) is taken over as before,
      unless a live connection holds it (ID_IN_USE).
      A takeover brings the queued mail and channel memberships along.
    - A key that does not name the id gets UNAUTHORIZED (counted).
    - HELLO again on the same connection with the same id refreshes it (an
      agent that lost the WELCOME may simply retry); with another id it is
      BAD_FIELD: one connection speaks for one agent.
    - `observe`: WELCOME's endpoints and nothing else: no registration, no
      mail, no AGENTS entry (the tap; in CURVE mode it needs the tap right).
    From here on the id is this connection's identity: the broker stamps it
    as the sender of everything sent on it.

    The registration, its resume token and caps are the core's (OP_HELLO,
    journaled); the connection it is bound to is the edge's. A HELLO of
    the workflow's entry role may begin the workflow, in the same call.
*/
#include <string.h>
#include <sys/random.h>

#include "broker_internal.h"
#include "pcurve.h"
#include "plog.h"

static plog_limit_t s_refused_limit;

static void
s_unauthorized (broker_t *self, request_t *req, const char *id, const char *why)
{
    dispatch_error (self, req->id, PERR_UNAUTHORIZED, "HELLO as %s refused: %s", id, why);
    self->counters.unauthorized++;
    plog_limited (&s_refused_limit, 5, PLOG_WARN, "HELLO as %s refused: %s", id, why);
}

//  128 random bits as hex into token [33]. getrandom blocks only before
//  the kernel's pool is first initialised, long before a broker runs.
static void
s_new_token (char *token, size_t size)
{
    unsigned char bytes [16];
    if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes)
        plog_warn ("getrandom failed; resume token from a czmq uuid instead");
    else {
        for (size_t i = 0; i < sizeof bytes; i++)
            snprintf (token + 2 * i, 3, "%02x", bytes [i]);
        return;
    }
    zuuid_t *uuid = zuuid_new ();
    snprintf (token, size, "%s", zuuid_str_canonical (uuid));
    zuuid_destroy (&uuid);
}

//  True when the HELLO's caps are the agent's already (no caps: it keeps
//  its own).
static bool
s_same_caps (agent_t *agent, const msgpack_object *caps)
{
    if (!caps || caps->type != MSGPACK_OBJECT_ARRAY || caps->via.array.size == 0)
        return true;
    uint32_t n = 0;
    const char *cap = zlistx_first (agent->caps);
    for (uint32_t i = 0; i < caps->via.array.size && n < 64; i++) {
        const msgpack_object *item = &caps->via.array.ptr [i];
        if (item->type != MSGPACK_OBJECT_STR)
            continue;
        if (!cap || strlen (cap) != item->via.str.size
        ||  memcmp (cap, item->via.str.ptr, item->via.str.size) != 0)
            return false;
        cap = zlistx_next (agent->caps);
        n++;
    }
    return cap == NULL;
}

//  OP_HELLO for `id`: registered (or kept) with `token` and the HELLO's
//  caps; no operation when the registration has them already (a client
//  coming back), so a reconnect works on a full disk. NULL with the error
//  written.
static agent_t *
s_register (broker_t *self, request_t *req, const char *id, const char *token)
{
    agent_t *known = agents_lookup (self->agents, id);
    if (known && strcmp (known->token, token) == 0
    &&  s_same_caps (known, pmsg_field (req->msg, "caps")))
        return known;
    op_t op = { .kind = OP_HELLO, .text = token, .text_len = strlen (token),
                .list = pmsg_field (req->msg, "caps") };
    core_outcome_t out;
    if (call_apply (self, &op, &out)) {
        dispatch_error (self, req->id, out.err, "%s", out.why);
        return NULL;
    }
    return out.agent;
}
static void
s_welcome (broker_t *self, request_t *req, agent_t *agent)
{
    penc_t *enc = &self->reply;
    bool token = agent->token [0] != 0;
    penc_begin (enc, PMSG_WELCOME, req->id, 14 + (self->world != NULL) + token);
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
    penc_kv_uint (enc, "origin", core_origin (self->core));
    if (token)
        penc_kv_cstr (enc, "token", agent->token);
    //  What a client may rely on beyond version 1's fields (PROTOCOL.md,
    //  WELCOME): SEND's `ack`.
    penc_key (enc, "features");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, "send_ack");
}

//  WELCOME for an observer: where the sockets are, nothing registered.
static void
s_welcome_observer (broker_t *self, request_t *req, const char *id)
{
    penc_t *enc = &self->reply;
    //  A scenario without a world: WELCOME has no `world` (as an agent's).
    penc_begin (enc, PMSG_WELCOME, req->id, 11 + (self->world != NULL));
    penc_kv_uint (enc, "version", PROTO_VERSION);
    penc_kv_cstr (enc, "agent", id);
    penc_kv_cstr (enc, "pub", self->pub_advertised);
    penc_kv_cstr (enc, "tap", self->tap ? self->tap_advertised : "");
    penc_kv_uint (enc, "heartbeat_ms", self->config.heartbeat_ms);
    penc_kv_uint (enc, "liveness_ms", self->config.liveness_ms);
    penc_kv_uint (enc, "max_body", self->config.max_body);
    penc_kv_uint (enc, "max_batch", self->config.max_batch);
    penc_kv_uint (enc, "acked", 0);
    penc_kv_uint (enc, "state_seq", state_seq (self->state));
    if (self->world) {
        penc_key (enc, "world");
        world_encode_summary (self->world, enc);
    }
    penc_kv_uint (enc, "origin", core_origin (self->core));
}

//  May this connection take over the registered `agent`? Writes the ERROR
//  when not.
static bool
s_may_take_over (broker_t *self, request_t *req, agent_t *agent)
{
    if (auth_curve (self->auth))
        return true;            //  the key names the id: checked before
    char token [PROTO_MAX_NAME + 1];
    bool has_token = pmsg_strcpy (req->msg, "token", token, sizeof token);
    if (agent->token [0]) {
        if (has_token && strcmp (token, agent->token) == 0)
            return true;
        if (has_token) {
            s_unauthorized (self, req, agent->id, "the resume token is not the one this "
                            "broker issued for that id");
            return false;
        }
        dispatch_error (self, req->id, PERR_ID_IN_USE,
                        "agent id %s is held for the agent that has its resume token "
                        "(until it says BYE or is forgotten)", agent->id);
        return false;
    }
    if (agent->online && self->now_ms - agent->last_seen_ms <= (int64_t) self->config.liveness_ms) {
        dispatch_error (self, req->id, PERR_ID_IN_USE,
                        "agent id %s is in use by another live connection", agent->id);
        return false;
    }
    return true;
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
    if (pmsg_bool (req->msg, "observe", false)) {
        //  The tap right was checked with the others (rights.h).
        if (!observers_add (self->observers, req->serial, request_fd (req)))
            dispatch_error (self, req->id, PERR_TOO_MANY_AGENTS,
                            "the broker serves at most %d observers at once", OBSERVERS_MAX);
        else
            s_welcome_observer (self, req, id);
        return;
    }
    //  Recovery (durable.c) replays old HELLO records that succeeded.
    if (!self->replaying && !pcurve_may_be (auth_agents (self->auth, req->key), id)) {
        s_unauthorized (self, req, id, "this connection's key does not name that agent id");
        return;
    }
    if (req->agent && strcmp (req->agent->id, id) != 0) {
        dispatch_error (self, req->id, PERR_BAD_FIELD,
                        "this connection already speaks for %s; send BYE before "
                        "saying HELLO as %s", req->agent->id, id);
        return;
    }
    agent_t *agent = req->agent ? req->agent : agents_lookup (self->agents, id);
    if (agent && !req->agent && !self->replaying && !s_may_take_over (self, req, agent))
        return;
    //  The old connection's session ends first, outside this HELLO's call:
    //  ending it applies a SEND it had parked (parking.h), which is a call
    //  of its own.
    if (agent && !req->agent && agent->online)
        session_detach (self, agent, "expired");
    //  The token: the id's own (a takeover, a refresh), the record's (a
    //  replay), none under CURVE (the key names the id), else a new one.
    char token [sizeof ((agent_t *) 0)->token] = "";
    if (req->replay_token)
        snprintf (token, sizeof token, "%s", req->replay_token);
    else
    if (agent && agent->token [0])
        snprintf (token, sizeof token, "%s", agent->token);
    else
    if (!auth_curve (self->auth))
        s_new_token (token, sizeof token);
    call_begin (self, id, req->msg, req->frame, req->frame_size, 0);
    if (req->agent) {
        //  HELLO again on its own connection: caps refreshed, and every
        //  HELLO ends a push subscription (the client says CONSUME again
        //  when it wants one, and gets the unacknowledged mail again).
        if (s_register (self, req, id, token)) {
            req->agent->credit = 0;
            s_welcome (self, req, req->agent);
            turns_on_hello (self, req->agent);
        }
        call_end (self);
        return;
    }
    agent = s_register (self, req, id, token);
    if (!agent) {
        call_end (self);
        return;
    }
    agents_attach (self->agents, agent, req->conn, self->now_ms);
    agent->conn_serial = req->serial;
    req->agent = agent;
    //  A takeover is a join too: the id has a live connection again.
    publish_agent_event (self, agent, "joined");
    s_welcome (self, req, agent);
    turns_on_hello (self, agent);
    call_end (self);
}
