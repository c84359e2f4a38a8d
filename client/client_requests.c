// SPDX-License-Identifier: MIT
/*  client_requests - one function per request: check the arguments,
    encode the fields, call, decode the reply into the typed result.

    Adding a request is local: its function here (encode + client_call
    with the reply type it expects) and, if its reply is new, a decoder in
    client_results.c. Requests without own fields go through s_plain.
    SEND, FETCH and WRITE encode in client_encode_* so that
    client_pipeline.c can post them without waiting.
*/
#include <assert.h>
#include "client_internal.h"

//  A request without own fields, and the reply it expects.
static parley_err_t
s_plain (parley_client_t *self, pmsg_type_t type, pmsg_type_t expect)
{
    assert (self);
    client_begin (self, type, 0);
    return client_call (self, expect);
}

//  The body's length cut to max_body (0: no cut) at a UTF-8 character
//  boundary: a cut inside a character would send a str that is not UTF-8
//  to every reader.
static size_t
s_body_len (const char *body, size_t len, size_t max_body)
{
    if (max_body == 0 || len <= max_body)
        return len;
    len = max_body;
    while (len > 0 && ((unsigned char) body [len] & 0xC0) == 0x80)
        len--;
    return len;
}

static bool
s_name_ok (const char *name)
{
    return name && pmsg_name_valid (name, strlen (name));
}

//  Checks SEND's (and STEP's) messages before anything is encoded.
parley_err_t
client_messages_check (parley_client_t *self, const parley_outgoing_t *items, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if ((items [i].to == NULL) == (items [i].channel == NULL)
        ||  (items [i].body == NULL && items [i].body_len > 0)
        ||  (items [i].resolve && !items [i].channel))
            return client_fail (self, PARLEY_ERR_INVALID,
                                "message %zu: set exactly one of to/channel (channel with "
                                "resolve), and a body", i);
    return PARLEY_OK;
}

void
client_messages_encode (parley_client_t *self, penc_t *enc, const parley_outgoing_t *items,
                        size_t count)
{
    size_t max_body = self->welcome.max_body;
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++) {
        const parley_outgoing_t *item = &items [i];
        msgpack_pack_map (penc_packer (enc), item->resolve? 3: 2);
        penc_kv_cstr (enc, item->to? "to": "channel", item->to? item->to: item->channel);
        if (item->resolve)
            penc_kv_bool (enc, "resolve", true);
        const char *body = item->body? (const char *) item->body: "";
        penc_kv_str (enc, "body", body, s_body_len (body, item->body_len, max_body));
    }
}

//  Checks a SEND and encodes it into self->enc with a fresh batch id
//  (batch_p NULL: a pipelined SEND, without).
parley_err_t
client_encode_send (parley_client_t *self, const parley_outgoing_t *items, size_t count,
                    uint64_t *batch_p)
{
    assert (self && (items || count == 0));
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_fail (self, PARLEY_ERR_INVALID, "SEND of %zu messages (1..%d)",
                            count, PROTO_MAX_BATCH);
    parley_err_t rc = client_messages_check (self, items, count);
    if (rc != PARLEY_OK)
        return rc;
    //  The batch id makes the SEND idempotent: a resend after a lost reply
    //  carries this same id, and the broker answers it with the first
    //  SENT instead of posting again.
    //  A pipelined SEND (batch_p NULL) has none: pipelined SENDs are
    //  at-least-once.
    penc_t *enc = client_begin (self, PMSG_SEND, 3);
    if (batch_p) {
        *batch_p = self->next_batch++;
        penc_kv_uint (enc, "batch", *batch_p);
    }
    else
        penc_kv_bool (enc, "pipelined", true);
    penc_kv_uint (enc, "wait_ms", client_send_wait (self));
    client_messages_encode (self, enc, items, count);
    return PARLEY_OK;
}

parley_err_t
parley_client_send (parley_client_t *self, const parley_outgoing_t *items, size_t count,
                    parley_sent_t *result)
{
    uint64_t batch = 0;
    parley_err_t rc = client_encode_send (self, items, count, &batch);
    if (rc == PARLEY_OK)
        rc = client_call (self, PMSG_SENT);
    if (rc == PARLEY_OK && result)
        client_decode_sent (self, batch, count, result);
    return rc;
}

void
client_encode_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream)
{
    size_t fields = (ack? 1: 0) + (max? 1: 0) + (stream? 1: 0);
    penc_t *enc = client_begin (self, PMSG_FETCH, fields);
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    if (max)
        penc_kv_uint (enc, "max", max);
    if (stream)
        penc_kv_bool (enc, "stream", true);
}

parley_err_t
parley_client_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream,
                     parley_mail_batch_t *result)
{
    assert (self && result);
    client_encode_fetch (self, ack, max, stream);
    parley_err_t rc = client_call (self, PMSG_MAIL);
    if (rc == PARLEY_OK)
        client_decode_mail (self, result);
    return rc;
}

parley_err_t
parley_client_ack (parley_client_t *self, uint64_t seq)
{
    assert (self);
    penc_t *enc = client_begin (self, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seq);
    parley_err_t rc = client_call (self, PMSG_OK);
    //  Kept for a consumer's next session (client_push.c).
    if (rc == PARLEY_OK && seq > self->ack_sent) {
        self->ack_sent = seq;
        self->ack_origin = self->welcome.origin;
    }
    return rc;
}

parley_err_t
parley_client_listen (parley_client_t *self, const char *channel)
{
    assert (self);
    if (!s_name_ok (channel))
        return client_fail (self, PARLEY_ERR_INVALID, "bad channel name '%.64s'", channel? channel: "");
    size_t known = 0;
    while (known < self->channel_count && !streq (self->channels [known], channel))
        known++;
    if (known == self->channel_count && known >= PARLEY_MAX_CHANNELS)
        return client_fail (self, PARLEY_ERR_INVALID, "already listening to %d channels",
                            PARLEY_MAX_CHANNELS);
    penc_t *enc = client_begin (self, PMSG_LISTEN, 1);
    penc_kv_cstr (enc, "channel", channel);
    parley_err_t rc = client_call (self, PMSG_OK);
    if (rc == PARLEY_OK && known == self->channel_count)
        snprintf (self->channels [self->channel_count++], PARLEY_NAME_MAX + 1, "%s", channel);
    return rc;
}

parley_err_t
parley_client_unlisten (parley_client_t *self, const char *channel)
{
    assert (self);
    if (!s_name_ok (channel))
        return client_fail (self, PARLEY_ERR_INVALID, "bad channel name '%.64s'", channel? channel: "");
    penc_t *enc = client_begin (self, PMSG_UNLISTEN, 1);
    penc_kv_cstr (enc, "channel", channel);
    parley_err_t rc = client_call (self, PMSG_OK);
    //  Forgotten either way: NOT_LISTENING means the broker agrees.
    for (size_t i = 0; i < self->channel_count; i++)
        if (streq (self->channels [i], channel)) {
            memmove (self->channels [i], self->channels [i + 1],
                     (self->channel_count - i - 1) * sizeof (self->channels [0]));
            self->channel_count--;
            break;
        }
    return rc;
}

static const char *s_op_names [] = { "declare", "update", "set", "clear", "delete" };

//  True if `value` is exactly one msgpack object: it is copied into the
//  frame as is, and anything else would make the whole frame unreadable.
static bool
s_value_ok (const void *value, size_t size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    bool ok = msgpack_unpack_next (&unpacked, (const char *) value, size, &offset)
              == MSGPACK_UNPACK_SUCCESS && offset == size;
    msgpack_unpacked_destroy (&unpacked);
    return ok;
}

//  Checks WRITE's (and HANDOVER's) ops before anything is encoded.
parley_err_t
client_ops_check (parley_client_t *self, const parley_op_t *ops, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const parley_op_t *op = &ops [i];
        bool needs_value = op->op == PARLEY_OP_UPDATE || op->op == PARLEY_OP_SET;
        if ((unsigned) op->op > PARLEY_OP_DELETE || !op->key
        ||  (needs_value && (!op->value || op->value_size == 0))
        ||  (op->op == PARLEY_OP_DECLARE && !op->reducer))
            return client_fail (self, PARLEY_ERR_INVALID,
                                "op %zu: needs a key, a value (update, set), a reducer (declare)", i);
        if (op->value && op->value_size && !s_value_ok (op->value, op->value_size))
            return client_fail (self, PARLEY_ERR_INVALID,
                                "op %zu: the value is not one msgpack object", i);
    }
    return PARLEY_OK;
}

void
client_ops_encode (penc_t *enc, const parley_op_t *ops, size_t count)
{
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++) {
        const parley_op_t *op = &ops [i];
        bool has_value = op->value && op->value_size > 0;
        msgpack_pack_map (penc_packer (enc), 2 + (has_value? 1: 0) + (op->reducer? 1: 0));
        penc_kv_cstr (enc, "op", s_op_names [op->op]);
        penc_kv_cstr (enc, "key", op->key);
        if (has_value)
            penc_kv_raw (enc, "value", op->value, op->value_size);
        if (op->reducer)
            penc_kv_cstr (enc, "reducer", op->reducer);
    }
}

//  Checks a WRITE and encodes it into self->enc.
parley_err_t
client_encode_write (parley_client_t *self, const parley_op_t *ops, size_t count)
{
    assert (self && (ops || count == 0));
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_fail (self, PARLEY_ERR_INVALID, "WRITE of %zu ops (1..%d)", count, PROTO_MAX_BATCH);
    parley_err_t rc = client_ops_check (self, ops, count);
    if (rc == PARLEY_OK)
        client_ops_encode (client_begin (self, PMSG_WRITE, 1), ops, count);
    return rc;
}

parley_err_t
parley_client_write (parley_client_t *self, const parley_op_t *ops, size_t count,
                     parley_written_t *result)
{
    parley_err_t rc = client_encode_write (self, ops, count);
    if (rc == PARLEY_OK)
        rc = client_call (self, PMSG_WRITTEN);
    if (rc == PARLEY_OK && result)
        client_decode_written (self, result);
    return rc;
}

parley_err_t
parley_client_get (parley_client_t *self, const char *const *keys, size_t count,
                   parley_state_t *result)
{
    assert (self && result && (keys || count == 0));
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_fail (self, PARLEY_ERR_INVALID, "GET of %zu keys (1..%d)", count, PROTO_MAX_BATCH);
    penc_t *enc = client_begin (self, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++)
        penc_cstr (enc, keys [i]);
    parley_err_t rc = client_call (self, PMSG_STATE);
    if (rc == PARLEY_OK)
        client_decode_state (self, result);
    return rc;
}

parley_err_t
parley_client_snapshot (parley_client_t *self, const char *prefix, const char *after_key,
                        size_t limit, parley_state_t *result)
{
    assert (self && result);
    size_t fields = (prefix && *prefix? 1: 0) + (after_key? 1: 0) + (limit? 1: 0);
    penc_t *enc = client_begin (self, PMSG_SNAPSHOT, fields);
    if (prefix && *prefix)
        penc_kv_cstr (enc, "prefix", prefix);
    if (after_key)
        penc_kv_cstr (enc, "after_key", after_key);
    if (limit)
        penc_kv_uint (enc, "limit", limit);
    parley_err_t rc = client_call (self, PMSG_STATE);
    if (rc == PARLEY_OK)
        client_decode_state (self, result);
    return rc;
}

parley_err_t
parley_client_perceive (parley_client_t *self, parley_observation_t *result)
{
    assert (result);
    parley_err_t rc = s_plain (self, PMSG_PERCEIVE, PMSG_OBSERVATION);
    if (rc == PARLEY_OK)
        client_decode_observation (self, result);
    return rc;
}

parley_err_t
parley_client_act (parley_client_t *self, const char *action, uint64_t step,
                   parley_observation_t *result)
{
    assert (self && action && result);
    //  `step` makes the move idempotent: a resend after a lost reply or a
    //  reconnect carries the same step, and the broker answers a repeated
    //  (agent, step) with the OBSERVATION it gave the first copy.
    penc_t *enc = client_begin (self, PMSG_ACT, step? 2: 1);
    penc_kv_cstr (enc, "action", action);
    if (step)
        penc_kv_uint (enc, "step", step);
    parley_err_t rc = client_call (self, PMSG_OBSERVATION);
    if (rc == PARLEY_OK)
        client_decode_observation (self, result);
    return rc;
}

parley_err_t
parley_client_world_reset (parley_client_t *self, uint64_t seed)
{
    assert (self);
    penc_t *enc = client_begin (self, PMSG_WORLD_RESET, seed? 1: 0);
    if (seed)
        penc_kv_uint (enc, "seed", seed);
    return client_call (self, PMSG_OK);
}

parley_err_t
parley_client_agents (parley_client_t *self, parley_agent_list_t *result)
{
    assert (result);
    parley_err_t rc = s_plain (self, PMSG_AGENTS, PMSG_AGENT_LIST);
    if (rc == PARLEY_OK)
        client_decode_agents (self, result);
    return rc;
}

parley_err_t
parley_client_stats (parley_client_t *self, parley_stats_t *result)
{
    assert (result);
    parley_err_t rc = s_plain (self, PMSG_STATS, PMSG_STATS_REPLY);
    if (rc == PARLEY_OK)
        client_decode_stats (self, result);
    return rc;
}

void
client_begin_heartbeat (parley_client_t *self, penc_t *enc, uint64_t id)
{
    penc_begin (enc, PMSG_HEARTBEAT, id, self->has_report? CLIENT_MODEL_FIELDS: 0);
    for (size_t f = 0; self->has_report && f < CLIENT_MODEL_FIELDS; f++)
        penc_kv_uint (enc, client_model_fields [f].name,
                      *(const uint64_t *) ((const char *) &self->report
                                           + client_model_fields [f].offset));
}

parley_err_t
parley_client_heartbeat (parley_client_t *self)
{
    assert (self);
    if (!self->has_report)
        return s_plain (self, PMSG_HEARTBEAT, PMSG_OK);
    client_begin (self, PMSG_HEARTBEAT, 0);
    client_begin_heartbeat (self, &self->enc, self->enc_id);
    return client_call (self, PMSG_OK);
}

void
parley_client_set_report (parley_client_t *self, const parley_model_report_t *report)
{
    assert (self);
    self->has_report = report != NULL;
    if (report)
        self->report = *report;
}

//  Best effort with a short timeout and no resend: a broker that is gone
//  has nothing to say goodbye to.
parley_err_t
parley_client_bye (parley_client_t *self, bool forget)
{
    assert (self);
    if (!self->session || !self->dealer)
        return PARLEY_OK;
    penc_t *enc = client_begin (self, PMSG_BYE, forget? 1: 0);
    if (forget)
        penc_kv_bool (enc, "forget", true);
    int64_t saved_ms = self->request_ms;
    int saved_attempts = self->attempts;
    self->request_ms = saved_ms < 1000? saved_ms: 1000;
    self->attempts = 1;
    pmsg_destroy (&self->reply);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_exchange (self, &self->enc, self->enc_id, &reply);
    if (rc == PARLEY_OK && pmsg_type (reply) != PMSG_OK)
        rc = pmsg_type (reply) == PMSG_ERROR? (parley_err_t) pmsg_uint (reply, "code", 0)
                                             : PARLEY_ERR_BAD_REPLY;
    pmsg_destroy (&reply);
    self->request_ms = saved_ms;
    self->attempts = saved_attempts;
    client_close_dealer (self);
    return rc;
}
