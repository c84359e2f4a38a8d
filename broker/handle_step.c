// SPDX-License-Identifier: MIT
/*  STEP -> STEPPED: an agent's whole step in one request (PROTOCOL.md,
    STEP), where it used to take a FETCH, a SEND, a WRITE and an ACT.

    The parts apply in the protocol's order, each through the code of the
    request it replaces, so a part behaves exactly as that request does:

        ack       ack_apply, as FETCH's ack
        messages  send_post (handle_send.c)
        ops       write_apply (handle_write.c): atomic among themselves
        action    world_step (handle_perceive.c), or a PERCEIVE (`perceive`)
        mail      fetch_encode (handle_fetch.c), as a plain FETCH of `fetch`

    A part that fails reports its error in its own field of STEPPED: while
    it runs, the broker's part_error points at that part's record and
    dispatch_error fills it instead of writing an ERROR reply. The other
    parts go on. Only what no part can carry refuses the whole STEP (too
    many messages; decoding, HELLO and the journal are the dispatcher's).

    Idempotent STEP: the STEPPED fields before the mail are remembered
    (replay.h, journaled with the step: across restarts too) under the step; a resend gets them again, applies nothing,
    and has its mail read afresh. The mail stays out of the memory: it is
    the biggest part, and reading it again is what a lost FETCH reply
    costs anyway. So the memory is one SENT, one WRITTEN and one
    OBSERVATION an agent, as ACT's and SEND's are.
*/
#include "broker_internal.h"
#include "rights.h"

static void
s_part_error (penc_t *enc, const char *key, part_error_t *error)
{
    if (error->code == PERR_NONE) {     //  a refusal that named no code
        error->code = PERR_INTERNAL;
        snprintf (error->text, sizeof error->text, "the part was refused without a reason");
    }
    penc_key (enc, key);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_uint (enc, "code", (uint64_t) error->code);
    penc_kv_cstr (enc, "error", perr_name (error->code));
    penc_kv_cstr (enc, "message", error->text);
}

//  The fields after the remembered ones: `mail` and `pending` with a
//  fetch, `acked` always. Their count:
static size_t
s_mail_fields (size_t fetch)
{
    return fetch ? 3 : 1;
}

//  `stream` as FETCH's; a resend reads from acked (plain), so the mail of
//  the lost reply comes again.
static void
s_mail (broker_t *self, agent_t *agent, size_t fetch, bool stream)
{
    penc_t *enc = &self->reply;
    if (fetch) {
        penc_key (enc, "mail");
        uint64_t pending = fetch_encode (self, agent, fetch, stream, enc);
        penc_kv_uint (enc, "pending", pending);
    }
    penc_kv_uint (enc, "acked", agent->acked);
}

void
handle_step (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    const pmsg_t *msg = req->msg;
    const msgpack_object *step_field = pmsg_field (msg, "step");
    uint64_t step = pmsg_uint (msg, "step", 0);
    size_t fetch = pmsg_uint (msg, "fetch", 0);
    if (fetch > self->config.max_batch)
        fetch = self->config.max_batch;
    //  A resend: the remembered parts, `replayed`, and the mail read afresh.
    if (step_field
    &&  replay_answer_more (&agent->slots [SLOT_STEP], step, PMSG_STEPPED, req->id,
                            s_mail_fields (fetch) + 1, &self->reply)) {
        call_begin (self, agent->id, req->msg, req->frame, req->frame_size, 0);
        penc_kv_bool (&self->reply, "replayed", true);
        s_mail (self, agent, fetch, false);
        call_end (self);
        return;
    }
    const msgpack_object *items = pmsg_field (msg, "messages");
    if (items && items->via.array.size == 0)
        items = NULL;
    if (items && items->via.array.size > self->config.max_batch) {
        dispatch_error (self, req->id, PERR_TOO_LARGE, "STEP carries %u messages; the limit "
                        "is %zu per request", items->via.array.size, self->config.max_batch);
        return;
    }
    const msgpack_object *ops = pmsg_field (msg, "ops");
    if (ops && ops->via.array.size == 0)
        ops = NULL;
    size_t action_len = 0;
    const char *action = pmsg_str (msg, "action", &action_len);
    bool world = action || pmsg_bool (msg, "perceive", false);
    //  Room for the remembered parts: a SENT, a WRITTEN, an OBSERVATION.
    size_t reserve = step_field ? BROKER_SENT_ERRORS_BUDGET + WORLD_IMAGE_MAX + 64 * 1024 : 0;
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size, reserve);
    //  A step that changes something is refused whole on a full disk.
    if ((items || ops || world || pmsg_field (msg, "ack")) && !call_reserve (self, req->id)) {
        call_end (self);
        return;
    }
    if (!step_field)
        remember (self, agent, SLOT_STEP, false, 0, 0, 0);

    //  ack -> messages -> ops -> action; the mail last, when encoding.
    if (pmsg_field (msg, "ack"))
        ack_apply (self, agent, pmsg_uint (msg, "ack", 0));
    send_outcome_t sent;
    if (items)
        send_post (self, agent, items, &sent);
    //  The ops and the move report their errors into their own records.
    part_error_t ops_error = { PERR_NONE, "" }, action_error = { PERR_NONE, "" };
    state_result_t written = { 0 };
    bool ops_ok = false, moved = false;
    world_obs_t obs;
    if (ops) {
        self->part_error = &ops_error;
        ops_ok = rights_allow_ops (self, req, ops) && write_apply (self, req, ops, &written);
        self->part_error = NULL;
    }
    if (world) {
        self->part_error = &action_error;
        moved = world_step (self, req, action, action_len, step_field ? &step : NULL, &obs);
        self->part_error = NULL;
    }

    size_t fields = (step_field ? 1 : 0) + (items ? 1 : 0) + (ops ? 1 : 0) + (world ? 1 : 0);
    penc_t *enc = &self->reply;
    msgpack_packer *pk = penc_packer (enc);
    penc_begin (enc, PMSG_STEPPED, req->id, fields + s_mail_fields (fetch));
    size_t head = penc_size (enc);
    if (step_field)
        penc_kv_uint (enc, "step", step);
    if (items) {
        penc_key (enc, "sent");
        msgpack_pack_map (pk, (uint32_t) send_fields (&sent));
        send_encode (self, &sent, enc);
    }
    if (ops_ok) {
        penc_key (enc, "written");
        msgpack_pack_map (pk, 2);
        penc_kv_uint (enc, "seq", written.seq);
        penc_kv_uint (enc, "changed", written.changed);
    }
    else
    if (ops)
        s_part_error (enc, "ops_error", &ops_error);
    if (moved) {
        penc_key (enc, "observation");
        msgpack_pack_map (pk, (uint32_t) world_observation_fields (&obs));
        world_encode_observation (&obs, enc);
    }
    else
    if (world)
        s_part_error (enc, "action_error", &action_error);
    if (step_field)
        remember (self, agent, SLOT_STEP, true, step, head, fields);
    s_mail (self, agent, fetch, pmsg_bool (msg, "stream", false));
    call_end (self);
}
