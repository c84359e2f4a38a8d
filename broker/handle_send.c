// SPDX-License-Identifier: MIT
/*  SEND -> SENT: accept a batch of messages.

    Items are independent: each is posted on its own (mailroom.c), good ones
    are accepted even when others fail, and SENT lists one seq per item (0 if
    rejected) plus one error per rejected item, or per recipient a fan-out
    could not reach (that error names the agent). The sender is always the
    agent this connection said HELLO as: there is no `from` to forge.

    An item with `channel` and `resolve` is addressed by a bare name: an
    agent if one is registered under it, else a channel with a listener,
    else NO_SUCH_TARGET (PROTOCOL.md, SEND). Only the broker knows both
    registrations and channels at the moment of the post, so the sender
    does not guess from a team list that may be stale.

    Batching is what makes the relay fast: one frame, one decode and one
    reply carry up to max_batch messages.

    Idempotent SEND (PROTOCOL.md, SEND): a SEND with `batch` equal to the
    agent's last one is a resend whose SENT was lost; it gets that SENT
    again (kept encoded in the agent record, across reconnects, and in the
    journal with the SEND: across restarts too) and posts nothing. The memory costs one SENT per agent: ~9 bytes per item plus
    the errors list, which BROKER_SENT_ERRORS_BUDGET bounds.

    Backpressure (parking.h): a SEND whose messages do not fit an online
    recipient's inbox waits, parked whole, up to its `wait_ms` (default
    --send-wait-ms) instead of getting INBOX_FULL. So the SEND becomes an
    operation (OP_SEND) when it is applied, not when it arrives.

    Pipelined SEND (PROTOCOL.md, SEND): no SENT; its outcome (messages
    accepted, the errors of the items that failed) is added to the
    connection's next CONFIRM (confirms.h).

    `ack` (WELCOME features send_ack): the sender's own mail up to it is
    acknowledged first, as by an ACK, in a call of its own (so it holds
    even when the SEND then waits, parked): an agent that answers the mail
    it was pushed acknowledges it on the answer, without an ACK frame and
    its OK.

    The request's fields are read in one pass over its map (the decode
    checked their types); what is slow per SEND is the decode and the
    journal record, not this.
*/
#include <string.h>

#include "broker_internal.h"
#include "plog.h"
#include "core/send_item.h"

//  The name an item was addressed to, for error sentences.
static void
s_item_target (const msgpack_object *item, const char **name, size_t *len)
{
    *name = pobj_str (item, "to", len);
    if (!*name)
        *name = pobj_str (item, "channel", len);
    if (!*name) {
        *name = "?";
        *len = 1;
    }
}

//  One item_error map, or with `id` (a pipelined SEND's) a confirm_error.
static void
s_encode_error (broker_t *self, penc_t *enc, const msgpack_object *items,
                const mail_error_t *error, uint64_t id)
{
    const mailroom_limits_t *lim = mailroom_limits (self->mailroom);
    const msgpack_object *item = &items->via.array.ptr [error->index];
    const char *target;
    size_t len;
    s_item_target (item, &target, &len);
    char text [256];
    switch (error->code) {
        case PERR_UNKNOWN_RECIPIENT:
            snprintf (text, sizeof text, "no agent named %.*s is registered", (int) len, target);
            break;
        case PERR_INBOX_FULL:
            if (self->send_waited_ms)
                snprintf (text, sizeof text, "the inbox of %s is still full after waiting "
                          "%llu ms for room (wait_ms; limits: %zu messages, %llu bytes)",
                          error->agent ? error->agent->id : "?",
                          (unsigned long long) self->send_waited_ms, lim->max_inbox,
                          (unsigned long long) lim->max_inbox_bytes);
            else
            if (error->agent && !error->agent->online)
                snprintf (text, sizeof text, "the inbox of %s is full and it is offline, so "
                          "waiting would not help (limits: %zu messages, %llu bytes)",
                          error->agent->id, lim->max_inbox,
                          (unsigned long long) lim->max_inbox_bytes);
            else
                snprintf (text, sizeof text, "the inbox of %s is full (limits: %zu messages, "
                          "%llu bytes)", error->agent ? error->agent->id : "?",
                          lim->max_inbox, (unsigned long long) lim->max_inbox_bytes);
            break;
        case PERR_CHANNEL_FULL:
            snprintf (text, sizeof text, "channel %.*s is full (limits: %zu posts, %llu bytes "
                      "pending)", (int) len, target, lim->max_channel,
                      (unsigned long long) lim->max_channel_bytes);
            break;
        case PERR_TOO_MANY_CHANNELS:
            snprintf (text, sizeof text, "the broker's limit of %zu channels is reached",
                      lim->max_channels);
            break;
        case PERR_TOO_LARGE:
            snprintf (text, sizeof text, "the body is larger than max_body (%zu bytes)",
                      lim->max_body);
            break;
        case PERR_RESERVED_NAME:
            snprintf (text, sizeof text, "\"%.*s\" is reserved and cannot name a channel",
                      (int) len, target);
            break;
        case PERR_INTERNAL:
            snprintf (text, sizeof text, "the broker ran out of memory queueing the message "
                      "for %s; it was not delivered to them", error->agent ? error->agent->id
                      : "its recipient");
            break;
        case PERR_BAD_FIELD:
            snprintf (text, sizeof text, "a message needs exactly one of \"to\" and \"channel\"");
            break;
        case PERR_NO_SUCH_TARGET:
            snprintf (text, sizeof text, "no agent named %.*s is registered and nobody listens "
                      "to a channel of that name", (int) len, target);
            break;
        default:
            snprintf (text, sizeof text, "the message could not be queued (%s)",
                      perr_name (error->code));
            break;
    }
    msgpack_pack_map (penc_packer (enc), (error->agent ? 4 : 3) + (id ? 1 : 0));
    if (id)
        penc_kv_uint (enc, "id", id);
    penc_kv_uint (enc, "index", error->index);
    penc_kv_uint (enc, "code", (uint64_t) error->code);
    penc_kv_cstr (enc, "message", text);
    if (error->agent)
        penc_kv_str (enc, "agent", error->agent->id, error->agent->id_len);
}

//  Encodes the first item errors into `list` until it passes
//  BROKER_SENT_ERRORS_BUDGET bytes (so it may pass it by one error, a few
//  hundred bytes) or holds PROTO_MAX_BATCH. Returns how many it holds.
static size_t
s_encode_errors (broker_t *self, penc_t *list, const msgpack_object *items, size_t errors)
{
    size_t listed = 0;
    while (listed < errors && listed < PROTO_MAX_BATCH
    &&     penc_size (list) < BROKER_SENT_ERRORS_BUDGET) {
        s_encode_error (self, list, items, mailroom_error_at (self->mailroom, listed), 0);
        listed++;
    }
    return listed;
}

//  OP_SEND of the call's frame: self->seqs holds the seqs (0: refused)
//  and the mailroom the item errors. Returns how many were accepted.
static uint64_t
s_post_items (broker_t *self, agent_t *from, const msgpack_object *items)
{
    op_t op = { .kind = OP_SEND, .u = mailroom_counters (self->mailroom)->mail_seq + 1 };
    core_outcome_t out;
    out.seqs = self->seqs;
    out.seq_room = self->config.max_batch;
    if (call_apply (self, &op, &out) != PERR_NONE) {
        //  Only a SEND without messages fails whole, and that was refused
        //  before: nothing was posted.
        memset (self->seqs, 0, items->via.array.size * sizeof (uint64_t));
        return 0;
    }
    return out.accepted;
}

//  A pipelined SEND: its outcome goes into the connection's CONFIRM.
static void
s_confirm (broker_t *self, request_t *req, const msgpack_object *items, uint64_t accepted)
{
    if (!confirms_add (self->confirms, req->conn, req->envelope, req->id, accepted)) {
        plog_warn ("no memory to confirm pipelined SEND %llu of %s: its sender will time out "
                   "and send it again", (unsigned long long) req->id, req->agent->id);
        return;
    }
    size_t errors = mailroom_errors_count (self->mailroom);
    for (size_t i = 0; i < errors; i++) {
        penc_t *enc = confirms_error (self->confirms, req->conn);
        if (enc)
            s_encode_error (self, enc, items, mailroom_error_at (self->mailroom, i), req->id);
    }
}

void
remember (broker_t *self, agent_t *agent, slot_t slot, bool keep, uint64_t key, size_t head,
          size_t fields)
{
    op_t op = { .kind = OP_REMEMBER, .slot = slot, .u = key, .u2 = fields };
    if (keep)
        op.bytes = replay_bytes_of (&self->reply, head, &op.size);
    else
    if (!agent->slots [slot].data)
        return;                 //  nothing to forget: no operation
    call_apply (self, &op, NULL);
}

void
send_post (broker_t *self, agent_t *from, const msgpack_object *items, send_outcome_t *out)
{
    *out = (send_outcome_t) { .count = items->via.array.size };
    out->accepted = s_post_items (self, from, items);
    //  The errors go to a scratch encoder first: how many fit the budget
    //  decides whether SENT has `errors_omitted`, and so its field count,
    //  which the map header written first must know. Allocated only for a
    //  SEND with errors: not the hot path.
    penc_init (&out->list);
    out->errors = mailroom_errors_count (self->mailroom);
    if (out->errors)
        out->listed = s_encode_errors (self, &out->list, items, out->errors);
}

size_t
send_fields (const send_outcome_t *out)
{
    return 2 + (out->errors ? 1 : 0) + (out->errors > out->listed ? 1 : 0);
}

void
send_encode (broker_t *self, send_outcome_t *out, penc_t *enc)
{
    msgpack_packer *pk = penc_packer (enc);
    penc_kv_uint (enc, "accepted", out->accepted);
    penc_key (enc, "seqs");
    msgpack_pack_array (pk, (uint32_t) out->count);
    for (size_t i = 0; i < out->count; i++)
        msgpack_pack_uint64 (pk, self->seqs [i]);
    if (out->errors) {
        penc_key (enc, "errors");
        msgpack_pack_array (pk, (uint32_t) out->listed);
        penc_raw (enc, penc_data (&out->list), penc_size (&out->list));
    }
    if (out->errors > out->listed)
        penc_kv_uint (enc, "errors_omitted", out->errors - out->listed);
    penc_fini (&out->list);
}

//  SEND's own fields, absent ones NULL.
typedef struct {
    const msgpack_object *messages, *batch, *wait_ms, *ack;
} s_fields_t;

static bool
s_key_is (const msgpack_object *key, const char *name, uint32_t len)
{
    return key->via.str.size == len && memcmp (key->via.str.ptr, name, len) == 0;
}

static void
s_fields (const pmsg_t *msg, s_fields_t *fields)
{
    memset (fields, 0, sizeof *fields);
    const msgpack_object *root = pmsg_root (msg);
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr [i];
        if (kv->key.type != MSGPACK_OBJECT_STR || kv->val.type == MSGPACK_OBJECT_NIL)
            continue;
        const msgpack_object *key = &kv->key;
        if (s_key_is (key, "messages", 8))
            fields->messages = &kv->val;
        else
        if (s_key_is (key, "batch", 5))
            fields->batch = &kv->val;
        else
        if (s_key_is (key, "wait_ms", 7))
            fields->wait_ms = &kv->val;
        else
        if (s_key_is (key, "ack", 3))
            fields->ack = &kv->val;
    }
}

static uint64_t
s_uint (const msgpack_object *value, uint64_t fallback)
{
    return value && value->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? value->via.u64 : fallback;
}

void
handle_send (broker_t *self, request_t *req)
{
    s_fields_t fields;
    s_fields (req->msg, &fields);
    const msgpack_object *items = fields.messages;
    if (!items || items->type != MSGPACK_OBJECT_ARRAY || items->via.array.size == 0) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "SEND needs 1 to %zu messages",
                        self->config.max_batch);
        return;
    }
    uint32_t count = items->via.array.size;
    if (count > self->config.max_batch) {
        dispatch_error (self, req->id, PERR_TOO_LARGE, "SEND carries %u messages; the "
                        "limit is %zu per request", count, self->config.max_batch);
        return;
    }
    agent_t *agent = req->agent;
    const msgpack_object *batch_field = fields.batch;
    uint64_t batch = s_uint (batch_field, 0);
    if (req->pipelined && batch_field) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "a pipelined SEND cannot carry batch: "
                        "pipelined SENDs are delivered at least once, resent after a reconnect "
                        "(PROTOCOL.md, SEND)");
        return;
    }
    //  The ack first, whatever the SEND does next (a repeat, as a retried
    //  parked SEND brings, changes nothing: acks are cumulative).
    if (fields.ack) {
        call_begin (self, agent->id, NULL, NULL, 0, 0);
        ack_apply (self, agent, fields.ack->via.u64);
        call_end (self);
    }
    //  A resend (its SENT was lost, or came too late, or the broker
    //  restarted since) gets the same answer, and nothing is posted a
    //  second time.
    if (batch_field
    &&  replay_answer (&agent->slots [SLOT_SEND], batch, PMSG_SENT, req->id, &self->reply))
        return;
    //  Backpressure: wait for room rather than refuse (parking.h).
    uint64_t wait_ms = s_uint (fields.wait_ms, self->config.send_wait_ms);
    if (wait_ms > 0 && !self->replaying && !self->config.drop_oldest
    &&  !parking_forced (self->parking)) {
        agent_t *on = parking_blocked (self, agent, items);
        if (on) {
            int64_t deadline = req->arrived_ms + (int64_t) (wait_ms > 86400000 ? 86400000 : wait_ms);
            if (self->now_ms < deadline && parking_park (self, req, on, deadline)) {
                req->no_reply = true;
                return;
            }
            if (self->now_ms >= deadline) {
                self->counters.send_wait_timeouts++;
                self->send_waited_ms = wait_ms;
            }
        }
    }
    //  A keyed SEND's answer is journaled with it: room for the SENT.
    size_t reserve = batch_field ? BROKER_SENT_ERRORS_BUDGET + 16 * (size_t) count : 0;
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size, reserve);
    if (!call_reserve (self, req->id)) {
        call_end (self);
        self->send_waited_ms = 0;
        return;
    }
    if (req->pipelined && !self->replaying) {
        uint64_t accepted = s_post_items (self, agent, items);
        s_confirm (self, req, items, accepted);
        remember (self, agent, SLOT_SEND, false, 0, 0, 0);
        call_end (self);
        req->no_reply = true;
        self->send_waited_ms = 0;
        return;
    }
    send_outcome_t outcome;
    send_post (self, agent, items, &outcome);
    size_t sent_fields = send_fields (&outcome);
    penc_begin (&self->reply, PMSG_SENT, req->id, sent_fields);
    size_t head = penc_size (&self->reply);
    send_encode (self, &outcome, &self->reply);
    self->send_waited_ms = 0;
    remember (self, agent, SLOT_SEND, batch_field != NULL, batch, head, sent_fields);
    call_end (self);
}
