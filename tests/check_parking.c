// SPDX-License-Identifier: MIT
/*  check_parking - backpressure: a SEND waits for room in an online
    recipient's full inbox (PROTOCOL.md, SEND, Backpressure), at the
    protocol level over real sockets against the real broker:
    - a SEND waiting for room returns at its deadline (by the clock) with
      INBOX_FULL naming the wait; STATS counts the park and the timeout;
    - an offline recipient's full inbox fails at once, whatever wait_ms;
    - a parked SEND is applied once when its sender reconnects: the
      resend of the same batch gets the remembered SENT, nothing twice;
    - a journaling broker records a parked SEND when it is applied: after
      a restart the recipient's inbox holds exactly what it held;
    - parked SENDs are served in the order they parked: a later SEND that
      would fit waits behind one parked for the same inbox;
    - a sender whose SEND is parked is not expired for silence;
    - posts to a channel and to "all" wait for a full online listener.
    Deadlines are measured with the clock and checked with wide margins.
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
#include "lib/tproc.h"
#include "pclock.h"

START_TEST (test_wait_deadline)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testpark_fill (a, "B", 4);
    int64_t started = pclock_mono_ms ();
    testpark_send (a, "B", "late", 1, false, 400);
    pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    int64_t took = pclock_mono_ms () - started;
    EXPECT (sent, PMSG_SENT);
    //  Not before the deadline; well before the client's own timeout.
    ck_assert_int_ge (took, 400);
    ck_assert_int_lt (took, TESTCLIENT_TIMEOUT_MS);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 1), 0);
    ck_assert_uint_eq (testclient_array_size (sent, "errors"), 1);
    const msgpack_object *error = testclient_array_at (sent, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_INBOX_FULL);
    size_t len = 0;
    const char *text = pobj_str (error, "message", &len);
    char message [256];
    snprintf (message, sizeof message, "%.*s", (int) len, text);
    ck_assert_msg (strstr (message, "waiting 400 ms"), "message: %s", message);
    pmsg_destroy (&sent);
    ck_assert_uint_eq (testpark_stat (a, "sends_parked"), 1);
    ck_assert_uint_eq (testpark_stat (a, "send_wait_timeouts"), 1);
    //  The same wait in a pipelined SEND: its CONFIRM names the item.
    started = pclock_mono_ms ();
    uint64_t id = testpark_send (a, "B", "late", 1, true, 300);
    pmsg_t *confirm = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    took = pclock_mono_ms () - started;
    EXPECT (confirm, PMSG_CONFIRM);
    ck_assert_int_ge (took, 300);
    ck_assert_uint_eq (pmsg_uint (confirm, "through", 0), id);
    ck_assert_uint_eq (pmsg_uint (confirm, "accepted", 1), 0);
    error = testclient_array_at (confirm, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "id", 0), id);
    ck_assert_uint_eq (pobj_uint (error, "index", 9), 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_INBOX_FULL);
    pmsg_destroy (&confirm);
    //  wait_ms 0: the old behaviour, at once.
    testpark_send (a, "B", "now", 1, false, 0);
    sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 1), 0);
    pmsg_destroy (&sent);
    ck_assert_uint_eq (testpark_stat (a, "sends_parked"), 2);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_offline_recipient_fails_at_once)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    pmsg_t *bye = testclient_call0 (b, PMSG_BYE);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    testpark_fill (a, "B", 4);
    int64_t started = pclock_mono_ms ();
    testpark_send (a, "B", "late", 1, false, 60000);
    pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    //  A minute's wait allowed, yet answered at once: B does not read.
    ck_assert_int_lt (pclock_mono_ms () - started, 30000);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 1), 0);
    const msgpack_object *error = testclient_array_at (sent, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_INBOX_FULL);
    size_t len = 0;
    const char *text = pobj_str (error, "message", &len);
    char message [256];
    snprintf (message, sizeof message, "%.*s", (int) len, text);
    ck_assert_msg (strstr (message, "offline"), "message: %s", message);
    pmsg_destroy (&sent);
    ck_assert_uint_eq (testpark_stat (a, "sends_parked"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST


//  The sender's session ends while its SEND is parked (a new connection
//  takes the id over): the SEND is applied then, as with wait_ms 0, and
//  the resend of its batch on the new connection gets that SENT.
START_TEST (test_parked_sender_reconnects)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testclient_new (testbroker_router (broker));
    pmsg_t *welcome = testclient_hello (a, "A");
    EXPECT (welcome, PMSG_WELCOME);
    char token [64];
    ck_assert (pmsg_strcpy (welcome, "token", token, sizeof token));
    pmsg_destroy (&welcome);
    testclient_t *b = testcheck_agent (broker, "B");
    testpark_fill (a, "B", 4);
    //  Two messages with room for one: B acks one message first.
    pmsg_t *mail = testclient_fetch (b, 0, 1);
    uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", 0), "seq", 0);
    pmsg_destroy (&mail);
    pmsg_t *ack_reply;
    penc_t *enc = testclient_begin (b, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seq);
    ack_reply = testclient_call (b);
    EXPECT (ack_reply, PMSG_OK);
    pmsg_destroy (&ack_reply);

    enc = testclient_begin (a, PMSG_SEND, 3);
    penc_kv_uint (enc, "batch", 77);
    penc_kv_uint (enc, "wait_ms", 60000);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 2);
    for (int i = 0; i < 2; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "B");
        penc_kv_cstr (enc, "body", i ? "second" : "first");
    }
    ck_assert_int_eq (testclient_send (a), 0);
    pmsg_t *early = testclient_recv (a, 300);
    ck_assert_msg (!early, "answered while parked: %s", testclient_describe (early));

    testclient_t *again = testclient_new (testbroker_router (broker));
    enc = testclient_begin (again, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "A");
    penc_kv_cstr (enc, "token", token);
    welcome = testclient_call (again);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    enc = testclient_begin (again, PMSG_SEND, 2);
    penc_kv_uint (enc, "batch", 77);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 2);
    for (int i = 0; i < 2; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "B");
        penc_kv_cstr (enc, "body", i ? "second" : "first");
    }
    pmsg_t *sent = testclient_call (again);
    EXPECT (sent, PMSG_SENT);
    //  The first fit, the second did not: applied once, as with wait_ms 0.
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 1);
    ck_assert_uint_eq (testclient_array_size (sent, "errors"), 1);
    pmsg_destroy (&sent);
    mail = testclient_fetch (b, seq, 100);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 4);
    ck_assert (pobj_streq (pobj_get (testclient_array_at (mail, "messages", 3), "body"),
                          "first"));
    pmsg_destroy (&mail);
    testclient_destroy (&a);
    testclient_destroy (&again);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST


//  With the journal on, a SEND is recorded when it is applied: one parked
//  behind acknowledgements replays after them, and the inbox after a
//  restart is the inbox before it.
START_TEST (test_parked_send_journaled_when_applied)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    const char *args [] = { "--max-inbox", "4", "--data-dir", dir, "--fsync", "always", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testpark_fill (a, "B", 4);
    testpark_send (a, "B", "late", 3, false, 60000);
    pmsg_t *mail = testclient_fetch (b, 0, 3);
    uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", 2), "seq", 0);
    pmsg_destroy (&mail);
    mail = testclient_fetch (b, seq, 100);
    pmsg_destroy (&mail);
    pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 3);
    pmsg_destroy (&sent);
    //  BYE gives the id's resume token up: B may say HELLO after the restart.
    pmsg_t *bye = testclient_call0 (b, PMSG_BYE);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);

    broker = testcheck_start (args);
    b = testcheck_agent (broker, "B");
    mail = testclient_fetch (b, 0, 100);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 4);
    const char *order [] = { "fill3", "late0", "late1", "late2" };
    for (size_t i = 0; i < 4; i++)
        ck_assert (pobj_streq (pobj_get (testclient_array_at (mail, "messages", i), "body"),
                               order [i]));
    pmsg_destroy (&mail);
    testclient_destroy (&b);
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST


//  First come, first served: a small SEND that would fit does not take
//  the room a SEND parked before it waits for.
START_TEST (test_parked_first_served_first)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *c = testcheck_agent (broker, "C");
    testclient_t *b = testcheck_agent (broker, "B");
    testpark_send (a, "B", "old", 2, false, 0);
    pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    //  A needs 3, B has room for 2: parked. C needs 1: would fit, waits.
    uint64_t big = testpark_send (a, "B", "big", 3, false, 60000);
    uint64_t small = testpark_send (c, "B", "small", 1, false, 60000);
    pmsg_t *early = testclient_recv (c, 500);
    ck_assert_msg (!early, "the later SEND went first: %s", testclient_describe (early));
    ck_assert_uint_eq (testpark_stat (b, "sends_waiting"), 2);
    //  B acknowledges one: room for A's 3, then none for C's.
    pmsg_t *mail = testclient_fetch (b, 0, 1);
    uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", 0), "seq", 0);
    pmsg_destroy (&mail);
    mail = testclient_fetch (b, seq, 1);
    pmsg_destroy (&mail);
    sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_id (sent), big);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 3);
    pmsg_destroy (&sent);
    early = testclient_recv (c, 300);
    ck_assert_msg (!early, "answered without room: %s", testclient_describe (early));
    //  Room again: C's goes.
    mail = testclient_fetch (b, seq, 100);
    uint64_t last = pobj_uint (testclient_array_at (mail, "messages", 3), "seq", 0);
    pmsg_destroy (&mail);
    mail = testclient_fetch (b, last, 100);
    pmsg_destroy (&mail);
    sent = testclient_recv (c, TESTCLIENT_TIMEOUT_MS);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_id (sent), small);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 1);
    pmsg_destroy (&sent);
    ck_assert_uint_eq (testpark_stat (b, "send_wait_timeouts"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&broker);
}
END_TEST


//  A sender whose SEND is parked is not silent: the broker holds its
//  requests. It is not expired however long it waits.
START_TEST (test_parked_sender_stays_live)
{
    const char *args [] = { "--max-inbox", "4", "--liveness-ms", "1500",
                            "--heartbeat-ms", "200", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testpark_fill (a, "B", 4);
    int64_t started = pclock_mono_ms ();
    testpark_send (a, "B", "late", 1, false, 4000);
    //  B stays live meanwhile (and so is waited for).
    pmsg_t *sent = NULL;
    while (!sent) {
        ck_assert_msg (pclock_mono_ms () - started < TESTCLIENT_TIMEOUT_MS, "no SENT");
        pmsg_t *ok = testclient_call0 (b, PMSG_HEARTBEAT);
        EXPECT (ok, PMSG_OK);
        pmsg_destroy (&ok);
        sent = testclient_recv (a, 100);
    }
    //  Answered at its deadline, not when A would have been expired.
    ck_assert_int_ge (pclock_mono_ms () - started, 4000);
    EXPECT (sent, PMSG_SENT);
    pmsg_destroy (&sent);
    pmsg_t *ok = testclient_call0 (a, PMSG_HEARTBEAT);
    EXPECT (ok, PMSG_OK);
    pmsg_destroy (&ok);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST


//  Fan-outs wait too: a post to a channel, and to "all", while one of
//  their online recipients is full.
START_TEST (test_fan_out_waits)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testclient_t *c = testcheck_agent (broker, "C");
    for (int i = 0; i < 2; i++) {
        penc_t *enc = testclient_begin (i ? c : b, PMSG_LISTEN, 1);
        penc_kv_cstr (enc, "channel", "news");
        pmsg_t *ok = testclient_call (i ? c : b);
        EXPECT (ok, PMSG_OK);
        pmsg_destroy (&ok);
    }
    testpark_fill (a, "B", 4);
    for (int round = 0; round < 2; round++) {
        penc_t *enc = testclient_begin (a, PMSG_SEND, 2);
        penc_kv_uint (enc, "wait_ms", 60000);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), 2);
        for (int i = 0; i < 2; i++) {
            msgpack_pack_map (penc_packer (enc), 2);
            penc_kv_cstr (enc, round ? "to" : "channel", round ? "all" : "news");
            penc_kv_cstr (enc, "body", "fan");
        }
        ck_assert_int_eq (testclient_send (a), 0);
        pmsg_t *early = testclient_recv (a, 300);
        ck_assert_msg (!early, "answered while B is full: %s", testclient_describe (early));
        //  B makes room for both messages: the SEND goes, whole.
        pmsg_t *mail = testclient_fetch (b, 0, 100);
        size_t count = testclient_array_size (mail, "messages");
        uint64_t seq = pobj_uint (testclient_array_at (mail, "messages", count - 1), "seq", 0);
        pmsg_destroy (&mail);
        mail = testclient_fetch (b, seq, 1);
        pmsg_destroy (&mail);
        pmsg_t *sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
        EXPECT (sent, PMSG_SENT);
        ck_assert_uint_eq (pmsg_uint (sent, "accepted", 0), 2);
        ck_assert (!pmsg_field (sent, "errors"));
        pmsg_destroy (&sent);
        //  B holds the 2 posts; 2 more fill it for the next round.
        mail = testclient_fetch (b, seq, 100);
        ck_assert_uint_eq (testclient_array_size (mail, "messages"), 2);
        pmsg_destroy (&mail);
        testpark_send (a, "B", "refill", 2, false, 0);
        sent = testclient_recv (a, TESTCLIENT_TIMEOUT_MS);
        EXPECT (sent, PMSG_SENT);
        pmsg_destroy (&sent);
    }
    ck_assert_uint_eq (testpark_stat (c, "sends_parked"), 2);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("parking");
    TCase *tc = tcase_create ("parking");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_wait_deadline);
    tcase_add_test (tc, test_offline_recipient_fails_at_once);
    tcase_add_test (tc, test_parked_sender_reconnects);
    tcase_add_test (tc, test_parked_send_journaled_when_applied);
    tcase_add_test (tc, test_parked_first_served_first);
    tcase_add_test (tc, test_parked_sender_stays_live);
    tcase_add_test (tc, test_fan_out_waits);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
