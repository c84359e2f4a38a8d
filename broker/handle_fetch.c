// SPDX-License-Identifier: MIT
/*  FETCH -> MAIL: the agent's mail after its acknowledged position.

    The optional `ack` is applied first (it releases what the agent
    processed), then up to `max` (default and cap: max_batch) messages are
    read from the head of its inbox WITHOUT removing them: if this reply is
    lost, the next plain FETCH returns them again. With `stream: true` the
    read starts after what earlier FETCHes handed out (the agent's cursor)
    instead, so a client can keep several FETCHes in flight and the broker
    encodes the next batch while the client decodes the last one; still
    nothing is removed before it is acknowledged. A reply also stops before it
    would pass BROKER_MAIL_REPLY_BUDGET bytes, so it always fits a client's
    frame limit; `pending` tells the agent more is waiting.

    A consumer's window (CONSUME) counts what a FETCH hands out too, but
    does not limit it: a FETCH returns what it is asked for.

    What was handed out moves the agent's `delivered` position (the ack
    clamp: OP_DELIVER, journaled with the FETCH's ack), so an ack after a
    restart of mail read before it still counts.

    This is the relay's hot path: items are packed straight from the stored
    message (one msgpack write per field, the body copied once into the
    reply buffer), nothing is allocated. STEP's mail is encoded here too.
*/
#include "broker_internal.h"

//  The `count` items the mailroom's read (fetch or push) selected, as a
//  msgpack array into `enc`.
static void
s_pack_items (broker_t *self, penc_t *enc, size_t count)
{
    mailroom_t *room = self->mailroom;
    msgpack_packer *pk = penc_packer (enc);
    msgpack_pack_array (pk, (uint32_t) count);
    const mail_t *mail;
    while ((mail = mailroom_fetch_next (room))) {
        msgpack_pack_map (pk, 5);
        penc_kv_uint (enc, "seq", mail->seq);
        penc_kv_uint (enc, "ts", (uint64_t) mail->ts);
        penc_kv_str (enc, "from", mail_from (mail), mail->from_len);
        penc_kv_str (enc, mail->kind == MAIL_CHANNEL ? "channel" : "to",
                     mail_to (mail), mail->to_len);
        if (mail->body_bin)
            penc_kv_bin (enc, "body", mail_body (mail), mail->body_len);
        else
            penc_kv_str (enc, "body", mail_body (mail), mail->body_len);
    }
}

void
deliver_apply (broker_t *self, agent_t *agent)
{
    uint64_t through = mailroom_fetch_through (self->mailroom);
    if (through <= agent->delivered)
        return;
    op_t op = { .kind = OP_DELIVER, .u = through };
    call_apply (self, &op, NULL);
}

uint64_t
fetch_encode (broker_t *self, agent_t *agent, size_t max, bool stream, penc_t *enc)
{
    size_t count = mailroom_fetch_begin (self->mailroom, agent, max, BROKER_MAIL_REPLY_BUDGET,
                                         stream);
    //  A plain FETCH that moved the cursor back makes room in a consumer's
    //  window (its pushes continue after what this reply holds).
    if (!stream && agent->credit)
        mailroom_mark_push (self->mailroom, agent);
    s_pack_items (self, enc, count);
    deliver_apply (self, agent);
    return mailroom_fetch_remaining (self->mailroom);
}

void
mail_encode (broker_t *self, penc_t *enc, pmsg_type_t type, uint64_t id, size_t count,
             const agent_t *agent)
{
    penc_begin (enc, type, id, 3);
    penc_key (enc, "messages");
    s_pack_items (self, enc, count);
    penc_kv_uint (enc, "pending", mailroom_fetch_remaining (self->mailroom));
    penc_kv_uint (enc, "acked", agent->acked);
}

void
handle_fetch (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size, 0);
    const msgpack_object *ack = pmsg_field (req->msg, "ack");
    if (ack)
        ack_apply (self, agent, pmsg_uint (req->msg, "ack", 0));
    size_t max = pmsg_uint (req->msg, "max", 0);
    if (max == 0 || max > self->config.max_batch)
        max = self->config.max_batch;
    penc_t *enc = &self->reply;
    penc_begin (enc, PMSG_MAIL, req->id, 3);
    penc_key (enc, "messages");
    uint64_t pending = fetch_encode (self, agent, max, pmsg_bool (req->msg, "stream", false), enc);
    penc_kv_uint (enc, "pending", pending);
    penc_kv_uint (enc, "acked", agent->acked);
    call_end (self);
}
