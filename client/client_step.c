// SPDX-License-Identifier: MIT
/*  client_step - STEP, an agent's whole step in one request
    (PROTOCOL.md, STEP): encoded from parley_step_t, its STEPPED decoded
    into parley_stepped_t.

    The messages and ops are checked and encoded by SEND's and WRITE's own
    code (client_requests.c), and STEPPED's parts are decoded by SENT's,
    MAIL's and OBSERVATION's decoders (client_results.c) reading the part's
    record instead of the whole reply. The sent part and the mail need
    arrays of their own at the same time, so the sent part's go to
    step_seqs / step_errors and the mail to `items`.

    A STEP with a `step` is resent by client_call after a lost reply or a
    reconnect, like ACT with its step: the broker answers a repeat from
    memory and applies nothing twice.
*/
#include <assert.h>
#include "client_internal.h"

static void
s_part_error (const msgpack_object *root, const char *name, parley_part_error_t *out)
{
    memset (out, 0, sizeof (*out));
    const msgpack_object *part = pobj_get (root, name);
    if (!part || part->type != MSGPACK_OBJECT_MAP)
        return;
    out->code = (int) pobj_uint (part, "code", PARLEY_ERR_INTERNAL);
    if (out->code == 0)
        out->code = PARLEY_ERR_BAD_REPLY;
    if (!pobj_strcpy (part, "message", out->message, sizeof (out->message))) {
        //  Too long for the result: cut, as SENT's item errors are.
        size_t len = 0;
        const char *text = pobj_str (part, "message", &len);
        snprintf (out->message, sizeof (out->message), "%.*s", (int) (text? len: 0),
                  text? text: "");
    }
}

static const msgpack_object *
s_record (const msgpack_object *root, const char *name)
{
    const msgpack_object *part = pobj_get (root, name);
    return part && part->type == MSGPACK_OBJECT_MAP? part: NULL;
}

static parley_err_t
s_encode (parley_client_t *self, const parley_step_t *step)
{
    if (step->message_count > PROTO_MAX_BATCH || step->op_count > PROTO_MAX_BATCH
    ||  (step->message_count && !step->messages) || (step->op_count && !step->ops))
        return client_fail (self, PARLEY_ERR_INVALID, "STEP of %zu messages and %zu ops "
                            "(0..%d each, with their arrays)", step->message_count,
                            step->op_count, PROTO_MAX_BATCH);
    if (step->action && (!*step->action || strlen (step->action) > PROTO_MAX_TEXT))
        return client_fail (self, PARLEY_ERR_INVALID, "STEP action empty or longer than %d bytes",
                            PROTO_MAX_TEXT);
    parley_err_t rc = client_messages_check (self, step->messages, step->message_count);
    if (rc == PARLEY_OK)
        rc = client_ops_check (self, step->ops, step->op_count);
    if (rc != PARLEY_OK)
        return rc;
    size_t fields = (step->step? 1: 0) + (step->ack? 1: 0) + (step->message_count? 1: 0)
                  + (step->op_count? 1: 0) + (step->action? 1: 0)
                  + (!step->action && step->perceive? 1: 0) + (step->fetch? 1: 0)
                  + (step->fetch && step->stream? 1: 0);
    penc_t *enc = client_begin (self, PMSG_STEP, fields);
    if (step->step)
        penc_kv_uint (enc, "step", step->step);
    if (step->ack)
        penc_kv_uint (enc, "ack", step->ack);
    if (step->message_count)
        client_messages_encode (self, enc, step->messages, step->message_count);
    if (step->op_count)
        client_ops_encode (enc, step->ops, step->op_count);
    if (step->action)
        penc_kv_cstr (enc, "action", step->action);
    else
    if (step->perceive)
        penc_kv_bool (enc, "perceive", true);
    if (step->fetch)
        penc_kv_uint (enc, "fetch", step->fetch);
    if (step->fetch && step->stream)
        penc_kv_bool (enc, "stream", true);
    return PARLEY_OK;
}

static void
s_decode (parley_client_t *self, const parley_step_t *step, parley_stepped_t *out)
{
    memset (out, 0, sizeof (*out));
    const msgpack_object *root = pmsg_root (self->reply);
    out->step = pobj_uint (root, "step", 0);
    out->replayed = pobj_bool (root, "replayed", false);
    out->acked = pobj_uint (root, "acked", 0);
    const msgpack_object *part = s_record (root, "sent");
    if ((out->has_sent = part != NULL))
        client_decode_sent_in (self, part, 0, step->message_count, &out->sent,
                               &self->step_seqs, &self->step_seqs_size,
                               &self->step_errors, &self->step_errors_size);
    if ((part = s_record (root, "written"))) {
        out->has_written = true;
        out->written.seq = pobj_uint (part, "seq", 0);
        out->written.changed = pobj_uint (part, "changed", 0);
    }
    s_part_error (root, "ops_error", &out->ops_error);
    if ((part = s_record (root, "observation"))) {
        out->has_observation = true;
        client_decode_observation_in (self, part, &out->observation);
    }
    s_part_error (root, "action_error", &out->action_error);
    const msgpack_object *mail = pobj_get (root, "mail");
    if ((out->has_mail = mail && mail->type == MSGPACK_OBJECT_ARRAY))
        client_decode_mail_in (self, root, "mail", &out->mail, &self->items, &self->items_size);
    out->mail.acked = out->acked;
}

parley_err_t
parley_client_step (parley_client_t *self, const parley_step_t *step, parley_stepped_t *result)
{
    assert (self && step && result);
    parley_err_t rc = s_encode (self, step);
    if (rc == PARLEY_OK)
        rc = client_call (self, PMSG_STEPPED);
    if (rc == PARLEY_OK)
        s_decode (self, step, result);
    return rc;
}
