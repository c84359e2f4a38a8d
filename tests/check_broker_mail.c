// SPDX-License-Identifier: MIT
/*  check_broker_mail - the mailroom over real sockets: point-to-point,
    offline queueing, "all" exactly once to N agents, acknowledged delivery
    and redelivery, streaming (pipelined) FETCH, inbox overflow under both
    policies with their counters, unknown recipients, max body, bin bodies,
    MAIL_READY wake-ups, big batches and the reply size budget. Channels
    are in check_broker_channels.c; shared helpers in tests/lib/testmail.c.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

static testbroker_t *s_broker;

START_TEST (test_point_to_point)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    uint64_t seq = testmail_send (a, "B", false, "hello B");
    ck_assert_uint_gt (seq, 0);
    pmsg_t *reply = testclient_fetch (b, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 1);
    const msgpack_object *item = testclient_array_at (reply, "messages", 0);
    ck_assert_uint_eq (pobj_uint (item, "seq", 0), seq);
    ck_assert_uint_gt (pobj_uint (item, "ts", 0), 1600000000000000ULL);
    ck_assert (pobj_streq (pobj_get (item, "from"), "A"));
    ck_assert (pobj_streq (pobj_get (item, "to"), "B"));
    ck_assert (pobj_streq (pobj_get (item, "body"), "hello B"));
    ck_assert_ptr_null (pobj_get (item, "channel"));
    ck_assert_uint_eq (pmsg_uint (reply, "pending", 9), 0);
    pmsg_destroy (&reply);
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (a, 0, 0, bodies, sizeof bodies, NULL), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_offline_queueing)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    pmsg_t *reply = testclient_call0 (b, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&b);
    char body [32];
    for (int i = 0; i < 5; i++) {
        snprintf (body, sizeof body, "m%d", i);
        ck_assert_uint_gt (testmail_send (a, "B", false, body), 0);
    }
    b = testcheck_agent (s_broker, "B");
    char bodies [256];
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, &last), 5);
    ck_assert_str_eq (bodies, "m0,m1,m2,m3,m4");
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

#define AGENTS 10

START_TEST (test_all_exactly_once)
{
    s_broker = testcheck_start (NULL);
    testclient_t *agents [AGENTS];
    char name [16];
    for (int i = 0; i < AGENTS; i++) {
        snprintf (name, sizeof name, "Agent%d", i);
        agents [i] = testcheck_agent (s_broker, name);
    }
    uint64_t seq = testmail_send (agents [0], "all", false, "to everyone");
    ck_assert_uint_gt (seq, 0);
    char bodies [256];
    //  The first reader takes and acknowledges it; everyone else still has it.
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (agents [1], 0, 0, bodies, sizeof bodies, &last), 1);
    ck_assert_uint_eq (testmail_fetch (agents [1], last, 0, bodies, sizeof bodies, NULL), 0);
    for (int i = 2; i < AGENTS; i++) {
        last = 0;
        ck_assert_uint_eq (testmail_fetch (agents [i], 0, 0, bodies, sizeof bodies, &last), 1);
        ck_assert_str_eq (bodies, "to everyone");
        ck_assert_uint_eq (last, seq);
        //  Acknowledged: never again.
        ck_assert_uint_eq (testmail_fetch (agents [i], last, 0, bodies, sizeof bodies, NULL), 0);
        ck_assert_uint_eq (testmail_fetch (agents [i], 0, 0, bodies, sizeof bodies, NULL), 0);
    }
    //  Not to the sender.
    ck_assert_uint_eq (testmail_fetch (agents [0], 0, 0, bodies, sizeof bodies, NULL), 0);
    ck_assert_uint_eq (testmail_stat (agents [0], "delivered"), AGENTS - 1);
    ck_assert_uint_eq (testmail_stat (agents [0], "queued"), 0);
    //  The item's "to" reads "all".
    testmail_send (agents [3], "all", false, "again");
    pmsg_t *reply = testclient_fetch (agents [0], 0, 0);
    ck_assert (pobj_streq (pobj_get (testclient_array_at (reply, "messages", 0), "to"), "all"));
    ck_assert (pobj_streq (pobj_get (testclient_array_at (reply, "messages", 0), "from"), "Agent3"));
    pmsg_destroy (&reply);
    for (int i = 0; i < AGENTS; i++)
        testclient_destroy (&agents [i]);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_ack_and_redelivery)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    uint64_t seqs [3];
    seqs [0] = testmail_send (a, "B", false, "one");
    seqs [1] = testmail_send (a, "B", false, "two");
    seqs [2] = testmail_send (a, "B", false, "three");
    char bodies [256];
    //  max 2: two now, one pending.
    pmsg_t *reply = testclient_fetch (b, 0, 2);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 2);
    ck_assert_uint_eq (pmsg_uint (reply, "pending", 0), 1);
    ck_assert_uint_eq (pmsg_uint (reply, "acked", 9), 0);
    pmsg_destroy (&reply);
    //  The reply was "lost": the same two come again.
    ck_assert_uint_eq (testmail_fetch (b, 0, 2, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "one,two");
    //  Ack the first two in the FETCH: the third comes.
    reply = testclient_fetch (b, seqs [1], 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (pmsg_uint (reply, "acked", 0), seqs [1]);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 1);
    pmsg_destroy (&reply);
    //  ACK request.
    penc_t *enc = testclient_begin (b, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seqs [2]);
    reply = testclient_call (b);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 0);
    //  A lower ack is ignored.
    reply = testclient_fetch (b, seqs [0], 0);
    ck_assert_uint_eq (pmsg_uint (reply, "acked", 0), seqs [2]);
    pmsg_destroy (&reply);
    //  An ack beyond what was delivered is clamped: new mail is not lost.
    uint64_t four = testmail_send (a, "B", false, "four");
    enc = testclient_begin (b, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", four + 1000);
    reply = testclient_call (b);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "four");
    //  After BYE, WELCOME on a new connection tells the resume point.
    reply = testclient_fetch (b, 0, 0);
    pmsg_destroy (&reply);
    reply = testclient_call0 (b, PMSG_BYE);
    pmsg_destroy (&reply);
    testclient_destroy (&b);
    b = testclient_new (testbroker_router (s_broker));
    reply = testclient_hello (b, "B");
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_uint_eq (pmsg_uint (reply, "acked", 0), seqs [2]);
    ck_assert_uint_eq (pmsg_uint (reply, "mail_seq", 0), four);
    pmsg_destroy (&reply);
    testclient_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_overflow_reject)
{
    const char *args [] = { "--max-inbox", "3", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testclient_t *c = testcheck_agent (s_broker, "C");
    //  One SEND of five to B: three fit, two are INBOX_FULL.
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 5);
    for (int i = 0; i < 5; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "B");
        penc_kv_cstr (enc, "body", "x");
    }
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 3);
    ck_assert_uint_eq (testclient_array_size (reply, "errors"), 2);
    const msgpack_object *error = testclient_array_at (reply, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "index", 0), 3);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_INBOX_FULL);
    ck_assert (pobj_streq (pobj_get (error, "agent"), "B"));
    ck_assert_uint_eq (testclient_array_at (reply, "seqs", 4)->via.u64, 0);
    pmsg_destroy (&reply);
    //  "all": B is full, C is not: C gets it, the error names B.
    reply = testclient_send_one (a, "all", false, "fan");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 1);
    ck_assert_uint_eq (testclient_array_size (reply, "errors"), 1);
    error = testclient_array_at (reply, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_INBOX_FULL);
    ck_assert (pobj_streq (pobj_get (error, "agent"), "B"));
    pmsg_destroy (&reply);
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (c, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_uint_eq (testmail_stat (a, "rejected"), 3);
    ck_assert_uint_eq (testmail_stat (a, "dropped"), 0);
    //  B's three are intact, and acking them makes room again.
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, &last), 3);
    ck_assert_uint_eq (testmail_fetch (b, last, 0, bodies, sizeof bodies, NULL), 0);
    ck_assert_uint_gt (testmail_send (a, "B", false, "room"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_overflow_drop_oldest)
{
    const char *args [] = { "--max-inbox", "3", "--overflow", "drop-oldest", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    char body [16];
    for (int i = 1; i <= 5; i++) {
        snprintf (body, sizeof body, "m%d", i);
        ck_assert_uint_gt (testmail_send (a, "B", false, body), 0);
    }
    char bodies [256];
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, &last), 3);
    ck_assert_str_eq (bodies, "m3,m4,m5");
    ck_assert_uint_eq (testmail_stat (a, "dropped"), 2);
    ck_assert_uint_eq (testmail_stat (a, "rejected"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_unknown_recipient_and_mixed_batch)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    //  An item with both "to" and "channel" is a schema error: the decoder
    //  rejects the whole SEND, and nothing of it is queued.
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 2);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_cstr (enc, "body", "not this");
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_cstr (enc, "channel", "c");
    penc_kv_cstr (enc, "body", "ambiguous");
    pmsg_t *reply = testclient_call (a);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);

    //  Unknown recipient: an item error; the good item is accepted.
    enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 2);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "Nobody");
    penc_kv_cstr (enc, "body", "lost?");
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_cstr (enc, "body", "fine");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 1);
    ck_assert_uint_eq (testclient_array_size (reply, "errors"), 1);
    const msgpack_object *error = testclient_array_at (reply, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "index", 9), 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNKNOWN_RECIPIENT);
    size_t len;
    const char *message = pobj_str (error, "message", &len);
    ck_assert_ptr_nonnull (memmem (message, len, "Nobody", 6));
    ck_assert_uint_eq (testclient_array_at (reply, "seqs", 0)->via.u64, 0);
    ck_assert_uint_gt (testclient_array_at (reply, "seqs", 1)->via.u64, 0);
    pmsg_destroy (&reply);
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "fine");
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_max_body_and_bin)
{
    const char *args [] = { "--max-body", "100", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testclient_new (testbroker_router (s_broker));
    pmsg_t *reply = testclient_hello (b, "B");
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_uint_eq (pmsg_uint (reply, "max_body", 0), 100);
    pmsg_destroy (&reply);
    char body [102];
    memset (body, 'x', 101);
    body [101] = 0;
    reply = testclient_send_one (a, "B", false, body);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (reply, "errors", 0), "code", 0),
                       PERR_TOO_LARGE);
    pmsg_destroy (&reply);
    body [100] = 0;
    ck_assert_uint_gt (testmail_send (a, "B", false, body), 0);
    //  A bin body comes back as bin, bytes intact (NULs included).
    uint8_t raw [4] = { 0, 1, 0xff, 0 };
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_bin (enc, "body", raw, sizeof raw);
    reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    reply = testclient_fetch (b, 0, 0);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 2);
    const msgpack_object *item = testclient_array_at (reply, "messages", 1);
    const msgpack_object *got = pobj_get (item, "body");
    ck_assert_int_eq (got->type, MSGPACK_OBJECT_BIN);
    ck_assert_uint_eq (got->via.bin.size, 4);
    ck_assert_int_eq (memcmp (got->via.bin.ptr, raw, 4), 0);
    ck_assert_int_eq (pobj_get (testclient_array_at (reply, "messages", 0), "body")->type,
                      MSGPACK_OBJECT_STR);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_mail_ready_wakeup)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testsub_t *sub = testsub_new (testbroker_pub (s_broker), "mail.B");
    //  PUB/SUB joins asynchronously: keep sending until a wake-up arrives
    //  (each send queues mail, so at least one wake-up follows the join).
    pmsg_t *event = NULL;
    char topic [64];
    for (int tries = 0; tries < 100 && !event; tries++) {
        testmail_send (a, "B", false, "ping");
        event = testsub_recv (sub, topic, sizeof topic, 200);
    }
    ck_assert_ptr_nonnull (event);
    ck_assert_str_eq (topic, "mail.B");
    ck_assert_int_eq (pmsg_type (event), PMSG_MAIL_READY);
    ck_assert (pobj_streq (pmsg_field (event, "agent"), "B"));
    ck_assert_uint_gt (pmsg_uint (event, "seq", 0), 0);
    pmsg_destroy (&event);
    testsub_destroy (&sub);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_big_batches_and_budget)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    //  One SEND of 4096 small messages.
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), PROTO_MAX_BATCH);
    char body [32];
    for (int i = 0; i < PROTO_MAX_BATCH; i++) {
        snprintf (body, sizeof body, "%d", i);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "B");
        penc_kv_cstr (enc, "body", body);
    }
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), PROTO_MAX_BATCH);
    pmsg_destroy (&reply);
    //  40 bodies of 60 KB: more than one reply can carry.
    char *big = malloc (60001);
    memset (big, 'b', 60000);
    big [60000] = 0;
    for (int i = 0; i < 40; i++)
        ck_assert_uint_gt (testmail_send (a, "B", false, big), 0);
    free (big);
    //  Read everything back in order, acknowledging as we go.
    uint64_t ack = 0, expected = 0;
    size_t total = 0, replies = 0;
    while (true) {
        reply = testclient_fetch (b, ack, 0);
        EXPECT (reply, PMSG_MAIL);
        size_t count = testclient_array_size (reply, "messages");
        replies++;
        if (count == 0) {
            pmsg_destroy (&reply);
            break;
        }
        for (size_t i = 0; i < count; i++) {
            const msgpack_object *item = testclient_array_at (reply, "messages", i);
            if (total < PROTO_MAX_BATCH) {
                snprintf (body, sizeof body, "%zu", total);
                ck_assert (pobj_streq (pobj_get (item, "body"), body));
            }
            ck_assert_uint_gt (pobj_uint (item, "seq", 0), expected);
            expected = ack = pobj_uint (item, "seq", 0);
            total++;
        }
        pmsg_destroy (&reply);
    }
    ck_assert_uint_eq (total, PROTO_MAX_BATCH + 40);
    ck_assert_uint_ge (replies, 4);         //  the 60 KB bodies needed several
    ck_assert_uint_eq (testmail_stat (a, "queued"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

//  FETCH stream: true continues after what earlier FETCHes handed out, so
//  several can be in flight; a plain FETCH restarts from acked (a lost
//  reply is delivered again); nothing is released before its ack; a new
//  connection streams from acked.
START_TEST (test_stream_fetch)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    uint64_t seqs [12];
    char body [16], bodies [256];
    for (int i = 1; i <= 6; i++) {
        snprintf (body, sizeof body, "m%d", i);
        seqs [i] = testmail_send (a, "B", false, body);
    }
    //  A stream FETCH with nothing handed out yet starts at acked.
    ck_assert_uint_eq (testmail_fetch_stream (b, 0, 2, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "m1,m2");
    ck_assert_uint_eq (testmail_fetch_stream (b, 0, 2, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "m3,m4");
    ck_assert_uint_eq (testmail_fetch_stream (b, seqs [2], 2, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "m5,m6");
    ck_assert_uint_eq (testmail_fetch_stream (b, 0, 0, bodies, sizeof bodies, NULL), 0);
    //  Only m1, m2 are acknowledged: m3..m6 are still queued.
    ck_assert_uint_eq (testmail_stat (a, "queued"), 4);
    //  "Lost replies": a plain FETCH hands out everything unacknowledged again.
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 4);
    ck_assert_str_eq (bodies, "m3,m4,m5,m6");
    //  Plain FETCH moved the cursor to m6: a stream FETCH has nothing new.
    ck_assert_uint_eq (testmail_fetch_stream (b, 0, 0, bodies, sizeof bodies, NULL), 0);

    //  Three FETCHes in flight at once, answered in order.
    for (int i = 7; i <= 11; i++) {
        snprintf (body, sizeof body, "m%d", i);
        seqs [i] = testmail_send (a, "B", false, body);
    }
    uint64_t ids [3];
    for (int i = 0; i < 3; i++) {
        penc_t *enc = testclient_begin (b, PMSG_FETCH, i == 0 ? 2 : 3);
        penc_kv_uint (enc, "max", 2);
        penc_kv_uint (enc, "ack", seqs [6]);
        if (i > 0)
            penc_kv_bool (enc, "stream", true);
        ids [i] = testclient_last_id (b);
        ck_assert_int_eq (testclient_send (b), 0);
    }
    const char *expect [3] = { "m7,m8", "m9,m10", "m11" };
    const uint64_t pending [3] = { 3, 1, 0 };
    for (int i = 0; i < 3; i++) {
        pmsg_t *reply = testclient_recv (b, TESTCLIENT_TIMEOUT_MS);
        EXPECT (reply, PMSG_MAIL);
        ck_assert_uint_eq (pmsg_id (reply), ids [i]);
        ck_assert_uint_eq (pmsg_uint (reply, "acked", 0), seqs [6]);
        ck_assert_uint_eq (pmsg_uint (reply, "pending", 99), pending [i]);
        char got [64] = "";
        for (size_t j = 0; j < testclient_array_size (reply, "messages"); j++) {
            size_t len;
            const char *text = pobj_str (testclient_array_at (reply, "messages", j), "body", &len);
            snprintf (got + strlen (got), sizeof got - strlen (got), "%s%.*s",
                      j ? "," : "", (int) len, text);
        }
        ck_assert_str_eq (got, expect [i]);
        pmsg_destroy (&reply);
    }
    //  A new connection for B streams from acked (m6), not from the old cursor.
    pmsg_t *bye = testclient_call0 (b, PMSG_BYE);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    testclient_destroy (&b);
    b = testcheck_agent (s_broker, "B");
    ck_assert_uint_eq (testmail_fetch_stream (b, 0, 0, bodies, sizeof bodies, NULL), 5);
    ck_assert_str_eq (bodies, "m7,m8,m9,m10,m11");
    //  An ack past what was handed out is clamped; everything acked: empty.
    ck_assert_uint_eq (testmail_fetch_stream (b, seqs [11], 0, bodies, sizeof bodies, NULL), 0);
    ck_assert_uint_eq (testmail_stat (a, "queued"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST
int
main (void)
{
    Suite *suite = suite_create ("broker_mail");
    TCase *tc = tcase_create ("mail");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_point_to_point);
    tcase_add_test (tc, test_offline_queueing);
    tcase_add_test (tc, test_all_exactly_once);
    tcase_add_test (tc, test_ack_and_redelivery);
    tcase_add_test (tc, test_overflow_reject);
    tcase_add_test (tc, test_overflow_drop_oldest);
    tcase_add_test (tc, test_unknown_recipient_and_mixed_batch);
    tcase_add_test (tc, test_max_body_and_bin);
    tcase_add_test (tc, test_mail_ready_wakeup);
    tcase_add_test (tc, test_big_batches_and_budget);
    tcase_add_test (tc, test_stream_fetch);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
