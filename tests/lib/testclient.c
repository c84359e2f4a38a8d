// SPDX-License-Identifier: MIT
/*  testclient - DEALER/SUB helpers for tests, on libparley's transport
    (client_raw): the library makes the sockets and decodes the replies;
    requests are built here, since tests must also send what a correct
    client never would. See testclient.h. */
#include <assert.h>
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "client/raw.h"
#include "testclient.h"

struct _testclient_t {
    client_raw_t *raw;
};

testclient_t *
testclient_new (const char *endpoint)
{
    return testclient_new_curve (endpoint, NULL, NULL);
}

testclient_t *
testclient_new_curve (const char *endpoint, const char *key, const char *server_key)
{
    return testclient_new_hwm (endpoint, key, server_key, 0);
}

testclient_t *
testclient_new_hwm (const char *endpoint, const char *key, const char *server_key, int rcvhwm)
{
    assert (endpoint);
    client_raw_t *raw = client_raw_new_hwm (endpoint, key, server_key, rcvhwm);
    if (!raw)
        return NULL;
    testclient_t *self = calloc (1, sizeof (testclient_t));
    assert (self);
    self->raw = raw;
    return self;
}

void
testclient_destroy (testclient_t **self_p)
{
    assert (self_p);
    testclient_t *self = *self_p;
    if (self) {
        client_raw_destroy (&self->raw);
        free (self);
        *self_p = NULL;
    }
}

penc_t *
testclient_begin (testclient_t *self, pmsg_type_t type, size_t fields)
{
    return client_raw_begin (self->raw, type, fields);
}

penc_t *
testclient_begin_set (testclient_t *self, const char *key)
{
    penc_t *enc = testclient_begin (self, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "set");
    penc_kv_cstr (enc, "key", key);
    return enc;
}

uint64_t
testclient_last_id (testclient_t *self)
{
    return client_raw_last_id (self->raw);
}

int
testclient_send (testclient_t *self)
{
    return client_raw_send_request (self->raw);
}

int
testclient_send_raw (testclient_t *self, const void *data, size_t size)
{
    return client_raw_send (self->raw, data, size, false);
}

int
testclient_send_frames (testclient_t *self, const void *const *datas, const size_t *sizes,
                        size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (client_raw_send (self->raw, datas [i], sizes [i], i + 1 < count) != 0)
            return -1;
    return 0;
}

pmsg_t *
testclient_recv (testclient_t *self, int timeout_ms)
{
    char why [512];
    pmsg_t *reply = client_raw_recv (self->raw, timeout_ms, why, sizeof why);
    if (!reply)
        fprintf (stderr, "testclient: %s\n", why);
    return reply;
}

pmsg_t *
testclient_call (testclient_t *self)
{
    if (testclient_send (self))
        return NULL;
    pmsg_t *reply = testclient_recv (self, TESTCLIENT_TIMEOUT_MS);
    uint64_t last_id = client_raw_last_id (self->raw);
    if (reply && pmsg_id (reply) != last_id) {
        fprintf (stderr, "testclient: reply id %llu, expected %llu\n",
                 (unsigned long long) pmsg_id (reply), (unsigned long long) last_id);
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
    client_raw_t *raw;
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
    client_raw_t *raw = client_raw_sub_new_curve (endpoint, prefix, key, server_key);
    if (!raw)
        return NULL;
    testsub_t *self = calloc (1, sizeof (testsub_t));
    assert (self);
    self->raw = raw;
    return self;
}

void
testsub_destroy (testsub_t **self_p)
{
    assert (self_p);
    testsub_t *self = *self_p;
    if (self) {
        client_raw_destroy (&self->raw);
        free (self);
        *self_p = NULL;
    }
}

pmsg_t *
testsub_recv (testsub_t *self, char *topic, size_t topic_size, int timeout_ms)
{
    char why [512];
    pmsg_t *event = client_raw_event (self->raw, topic, topic_size, timeout_ms, why, sizeof why);
    if (!event && !strstr (why, "no event within"))
        fprintf (stderr, "testsub: %s\n", why);
    return event;
}

void
testsub_subscribe (testsub_t *self, const char *prefix)
{
    assert (self && prefix);
    client_raw_subscribe (self->raw, prefix);
}

void
testsub_unsubscribe (testsub_t *self, const char *prefix)
{
    assert (self && prefix);
    client_raw_unsubscribe (self->raw, prefix);
}
