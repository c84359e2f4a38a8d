// SPDX-License-Identifier: MIT
/*  client_push - libparley's pushed mail (PROTOCOL.md, CONSUME): the push
    subscription kept over reconnects, MAIL_PUSH frames queued as they
    come on the request socket (between replies), taken one frame at a
    time through the same duplicate filter as FETCH, and acknowledgements
    that return credit without a round trip.

    The queue needs no bound of its own: the broker pushes at most the
    window the client asked for before it acknowledges, and a reconnect
    drops the frames of the old connection (their mail is pushed again on
    the new one, after the CONSUME this file sends with the HELLO).

    Lost acknowledgements: an ACK sent without waiting may die with its
    connection. Mail it covered would come again and be filtered as a
    duplicate, so nothing would acknowledge it and the window would stay
    full. The client therefore sends its highest acknowledgement again on
    every new session, before CONSUME (an ACK is harmless twice).
*/
#include <assert.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "client_internal.h"
#include "plog.h"

bool
client_push_keep (parley_client_t *self, pmsg_t *msg)
{
    if (pmsg_type (msg) != PMSG_MAIL_PUSH)
        return false;
    if (!self->push_queue) {
        self->push_queue = zlistx_new ();
        zlistx_set_destructor (self->push_queue, (zlistx_destructor_fn *) pmsg_destroy);
    }
    zlistx_add_end (self->push_queue, msg);
    self->mail_flag = true;
    return true;
}

bool
client_push_pending (parley_client_t *self)
{
    return self->push_queue && zlistx_size (self->push_queue) > 0;
}

void
client_push_destroy (parley_client_t *self)
{
    zlistx_destroy (&self->push_queue);
    if (self->epoll_fd >= 0)
        close (self->epoll_fd);
    self->epoll_fd = -1;
}

//  One request on the hello encoder during the handshake; true on OK.
static bool
s_exchange_ok (parley_client_t *self, uint64_t id)
{
    pmsg_t *reply;
    if (client_exchange (self, &self->hello, id, &reply) != PARLEY_OK)
        return false;
    bool ok = pmsg_type (reply) == PMSG_OK;
    if (!ok)
        client_error_reply (self, reply);
    pmsg_destroy (&reply);
    return ok;
}

static void
s_encode_consume (penc_t *enc, uint64_t id, uint32_t credit, uint64_t credit_bytes)
{
    penc_begin (enc, PMSG_CONSUME, id, credit_bytes ? 2 : 1);
    penc_kv_uint (enc, "credit", credit);
    if (credit_bytes)
        penc_kv_uint (enc, "credit_bytes", credit_bytes);
}

void
client_push_resume (parley_client_t *self)
{
    //  Frames of the old connection: their mail comes again.
    if (self->push_queue)
        zlistx_purge (self->push_queue);
    if (self->ack_origin != self->welcome.origin)
        self->ack_sent = 0;     //  a restarted broker: old seqs mean nothing
    if (!self->credit)
        return;
    if (self->ack_sent > self->welcome.acked) {
        uint64_t id = self->next_id++;
        penc_begin (&self->hello, PMSG_ACK, id, 1);
        penc_kv_uint (&self->hello, "seq", self->ack_sent);
        if (!s_exchange_ok (self, id))
            plog_warn ("could not acknowledge mail again after reconnecting");
    }
    uint64_t id = self->next_id++;
    s_encode_consume (&self->hello, id, self->credit, self->credit_bytes);
    if (!s_exchange_ok (self, id))
        plog_warn ("could not open the push subscription again: %s", self->error);
}

parley_err_t
parley_client_consume (parley_client_t *self, uint32_t credit, uint64_t credit_bytes)
{
    assert (self);
    if (credit > PARLEY_MAX_CREDIT)
        return client_fail (self, PARLEY_ERR_INVALID, "credit %u is over %u messages", credit,
                            PARLEY_MAX_CREDIT);
    penc_t *enc = client_begin (self, PMSG_CONSUME, 0);
    s_encode_consume (enc, self->enc_id, credit, credit_bytes);
    parley_err_t rc = client_call (self, PMSG_OK);
    if (rc == PARLEY_OK) {
        //  An opened subscription starts again from the acknowledged
        //  position: frames queued before it are pushed again.
        if (!self->credit && self->push_queue)
            zlistx_purge (self->push_queue);
        self->credit = credit;
        self->credit_bytes = credit_bytes;
    }
    return rc;
}

void
parley_client_ack_policy (parley_client_t *self, parley_ack_policy_t policy)
{
    assert (self);
    self->ack_policy = policy;
}

parley_err_t
parley_client_ack_nowait (parley_client_t *self, uint64_t seq)
{
    assert (self);
    if (seq <= self->ack_sent)
        return PARLEY_OK;
    if (!self->session || !self->dealer)
        return client_fail (self, PARLEY_ERR_NOT_HELLO, "no session: the ack is sent "
                            "again with the next HELLO");
    //  Own encoder: the caller's request in `enc` must survive. The OK
    //  that answers it is a late reply nobody waits for, dropped.
    uint64_t id = self->next_id++;
    penc_begin (&self->keepalive, PMSG_ACK, id, 1);
    penc_kv_uint (&self->keepalive, "seq", seq);
    if (zmq_send (zsock_resolve (self->dealer), penc_data (&self->keepalive),
                  penc_size (&self->keepalive), ZMQ_DONTWAIT) < 0)
        return client_fail (self, PARLEY_ERR_TIMEOUT, "the ack could not be sent: %s",
                            zmq_strerror (zmq_errno ()));
    self->stats.requests++;
    self->ack_sent = seq;
    self->ack_origin = self->welcome.origin;
    return PARLEY_OK;
}

bool
parley_client_take_pushed (parley_client_t *self, parley_mail_batch_t *result)
{
    assert (self && result);
    memset (result, 0, sizeof *result);
    //  What the caller took before is done with: acknowledge it.
    if (self->ack_policy == PARLEY_ACK_ON_TAKE && self->handed_seq > self->ack_sent
    &&  self->session)
        parley_client_ack_nowait (self, self->handed_seq);
    client_drain_replies (self);
    while (client_push_pending (self)) {
        pmsg_t *frame = (pmsg_t *) zlistx_detach (self->push_queue, NULL);
        pmsg_destroy (&self->reply);
        client_results_reset (self);
        self->reply = frame;
        client_decode_mail (self, result);
        if (result->count)
            break;
    }
    if (!client_push_pending (self))
        self->mail_flag = false;
    return result->count > 0;
}

//  ---------------------------------------------------------------------
//  The caller's descriptor: an epoll set over both sockets' ZMQ_FDs, so
//  one descriptor wakes for events (SUB) and pushed mail (DEALER) alike,
//  and stays the same over reconnects.

static void
s_watch (parley_client_t *self, int *watched, zsock_t *sock)
{
    int fd = sock ? zsock_fd (sock) : -1;
    if (fd == *watched)
        return;
    if (*watched >= 0)
        epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, *watched, NULL);
    *watched = -1;
    struct epoll_event event = { .events = EPOLLIN };
    event.data.fd = fd;
    if (fd >= 0 && epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0)
        *watched = fd;
}

void
client_fd_sync (parley_client_t *self)
{
    if (self->epoll_fd < 0)
        return;
    s_watch (self, &self->epoll_sub, self->sub);
    s_watch (self, &self->epoll_dealer, self->dealer);
}

void
client_fd_forget (parley_client_t *self, zsock_t *sock)
{
    if (self->epoll_fd < 0 || !sock)
        return;
    int fd = zsock_fd (sock);
    if (fd == self->epoll_sub || fd == self->epoll_dealer) {
        epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
        if (fd == self->epoll_sub)
            self->epoll_sub = -1;
        if (fd == self->epoll_dealer)
            self->epoll_dealer = -1;
    }
}

int
parley_client_fd (parley_client_t *self)
{
    assert (self);
    if (!self->sub && !self->dealer)
        return -1;
    if (self->epoll_fd < 0) {
        self->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
        self->epoll_sub = self->epoll_dealer = -1;
        if (self->epoll_fd < 0)
            return self->sub ? zsock_fd (self->sub) : -1;
    }
    client_fd_sync (self);
    return self->epoll_fd;
}
