// SPDX-License-Identifier: MIT
/*  tap - frame mirror on an XPUB. See tap.h for the costs. */
#include <assert.h>
#include <string.h>

#include "pmsg.h"
#include "pclock.h"
#include "pcurve.h"
#include "plog.h"
#include "tap.h"

struct _tap_t {
    zsock_t *sock;
    void *handle;
    int64_t subscriptions;      //  subscriptions held, all connections together
    uint64_t tseq;
    penc_t enc;
};

tap_t *
tap_new (const char *endpoint, int hwm, zcert_t *cert, const char *zap_domain,
         char *why, size_t why_size)
{
    assert (endpoint);
    tap_t *self = calloc (1, sizeof (tap_t));
    if (!self)
        return NULL;
    penc_init (&self->enc);
    self->sock = zsock_new (ZMQ_XPUB);
    if (!self->sock) {
        snprintf (why, why_size, "cannot create the tap socket");
        goto err;
    }
    self->handle = zsock_resolve (self->sock);
    zsock_set_sndhwm (self->sock, hwm);
    zsock_set_linger (self->sock, 0);
    zsock_set_maxmsgsize (self->sock, 1024);    //  subscriptions only
    //  Every subscription and unsubscription, of every connection: the
    //  broker learns each connection's key from them (peers.h).
    zsock_set_xpub_verboser (self->sock, 1);
    zsock_set_ipv6 (self->sock, 1);
    if (cert)
        pcurve_server (self->sock, cert, zap_domain);
    if (zsock_bind (self->sock, "%s", endpoint) == -1) {
        snprintf (why, why_size, "cannot bind tap %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        goto err;
    }
    return self;
err:
    tap_destroy (&self);
    return NULL;
}

void
tap_destroy (tap_t **self_p)
{
    assert (self_p);
    tap_t *self = *self_p;
    if (self) {
        zsock_destroy (&self->sock);
        penc_fini (&self->enc);
        free (self);
        *self_p = NULL;
    }
}

zsock_t *
tap_sock (tap_t *self)
{
    assert (self);
    return self->sock;
}

void
tap_on_subscription (tap_t *self, tap_peer_fn *peer, void *arg)
{
    assert (self);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    while (zmq_msg_recv (&msg, self->handle, ZMQ_DONTWAIT) >= 0) {
        //  A verboser XPUB passes every subscribe and unsubscribe (those of
        //  a connection that closed too): a running count says if anyone
        //  listens.
        const uint8_t *buf = zmq_msg_data (&msg);
        size_t size = zmq_msg_size (&msg);
        if (size >= 1 && buf [0] == 1) {
            self->subscriptions++;
            if (peer)
                peer (&msg, arg);
        }
        else
        if (size >= 1 && buf [0] == 0 && self->subscriptions > 0)
            self->subscriptions--;
        zmq_msg_close (&msg);
        zmq_msg_init (&msg);
    }
    zmq_msg_close (&msg);
}

bool
tap_active (tap_t *self)
{
    return self && self->subscriptions > 0;
}

void
tap_frame (tap_t *self, const char *dir, const char *peer, size_t peer_len,
           const void *data, size_t size)
{
    if (!self || self->subscriptions <= 0)
        return;
    penc_t *enc = &self->enc;
    penc_begin (enc, PMSG_TAP, 0, 5);
    penc_kv_uint (enc, "tseq", ++self->tseq);
    penc_kv_uint (enc, "ts", (uint64_t) pclock_wall_us ());
    penc_kv_cstr (enc, "dir", dir);
    penc_kv_str (enc, "peer", peer, peer_len);
    penc_kv_bin (enc, "body", data, size);
    char topic [8];
    int topic_len = snprintf (topic, sizeof topic, "tap.%s", dir);
    //  Never block: at the HWM the frame is dropped and tseq shows the gap.
    if (zmq_send (self->handle, topic, (size_t) topic_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) == -1)
        return;
    zmq_send (self->handle, penc_data (enc), penc_size (enc), ZMQ_DONTWAIT);
}

uint64_t
tap_seq (tap_t *self)
{
    return self ? self->tseq : 0;
}
