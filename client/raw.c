// SPDX-License-Identifier: MIT
/*  raw - libparley's transport without the session. See raw.h. */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "mem.h"
#include "raw.h"
#include "transport.h"

struct _client_raw_t {
    client_transport_t *transport;
    penc_t enc;
    uint64_t next_id, last_id;
};

static client_raw_t *
s_new (const char *key, const char *server_key, int rcvhwm)
{
    client_raw_t *self = (client_raw_t *) client_mem_zalloc (sizeof (client_raw_t));
    if (!self)
        return NULL;
    penc_init (&self->enc);
    self->next_id = 1;
    char why [512];
    if (!(self->transport = client_transport_new ())
    ||  client_transport_set_curve (self->transport, key, server_key, why, sizeof why)
        != PARLEY_OK) {
        client_raw_destroy (&self);
        return NULL;
    }
    //  No frame size cap and every event kept: tests count them.
    client_transport_set_raw (self->transport, rcvhwm);
    return self;
}

client_raw_t *
client_raw_new (const char *endpoint)
{
    return client_raw_new_curve (endpoint, NULL, NULL);
}

client_raw_t *
client_raw_new_curve (const char *endpoint, const char *key, const char *server_key)
{
    return client_raw_new_hwm (endpoint, key, server_key, 0);
}

client_raw_t *
client_raw_new_hwm (const char *endpoint, const char *key, const char *server_key, int rcvhwm)
{
    assert (endpoint && rcvhwm >= 0);
    client_raw_t *self = s_new (key, server_key, rcvhwm);
    char why [512];
    if (self && client_transport_open (self->transport, endpoint, why, sizeof why) != PARLEY_OK)
        client_raw_destroy (&self);
    return self;
}

client_raw_t *
client_raw_sub_new (const char *endpoint, const char *prefix)
{
    return client_raw_sub_new_curve (endpoint, prefix, NULL, NULL);
}

client_raw_t *
client_raw_sub_new_curve (const char *endpoint, const char *prefix, const char *key,
                          const char *server_key)
{
    assert (endpoint && prefix);
    client_raw_t *self = s_new (key, server_key, 0);
    char why [512];
    bool fresh;
    if (self && client_transport_sub_open (self->transport, endpoint, &fresh, why, sizeof why)
                != PARLEY_OK)
        client_raw_destroy (&self);
    if (self)
        client_transport_subscribe (self->transport, prefix);
    return self;
}

void
client_raw_destroy (client_raw_t **self_p)
{
    assert (self_p);
    client_raw_t *self = *self_p;
    if (self) {
        client_transport_destroy (&self->transport);
        penc_fini (&self->enc);
        client_mem_free (self);
        *self_p = NULL;
    }
}

penc_t *
client_raw_begin (client_raw_t *self, pmsg_type_t type, size_t fields)
{
    assert (self);
    self->last_id = self->next_id++;
    penc_begin (&self->enc, type, self->last_id, fields);
    return &self->enc;
}

uint64_t
client_raw_last_id (client_raw_t *self)
{
    assert (self);
    return self->last_id;
}

int
client_raw_send_request (client_raw_t *self)
{
    return client_raw_send (self, penc_data (&self->enc), penc_size (&self->enc), false);
}

int
client_raw_send (client_raw_t *self, const void *data, size_t size, bool more)
{
    assert (self);
    void *sock = client_transport_dealer (self->transport);
    assert (sock);
    int rc = zmq_send (sock, data, size, more ? ZMQ_SNDMORE : 0);
    return rc == (int) size ? 0 : -1;
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
client_raw_recv (client_raw_t *self, int timeout_ms, char *why, size_t why_size)
{
    assert (self && why);
    void *sock = client_transport_dealer (self->transport);
    assert (sock);
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
client_raw_event (client_raw_t *self, char *topic, size_t topic_size, int timeout_ms,
                  char *why, size_t why_size)
{
    assert (self && why);
    void *sock = client_transport_sub (self->transport);
    assert (sock);
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

void
client_raw_subscribe (client_raw_t *self, const char *prefix)
{
    assert (self && prefix);
    client_transport_subscribe (self->transport, prefix);
}

void
client_raw_unsubscribe (client_raw_t *self, const char *prefix)
{
    assert (self && prefix);
    client_transport_unsubscribe (self->transport, prefix);
}
