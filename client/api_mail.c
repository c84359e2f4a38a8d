// SPDX-License-Identifier: MIT
/*  api_mail - mail requests (parley/mail.h): SEND, FETCH, ACK (waiting or
    not), CONSUME and the pushed mail taken from it. LISTEN and UNLISTEN
    are the client's own (client.c): it says them again after a reconnect.
*/
#include <assert.h>
#include "api_mail.h"
#include "client_internal.h"
#include "mail_int.h"
#include "outbox_int.h"
#include "plog.h"
#include "sent_int.h"

parley_err_t
client_check_send (parley_client_t *self, const parley_outbox_t *messages)
{
    client_conn_t *conn = client_conn_of (self);
    const char *why = "";
    parley_err_t rc = client_outbox_error (messages, &why);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (conn);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    size_t count = parley_outbox_count (messages);
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "SEND of %zu messages (1..%d)",
                            count, PROTO_MAX_BATCH);
    return PARLEY_OK;
}

parley_err_t
client_encode_send (parley_client_t *self, const parley_outbox_t *messages, uint64_t *batch_p)
{
    assert (batch_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = client_check_send (self, messages);
    if (rc != PARLEY_OK)
        return rc;
    //  A held acknowledgement rides on it (sender.h).
    uint64_t ack = client_sender_take_ack (client_sender_of (self));
    //  The batch id makes the SEND idempotent: a resend after a lost reply
    //  carries this same id, and the broker answers it with the first
    //  SENT instead of posting again.
    penc_t *enc = client_conn_begin (conn, PMSG_SEND, ack ? 4 : 3);
    *batch_p = client_next_batch (self);
    penc_kv_uint (enc, "batch", *batch_p);
    penc_kv_uint (enc, "wait_ms", client_send_wait (self));
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    client_outbox_encode (messages, enc, client_max_body (self));
    return penc_ok (enc) ? PARLEY_OK : client_conn_nomem (conn);
}

static parley_err_t
s_send (parley_client_t *self, const parley_outbox_t *messages,
        parley_sent_t **result_p)
{
    assert (self && messages);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_sent_new);
    if (rc != PARLEY_OK)
        return rc;
    if (result_p)
        client_sent_clear (*result_p);
    uint64_t batch = 0;
    rc = client_encode_send (self, messages, &batch);
    pmsg_t *reply = NULL;
    if (rc == PARLEY_OK)
        rc = client_conn_call (conn, PMSG_SENT, &reply);
    //  Refused whole, or never sent: an acknowledgement that rode on it
    //  was not applied, and goes again.
    if (rc != PARLEY_OK)
        client_sender_ack_refused (client_sender_of (self));
    if (rc == PARLEY_OK && result_p
    &&  client_sent_decode (*result_p, pmsg_root (reply), batch,
                            parley_outbox_count (messages)) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_send (parley_client_t *self, const parley_outbox_t *messages,
                    parley_sent_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_send (self, messages, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_sent_destroy);
    return rc;
}

void
client_encode_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream)
{
    client_conn_t *conn = client_conn_of (self);
    size_t fields = (ack ? 1 : 0) + (max ? 1 : 0) + (stream ? 1 : 0);
    penc_t *enc = client_conn_begin (conn, PMSG_FETCH, fields);
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    if (max)
        penc_kv_uint (enc, "max", max);
    if (stream)
        penc_kv_bool (enc, "stream", true);
}

parley_err_t
client_mail_result (parley_client_t *self, pmsg_t **reply_p, parley_mail_t *mail)
{
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = client_mail_decode (mail, reply_p, pmsg_root (*reply_p), "messages",
                                          client_dedup_of (self));
    return rc == PARLEY_OK ? rc : client_conn_nomem (conn);
}

static parley_err_t
s_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream,
         parley_mail_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_mail_new);
    if (rc != PARLEY_OK)
        return rc;
    client_mail_clear (*result_p);
    client_encode_fetch (self, ack, max, stream);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_MAIL, &reply);
    if (rc == PARLEY_OK)
        rc = client_mail_result (self, &reply, *result_p);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream,
                     parley_mail_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_fetch (self, ack, max, stream, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_mail_destroy);
    return rc;
}

void
parley_client_dedup (parley_client_t *self, bool on)
{
    assert (self);
    client_dedup_set_on (client_dedup_of (self), on);
}

//  Kept for a consumer's next session (client.c sends it again).
static void
s_acked (parley_client_t *self, uint64_t seq)
{
    client_push_t *push = client_push_of (self);
    if (seq > client_push_acked (push))
        client_push_set_acked (push, seq, parley_welcome_origin (parley_client_welcome (self)));
}

parley_err_t
parley_client_ack (parley_client_t *self, uint64_t seq)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    penc_t *enc = client_conn_begin (conn, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seq);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    if (rc == PARLEY_OK)
        s_acked (self, seq);
    return rc;
}

parley_err_t
parley_client_ack_nowait (parley_client_t *self, uint64_t seq)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    if (seq <= client_push_acked (client_push_of (self)))
        return PARLEY_OK;
    if (!client_conn_up (conn) || !client_transport_is_open (client_conn_transport (conn)))
        return client_conn_fail (conn, PARLEY_ERR_NOT_HELLO, "no session: the ack is sent "
                            "again with the next HELLO");
    //  Held for the next SEND when the broker takes it there, else an ACK
    //  frame now; the OK that answers one is a reply nobody waits for.
    parley_err_t rc = client_sender_ack (client_sender_of (self), seq);
    if (rc == PARLEY_OK)
        s_acked (self, seq);
    return rc;
}

//  ---------------------------------------------------------------------
//  Pushed mail

parley_err_t
parley_client_consume (parley_client_t *self, uint32_t credit, uint64_t credit_bytes)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    if (credit > PARLEY_MAX_CREDIT)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "credit %u is over %u messages", credit,
                            PARLEY_MAX_CREDIT);
    client_push_t *push = client_push_of (self);
    if (client_push_reserve (push, credit) != 0)
        return client_conn_nomem (conn);
    penc_t *enc = client_conn_begin (conn, PMSG_CONSUME, credit_bytes ? 2 : 1);
    penc_kv_uint (enc, "credit", credit);
    if (credit_bytes)
        penc_kv_uint (enc, "credit_bytes", credit_bytes);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    if (rc == PARLEY_OK) {
        //  An opened subscription starts again from the acknowledged
        //  position: frames queued before it are pushed again.
        if (!client_push_credit (push))
            client_push_purge (push);
        client_push_set_window (push, credit, credit_bytes);
    }
    return rc;
}

void
parley_client_ack_policy (parley_client_t *self, parley_ack_policy_t policy)
{
    assert (self);
    client_push_set_policy (client_push_of (self), policy);
}

//  A take that finds nothing is a poll: the caller is about to wait or do
//  something else, so what the sender holds (the acknowledgement this
//  take made, above all) goes now rather than after a wait that may
//  never come.
static bool
s_none (parley_client_t *self)
{
    client_sender_service (client_sender_of (self), true);
    return false;
}

bool
parley_client_take_pushed (parley_client_t *self, parley_mail_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    client_push_t *push = client_push_of (self);
    client_dedup_t *dedup = client_dedup_of (self);
    //  What the caller took before is done with: acknowledge it.
    if (client_push_policy (push) == PARLEY_ACK_ON_TAKE
    &&  client_dedup_handed (dedup) > client_push_acked (push) && client_conn_up (conn))
        parley_client_ack_nowait (self, client_dedup_handed (dedup));
    client_conn_drain (conn);
    if (!client_push_pending (push))
        return s_none (self);
    if (!*result_p && !(*result_p = client_mail_new ())) {
        client_conn_nomem (conn);
        return false;
    }
    while (client_push_pending (push)) {
        pmsg_t *frame = client_push_peek (push);
        //  Decoded in place: the frame goes into the result, or stays
        //  queued when memory ran out.
        if (client_mail_decode (*result_p, &frame, pmsg_root (frame), "messages", dedup)
            != PARLEY_OK) {
            client_conn_nomem (conn);
            return false;
        }
        (void) client_push_pop (push);
        if (parley_mail_count (*result_p))
            return true;
    }
    return s_none (self);
}
