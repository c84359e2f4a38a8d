/*  testclient - DEALER/SUB helpers for tests. See testclient.h. */
#include <assert.h>
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "pcurve.h"
#include "testclient.h"

struct _testclient_t {
    zsock_t *sock;
    void *handle;
    penc_t enc;
    uint64_t next_id;
    uint64_t last_id;
};

testclient_t *
testclient_new (const char *endpoint)
{
    return testclient_new_curve (endpoint, NULL, NULL);
}

testclient_t *
testclient_new_curve (const char *endpoint, const char *key, const char *server_key)
{
    assert (endpoint);
    testclient_t *self = calloc (1, sizeof (testclient_t));
    assert (self);
    self->sock = zsock_new (ZMQ_DEALER);
    assert (self->sock);
    zsock_set_linger (self->sock, 0);
    zsock_set_ipv6 (self->sock, 1);
    self->handle = zsock_resolve (self->sock);
    char why [512];
    if (pcurve_client (self->sock, key, server_key, why, sizeof why)
    ||  zsock_connect (self->sock, "%s", endpoint) != 0) {
        zsock_destroy (&self->sock);
        free (self);
        return NULL;
    }
    penc_init (&self->enc);
    self->next_id = 1;
    return self;
}

void
testclient_destroy (testclient_t **self_p)
{
    assert (self_p);
    testclient_t *self = *self_p;
    if (self) {
        zsock_destroy (&self->sock);
        penc_fini (&self->enc);
        free (self);
        *self_p = NULL;
    }
}

penc_t *
testclient_begin (testclient_t *self, pmsg_type_t type, size_t fields)
{
    self->last_id = self->next_id++;
    penc_begin (&self->enc, type, self->last_id, fields);
    return &self->enc;
}

uint64_t
testclient_last_id (testclient_t *self)
{
    return self->last_id;
}

int
testclient_send (testclient_t *self)
{
    return testclient_send_raw (self, penc_data (&self->enc), penc_size (&self->enc));
}

int
testclient_send_raw (testclient_t *self, const void *data, size_t size)
{
    return zmq_send (self->handle, data, size, 0) == (int) size ? 0 : -1;
}

int
testclient_send_frames (testclient_t *self, const void *const *datas, const size_t *sizes,
                        size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (zmq_send (self->handle, datas [i], sizes [i], i + 1 < count ? ZMQ_SNDMORE : 0) == -1)
            return -1;
    return 0;
}

pmsg_t *
testclient_recv (testclient_t *self, int timeout_ms)
{
    zmq_pollitem_t item = { self->handle, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll (&item, 1, timeout_ms) <= 0) {
        fprintf (stderr, "testclient: no reply within %d ms\n", timeout_ms);
        return NULL;
    }
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (zmq_msg_recv (&msg, self->handle, 0) == -1) {
        zmq_msg_close (&msg);
        return NULL;
    }
    //  A REQ-style envelope: the broker echoes the empty delimiter first.
    if (zmq_msg_size (&msg) == 0 && zmq_msg_more (&msg)) {
        zmq_msg_close (&msg);
        zmq_msg_init (&msg);
        zmq_msg_recv (&msg, self->handle, 0);
    }
    //  One body frame per reply; anything after it would be a broker bug.
    assert (!zmq_msg_more (&msg));
    perr_t err = PERR_NONE;
    uint64_t id = 0;
    char why [256] = "";
    pmsg_t *reply = pmsg_decode (zmq_msg_data (&msg), zmq_msg_size (&msg),
                                 pwire_default_limits (), &err, &id, why, sizeof why);
    if (!reply)
        fprintf (stderr, "testclient: reply does not decode: %s: %s\n", perr_name (err), why);
    zmq_msg_close (&msg);
    return reply;
}

pmsg_t *
testclient_call (testclient_t *self)
{
    if (testclient_send (self))
        return NULL;
    pmsg_t *reply = testclient_recv (self, TESTCLIENT_TIMEOUT_MS);
    if (reply && pmsg_id (reply) != self->last_id) {
        fprintf (stderr, "testclient: reply id %llu, expected %llu\n",
                 (unsigned long long) pmsg_id (reply), (unsigned long long) self->last_id);
        pmsg_destroy (&reply);
    }
    return reply;
}

pmsg_t *
testclient_call0 (testclient_t *self, pmsg_type_t type)
{
    testclient_begin (self, type, 0);
    return testclient_call (self);
}

pmsg_t *
testclient_hello (testclient_t *self, const char *agent)
{
    penc_t *enc = testclient_begin (self, PMSG_HELLO, 1);
    penc_kv_cstr (enc, "agent", agent);
    return testclient_call (self);
}

pmsg_t *
testclient_send_one (testclient_t *self, const char *target, bool is_channel, const char *body)
{
    penc_t *enc = testclient_begin (self, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, is_channel ? "channel" : "to", target);
    penc_kv_cstr (enc, "body", body);
    return testclient_call (self);
}

pmsg_t *
testclient_fetch (testclient_t *self, uint64_t ack, size_t max)
{
    penc_t *enc = testclient_begin (self, PMSG_FETCH, (ack ? 1 : 0) + (max ? 1 : 0));
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    if (max)
        penc_kv_uint (enc, "max", max);
    return testclient_call (self);
}

int
testclient_error_code (const pmsg_t *reply)
{
    if (!reply)
        return -1;
    if (pmsg_type (reply) != PMSG_ERROR)
        return PERR_NONE;
    return (int) pmsg_uint (reply, "code", 0);
}

const char *
testclient_describe (const pmsg_t *reply)
{
    static char text [512];
    if (!reply)
        return "no reply";
    if (pmsg_type (reply) != PMSG_ERROR)
        return pmsg_type_name (pmsg_type (reply));
    size_t len = 0;
    const char *message = pmsg_str (reply, "message", &len);
    snprintf (text, sizeof text, "ERROR %s: %.*s",
              perr_name ((int) pmsg_uint (reply, "code", 0)), (int) len, message ? message : "");
    return text;
}

size_t
testclient_array_size (const pmsg_t *reply, const char *field)
{
    const msgpack_object *array = reply ? pmsg_field (reply, field) : NULL;
    return array && array->type == MSGPACK_OBJECT_ARRAY ? array->via.array.size : 0;
}

const msgpack_object *
testclient_array_at (const pmsg_t *reply, const char *field, size_t index)
{
    const msgpack_object *array = reply ? pmsg_field (reply, field) : NULL;
    if (!array || array->type != MSGPACK_OBJECT_ARRAY || index >= array->via.array.size)
        return NULL;
    return &array->via.array.ptr [index];
}

//  ---------------------------------------------------------------------

struct _testsub_t {
    zsock_t *sock;
    void *handle;
};

testsub_t *
testsub_new (const char *endpoint, const char *prefix)
{
    return testsub_new_curve (endpoint, prefix, NULL, NULL);
}

testsub_t *
testsub_new_curve (const char *endpoint, const char *prefix, const char *key,
                   const char *server_key)
{
    testsub_t *self = calloc (1, sizeof (testsub_t));
    assert (self);
    self->sock = zsock_new (ZMQ_SUB);
    assert (self->sock);
    zsock_set_linger (self->sock, 0);
    zsock_set_ipv6 (self->sock, 1);
    zsock_set_rcvhwm (self->sock, 0);       //  tests must not lose events
    zsock_set_subscribe (self->sock, prefix);
    self->handle = zsock_resolve (self->sock);
    char why [512];
    if (pcurve_client (self->sock, key, server_key, why, sizeof why)
    ||  zsock_connect (self->sock, "%s", endpoint) != 0) {
        zsock_destroy (&self->sock);
        free (self);
        return NULL;
    }
    return self;
}

void
testsub_destroy (testsub_t **self_p)
{
    assert (self_p);
    testsub_t *self = *self_p;
    if (self) {
        zsock_destroy (&self->sock);
        free (self);
        *self_p = NULL;
    }
}

pmsg_t *
testsub_recv (testsub_t *self, char *topic, size_t topic_size, int timeout_ms)
{
    zmq_pollitem_t item = { self->handle, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll (&item, 1, timeout_ms) <= 0)
        return NULL;
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    zmq_msg_recv (&frame, self->handle, 0);
    if (topic) {
        size_t len = zmq_msg_size (&frame);
        if (len >= topic_size)
            len = topic_size - 1;
        memcpy (topic, zmq_msg_data (&frame), len);
        topic [len] = 0;
    }
    bool more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    if (!more)
        return NULL;
    zmq_msg_init (&frame);
    zmq_msg_recv (&frame, self->handle, 0);
    perr_t err;
    uint64_t id;
    char why [256];
    pmsg_t *msg = pmsg_decode (zmq_msg_data (&frame), zmq_msg_size (&frame),
                               pwire_default_limits (), &err, &id, why, sizeof why);
    if (!msg)
        fprintf (stderr, "testsub: event does not decode: %s: %s\n", perr_name (err), why);
    zmq_msg_close (&frame);
    return msg;
}
