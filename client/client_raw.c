// SPDX-License-Identifier: MIT
/*  client_raw - libparley's transport without the session. See client_raw.h. */
#include <assert.h>
#include "client_internal.h"
#include "client_raw.h"

parley_client_t *
client_raw_new (const char *endpoint)
{
    return client_raw_new_curve (endpoint, NULL, NULL);
}

parley_client_t *
client_raw_new_curve (const char *endpoint, const char *key, const char *server_key)
{
    return client_raw_new_hwm (endpoint, key, server_key, 0);
}

parley_client_t *
client_raw_new_hwm (const char *endpoint, const char *key, const char *server_key, int rcvhwm)
{
    assert (endpoint && rcvhwm >= 0);
    parley_client_t *self = parley_client_new (endpoint, "raw");
    self->raw = true;
    self->raw_rcvhwm = rcvhwm;
    if (parley_client_set_security (self, key, server_key, NULL) != PARLEY_OK) {
        parley_client_destroy (&self);
        return NULL;
    }
    self->dealer = client_socket_new (self, ZMQ_DEALER, endpoint);
    if (!self->dealer)
        parley_client_destroy (&self);
    return self;
}

parley_client_t *
client_raw_sub_new (const char *endpoint, const char *prefix)
{
    return client_raw_sub_new_curve (endpoint, prefix, NULL, NULL);
}

parley_client_t *
client_raw_sub_new_curve (const char *endpoint, const char *prefix, const char *key,
                          const char *server_key)
{
    assert (endpoint && prefix);
    parley_client_t *self = parley_client_new (endpoint, "raw");
    self->raw = true;
    if (parley_client_set_security (self, key, server_key, NULL) != PARLEY_OK) {
        parley_client_destroy (&self);
        return NULL;
    }
    self->sub = client_socket_new (self, ZMQ_SUB, endpoint);
    if (!self->sub) {
        parley_client_destroy (&self);
        return NULL;
    }
    zsock_set_subscribe (self->sub, prefix);
    return self;
}

penc_t *
client_raw_begin (parley_client_t *self, pmsg_type_t type, size_t fields)
{
    assert (self);
    return client_begin (self, type, fields);
}

uint64_t
client_raw_last_id (parley_client_t *self)
{
    assert (self);
    return self->enc_id;
}

int
client_raw_send_request (parley_client_t *self)
{
    return client_raw_send (self, penc_data (&self->enc), penc_size (&self->enc), false);
}

int
client_raw_send (parley_client_t *self, const void *data, size_t size, bool more)
{
    assert (self && self->dealer);
    int rc = zmq_send (zsock_resolve (self->dealer), data, size, more? ZMQ_SNDMORE: 0);
    return rc == (int) size? 0: -1;
}

//  The next frame of `sock` within timeout_ms, or false.
static bool
s_next_frame (void *sock, zmq_msg_t *msg, int timeout_ms)
{
    zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll (&item, 1, timeout_ms) <= 0)
        return false;
    return zmq_msg_recv (msg, sock, 0) >= 0;
}

static pmsg_t *
s_decode (zmq_msg_t *msg, char *why, size_t why_size)
{
    perr_t code = PERR_NONE;
    uint64_t id = 0;
    char detail [256] = "";
    pmsg_t *decoded = pmsg_decode (zmq_msg_data (msg), zmq_msg_size (msg),
                                   pwire_default_limits (), &code, &id, detail, sizeof detail);
    if (!decoded)
        snprintf (why, why_size, "does not decode: %s: %s", perr_name (code), detail);
    return decoded;
}

pmsg_t *
client_raw_recv (parley_client_t *self, int timeout_ms, char *why, size_t why_size)
{
    assert (self && self->dealer && why);
    void *sock = zsock_resolve (self->dealer);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (!s_next_frame (sock, &msg, timeout_ms)) {
        snprintf (why, why_size, "no reply within %d ms", timeout_ms);
        zmq_msg_close (&msg);
        return NULL;
    }
    //  A REQ-style envelope: the broker echoes the empty delimiter first.
    if (zmq_msg_size (&msg) == 0 && zmq_msg_more (&msg)) {
        zmq_msg_close (&msg);
        zmq_msg_init (&msg);
        zmq_msg_recv (&msg, sock, 0);
    }
    //  One body frame per reply; anything after it would be a broker bug.
    assert (!zmq_msg_more (&msg));
    pmsg_t *reply = s_decode (&msg, why, why_size);
    zmq_msg_close (&msg);
    return reply;
}

pmsg_t *
client_raw_event (parley_client_t *self, char *topic, size_t topic_size, int timeout_ms,
                  char *why, size_t why_size)
{
    assert (self && self->sub && why);
    void *sock = zsock_resolve (self->sub);
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (!s_next_frame (sock, &frame, timeout_ms)) {
        snprintf (why, why_size, "no event within %d ms", timeout_ms);
        zmq_msg_close (&frame);
        return NULL;
    }
    if (topic) {
        size_t len = zmq_msg_size (&frame);
        if (len >= topic_size)
            len = topic_size - 1;
        memcpy (topic, zmq_msg_data (&frame), len);
        topic [len] = 0;
    }
    bool more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    if (!more) {
        snprintf (why, why_size, "an event of one frame");
        return NULL;
    }
    zmq_msg_init (&frame);
    zmq_msg_recv (&frame, sock, 0);
    pmsg_t *event = s_decode (&frame, why, why_size);
    zmq_msg_close (&frame);
    return event;
}
