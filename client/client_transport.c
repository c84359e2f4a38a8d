// SPDX-License-Identifier: MIT
/*  client_transport - libparley's sockets and frames: the one function
    that makes a socket (options, and later security, go there and only
    there), one send with the matching reply by request id, and replies
    decoded with the protocol's strict decoder.
*/
#include <assert.h>
#include "client_internal.h"
#include "pcurve.h"
#include "pclock.h"
#include "plog.h"

//  A DEALER or SUB socket connected to `endpoint`; NULL (and the error
//  text set) when it cannot be made or connected. Every socket of the
//  client is made here.
zsock_t *
client_socket_new (parley_client_t *self, int type, const char *endpoint)
{
    zsock_t *sock = zsock_new (type);
    if (!sock) {
        client_fail (self, PARLEY_ERR_SOCKET, "cannot make a socket: %s", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    zsock_set_linger (sock, 0);
    zsock_set_ipv6 (sock, 1);
    if (self->raw)
        zsock_set_rcvhwm (sock, self->raw_rcvhwm);     //  0: tests count every event and reply
    else
        zsock_set_maxmsgsize (sock, PROTO_MAX_FRAME);
    char why [512];
    if (pcurve_client (sock, self->curve_key, self->curve_server_key, why, sizeof why) != 0) {
        client_fail (self, PARLEY_ERR_INVALID, "%s", why);
        zsock_destroy (&sock);
        return NULL;
    }
    //  CURVE handshake failures are silent; the monitor says why later.
    if (type == ZMQ_DEALER && !self->raw) {
        zsock_destroy (&self->watch);
        self->watch = pcurve_watch (sock);
    }
    if (zsock_connect (sock, "%s", endpoint) != 0) {
        client_fail (self, PARLEY_ERR_SOCKET, "cannot connect to %s: %s", endpoint,
                     zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
        return NULL;
    }
    return sock;
}

//  Closes the DEALER (dropping anything queued on it); no session after.
//  Requests posted on it whose reply has not come never get one now.
void
client_close_dealer (parley_client_t *self)
{
    client_pending_fail (self, PARLEY_ERR_TIMEOUT);
    zsock_destroy (&self->watch);     //  the monitor before its socket
    client_fd_forget (self, self->dealer);
    zsock_destroy (&self->dealer);
    self->session = false;
}

static void
s_frame_release (void *frame)
{
    zframe_t *self = (zframe_t *) frame;
    zframe_destroy (&self);
}

//  One reply frame from the DEALER, decoded. NULL when none came or it did
//  not decode (counted in bad_frames and logged).
pmsg_t *
client_recv_reply (parley_client_t *self, bool nowait)
{
    zframe_t *frame = nowait? zframe_recv_nowait (self->dealer): zframe_recv (self->dealer);
    if (!frame)
        return NULL;
    perr_t code;
    uint64_t got_id;
    char why [256];
    //  Decoded in place: the message keeps the frame (a MAIL reply is the
    //  bulk of what a client receives, and is never copied).
    pmsg_t *msg = pmsg_decode_adopt (zframe_data (frame), zframe_size (frame),
                                     pwire_default_limits (), s_frame_release, frame,
                                     &code, &got_id, why, sizeof (why));
    if (!msg) {
        self->stats.bad_frames++;
        plog_warn ("bad reply from broker: %s", why);
    }
    return msg;
}

//  Waits for the reply carrying `id` until `until`. Replies to posted
//  requests (client_pipeline.c) are kept for their collect; others (late
//  ones, to requests given up on) are dropped.
parley_err_t
client_await (parley_client_t *self, uint64_t id, int64_t until, pmsg_t **reply_p)
{
    while (!parley_client_stopped (self)) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            return PARLEY_ERR_TIMEOUT;
        zmq_pollitem_t item = { zsock_resolve (self->dealer), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, left < CLIENT_POLL_SLICE_MS? left: CLIENT_POLL_SLICE_MS) <= 0)
            continue;
        pmsg_t *msg = client_recv_reply (self, false);
        if (!msg)
            continue;
        //  An ERROR with id 0 answers a frame whose id could not be read:
        //  the one awaited is taken to be it (the library writes every id
        //  itself), and a resend of the same bytes would fail the same way.
        if (pmsg_id (msg) == id || (pmsg_id (msg) == 0 && pmsg_type (msg) == PMSG_ERROR)) {
            *reply_p = msg;
            return PARLEY_OK;
        }
        if (!client_pending_keep (self, msg))
            pmsg_destroy (&msg);
    }
    return PARLEY_ERR_STOPPED;
}

//  One send of `enc` and its reply: PARLEY_OK, PARLEY_ERR_TIMEOUT (or a
//  socket that would not take the frame), PARLEY_ERR_STOPPED.
parley_err_t
client_exchange (parley_client_t *self, penc_t *enc, uint64_t id, pmsg_t **reply_p)
{
    *reply_p = NULL;
    self->stats.requests++;
    if (zmq_send (zsock_resolve (self->dealer), penc_data (enc), penc_size (enc),
                  ZMQ_DONTWAIT) < 0)
        return PARLEY_ERR_TIMEOUT;
    self->last_send_ms = pclock_mono_ms ();
    self->busy = true;
    parley_err_t rc = client_await (self, id, self->last_send_ms + self->request_ms, reply_p);
    self->busy = false;
    return rc;
}
