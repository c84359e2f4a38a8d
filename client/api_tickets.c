// SPDX-License-Identifier: MIT
/*  api_tickets - requests in flight together (parley/pipeline.h): SEND,
    FETCH and WRITE posted without waiting, their replies collected by
    ticket (the request id) with the same results and errors as the
    blocking calls.

    A posted request is never sent again (see parley/pipeline.h), so a
    closed connection fails every ticket still waiting, and a collect
    reports it.
*/
#include <assert.h>
#include <inttypes.h>
#include "api_mail.h"
#include "api_state.h"
#include "client_internal.h"
#include "mail_int.h"
#include "pclock.h"
#include "plog.h"
#include "sent_int.h"
#include "state_int.h"

//  Room for one more ticket.
static parley_err_t
s_room (parley_client_t *self, parley_ticket_t *ticket)
{
    assert (self && ticket);
    client_conn_t *conn = client_conn_of (self);
    *ticket = 0;
    client_conn_clear_error (conn);
    if (client_tickets_count (client_tickets_of (self)) >= PARLEY_MAX_IN_FLIGHT)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "%d requests in flight already: collect one",
                            PARLEY_MAX_IN_FLIGHT);
    return PARLEY_OK;
}

//  Sends the request encoder's frame without waiting, and records it. Says
//  HELLO first when there is no session.
static parley_err_t
s_post (parley_client_t *self, pmsg_type_t expect, uint64_t batch, size_t count,
        parley_ticket_t *ticket)
{
    client_conn_t *conn = client_conn_of (self);
    penc_t *enc = client_conn_encoder (conn);
    if (!penc_ok (enc))
        return client_conn_nomem (conn);
    parley_err_t rc = client_conn_ensure (conn);
    if (rc == PARLEY_OK)
        rc = client_sender_before (client_sender_of (self));  //  held SENDs go first
    if (rc != PARLEY_OK)
        return rc;
    uint64_t id = client_conn_request_id (conn);
    if (client_tickets_add (client_tickets_of (self), id, expect, batch, count) != 0)
        return client_conn_nomem (conn);
    if (client_conn_send (conn, penc_data (enc), penc_size (enc), false) != 0) {
        parley_err_t code;
        pmsg_t *none;
        client_tickets_take (client_tickets_of (self), id, &none, &code, NULL, NULL);
        return client_conn_fail (conn, PARLEY_ERR_TIMEOUT, "the socket would not take the request: %s",
                            zmq_strerror (zmq_errno ()));
    }
    *ticket = id;
    return PARLEY_OK;
}

parley_err_t
parley_client_post_send (parley_client_t *self, const parley_outbox_t *messages,
                         parley_ticket_t *ticket)
{
    assert (messages);
    parley_err_t rc = s_room (self, ticket);
    uint64_t batch = 0;
    if (rc == PARLEY_OK)
        rc = client_encode_send (self, messages, &batch);
    if (rc == PARLEY_OK)
        rc = s_post (self, PMSG_SENT, batch, parley_outbox_count (messages), ticket);
    //  An acknowledgement that rode on it goes again.
    if (rc != PARLEY_OK)
        client_sender_ack_refused (client_sender_of (self));
    return rc;
}

parley_err_t
parley_client_post_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream,
                          parley_ticket_t *ticket)
{
    parley_err_t rc = s_room (self, ticket);
    if (rc != PARLEY_OK)
        return rc;
    client_encode_fetch (self, ack, max, stream);
    return s_post (self, PMSG_MAIL, 0, 0, ticket);
}

parley_err_t
parley_client_post_write (parley_client_t *self, const parley_ops_t *ops, parley_ticket_t *ticket)
{
    assert (ops);
    parley_err_t rc = s_room (self, ticket);
    if (rc == PARLEY_OK)
        rc = client_encode_write (self, ops);
    return rc == PARLEY_OK ? s_post (self, PMSG_WRITTEN, 0, 0, ticket) : rc;
}

size_t
parley_client_in_flight (parley_client_t *self)
{
    assert (self);
    return client_tickets_count (client_tickets_of (self));
}

//  Waits for `ticket`'s reply and takes it out of the table: PARLEY_OK with
//  a reply of type `expect` (the caller's), or the error.
static parley_err_t
s_collect (parley_client_t *self, parley_ticket_t ticket, pmsg_type_t expect, pmsg_t **reply_p,
           uint64_t *batch, size_t *count)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    *reply_p = NULL;
    client_conn_clear_error (conn);
    client_tickets_t *tickets = client_tickets_of (self);
    pmsg_type_t expected;
    if (!client_tickets_find (tickets, ticket, &expected))
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "no request %" PRIu64 " in flight", ticket);
    if (expected != expect)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "request %" PRIu64 " is answered by %s, "
                            "not %s", ticket, pmsg_type_name (expected), pmsg_type_name (expect));
    if (!client_tickets_done (tickets, ticket)) {
        pmsg_t *reply = NULL;
        parley_err_t rc = client_conn_await (conn, ticket, pclock_mono_ms () + client_conn_request_ms (conn),
                                        &reply);
        if (rc == PARLEY_OK)
            client_tickets_answer (tickets, ticket, reply);
        else
        if (rc == PARLEY_ERR_NOMEM)
            return client_conn_fail (conn, rc, "out of memory reading replies (they stay queued)");
        else
        if (rc == PARLEY_ERR_STOPPED)
            return client_conn_fail (conn, rc, "stopped");
        else {
            //  Sent once only: the connection is given up with every
            //  request on it, and the next call says HELLO again.
            client_conn_count (conn, PARLEY_COUNTER_TIMEOUTS);
            plog_warn ("no reply from broker in %" PRId64 " ms; reconnecting",
                       client_conn_request_ms (conn));
            client_conn_close (conn, PARLEY_ERR_TIMEOUT);
        }
    }
    parley_err_t code;
    pmsg_t *reply;
    client_tickets_take (tickets, ticket, &reply, &code, batch, count);
    if (code == PARLEY_ERR_NOT_HELLO)
        return client_conn_fail (conn, code, "the broker forgot this session");
    if (code)
        return client_conn_fail (conn, code, "no reply to request %" PRIu64
                            " (sent once; its connection was closed)", ticket);
    pmsg_type_t type = pmsg_type (reply);
    if (type == expect) {
        *reply_p = reply;
        return PARLEY_OK;
    }
    parley_err_t rc;
    if (type == PMSG_ERROR) {
        rc = client_conn_error_reply (conn, reply);
        if (rc == PARLEY_ERR_NOT_HELLO) {
            plog_info ("broker forgot us (NOT_HELLO); will say HELLO again");
            client_conn_close (conn, PARLEY_ERR_NOT_HELLO);
        }
    }
    else
        rc = client_conn_fail (conn, PARLEY_ERR_BAD_REPLY, "unexpected reply %s to request %" PRIu64,
                          pmsg_type_name (type), ticket);
    pmsg_destroy (&reply);
    return rc;
}

static parley_err_t
s_collect_sent (parley_client_t *self, parley_ticket_t ticket,
                parley_sent_t **result_p)
{
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_sent_new);
    if (rc != PARLEY_OK)
        return rc;
    if (result_p)
        client_sent_clear (*result_p);
    pmsg_t *reply;
    uint64_t batch = 0;
    size_t count = 0;
    rc = s_collect (self, ticket, PMSG_SENT, &reply, &batch, &count);
    if (rc != PARLEY_OK && rc != PARLEY_ERR_INVALID)
        client_sender_ack_refused (client_sender_of (self));
    if (rc == PARLEY_OK && result_p
    &&  client_sent_decode (*result_p, pmsg_root (reply), batch, count) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_collect_sent (parley_client_t *self, parley_ticket_t ticket,
                            parley_sent_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_collect_sent (self, ticket, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_sent_destroy);
    return rc;
}

static parley_err_t
s_collect_mail (parley_client_t *self, parley_ticket_t ticket,
                parley_mail_t **result_p)
{
    assert (result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_mail_new);
    if (rc != PARLEY_OK)
        return rc;
    client_mail_clear (*result_p);
    pmsg_t *reply;
    rc = s_collect (self, ticket, PMSG_MAIL, &reply, NULL, NULL);
    if (rc == PARLEY_OK)
        rc = client_mail_result (self, &reply, *result_p);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_collect_mail (parley_client_t *self, parley_ticket_t ticket,
                            parley_mail_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_collect_mail (self, ticket, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_mail_destroy);
    return rc;
}

static parley_err_t
s_collect_written (parley_client_t *self, parley_ticket_t ticket,
                   parley_written_t **result_p)
{
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_written_new);
    if (rc != PARLEY_OK)
        return rc;
    pmsg_t *reply;
    rc = s_collect (self, ticket, PMSG_WRITTEN, &reply, NULL, NULL);
    if (rc == PARLEY_OK && result_p)
        client_written_decode (*result_p, pmsg_root (reply));
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_collect_written (parley_client_t *self, parley_ticket_t ticket,
                               parley_written_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_collect_written (self, ticket, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_written_destroy);
    return rc;
}
