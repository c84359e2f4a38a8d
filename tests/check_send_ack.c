// SPDX-License-Identifier: MIT
/*  check_send_ack - SEND's `ack` (WELCOME features send_ack) against the
    real broker over real sockets: the broker says it has the feature; an
    answer's ack returns a consumer's credit without an ACK frame, plain
    and pipelined; the ack holds when the SEND itself is parked for room,
    or is a resend of a remembered batch; it is journaled (a restart keeps
    it, under --fsync always); and it is clamped and cumulative as ACK's.

    A consumer here is a raw DEALER driven by tests/lib/testpush.c, whose
    pump checks every push against the window, counting the acks this
    suite tells it were sent. Every wait is a deadline by the clock.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testpush.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

//  Builds a SEND of one message to `to` carrying `ack`, with `extra`
//  more fields for the caller to write.
static penc_t *
s_send_ack (testclient_t *client, const char *to, const char *body, uint64_t ack, size_t extra)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 2 + extra);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", to);
    penc_kv_cstr (enc, "body", body);
    penc_kv_uint (enc, "ack", ack);
    return enc;
}

START_TEST (test_welcome_lists_send_ack)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *client = testclient_new (testbroker_router (broker));
    pmsg_t *welcome = testclient_hello (client, "A");
    EXPECT (welcome, PMSG_WELCOME);
    const msgpack_object *features = pmsg_field (welcome, "features");
    ck_assert_msg (features && features->type == MSGPACK_OBJECT_ARRAY,
                   "WELCOME has no features: %s", testclient_describe (welcome));
    bool found = false;
    for (uint32_t i = 0; i < features->via.array.size; i++)
        found |= pobj_streq (&features->via.array.ptr [i], "send_ack");
    ck_assert_msg (found, "WELCOME's features lack send_ack");
    pmsg_destroy (&welcome);
    testclient_destroy (&client);
    testcheck_stop (&broker);
}
END_TEST

//  B consumes with a window of 2 and answers A, acknowledging on the
//  answer: the window opens again with no ACK sent.
START_TEST (test_ack_on_send_returns_credit)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_send_many (a, "B", "m", 0, 7, NULL);
    testpush_consume (b, 2, 0);
    testpush_wait_count (b, 2);
    testpush_expect_no_more (b, 2, 300);

    //  A plain SEND with ack: SENT as ever, and two more pushed.
    b->acked = b->seqs [1];
    s_send_ack (b->client, "A", "answer 1", b->seqs [1], 0);
    pmsg_t *sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 1);
    pmsg_destroy (&sent);
    testpush_wait_count (b, 4);
    testpush_expect_no_more (b, 4, 300);
    ck_assert_uint_eq (testcheck_pending (a, "B"), 5);

    //  A pipelined SEND with ack: its CONFIRM, and two more pushed.
    b->acked = b->seqs [3];
    penc_t *enc = s_send_ack (b->client, "A", "answer 2", b->seqs [3], 1);
    penc_kv_bool (enc, "pipelined", true);
    ck_assert_int_eq (testclient_send (b->client), 0);
    int64_t until = pclock_mono_ms () + TESTPUSH_DEADLINE_MS;
    while (!(b->reply && pmsg_type (b->reply) == PMSG_CONFIRM)) {
        ck_assert_msg (pclock_mono_ms () < until, "no CONFIRM");
        testpush_pump (b, 200);
    }
    ck_assert_uint_eq (pmsg_uint (b->reply, "accepted", 0), 1);
    testpush_wait_count (b, 6);
    testpush_expect_no_more (b, 6, 300);

    //  Cumulative and clamped as ACK's: a lower ack changes nothing, one
    //  beyond what was handed out stops at it.
    s_send_ack (b->client, "A", "answer 3", b->seqs [0], 0);
    sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    testpush_expect_no_more (b, 6, 300);
    b->acked = b->seqs [5];
    s_send_ack (b->client, "A", "answer 4", b->seqs [5] + 1000, 0);
    sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    testpush_wait_count (b, 7);
    ck_assert_uint_eq (testcheck_pending (a, "B"), 1);
    //  A's mail: the four answers, whatever B acknowledged with them.
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (a, 0, 10, bodies, sizeof bodies, NULL), 4);

    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  The ack holds at once when the SEND waits, parked, for room in C's
//  full inbox; and on a resend of a remembered batch.
START_TEST (test_ack_on_parked_and_resent_send)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *c = testcheck_agent (broker, "C");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_send_many (a, "C", "c", 0, 4, NULL);          //  C's inbox is full
    testpush_send_many (a, "B", "b", 0, 4, NULL);
    testpush_consume (b, 2, 0);
    testpush_wait_count (b, 2);

    b->acked = b->seqs [1];
    penc_t *enc = s_send_ack (b->client, "C", "to a full inbox", b->seqs [1], 1);
    penc_kv_uint (enc, "wait_ms", 20000);
    ck_assert_int_eq (testclient_send (b->client), 0);
    uint64_t parked_id = testclient_last_id (b->client);
    //  Parked (no SENT), and the ack already returned B's credit.
    testpush_wait_count (b, 4);
    ck_assert_msg (!b->reply, "the SEND was answered while C's inbox is full: %s",
                   testclient_describe (b->reply));
    ck_assert_uint_eq (testmail_stat (a, "sends_parked"), 1);
    //  C reads: room, and the parked SEND goes on.
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (c, 0, 10, bodies, sizeof bodies, NULL), 4);
    //  (the ack is clamped to what C was handed: everything)
    ck_assert_uint_eq (testmail_fetch (c, UINT64_MAX, 10, bodies, sizeof bodies, NULL), 0);
    int64_t until = pclock_mono_ms () + TESTPUSH_DEADLINE_MS;
    while (!(b->reply && pmsg_id (b->reply) == parked_id)) {
        ck_assert_msg (pclock_mono_ms () < until, "the parked SEND was never answered");
        testpush_pump (b, 200);
    }
    EXPECT (b->reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (b->reply, "accepted", 0), 1);

    //  A keyed SEND and its resend, each with a higher ack: the resend
    //  posts nothing, and its ack holds.
    testpush_send_many (a, "B", "more", 0, 2, NULL);
    testpush_wait_count (b, 4);
    b->acked = b->seqs [2];
    enc = s_send_ack (b->client, "A", "keyed", b->seqs [2], 1);
    penc_kv_uint (enc, "batch", 7);
    pmsg_t *sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 1);
    pmsg_destroy (&sent);
    testpush_wait_count (b, 5);
    b->acked = b->seqs [4];
    enc = s_send_ack (b->client, "A", "keyed", b->seqs [4], 1);
    penc_kv_uint (enc, "batch", 7);
    sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    testpush_wait_count (b, 6);
    ck_assert_uint_eq (testcheck_pending (a, "B"), 1);
    //  A got the keyed answer once.
    ck_assert_uint_eq (testmail_fetch (a, 0, 10, bodies, sizeof bodies, NULL), 1);

    testpush_destroy (&b);
    testclient_destroy (&c);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  Journaled: after a restart (--fsync always) only what was not
//  acknowledged on a SEND comes again.
START_TEST (test_ack_on_send_survives_restart)
{
    tproc_dir_t *dir = tproc_dir_new ();
    const char *args [] = { "--data-dir", tproc_dir_name (dir), "--fsync", "always", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    char token [80] = "";
    testpush_t *b = testpush_new (testpush_hello_token (broker, "B", token, sizeof token));
    testpush_send_many (a, "B", "m", 0, 6, NULL);
    testpush_consume (b, 10, 0);
    testpush_wait_count (b, 6);
    b->acked = b->seqs [3];
    s_send_ack (b->client, "A", "answer", b->seqs [3], 0);
    pmsg_t *sent = testpush_call (b);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    uint64_t want [2] = { b->seqs [4], b->seqs [5] };
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);

    broker = testcheck_start (args);
    b = testpush_new (testpush_hello_token (broker, "B", token, sizeof token));
    testpush_consume (b, 10, 0);
    testpush_wait_count (b, 2);
    ck_assert_uint_eq (b->seqs [0], want [0]);
    ck_assert_uint_eq (b->seqs [1], want [1]);
    testpush_expect_no_more (b, 2, 200);
    testpush_destroy (&b);
    testcheck_stop (&broker);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("send_ack");
    TCase *tc = tcase_create ("send_ack");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_welcome_lists_send_ack);
    tcase_add_test (tc, test_ack_on_send_returns_credit);
    tcase_add_test (tc, test_ack_on_parked_and_resent_send);
    tcase_add_test (tc, test_ack_on_send_survives_restart);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
