// SPDX-License-Identifier: MIT
/*  client_pipeline - libparley's requests in flight together: SEND, FETCH
    and WRITE posted without waiting, their replies collected by ticket
    (the request id) with the same typed results and errors as the
    blocking calls.

    The table of posted requests is short (at most PARLEY_MAX_IN_FLIGHT)
    and unordered, searched by id; a reply that comes while another one
    is awaited, by a collect, a blocking request or a keepalive, is parked
    in its entry.
    A posted request is never sent again (see client.h), so a closed
    socket fails every entry still waiting, and a collect reports it.
*/
#include <assert.h>
#include "client_internal.h"
#include "pclock.h"
#include "plog.h"

static client_pending_t *
s_find (parley_client_t *self, uint64_t id)
{
    for (size_t i = 0; i < self->pending_count; i++)
        if (self->pending [i].id == id)
            return &self->pending [i];
    return NULL;
}

bool
client_pending_keep (parley_client_t *self, pmsg_t *msg)
{
    if (client_confirm_keep (self, msg))
        return true;
    if (client_push_keep (self, msg))
        return true;            //  pushed mail comes between replies
    client_pending_t *entry = s_find (self, pmsg_id (msg));
    if (!entry || entry->reply || entry->code)
        return false;
    entry->reply = msg;
    return true;
}

void
client_pending_fail (parley_client_t *self, parley_err_t code)
{
    for (size_t i = 0; i < self->pending_count; i++)
        if (!self->pending [i].reply && !self->pending [i].code)
            self->pending [i].code = code;
}

void
client_pending_destroy (parley_client_t *self)
{
    for (size_t i = 0; i < self->pending_count; i++)
        pmsg_destroy (&self->pending [i].reply);
    free (self->pending);
    self->pending = NULL;
    self->pending_count = 0;
}

size_t
parley_client_in_flight (parley_client_t *self)
{
    assert (self);
    return self->pending_count;
}

//  Sends self->enc, begun by client_encode_*, without waiting, and records
//  it. Says HELLO first when there is no session.
static parley_err_t
s_post (parley_client_t *self, pmsg_type_t expect, uint64_t batch, size_t count,
        parley_ticket_t *ticket)
{
    parley_err_t rc = client_ensure_session (self);
    if (rc == PARLEY_ERR_STOPPED)
        return client_fail (self, rc, "stopped");
    if (rc != PARLEY_OK) {
        char why [sizeof (self->error)];
        snprintf (why, sizeof why, "%s", self->error);
        return client_fail (self, rc == PARLEY_ERR_TIMEOUT? rc: PARLEY_ERR_LOST,
                            "broker %s HELLO: %s", rc == PARLEY_ERR_TIMEOUT? "not answering":
                            "refused", why);
    }
    if (!self->pending)
        self->pending = (client_pending_t *) client_alloc (
            NULL, PARLEY_MAX_IN_FLIGHT * sizeof (client_pending_t));
    self->stats.requests++;
    if (zmq_send (zsock_resolve (self->dealer), penc_data (&self->enc), penc_size (&self->enc),
                  ZMQ_DONTWAIT) < 0)
        return client_fail (self, PARLEY_ERR_TIMEOUT, "the socket would not take the request: %s",
                            zmq_strerror (zmq_errno ()));
    self->last_send_ms = pclock_mono_ms ();
    self->pending [self->pending_count++] = (client_pending_t) {
        .id = self->enc_id, .expect = expect, .batch = batch, .count = count
    };
    *ticket = self->enc_id;
    return PARLEY_OK;
}

static parley_err_t
s_room (parley_client_t *self, parley_ticket_t *ticket)
{
    assert (self && ticket);
    *ticket = 0;
    if (self->pending_count >= PARLEY_MAX_IN_FLIGHT)
        return client_fail (self, PARLEY_ERR_INVALID, "%d requests in flight already: collect one",
                            PARLEY_MAX_IN_FLIGHT);
    return PARLEY_OK;
}

parley_err_t
parley_client_post_send (parley_client_t *self, const parley_outgoing_t *items, size_t count,
                         parley_ticket_t *ticket)
{
    parley_err_t rc = s_room (self, ticket);
    uint64_t batch = 0;
    if (rc == PARLEY_OK)
        rc = client_encode_send (self, items, count, &batch);
    return rc == PARLEY_OK? s_post (self, PMSG_SENT, batch, count, ticket): rc;
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
parley_client_post_write (parley_client_t *self, const parley_op_t *ops, size_t count,
                          parley_ticket_t *ticket)
{
    parley_err_t rc = s_room (self, ticket);
    if (rc == PARLEY_OK)
        rc = client_encode_write (self, ops, count);
    return rc == PARLEY_OK? s_post (self, PMSG_WRITTEN, 0, 0, ticket): rc;
}

//  Waits for `ticket`'s reply and takes its entry out of the table. On
//  PARLEY_OK self->reply holds a reply of type `expect` and `*entry` the
//  request's record.
static parley_err_t
s_collect (parley_client_t *self, parley_ticket_t ticket, pmsg_type_t expect,
           client_pending_t *entry)
{
    assert (self);
    pmsg_destroy (&self->reply);
    client_results_reset (self);
    self->error [0] = 0;
    client_pending_t *found = s_find (self, ticket);
    if (!found)
        return client_fail (self, PARLEY_ERR_INVALID, "no request %" PRIu64 " in flight", ticket);
    if (found->expect != expect)
        return client_fail (self, PARLEY_ERR_INVALID, "request %" PRIu64 " is answered by %s, not %s",
                            ticket, pmsg_type_name (found->expect), pmsg_type_name (expect));
    if (!found->reply && !found->code) {
        pmsg_t *reply = NULL;
        self->busy = true;
        parley_err_t rc = client_await (self, ticket, pclock_mono_ms () + self->request_ms, &reply);
        self->busy = false;
        if (rc == PARLEY_ERR_STOPPED)
            return client_fail (self, rc, "stopped");
        //  `found` still points at the entry: waiting parks other replies
        //  in their entries and closing marks them, neither moves one.
        if (rc == PARLEY_OK)
            found->reply = reply;
        else {
            //  Sent once only: the connection is given up with every
            //  request on it, and the next call says HELLO again.
            self->stats.timeouts++;
            plog_warn ("no reply from broker in %" PRId64 " ms; reconnecting", self->request_ms);
            client_close_dealer (self);
        }
    }
    //  Out of the table by moving the last entry into its place: a memmove
    //  of the whole table per collect costs more than the reply's decode
    //  when hundreds are in flight, and s_find does not need any order.
    *entry = *found;
    *found = self->pending [--self->pending_count];
    if (entry->code == PARLEY_ERR_NOT_HELLO)
        return client_fail (self, entry->code, "the broker forgot this session");
    if (entry->code)
        return client_fail (self, entry->code, "no reply to request %" PRIu64
                            " (sent once; its connection was closed)", ticket);
    self->reply = entry->reply;
    entry->reply = NULL;
    pmsg_type_t type = pmsg_type (self->reply);
    if (type == expect)
        return PARLEY_OK;
    if (type == PMSG_ERROR) {
        parley_err_t rc = client_error_reply (self, self->reply);
        if (rc == PARLEY_ERR_NOT_HELLO) {
            plog_info ("broker forgot us (NOT_HELLO); will say HELLO again");
            client_pending_fail (self, PARLEY_ERR_NOT_HELLO);
            client_close_dealer (self);
        }
        return rc;
    }
    return client_fail (self, PARLEY_ERR_BAD_REPLY, "unexpected reply %s to request %" PRIu64,
                        pmsg_type_name (type), ticket);
}

parley_err_t
parley_client_collect_sent (parley_client_t *self, parley_ticket_t ticket, parley_sent_t *result)
{
    client_pending_t entry;
    parley_err_t rc = s_collect (self, ticket, PMSG_SENT, &entry);
    if (rc == PARLEY_OK && result)
        client_decode_sent (self, entry.batch, entry.count, result);
    return rc;
}

parley_err_t
parley_client_collect_mail (parley_client_t *self, parley_ticket_t ticket,
                            parley_mail_batch_t *result)
{
    assert (result);
    client_pending_t entry;
    parley_err_t rc = s_collect (self, ticket, PMSG_MAIL, &entry);
    if (rc == PARLEY_OK)
        client_decode_mail (self, result);
    return rc;
}

parley_err_t
parley_client_collect_written (parley_client_t *self, parley_ticket_t ticket,
                               parley_written_t *result)
{
    client_pending_t entry;
    parley_err_t rc = s_collect (self, ticket, PMSG_WRITTEN, &entry);
    if (rc == PARLEY_OK && result)
        client_decode_written (self, result);
    return rc;
}
