// SPDX-License-Identifier: MIT
/*  check_push - pushed delivery with credit (CONSUME, MAIL_PUSH) against
    the real broker over real sockets: pushes as mail arrives and no
    MAIL_READY for a consumer; the window in messages and bytes never
    exceeded, whatever the ack pattern; acks (ACK, FETCH's ack) returning
    credit; redelivery of pushed, unacknowledged mail after a reconnect;
    FETCH and pushes on one agent handing nothing out twice; per-recipient
    order under many concurrent senders; a slow consumer against the
    broker's bounds; a consumer whose pipe is full losing nothing; and
    malformed CONSUMEs refused with nothing changed.

    Every wait is a deadline by the clock. A consumer here is a raw DEALER
    (testclient) driven by tests/lib/testpush.c, whose pump checks every
    push against the window the consumer asked for.
*/
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testpush.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

#define DEADLINE_MS TESTPUSH_DEADLINE_MS

START_TEST (test_pushed_as_it_arrives)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    //  Prove a MAIL_READY subscription live while B pulls.
    testsub_t *sub = testsub_new (testbroker_pub (broker), "mail.B");
    pmsg_t *event = NULL;
    size_t probes = 0;
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (!event && pclock_mono_ms () < until) {
        testmail_send (a, "B", false, "probe");
        probes++;
        event = testsub_recv (sub, NULL, 0, 100);
    }
    ck_assert_msg (event, "no MAIL_READY for B");
    pmsg_destroy (&event);
    while ((event = testsub_recv (sub, NULL, 0, 100)))
        pmsg_destroy (&event);

    //  Queued mail is pushed at once when B opens its subscription, in
    //  seq order, in MAIL_PUSH frames with id 0.
    testpush_consume (b, 100, 0);
    testpush_wait_count (b, probes);
    for (size_t i = 0; i < b->count; i++)
        ck_assert_str_eq (b->bodies [i], "probe");
    uint64_t seq = testmail_send (a, "B", false, "live");
    testpush_wait_count (b, probes + 1);
    ck_assert_uint_eq (b->seqs [probes], seq);
    ck_assert_str_eq (b->bodies [probes], "live");
    //  No wake-up for a consumer: its mail came on its own connection.
    event = testsub_recv (sub, NULL, 0, 300);
    ck_assert_msg (!event, "MAIL_READY published for a consumer");
    ck_assert_uint_eq (testmail_stat (a, "consumers"), 1);
    ck_assert_uint_ge (testmail_stat (a, "pushed"), probes + 1);
    ck_assert_uint_ge (testmail_stat (a, "push_frames"), 2);

    //  credit 0 closes the subscription: mail waits for FETCH again, with
    //  its MAIL_READY.
    testpush_ack (b, seq);
    testpush_consume (b, 0, 0);
    uint64_t later = testmail_send (a, "B", false, "pulled");
    event = testsub_recv (sub, NULL, 0, DEADLINE_MS);
    ck_assert_msg (event, "no MAIL_READY after the subscription closed");
    ck_assert_uint_eq (pmsg_uint (event, "seq", 0), later);
    pmsg_destroy (&event);
    testpush_expect_no_more (b, probes + 1, 200);
    ck_assert_uint_eq (testmail_stat (a, "consumers"), 0);

    testsub_destroy (&sub);
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_credit_window)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    uint64_t last = testpush_send_many (a, "B", "m", 0, 50, NULL);
    testpush_consume (b, 5, 0);
    testpush_wait_count (b, 5);
    testpush_expect_no_more (b, 5, 300);
    //  ACK returns credit: two acknowledged, two more pushed.
    testpush_ack (b, b->seqs [1]);
    testpush_wait_count (b, 7);
    testpush_expect_no_more (b, 7, 300);
    //  FETCH's ack returns credit too (a stream FETCH hands out the rest
    //  after what was pushed, so nothing comes twice).
    penc_t *enc = testclient_begin (b->client, PMSG_FETCH, 3);
    penc_kv_uint (enc, "ack", b->seqs [6]);
    penc_kv_uint (enc, "max", 3);
    penc_kv_bool (enc, "stream", true);
    pmsg_t *mail = testpush_call (b);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 3);
    uint64_t fetched_last = 0;
    for (size_t i = 0; i < 3; i++) {
        const msgpack_object *item = testclient_array_at (mail, "messages", i);
        uint64_t seq = pobj_uint (item, "seq", 0);
        for (size_t k = 0; k < b->count; k++)
            ck_assert_uint_ne (seq, b->seqs [k]);
        fetched_last = seq;
    }
    pmsg_destroy (&mail);
    b->acked = b->seqs [6];
    //  Those three are out (unacknowledged) and count against the window:
    //  two more are pushed, then five are out.
    testpush_wait_count (b, 9);
    testpush_expect_no_more (b, 9, 300);
    ck_assert_uint_gt (b->seqs [7], fetched_last);
    testpush_ack (b, b->seqs [8]);
    testpush_wait_count (b, 14);
    //  Everything, acknowledged step by step.
    while (b->count < 47) {
        testpush_ack (b, b->seqs [b->count - 1]);
        testpush_wait_count (b, b->count + (b->count + 5 <= 47 ? 5 : 47 - b->count));
    }
    ck_assert_uint_eq (b->seqs [b->count - 1], last);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);

    //  The byte window: 10 bytes and 4-byte bodies take two at a time; a
    //  body larger than the window still moves, alone.
    testpush_ack (b, last);
    testpush_consume (b, 100, 10);
    size_t before = b->count;
    testpush_send_many (a, "B", "b00", 0, 6, NULL);    //  "b000".."b005": 4 bytes
    testpush_wait_count (b, before + 2);
    testpush_expect_no_more (b, before + 2, 300);
    testpush_ack (b, b->seqs [b->count - 1]);
    testpush_wait_count (b, before + 4);
    testpush_ack (b, b->seqs [b->count - 1]);
    testpush_wait_count (b, before + 6);
    testpush_ack (b, b->seqs [b->count - 1]);
    testmail_send (a, "B", false, "a body of more than ten bytes");
    testpush_wait_count (b, before + 7);
    ck_assert_str_eq (b->bodies [before + 6], "a body of more than ten bytes");

    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  Random acks against a small window: partial, cumulative, repeated,
//  none for a while. The pump checks the window at every push.
START_TEST (test_credit_never_exceeded)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_consume (b, 7, 300);
    unsigned seed = 7;
    size_t total = 0;
    for (int round = 0; round < 40; round++) {
        size_t accepted;
        testpush_send_many (a, "B", round % 2 ? "short" : "a longer body of some bytes ", round * 50,
                     50, &accepted);
        total += accepted;
        while (b->count < total && testpush_pump (b, 50))
            ;
        //  Acknowledge some prefix of what came (maybe nothing).
        size_t unacked = 0;
        for (size_t i = 0; i < b->count; i++)
            if (b->seqs [i] > b->acked)
                unacked++;
        if (unacked && rand_r (&seed) % 4 != 0) {
            size_t upto = b->count - unacked + (size_t) rand_r (&seed) % unacked;
            testpush_ack (b, b->seqs [upto]);
        }
    }
    while (b->count < total) {
        testpush_ack (b, b->seqs [b->count - 1]);
        size_t want = b->count + 1;
        testpush_wait_count (b, want);
    }
    testpush_expect_no_more (b, total, 200);
    ck_assert_uint_eq (total, 2000);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_redelivery_after_reconnect)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    char token [80] = "";
    testpush_t *b = testpush_new (testpush_hello_token (broker, "B", token, sizeof token));
    ck_assert (*token);
    testpush_send_many (a, "B", "m", 0, 5, NULL);
    testpush_consume (b, 10, 0);
    testpush_wait_count (b, 5);
    testpush_ack (b, b->seqs [1]);
    uint64_t want [3] = { b->seqs [2], b->seqs [3], b->seqs [4] };

    //  The connection goes; a new one takes the id over and consumes:
    //  the pushed, unacknowledged three come again, the two acknowledged
    //  do not.
    testpush_destroy (&b);
    b = testpush_new (testpush_hello_token (broker, "B", token, sizeof token));
    testpush_expect_no_more (b, 0, 200);       //  nothing pushed before CONSUME
    testpush_consume (b, 10, 0);
    testpush_wait_count (b, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq (b->seqs [i], want [i]);
    testpush_expect_no_more (b, 3, 200);

    //  HELLO again on the same connection ends the subscription too; the
    //  next CONSUME starts again from the acknowledged position.
    pmsg_t *welcome = testclient_hello (b->client, "B");
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    testmail_send (a, "B", false, "after hello");
    testpush_expect_no_more (b, 3, 300);
    testpush_consume (b, 10, 0);
    testpush_wait_count (b, 7);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq (b->seqs [3 + i], want [i]);
    ck_assert_str_eq (b->bodies [6], "after hello");

    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  A plain FETCH restarts from the acknowledged position (as it always
//  did) and the pushes continue after what it returned; a stream FETCH
//  continues after the pushes. On a healthy connection that uses stream
//  FETCHes nothing is handed out twice.
START_TEST (test_fetch_and_push_together)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_send_many (a, "B", "m", 0, 4, NULL);
    testpush_consume (b, 2, 0);
    testpush_wait_count (b, 2);
    //  A plain FETCH of one: m0 again (the restart), and the window now
    //  holds only that one, so m1 is pushed again after it.
    penc_t *enc = testclient_begin (b->client, PMSG_FETCH, 1);
    penc_kv_uint (enc, "max", 1);
    pmsg_t *mail = testpush_call (b);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 1);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (mail, "messages", 0), "seq", 0),
                       b->seqs [0]);
    pmsg_destroy (&mail);
    testpush_wait_count (b, 3);
    ck_assert_uint_eq (b->seqs [2], b->seqs [1]);
    testpush_expect_no_more (b, 3, 300);
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

typedef struct {
    const char *router;
    int index;
    int count;
} sender_arg_t;

static void *
s_sender (void *arg)
{
    sender_arg_t *self = arg;
    char id [16], prefix [16];
    snprintf (id, sizeof id, "S%d", self->index);
    snprintf (prefix, sizeof prefix, "%d:", self->index);
    testclient_t *client = testclient_new (self->router);
    pmsg_t *welcome = testclient_hello (client, id);
    pmsg_destroy (&welcome);
    //  One or a few messages per SEND, as agents send.
    for (int sent = 0; sent < self->count; ) {
        int n = 1 + (sent % 3);
        if (sent + n > self->count)
            n = self->count - sent;
        testpush_send_many (client, "B", prefix, sent, n, NULL);
        sent += n;
    }
    testclient_destroy (&client);
    return NULL;
}

START_TEST (test_order_many_senders)
{
    enum { SENDERS = 6, EACH = 300 };
    testbroker_t *broker = testcheck_start (NULL);
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_consume (b, 64, 0);
    pthread_t threads [SENDERS];
    sender_arg_t args [SENDERS];
    for (int i = 0; i < SENDERS; i++) {
        args [i] = (sender_arg_t) { testbroker_router (broker), i, EACH };
        ck_assert_int_eq (pthread_create (&threads [i], NULL, s_sender, &args [i]), 0);
    }
    int64_t until = pclock_mono_ms () + 2 * DEADLINE_MS;
    size_t acked_at = 0;
    while (b->count < SENDERS * EACH) {
        ck_assert_msg (pclock_mono_ms () < until, "%zu of %d pushed", b->count,
                       SENDERS * EACH);
        bool idle = !testpush_pump (b, 100);
        //  Cumulative acks every 16 messages, and when nothing more comes.
        if (b->count >= acked_at + 16 || (idle && b->count > acked_at)) {
            penc_t *enc = testclient_begin (b->client, PMSG_ACK, 1);
            penc_kv_uint (enc, "seq", b->seqs [b->count - 1]);
            ck_assert_int_eq (testclient_send (b->client), 0);
            b->acked = b->seqs [b->count - 1];
            acked_at = b->count;
        }
    }
    for (int i = 0; i < SENDERS; i++)
        pthread_join (threads [i], NULL);
    //  Seqs strictly increasing, and each sender's messages in its order.
    int next [SENDERS] = { 0 };
    for (size_t i = 0; i < b->count; i++) {
        if (i)
            ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);
        int sender, k;
        ck_assert_int_eq (sscanf (b->bodies [i], "%d:%d", &sender, &k), 2);
        ck_assert (sender >= 0 && sender < SENDERS);
        ck_assert_int_eq (k, next [sender]);
        next [sender]++;
    }
    testpush_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

//  A consumer that acknowledges slowly with a small window: the broker
//  holds at most its inbox bound, tells senders INBOX_FULL beyond it, and
//  every accepted message still arrives once, in order.
START_TEST (test_slow_consumer_bounded)
{
    const char *args [] = { "--max-inbox", "200", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testpush_t *b = testpush_new (testcheck_agent (broker, "B"));
    testpush_consume (b, 4, 0);
    size_t total = 0;
    for (int round = 0; round < 20; round++) {
        size_t accepted;
        testpush_send_many (a, "B", "m", round * 100, 100, &accepted);
        total += accepted;
        ck_assert_uint_le (testmail_stat (a, "queued"), 200);
        //  One window's worth acknowledged per round.
        while (testpush_pump (b, 20))
            ;
        if (b->count && b->seqs [b->count - 1] > b->acked)
            testpush_ack (b, b->seqs [b->count - 1]);
    }
    ck_assert_uint_lt (total, 2000);
    ck_assert_uint_ge (testmail_stat (a, "rejected"), 2000 - total);
    while (b->count < total) {
        testpush_wait_count (b, b->count + 1);
        testpush_ack (b, b->seqs [b->count - 1]);
    }
    testpush_expect_no_more (b, total, 200);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);
    ck_assert_uint_eq (testmail_stat (a, "queued"), 0);
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  A consumer that does not read: its pipe fills (--router-hwm 50), the
//  broker's sends are refused and counted, and once it reads, every
//  message arrives exactly once, in order.
START_TEST (test_full_pipe_loses_nothing)
{
    enum { COUNT = 800, BODY = 60000 };
    const char *args [] = { "--router-hwm", "50", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *raw = testclient_new_hwm (testbroker_router (broker), NULL, NULL, 1);
    pmsg_t *welcome = testclient_hello (raw, "B");
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    testpush_t *b = testpush_new (raw);
    testpush_consume (b, 10000, 64 * 1024 * 1024);
    char *body = malloc (BODY + 1);
    memset (body, 'x', BODY);
    body [BODY] = 0;
    for (int i = 0; i < COUNT; i++) {
        snprintf (body, 16, "%06d", i);
        body [6] = 'x';
        uint64_t seq = testmail_send (a, "B", false, body);
        ck_assert_uint_gt (seq, 0);
    }
    free (body);
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (testmail_stat (a, "push_deferred") == 0) {
        ck_assert_msg (pclock_mono_ms () < until, "no push was ever refused");
        pclock_sleep_ms (50);
    }
    testpush_wait_count (b, COUNT);
    for (size_t i = 0; i < COUNT; i++) {
        int k;
        ck_assert_int_eq (sscanf (b->bodies [i], "%6d", &k), 1);
        ck_assert_int_eq (k, (int) i);
        ck_assert_uint_eq (b->sizes [i], BODY);
        if (i)
            ck_assert_uint_eq (b->seqs [i], b->seqs [i - 1] + 1);
    }
    testpush_expect_no_more (b, COUNT, 200);
    testpush_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  A durable broker: pushed and acknowledged mail stays acknowledged over
//  a restart (the push's position is journaled, so the replayed ACK is not
//  clamped); pushed and unacknowledged mail comes again.
START_TEST (test_acks_of_pushes_survive_restart)
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
    testpush_ack (b, b->seqs [3]);
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

START_TEST (test_bad_consume)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *nobody = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (nobody, PMSG_CONSUME, 1);
    penc_kv_uint (enc, "credit", 1);
    pmsg_t *reply = testclient_call (nobody);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);

    testclient_t *b = testcheck_agent (broker, "B");
    //  Missing, of the wrong type, negative, over the limits, a zero byte
    //  window: each refused, nothing opened.
    enc = testclient_begin (b, PMSG_CONSUME, 0);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 1);
    penc_kv_cstr (enc, "credit", "10");
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 1);
    penc_key (enc, "credit");
    msgpack_pack_int64 (penc_packer (enc), -5);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 1);
    penc_kv_uint (enc, "credit", 65537);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 2);
    penc_kv_uint (enc, "credit", 10);
    penc_kv_uint (enc, "credit_bytes", 0);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 2);
    penc_kv_uint (enc, "credit", 10);
    penc_kv_uint (enc, "credit_bytes", 64ULL * 1024 * 1024 + 1);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (b, PMSG_CONSUME, 2);
    penc_kv_uint (enc, "credit", 10);
    penc_kv_bool (enc, "credit_bytes", true);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    //  A MAIL_PUSH sent to the broker is not a request.
    enc = testclient_begin (b, PMSG_MAIL_PUSH, 3);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 0);
    penc_kv_uint (enc, "pending", 0);
    penc_kv_uint (enc, "acked", 0);
    reply = testclient_call (b);
    EXPECT_ERROR (reply, PERR_NOT_REQUEST);
    pmsg_destroy (&reply);

    ck_assert_uint_eq (testmail_stat (b, "consumers"), 0);
    //  Still pulling: mail waits for FETCH, none is pushed.
    testclient_t *a = testcheck_agent (broker, "A");
    testmail_send (a, "B", false, "pulled");
    reply = testclient_recv (b, 300);
    ck_assert_msg (!reply, "a frame came unasked: %s", testclient_describe (reply));
    char bodies [64];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "pulled");
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&nobody);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("push");
    TCase *tc = tcase_create ("push");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_pushed_as_it_arrives);
    tcase_add_test (tc, test_credit_window);
    tcase_add_test (tc, test_credit_never_exceeded);
    tcase_add_test (tc, test_redelivery_after_reconnect);
    tcase_add_test (tc, test_fetch_and_push_together);
    tcase_add_test (tc, test_order_many_senders);
    tcase_add_test (tc, test_slow_consumer_bounded);
    tcase_add_test (tc, test_full_pipe_loses_nothing);
    tcase_add_test (tc, test_acks_of_pushes_survive_restart);
    tcase_add_test (tc, test_bad_consume);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
