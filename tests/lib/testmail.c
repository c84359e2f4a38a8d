// SPDX-License-Identifier: MIT
/*  testmail - shared helpers of the broker mail suites. See testmail.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testmail.h"

uint64_t
testmail_send (testclient_t *client, const char *to, bool channel, const char *body)
{
    pmsg_t *reply = testclient_send_one (client, to, channel, body);
    EXPECT (reply, PMSG_SENT);
    const msgpack_object *seq = testclient_array_at (reply, "seqs", 0);
    ck_assert_ptr_nonnull (seq);
    uint64_t result = seq->via.u64;
    pmsg_destroy (&reply);
    return result;
}

static size_t
s_bodies (pmsg_t *reply, char *out, size_t size, uint64_t *last_seq)
{
    EXPECT (reply, PMSG_MAIL);
    size_t count = testclient_array_size (reply, "messages");
    out [0] = 0;
    for (size_t i = 0; i < count; i++) {
        const msgpack_object *item = testclient_array_at (reply, "messages", i);
        size_t len;
        const char *body = pobj_str (item, "body", &len);
        ck_assert_ptr_nonnull (body);
        size_t used = strlen (out);
        snprintf (out + used, size - used, "%s%.*s", i ? "," : "", (int) len, body);
        uint64_t seq = pobj_uint (item, "seq", 0);
        if (last_seq) {
            ck_assert_msg (seq > *last_seq || i == 0, "seqs not increasing");
            *last_seq = seq;
        }
    }
    pmsg_destroy (&reply);
    return count;
}

size_t
testmail_fetch (testclient_t *client, uint64_t ack, size_t max, char *out, size_t size,
                uint64_t *last_seq)
{
    return s_bodies (testclient_fetch (client, ack, max), out, size, last_seq);
}

size_t
testmail_fetch_stream (testclient_t *client, uint64_t ack, size_t max, char *out, size_t size,
                       uint64_t *last_seq)
{
    penc_t *enc = testclient_begin (client, PMSG_FETCH, 1 + (ack ? 1 : 0) + (max ? 1 : 0));
    penc_kv_bool (enc, "stream", true);
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    if (max)
        penc_kv_uint (enc, "max", max);
    return s_bodies (testclient_call (client), out, size, last_seq);
}

uint64_t
testmail_stat (testclient_t *client, const char *name)
{
    pmsg_t *reply = testclient_call0 (client, PMSG_STATS);
    EXPECT (reply, PMSG_STATS_REPLY);
    uint64_t value = pmsg_uint (reply, name, 0);
    pmsg_destroy (&reply);
    return value;
}

pmsg_t *
testmail_channel_call (testclient_t *client, pmsg_type_t verb, const char *channel)
{
    penc_t *enc = testclient_begin (client, verb, 1);
    penc_kv_cstr (enc, "channel", channel);
    return testclient_call (client);
}

void
testmail_listen (testclient_t *client, const char *channel)
{
    pmsg_t *reply = testmail_channel_call (client, PMSG_LISTEN, channel);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
}

void
testmail_unlisten (testclient_t *client, const char *channel)
{
    pmsg_t *reply = testmail_channel_call (client, PMSG_UNLISTEN, channel);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
}

char *
testmail_listing (const pmsg_t *mail)
{
    char *out = calloc (1, 65536);
    ck_assert_ptr_nonnull (out);
    size_t at = 0;
    for (size_t i = 0; i < testclient_array_size (mail, "messages"); i++) {
        const msgpack_object *item = testclient_array_at (mail, "messages", i);
        const msgpack_object *body = pobj_get (item, "body");
        int len = body && body->type == MSGPACK_OBJECT_STR ? (int) body->via.str.size : 0;
        at += (size_t) snprintf (out + at, 65536 - at, "%llu:%.*s,",
                                 (unsigned long long) pobj_uint (item, "seq", 0), len,
                                 len ? body->via.str.ptr : "");
    }
    return out;
}
