// SPDX-License-Identifier: MIT
/*  check_confirm - pipelined SENDs and their cumulative CONFIRMs, and the
    order of a connection's replies around a parked SEND, at the protocol
    level: raw frames over real sockets against the real broker
    (PROTOCOL.md, SEND):
    - a CONFIRM covers exactly the pipelined SENDs sent, comes before the
      reply to any later request, and lists only the failures: an item
      refused (with its index) and a SEND refused whole (without);
    - a SEND to an online agent with a full inbox waits and is applied
      when that agent acknowledges; the requests behind it on the same
      connection are answered after it, in order, CONFIRM included;
    - the requests held behind a parked SEND are bounded: one over the
      bound is refused at once (QUEUES_FULL), the rest go on in order.
    check_parking has the rules of the wait itself.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testpark.h"
#include "lib/testsuite.h"

START_TEST (test_confirm_covers_sends)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    uint64_t ids [5];
    ids [0] = testpark_send (a, "B", "p", 2, true, -1);
    ids [1] = testpark_send (a, "B", "q", 3, true, -1);
    //  Item 1 has no recipient: refused alone, with its index.
    penc_t *enc = testclient_begin (a, PMSG_SEND, 2);
    penc_kv_bool (enc, "pipelined", true);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 2);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_cstr (enc, "body", "ok");
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "Nobody");
    penc_kv_cstr (enc, "body", "lost");
    ck_assert_int_eq (testclient_send (a), 0);
    ids [2] = testclient_last_id (a);
    //  `batch` is not allowed with `pipelined`: refused whole.
    enc = testclient_begin (a, PMSG_SEND, 3);
    penc_kv_bool (enc, "pipelined", true);
    penc_kv_uint (enc, "batch", 9);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "B");
    penc_kv_cstr (enc, "body", "never");
    ck_assert_int_eq (testclient_send (a), 0);
    ids [3] = testclient_last_id (a);
    ids [4] = testpark_send (a, "B", "r", 1, true, -1);
    //  Then a request with a reply: every CONFIRM comes before it.
    testclient_begin (a, PMSG_HEARTBEAT, 0);
    ck_assert_int_eq (testclient_send (a), 0);
    uint64_t heartbeat = testclient_last_id (a);

    uint64_t count = 0, accepted = 0, through = 0;
    bool item_error = false, whole_error = false;
    while (true) {
        pmsg_t *reply = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
        ck_assert_msg (reply, "no reply");
        if (pmsg_type (reply) == PMSG_OK) {
            ck_assert_uint_eq (pmsg_id (reply), heartbeat);
            pmsg_destroy (&reply);
            break;
        }
        EXPECT (reply, PMSG_CONFIRM);
        ck_assert_uint_eq (pmsg_id (reply), 0);
        count += pmsg_uint (reply, "count", 0);
        accepted += pmsg_uint (reply, "accepted", 0);
        through = pmsg_uint (reply, "through", 0);
        ck_assert (!pmsg_field (reply, "errors_omitted"));
        for (size_t i = 0; i < testclient_array_size (reply, "errors"); i++) {
            const msgpack_object *error = testclient_array_at (reply, "errors", i);
            uint64_t id = pobj_uint (error, "id", 0);
            if (id == ids [2]) {
                ck_assert (!item_error);
                item_error = true;
                ck_assert_uint_eq (pobj_uint (error, "index", 99), 1);
                ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNKNOWN_RECIPIENT);
            }
            else {
                ck_assert_uint_eq (id, ids [3]);
                ck_assert (!whole_error);
                whole_error = true;
                ck_assert (!pobj_get (error, "index"));
                ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_BAD_FIELD);
            }
        }
        pmsg_destroy (&reply);
    }
    ck_assert_uint_eq (count, 5);
    ck_assert_uint_eq (through, ids [4]);
    ck_assert_uint_eq (accepted, 2 + 3 + 1 + 1);
    ck_assert (item_error && whole_error);
    //  Nothing more comes: no CONFIRM without new pipelined SENDs.
    pmsg_t *extra = testclient_recv (a, 300);
    ck_assert_msg (!extra, "unexpected %s", testclient_describe (extra));
    //  B got exactly the 7 accepted messages, in the order sent.
    pmsg_t *mail = testclient_fetch (b, 0, 100);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 7);
    const char *order [] = { "p0", "p1", "q0", "q1", "q2", "ok", "r0" };
    for (size_t i = 0; i < 7; i++)
        ck_assert (pobj_streq (pobj_get (testclient_array_at (mail, "messages", i), "body"),
                               order [i]));
    ck_assert_uint_ge (testpark_stat (a, "confirms"), 1);
    pmsg_destroy (&mail);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_parked_then_held_in_order)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testclient_t *c = testcheck_agent (broker, "C");
    testpark_fill (a, "B", 4);
    //  Parked: B is online and full. Then three more requests.
    uint64_t send_b = testpark_send (a, "B", "late", 2, false, 60000);
    testclient_begin (a, PMSG_HEARTBEAT, 0);
    ck_assert_int_eq (testclient_send (a), 0);
    uint64_t heartbeat = testclient_last_id (a);
    uint64_t send_c = testpark_send (a, "C", "c", 1, true, -1);
    testclient_begin (a, PMSG_AGENTS, 0);
    ck_assert_int_eq (testclient_send (a), 0);
    uint64_t agents = testclient_last_id (a);
    //  No reply while B holds its mail (the wait is a minute).
    pmsg_t *early = testclient_recv (a, 500);
    ck_assert_msg (!early, "answered while parked: %s", testclient_describe (early));
    ck_assert_uint_eq (testpark_stat (b, "sends_waiting"), 1);
    ck_assert_uint_eq (testpark_stat (b, "requests_held"), 3);
    ck_assert_uint_eq (testpark_stat (b, "sends_parked"), 1);
    //  C got nothing yet: its SEND is held behind the parked one.
    pmsg_t *mail = testclient_fetch (c, 0, 10);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 0);
    pmsg_destroy (&mail);
    //  B reads and acknowledges two: room for the parked SEND.
    mail = testclient_fetch (b, 0, 2);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 2);
    uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", 1), "seq", 0);
    pmsg_destroy (&mail);
    mail = testclient_fetch (b, seq, 10);
    pmsg_destroy (&mail);

    pmsg_t *reply = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_id (reply), send_b);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 2);
    ck_assert (!pmsg_field (reply, "errors"));
    pmsg_destroy (&reply);
    reply = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (reply, PMSG_OK);
    ck_assert_uint_eq (pmsg_id (reply), heartbeat);
    pmsg_destroy (&reply);
    //  The pipelined SEND's CONFIRM before the AGENTS reply.
    reply = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (reply, PMSG_CONFIRM);
    ck_assert_uint_eq (pmsg_uint (reply, "through", 0), send_c);
    ck_assert_uint_eq (pmsg_uint (reply, "count", 0), 1);
    pmsg_destroy (&reply);
    reply = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (reply, PMSG_AGENT_LIST);
    ck_assert_uint_eq (pmsg_id (reply), agents);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (testpark_stat (b, "sends_waiting"), 0);
    ck_assert_uint_eq (testpark_stat (b, "requests_held"), 0);
    ck_assert_uint_eq (testpark_stat (b, "send_wait_timeouts"), 0);
    mail = testclient_fetch (c, 0, 10);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 1);
    pmsg_destroy (&mail);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&broker);
}
END_TEST

//  The requests held behind a parked SEND are bounded (32 MiB per
//  connection): beyond, one is refused at once with QUEUES_FULL naming
//  the bound, unapplied; the others are handled in order once it goes on.
START_TEST (test_held_requests_bounded)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testclient_t *c = testcheck_agent (broker, "C");
    testpark_fill (a, "B", 4);
    uint64_t parked = testpark_send (a, "B", "late", 1, false, 60000);
    //  SENDs of 14 bodies of 64 KiB to C (~900 KiB each): 40 pass 32 MiB.
    //  (wait_ms 0: C's inbox takes 4, and these are not to wait for it.)
    static char body [65536];
    memset (body, 'x', sizeof body);
    uint64_t ids [40];
    for (int i = 0; i < 40; i++) {
        penc_t *enc = testclient_begin (a, PMSG_SEND, 2);
        penc_kv_uint (enc, "wait_ms", 0);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), 14);
        for (int j = 0; j < 14; j++) {
            msgpack_pack_map (penc_packer (enc), 2);
            penc_kv_cstr (enc, "to", "C");
            penc_kv_bin (enc, "body", body, sizeof body);
        }
        ck_assert_int_eq (testclient_send (a), 0);
        ids [i] = testclient_last_id (a);
    }
    //  The refusals come first, each with its request's id.
    pmsg_t *refused = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT_ERROR (refused, PERR_QUEUES_FULL);
    uint64_t first_refused = pmsg_id (refused);
    ck_assert_uint_gt (first_refused, ids [30]);
    size_t len = 0;
    const char *text = pmsg_str (refused, "message", &len);
    char message [512];
    snprintf (message, sizeof message, "%.*s", (int) len, text);
    ck_assert_msg (strstr (message, "parked"), "message: %s", message);
    pmsg_destroy (&refused);
    size_t refusals = 1;
    pmsg_t *more;
    while ((more = testclient_recv (a, 500))) {
        EXPECT_ERROR (more, PERR_QUEUES_FULL);
        refusals++;
        pmsg_destroy (&more);
    }
    ck_assert_uint_eq (testpark_stat (b, "requests_refused_held"), refusals);
    ck_assert_uint_eq (testpark_stat (b, "requests_held"), 40 - refusals);
    //  B makes room: the parked SEND, then every held one, in order.
    pmsg_t *mail = testclient_fetch (b, 0, 4);
    uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", 3), "seq", 0);
    pmsg_destroy (&mail);
    mail = testclient_fetch (b, seq, 4);
    pmsg_destroy (&mail);
    pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_id (sent), parked);
    pmsg_destroy (&sent);
    for (size_t i = 0; i < 40 - refusals; i++) {
        sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
        EXPECT (sent, PMSG_SENT);
        ck_assert_uint_eq (pmsg_id (sent), ids [i]);
        pmsg_destroy (&sent);
    }
    ck_assert_uint_eq (testpark_stat (b, "requests_held"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("confirm");
    TCase *tc = tcase_create ("confirm");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_confirm_covers_sends);
    tcase_add_test (tc, test_parked_then_held_in_order);
    tcase_add_test (tc, test_held_requests_bounded);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
