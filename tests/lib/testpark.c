// SPDX-License-Identifier: MIT
/*  testpark - helpers the backpressure suites share. See testpark.h. */
#include <check.h>
#include <stdio.h>

#include "testpark.h"
#include "testcheck.h"

uint64_t
testpark_send (testclient_t *client, const char *to, const char *prefix, size_t count,
               bool pipelined, int64_t wait)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 1 + pipelined + (wait >= 0));
    if (pipelined)
        penc_kv_bool (enc, "pipelined", true);
    if (wait >= 0)
        penc_kv_uint (enc, "wait_ms", (uint64_t) wait);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    for (size_t i = 0; i < count; i++) {
        char body [64];
        snprintf (body, sizeof body, "%s%zu", prefix, i);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        penc_kv_cstr (enc, "body", body);
    }
    ck_assert_int_eq (testclient_send (client), 0);
    return testclient_last_id (client);
}

uint64_t
testpark_stat (testclient_t *client, const char *name)
{
    pmsg_t *stats = testclient_call0 (client, PMSG_STATS);
    EXPECT (stats, PMSG_STATS_REPLY);
    ck_assert_msg (pmsg_field (stats, name), "STATS has no %s", name);
    uint64_t value = pmsg_uint (stats, name, 0);
    pmsg_destroy (&stats);
    return value;
}

void
testpark_fill (testclient_t *client, const char *to, size_t count)
{
    testpark_send (client, to, "fill", count, false, 0);
    pmsg_t *sent = testclient_recv (client, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), count);
    pmsg_destroy (&sent);
}
