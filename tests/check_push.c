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
    (testclient): pushed frames (id 0) and replies come on one socket, so
    the pump below sorts them and checks every push against the window it
    asked for, counting only the acks it has sent.
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
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

#define DEADLINE_MS 20000

//  A consumer's view: what it received, what it acknowledged, and the
//  window it asked for (checked at every push).
typedef struct {
    testclient_t *client;
    uint64_t credit, credit_bytes;
    uint64_t *seqs;             //  every seq received, in order
    size_t *sizes;
    char **bodies;
    size_t count, cap;
    uint64_t acked;             //  the highest ack sent
    size_t frames;              //  MAIL_PUSH frames
    pmsg_t *reply;              //  the last non-push frame
} consumer_t;

static consumer_t *
s_consumer_new (testclient_t *client)
{
    consumer_t *self = calloc (1, sizeof *self);
    self->client = client;
    return self;
}

static void
s_consumer_destroy (consumer_t **self_p)
{
    consumer_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++)
        free (self->bodies [i]);
    free (self->bodies);
    free (self->seqs);
    free (self->sizes);
    pmsg_destroy (&self->reply);
    free (self);
    *self_p = NULL;
}

//  Pushed and not acknowledged, as far as this consumer knows: the seqs
//  above its last ack, each once (a restart pushes some again). They are
//  the tail of the list, as seqs only go back at a restart from the ack.
static void
s_unacked (consumer_t *self, size_t *count, uint64_t *bytes)
{
    *count = 0;
    *bytes = 0;
    for (size_t i = self->count; i-- > 0 && self->seqs [i] > self->acked; ) {
        bool again = false;
        for (size_t k = i + 1; k < self->count && !again; k++)
            again = self->seqs [k] == self->seqs [i];
        if (!again) {
            (*count)++;
            *bytes += self->sizes [i];
        }
    }
}

static void
s_take_push (consumer_t *self, const pmsg_t *push)
{
    ck_assert_uint_eq (pmsg_id (push), 0);
    const msgpack_object *messages = pmsg_field (push, "messages");
    ck_assert (messages && messages->type == MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_gt (messages->via.array.size, 0);
    for (uint32_t i = 0; i < messages->via.array.size; i++) {
        const msgpack_object *item = &messages->via.array.ptr [i];
        if (self->count == self->cap) {
            self->cap = self->cap ? self->cap * 2 : 64;
            self->seqs = realloc (self->seqs, self->cap * sizeof (uint64_t));
            self->sizes = realloc (self->sizes, self->cap * sizeof (size_t));
            self->bodies = realloc (self->bodies, self->cap * sizeof (char *));
        }
        size_t len = 0;
        const char *body = pobj_str (item, "body", &len);
        self->seqs [self->count] = pobj_uint (item, "seq", 0);
        self->sizes [self->count] = len;
        self->bodies [self->count] = strndup (body ? body : "", len);
        self->count++;
    }
    self->frames++;
    //  The window: never more unacknowledged pushed messages than the
    //  credit, nor more bytes than credit_bytes unless it is one message.
    size_t out;
    uint64_t bytes;
    s_unacked (self, &out, &bytes);
    ck_assert_msg (out <= self->credit, "%zu unacknowledged pushed with credit %llu", out,
                   (unsigned long long) self->credit);
    ck_assert_msg (out <= 1 || bytes <= self->credit_bytes,
                   "%llu bytes unacknowledged with credit_bytes %llu",
                   (unsigned long long) bytes, (unsigned long long) self->credit_bytes);
}

//  Takes one frame within `ms`: a push is taken in (true); any other frame
//  is kept in self->reply (true). False when nothing came.
static bool
s_pump (consumer_t *self, int ms)
{
    pmsg_t *msg = testclient_recv (self->client, ms);
    if (!msg)
        return false;
    if (pmsg_type (msg) == PMSG_MAIL_PUSH) {
        s_take_push (self, msg);
        pmsg_destroy (&msg);
    }
    else {
        pmsg_destroy (&self->reply);
        self->reply = msg;
    }
    return true;
}

//  Pumps until `count` messages were received; fails at the deadline.
static void
s_wait_count (consumer_t *self, size_t count)
{
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (self->count < count) {
        int64_t left = until - pclock_mono_ms ();
        ck_assert_msg (left > 0, "%zu messages pushed, %zu expected", self->count, count);
        s_pump (self, (int) (left < 200 ? left : 200));
    }
}

//  Pumps for `ms`; the count must not grow past `count` (for a window
//  that is full: a push beyond it would come within this time).
static void
s_expect_no_more (consumer_t *self, size_t count, int ms)
{
    int64_t until = pclock_mono_ms () + ms;
    int64_t left;
    while ((left = until - pclock_mono_ms ()) > 0)
        s_pump (self, (int) left);
    ck_assert_msg (self->count == count, "%zu messages pushed, %zu expected", self->count,
                   count);
}

//  Sends a request built on the consumer's client and pumps until its
//  reply comes (pushes may come before it); the reply is returned.
static pmsg_t *
s_call (consumer_t *self)
{
    ck_assert_int_eq (testclient_send (self->client), 0);
    uint64_t id = testclient_last_id (self->client);
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (pclock_mono_ms () < until) {
        if (!s_pump (self, 200) || !self->reply)
            continue;
        pmsg_t *reply = self->reply;
        self->reply = NULL;
        if (pmsg_id (reply) == id)
            return reply;
        pmsg_destroy (&reply);
    }
    ck_abort_msg ("no reply to request %llu", (unsigned long long) id);
    return NULL;
}

static void
s_consume (consumer_t *self, uint64_t credit, uint64_t credit_bytes)
{
    penc_t *enc = testclient_begin (self->client, PMSG_CONSUME, credit_bytes ? 2 : 1);
    penc_kv_uint (enc, "credit", credit);
    if (credit_bytes)
        penc_kv_uint (enc, "credit_bytes", credit_bytes);
    pmsg_t *reply = s_call (self);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    self->credit = credit;
    self->credit_bytes = credit_bytes ? credit_bytes : 8 * 1024 * 1024;
}

static void
s_ack (consumer_t *self, uint64_t seq)
{
    penc_t *enc = testclient_begin (self->client, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seq);
    pmsg_t *reply = s_call (self);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    if (seq > self->acked)
        self->acked = seq;
}

//  SEND of `count` messages to `to` with bodies "<prefix><i>"; `wait_ms`
//  0 so a full inbox answers at once (a field brokers without it ignore).
static uint64_t
s_send_many (testclient_t *client, const char *to, const char *prefix, int first, int count,
             size_t *accepted)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 2);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    char body [64];
    for (int i = 0; i < count; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        snprintf (body, sizeof body, "%s%d", prefix, first + i);
        penc_kv_cstr (enc, "body", body);
    }
    penc_kv_uint (enc, "wait_ms", 0);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_SENT);
    if (accepted)
        *accepted = pmsg_uint (reply, "accepted", 0);
    const msgpack_object *seqs = pmsg_field (reply, "seqs");
    uint64_t last = seqs->via.array.ptr [seqs->via.array.size - 1].via.u64;
    pmsg_destroy (&reply);
    return last;
}

//  A HELLO on a fresh connection; the resume token WELCOME gave is kept in
//  `token` (plain mode), or sent when `token` is already set.
static testclient_t *
s_hello_token (testbroker_t *broker, const char *id, char *token, size_t size)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (client, PMSG_HELLO, *token ? 2 : 1);
    penc_kv_cstr (enc, "agent", id);
    if (*token)
        penc_kv_cstr (enc, "token", token);
    pmsg_t *welcome = testclient_call (client);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_strcpy (welcome, "token", token, size);
    pmsg_destroy (&welcome);
    return client;
}

START_TEST (test_pushed_as_it_arrives)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
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
    s_consume (b, 100, 0);
    s_wait_count (b, probes);
    for (size_t i = 0; i < b->count; i++)
        ck_assert_str_eq (b->bodies [i], "probe");
    uint64_t seq = testmail_send (a, "B", false, "live");
    s_wait_count (b, probes + 1);
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
    s_ack (b, seq);
    s_consume (b, 0, 0);
    uint64_t later = testmail_send (a, "B", false, "pulled");
    event = testsub_recv (sub, NULL, 0, DEADLINE_MS);
    ck_assert_msg (event, "no MAIL_READY after the subscription closed");
    ck_assert_uint_eq (pmsg_uint (event, "seq", 0), later);
    pmsg_destroy (&event);
    s_expect_no_more (b, probes + 1, 200);
    ck_assert_uint_eq (testmail_stat (a, "consumers"), 0);

    testsub_destroy (&sub);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_credit_window)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
    uint64_t last = s_send_many (a, "B", "m", 0, 50, NULL);
    s_consume (b, 5, 0);
    s_wait_count (b, 5);
    s_expect_no_more (b, 5, 300);
    //  ACK returns credit: two acknowledged, two more pushed.
    s_ack (b, b->seqs [1]);
    s_wait_count (b, 7);
    s_expect_no_more (b, 7, 300);
    //  FETCH's ack returns credit too (a stream FETCH hands out the rest
    //  after what was pushed, so nothing comes twice).
    penc_t *enc = testclient_begin (b->client, PMSG_FETCH, 3);
    penc_kv_uint (enc, "ack", b->seqs [6]);
    penc_kv_uint (enc, "max", 3);
    penc_kv_bool (enc, "stream", true);
    pmsg_t *mail = s_call (b);
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
    s_wait_count (b, 9);
    s_expect_no_more (b, 9, 300);
    ck_assert_uint_gt (b->seqs [7], fetched_last);
    s_ack (b, b->seqs [8]);
    s_wait_count (b, 14);
    //  Everything, acknowledged step by step.
    while (b->count < 47) {
        s_ack (b, b->seqs [b->count - 1]);
        s_wait_count (b, b->count + (b->count + 5 <= 47 ? 5 : 47 - b->count));
    }
    ck_assert_uint_eq (b->seqs [b->count - 1], last);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);

    //  The byte window: 10 bytes and 4-byte bodies take two at a time; a
    //  body larger than the window still moves, alone.
    s_ack (b, last);
    s_consume (b, 100, 10);
    size_t before = b->count;
    s_send_many (a, "B", "b00", 0, 6, NULL);    //  "b000".."b005": 4 bytes
    s_wait_count (b, before + 2);
    s_expect_no_more (b, before + 2, 300);
    s_ack (b, b->seqs [b->count - 1]);
    s_wait_count (b, before + 4);
    s_ack (b, b->seqs [b->count - 1]);
    s_wait_count (b, before + 6);
    s_ack (b, b->seqs [b->count - 1]);
    testmail_send (a, "B", false, "a body of more than ten bytes");
    s_wait_count (b, before + 7);
    ck_assert_str_eq (b->bodies [before + 6], "a body of more than ten bytes");

    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
    s_consume (b, 7, 300);
    unsigned seed = 7;
    size_t total = 0;
    for (int round = 0; round < 40; round++) {
        size_t accepted;
        s_send_many (a, "B", round % 2 ? "short" : "a longer body of some bytes ", round * 50,
                     50, &accepted);
        total += accepted;
        while (b->count < total && s_pump (b, 50))
            ;
        //  Acknowledge some prefix of what came (maybe nothing).
        size_t unacked = 0;
        for (size_t i = 0; i < b->count; i++)
            if (b->seqs [i] > b->acked)
                unacked++;
        if (unacked && rand_r (&seed) % 4 != 0) {
            size_t upto = b->count - unacked + (size_t) rand_r (&seed) % unacked;
            s_ack (b, b->seqs [upto]);
        }
    }
    while (b->count < total) {
        s_ack (b, b->seqs [b->count - 1]);
        size_t want = b->count + 1;
        s_wait_count (b, want);
    }
    s_expect_no_more (b, total, 200);
    ck_assert_uint_eq (total, 2000);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_redelivery_after_reconnect)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    char token [80] = "";
    consumer_t *b = s_consumer_new (s_hello_token (broker, "B", token, sizeof token));
    ck_assert (*token);
    s_send_many (a, "B", "m", 0, 5, NULL);
    s_consume (b, 10, 0);
    s_wait_count (b, 5);
    s_ack (b, b->seqs [1]);
    uint64_t want [3] = { b->seqs [2], b->seqs [3], b->seqs [4] };

    //  The connection goes; a new one takes the id over and consumes:
    //  the pushed, unacknowledged three come again, the two acknowledged
    //  do not.
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
    b = s_consumer_new (s_hello_token (broker, "B", token, sizeof token));
    s_expect_no_more (b, 0, 200);       //  nothing pushed before CONSUME
    s_consume (b, 10, 0);
    s_wait_count (b, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq (b->seqs [i], want [i]);
    s_expect_no_more (b, 3, 200);

    //  HELLO again on the same connection ends the subscription too; the
    //  next CONSUME starts again from the acknowledged position.
    pmsg_t *welcome = testclient_hello (b->client, "B");
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    testmail_send (a, "B", false, "after hello");
    s_expect_no_more (b, 3, 300);
    s_consume (b, 10, 0);
    s_wait_count (b, 7);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq (b->seqs [3 + i], want [i]);
    ck_assert_str_eq (b->bodies [6], "after hello");

    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
    s_send_many (a, "B", "m", 0, 4, NULL);
    s_consume (b, 2, 0);
    s_wait_count (b, 2);
    //  A plain FETCH of one: m0 again (the restart), and the window now
    //  holds only that one, so m1 is pushed again after it.
    penc_t *enc = testclient_begin (b->client, PMSG_FETCH, 1);
    penc_kv_uint (enc, "max", 1);
    pmsg_t *mail = s_call (b);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 1);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (mail, "messages", 0), "seq", 0),
                       b->seqs [0]);
    pmsg_destroy (&mail);
    s_wait_count (b, 3);
    ck_assert_uint_eq (b->seqs [2], b->seqs [1]);
    s_expect_no_more (b, 3, 300);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
        s_send_many (client, "B", prefix, sent, n, NULL);
        sent += n;
    }
    testclient_destroy (&client);
    return NULL;
}

START_TEST (test_order_many_senders)
{
    enum { SENDERS = 6, EACH = 300 };
    testbroker_t *broker = testcheck_start (NULL);
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
    s_consume (b, 64, 0);
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
        bool idle = !s_pump (b, 100);
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
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
    consumer_t *b = s_consumer_new (testcheck_agent (broker, "B"));
    s_consume (b, 4, 0);
    size_t total = 0;
    for (int round = 0; round < 20; round++) {
        size_t accepted;
        s_send_many (a, "B", "m", round * 100, 100, &accepted);
        total += accepted;
        ck_assert_uint_le (testmail_stat (a, "queued"), 200);
        //  One window's worth acknowledged per round.
        while (s_pump (b, 20))
            ;
        if (b->count && b->seqs [b->count - 1] > b->acked)
            s_ack (b, b->seqs [b->count - 1]);
    }
    ck_assert_uint_lt (total, 2000);
    ck_assert_uint_ge (testmail_stat (a, "rejected"), 2000 - total);
    while (b->count < total) {
        s_wait_count (b, b->count + 1);
        s_ack (b, b->seqs [b->count - 1]);
    }
    s_expect_no_more (b, total, 200);
    for (size_t i = 1; i < b->count; i++)
        ck_assert_uint_gt (b->seqs [i], b->seqs [i - 1]);
    ck_assert_uint_eq (testmail_stat (a, "queued"), 0);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
    consumer_t *b = s_consumer_new (raw);
    s_consume (b, 10000, 64 * 1024 * 1024);
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
    s_wait_count (b, COUNT);
    for (size_t i = 0; i < COUNT; i++) {
        int k;
        ck_assert_int_eq (sscanf (b->bodies [i], "%6d", &k), 1);
        ck_assert_int_eq (k, (int) i);
        ck_assert_uint_eq (b->sizes [i], BODY);
        if (i)
            ck_assert_uint_eq (b->seqs [i], b->seqs [i - 1] + 1);
    }
    s_expect_no_more (b, COUNT, 200);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
    consumer_t *b = s_consumer_new (s_hello_token (broker, "B", token, sizeof token));
    s_send_many (a, "B", "m", 0, 6, NULL);
    s_consume (b, 10, 0);
    s_wait_count (b, 6);
    s_ack (b, b->seqs [3]);
    uint64_t want [2] = { b->seqs [4], b->seqs [5] };
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
    testclient_destroy (&a);
    testcheck_stop (&broker);

    broker = testcheck_start (args);
    b = s_consumer_new (s_hello_token (broker, "B", token, sizeof token));
    s_consume (b, 10, 0);
    s_wait_count (b, 2);
    ck_assert_uint_eq (b->seqs [0], want [0]);
    ck_assert_uint_eq (b->seqs [1], want [1]);
    s_expect_no_more (b, 2, 200);
    testclient_destroy (&b->client);
    s_consumer_destroy (&b);
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
