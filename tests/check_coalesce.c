// SPDX-License-Identifier: MIT
/*  check_coalesce - libparley's coalescing of pipelined posts (held while
    earlier SENDs are in flight, sent together as one multi-item SEND)
    against the real broker over real sockets.

    What must hold: the posts reach the receiver complete and in order;
    they were coalesced (fewer SEND frames than posts), and with a linger
    of 0 they are not; each post keeps its ticket, so a message refused
    inside a coalesced frame fails that post's ticket (at its index in the
    post) and no other, and a frame refused whole fails each of its posts;
    another request made while posts are held goes after them; destroy
    sends what is held; an acknowledgement rides on a SEND when WELCOME
    lists send_ack; and a broker killed -9 mid-stream and restarted from
    its journal loses no confirmed post, while the posts resent (those in
    flight at the kill) are the only ones that may arrive twice.

    Coalescing is made certain, not hoped for: the broker is stopped
    (SIGSTOP) while the posts are made, so nothing is confirmed meanwhile
    and every post after the first is held; frames then go only when full
    (the linger is far longer than the test). Every wait is a deadline by
    the clock.
*/
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/client.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

#define S_DEADLINE_MS 60000
#define S_LONG_LINGER_US (600 * 1000000LL)

static parley_client_t *
s_client (const char *router, const char *id)
{
    parley_client_t *client = parley_client_new (router, id);
    ck_assert_ptr_nonnull (client);
    parley_client_set_timeout (client, 20000, 200);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

//  One pipelined post of one message "m<n>" to `to`; its ticket.
static parley_ticket_t
s_post (parley_client_t *client, const char *to, size_t n)
{
    char body [32];
    snprintf (body, sizeof body, "m%zu", n);
    parley_outbox_t *out = parley_outbox_new ();
    ck_assert_int_eq (parley_outbox_to (out, to, body, strlen (body)), PARLEY_OK);
    parley_ticket_t ticket = 0;
    ck_assert_int_eq (parley_client_send_pipelined (client, out, &ticket), PARLEY_OK);
    ck_assert_uint_ne (ticket, 0);
    parley_outbox_destroy (&out);
    return ticket;
}

//  The receiver's mail, "m<n>" as n, in the order it came, until `want`
//  have come (the test fails at the deadline). `got` has room for `cap`.
static size_t
s_receive (parley_client_t *rx, size_t want, long *got, size_t cap)
{
    size_t count = 0;
    uint64_t ack = 0;
    int64_t deadline = pclock_mono_ms () + S_DEADLINE_MS;
    parley_mail_t *mail = NULL;
    while (count < want) {
        ck_assert_msg (pclock_mono_ms () < deadline, "only %zu of %zu messages came", count,
                       want);
        ck_assert_int_eq (parley_client_fetch (rx, ack, 0, false, &mail), PARLEY_OK);
        size_t n = parley_mail_count (mail);
        for (size_t i = 0; i < n; i++) {
            const parley_message_t *msg = parley_mail_at (mail, i);
            char text [32] = "";
            size_t len = parley_message_body_size (msg);
            ck_assert_uint_lt (len, sizeof text);
            memcpy (text, parley_message_body (msg), len);
            ck_assert_msg (text [0] == 'm', "unexpected body %s", text);
            ck_assert_uint_lt (count, cap);
            got [count++] = atol (text + 1);
            ack = parley_message_seq (msg);
        }
        if (n == 0)
            parley_client_wait (rx, 100);
    }
    if (ack)
        ck_assert_int_eq (parley_client_ack (rx, ack), PARLEY_OK);
    parley_mail_destroy (&mail);
    return count;
}

//  Nothing more comes to `rx` within `ms` (a check that extra copies are
//  absent, not a wait for something).
static void
s_expect_no_more (parley_client_t *rx, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    parley_mail_t *mail = NULL;
    while (pclock_mono_ms () < until) {
        ck_assert_int_eq (parley_client_fetch (rx, 0, 0, false, &mail), PARLEY_OK);
        ck_assert_msg (parley_mail_count (mail) == 0, "%zu more messages came",
                       parley_mail_count (mail));
        parley_client_wait (rx, 50);
    }
    parley_mail_destroy (&mail);
}

//  Stops the broker, so what the posts send is not confirmed until it
//  continues: every post after the first is held.
static void
s_freeze (testbroker_t *broker)
{
    testbroker_signal (broker, SIGSTOP);
    //  Stopped once the kernel says so (/proc/PID/stat's state is T), not
    //  when the signal was sent.
    char path [64], stat [256];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) testbroker_pid (broker));
    int64_t deadline = pclock_mono_ms () + S_DEADLINE_MS;
    while (true) {
        FILE *file = fopen (path, "r");
        ck_assert_ptr_nonnull (file);
        size_t size = fread (stat, 1, sizeof stat - 1, file);
        fclose (file);
        stat [size] = 0;
        const char *state = strrchr (stat, ')');
        if (state && state [1] == ' ' && state [2] == 'T')
            return;
        ck_assert_msg (pclock_mono_ms () < deadline, "the broker did not stop: %s", stat);
        usleep (1000);
    }
}

static void
s_thaw (testbroker_t *broker)
{
    testbroker_signal (broker, SIGCONT);
}


//  A broker with receiver B and sender A (coalescing with frames of
//  `messages` and `linger_us`).
typedef struct {
    testbroker_t *broker;
    parley_client_t *rx, *tx;
} s_pair_t;

static s_pair_t
s_pair (const char *const *args, size_t messages, int64_t linger_us)
{
    s_pair_t pair;
    pair.broker = testcheck_start (args);
    pair.rx = s_client (testbroker_router (pair.broker), "B");
    pair.tx = s_client (testbroker_router (pair.broker), "A");
    parley_client_set_coalesce (pair.tx, messages, 0, linger_us);
    return pair;
}

static void
s_pair_end (s_pair_t *pair)
{
    parley_client_destroy (&pair->tx);
    parley_client_destroy (&pair->rx);
    testcheck_stop (&pair->broker);
}

//  Posts "m<first>" .. "m<first+count-1>" to B, one message each.
static void
s_posts (parley_client_t *client, size_t first, size_t count)
{
    for (size_t i = first; i < first + count; i++)
        s_post (client, "B", i);
}

//  `rx` receives exactly "m<first>" .. "m<first+count-1>", in order.
static void
s_expect_range (parley_client_t *rx, long first, size_t count)
{
    long *got = (long *) calloc (count, sizeof (long));
    ck_assert_ptr_nonnull (got);
    ck_assert_uint_eq (s_receive (rx, count, got, count), count);
    for (size_t i = 0; i < count; i++)
        ck_assert_int_eq (got [i], first + (long) i);
    free (got);
    s_expect_no_more (rx, 200);
}

//  ---------------------------------------------------------------------

//  Posts made while the first is unconfirmed go as frames of 64; they
//  arrive complete and in order.
START_TEST (test_coalesced_in_order)
{
    s_pair_t pair = s_pair (NULL, 64, S_LONG_LINGER_US);
    parley_client_t *tx = pair.tx;
    enum { POSTS = 2000 };
    s_freeze (pair.broker);
    s_posts (tx, 0, POSTS);
    uint64_t frames = parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES);
    //  The first alone, then full frames of 64; the rest held.
    ck_assert_uint_eq (frames, 1 + (POSTS - 1) / 64);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FLUSH_FULL), (POSTS - 1) / 64);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_HELD), (POSTS - 1) % 64);
    s_thaw (pair.broker);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_HELD), 0);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_ACCEPTED), POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_CONFIRMED), POSTS);
    ck_assert_uint_lt (parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES), POSTS / 10);
    s_expect_range (pair.rx, 0, POSTS);
    s_pair_end (&pair);
}
END_TEST

//  A linger of 0: every post is its own frame, even with the broker
//  stopped.
START_TEST (test_linger_zero_does_not_coalesce)
{
    s_pair_t pair = s_pair (NULL, 64, 0);
    parley_client_t *tx = pair.tx;
    enum { POSTS = 300 };
    s_freeze (pair.broker);
    s_posts (tx, 0, POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES), POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_HELD), 0);
    s_thaw (pair.broker);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES), POSTS);
    s_expect_range (pair.rx, 0, POSTS);
    s_pair_end (&pair);
}
END_TEST

//  Messages to an agent nobody registered, inside coalesced frames: each
//  failure names its own post's ticket and the index in that post; every
//  other message arrives.
START_TEST (test_item_failure_names_its_post)
{
    s_pair_t pair = s_pair (NULL, 16, S_LONG_LINGER_US);
    parley_client_t *tx = pair.tx;
    enum { POSTS = 100 };
    parley_ticket_t tickets [POSTS];
    s_freeze (pair.broker);
    size_t good = 0;
    for (size_t i = 0; i < POSTS; i++) {
        if (i % 7 == 3) {
            //  Two messages: B's, then one to nobody (index 1 in the post).
            parley_outbox_t *out = parley_outbox_new ();
            char body [32];
            snprintf (body, sizeof body, "m%zu", i);
            ck_assert_int_eq (parley_outbox_to (out, "B", body, strlen (body)), PARLEY_OK);
            ck_assert_int_eq (parley_outbox_to (out, "Nobody", "x", 1), PARLEY_OK);
            ck_assert_int_eq (parley_client_send_pipelined (tx, out, &tickets [i]), PARLEY_OK);
            parley_outbox_destroy (&out);
        }
        else
            tickets [i] = s_post (tx, i % 11 == 5 ? "Nobody" : "B", i);
        good += i % 11 != 5 || i % 7 == 3;
    }
    ck_assert_uint_lt (parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES), POSTS / 4);
    s_thaw (pair.broker);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    //  Each failure is one we made, once, in order of the posts.
    parley_failure_t *failure = NULL;
    size_t failures = 0, next = 0;
    while (parley_client_send_failure (tx, &failure)) {
        parley_ticket_t ticket = parley_failure_ticket (failure);
        while (next < POSTS && tickets [next] != ticket)
            next++;
        ck_assert_msg (next < POSTS, "a failure names ticket %llu, no post's (or out of order)",
                       (unsigned long long) ticket);
        ck_assert (!parley_failure_whole (failure));
        ck_assert_int_eq (parley_failure_code (failure), PARLEY_ERR_UNKNOWN_RECIPIENT);
        if (next % 7 == 3)
            ck_assert_uint_eq (parley_failure_index (failure), 1);
        else {
            ck_assert_uint_eq (next % 11, 5);
            ck_assert_uint_eq (parley_failure_index (failure), 0);
        }
        failures++;
        next++;
    }
    parley_failure_destroy (&failure);
    size_t want_failures = 0;
    for (size_t i = 0; i < POSTS; i++)
        want_failures += i % 7 == 3 || i % 11 == 5;
    ck_assert_uint_eq (failures, want_failures);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FAILED_MESSAGES), want_failures);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FAILED_SENDS), 0);
    static long got [POSTS];
    ck_assert_uint_eq (s_receive (pair.rx, good, got, POSTS), good);
    size_t at = 0;
    for (size_t i = 0; i < POSTS; i++)
        if (i % 11 != 5 || i % 7 == 3)
            ck_assert_int_eq (got [at++], (long) i);
    s_pair_end (&pair);
}
END_TEST

//  The broker cannot write its journal: each coalesced frame is refused
//  whole, and each of its posts (every post made) fails whole with its
//  own ticket. Once the journal takes writes again, posts go through.
START_TEST (test_frame_refused_whole)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *flag = tproc_dir_path (dir, "full");
    char *data = tproc_dir_path (dir, "data");
    setenv ("PARLEY_TEST_JOURNAL_FULL", flag, 1);
    const char *args [] = { "--data-dir", data, "--fsync", "always", NULL };
    s_pair_t pair = s_pair (args, 8, S_LONG_LINGER_US);
    unsetenv ("PARLEY_TEST_JOURNAL_FULL");
    parley_client_t *tx = pair.tx;
    enum { POSTS = 50 };
    parley_ticket_t tickets [POSTS];
    s_freeze (pair.broker);
    FILE *file = fopen (flag, "w");
    ck_assert_ptr_nonnull (file);
    fclose (file);
    for (size_t i = 0; i < POSTS; i++)
        tickets [i] = s_post (tx, "B", i);
    uint64_t frames = parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES);
    ck_assert_uint_lt (frames, POSTS / 4);
    s_thaw (pair.broker);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    parley_failure_t *failure = NULL;
    size_t failures = 0;
    while (parley_client_send_failure (tx, &failure)) {
        ck_assert_uint_lt (failures, POSTS);
        ck_assert_uint_eq (parley_failure_ticket (failure), tickets [failures]);
        ck_assert (parley_failure_whole (failure));
        ck_assert_int_eq (parley_failure_code (failure), PARLEY_ERR_STORAGE);
        failures++;
    }
    ck_assert_uint_eq (failures, POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FAILED_SENDS), POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_ACCEPTED), 0);
    unlink (flag);
    s_posts (tx, 1000, 10);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    ck_assert (!parley_client_send_failure (tx, &failure));
    parley_failure_destroy (&failure);
    s_expect_range (pair.rx, 1000, 10);
    s_pair_end (&pair);
    free (flag);
    free (data);
    tproc_dir_destroy (&dir);
}
END_TEST

//  Posts held when the client makes another request go before it: when
//  a state write returns, the broker has queued every post made before
//  it (AGENTS, asked on another connection, shows them pending); and a
//  plain SEND made after held posts reaches the receiver after them.
START_TEST (test_request_after_held_posts_keeps_order)
{
    s_pair_t pair = s_pair (NULL, 1024, S_LONG_LINGER_US);
    parley_client_t *tx = pair.tx;
    testclient_t *probe = testcheck_agent (pair.broker, "Probe");
    enum { POSTS = 200 };
    s_freeze (pair.broker);
    s_posts (tx, 0, POSTS);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_HELD), POSTS - 1);
    s_thaw (pair.broker);
    parley_ops_t *ops = parley_ops_new ();
    ck_assert_int_eq (parley_ops_set (ops, "k", "1", 1), PARLEY_OK);
    ck_assert_int_eq (parley_client_write (tx, ops, NULL), PARLEY_OK);
    parley_ops_destroy (&ops);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_HELD), 0);
    ck_assert_uint_ge (parley_client_counter (tx, PARLEY_COUNTER_FLUSH_CALL), 1);
    ck_assert_uint_eq (testcheck_pending (probe, "B"), POSTS);
    //  More held posts, then a plain SEND: it comes last.
    s_freeze (pair.broker);
    s_posts (tx, POSTS, POSTS);
    s_thaw (pair.broker);
    parley_outbox_t *out = parley_outbox_new ();
    ck_assert_int_eq (parley_outbox_to (out, "B", "m400", 4), PARLEY_OK);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (tx, out, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&out);
    s_expect_range (pair.rx, 0, 2 * POSTS + 1);
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    testclient_destroy (&probe);
    s_pair_end (&pair);
}
END_TEST

//  Destroy sends what is held: every post arrives, none twice.
START_TEST (test_destroy_sends_held_posts)
{
    s_pair_t pair = s_pair (NULL, 1024, S_LONG_LINGER_US);
    enum { POSTS = 500 };
    s_freeze (pair.broker);
    s_posts (pair.tx, 0, POSTS);
    ck_assert_uint_eq (parley_client_counter (pair.tx, PARLEY_COUNTER_HELD), POSTS - 1);
    parley_client_destroy (&pair.tx);
    s_thaw (pair.broker);
    s_expect_range (pair.rx, 0, POSTS);
    s_pair_end (&pair);
}
END_TEST

//  B consumes pushed mail and answers each message with a pipelined post;
//  after the last answer but one of each batch it acknowledges the batch
//  without waiting: that acknowledgement is held and rides on a SEND of
//  B's answers, with no ACK frame. When B is done the broker holds
//  nothing unacknowledged for it, and A has every answer in order.
START_TEST (test_acks_ride_on_send)
{
    testbroker_t *broker = testcheck_start (NULL);
    parley_client_t *a = s_client (testbroker_router (broker), "A");
    parley_client_t *b = s_client (testbroker_router (broker), "B");
    testclient_t *probe = testcheck_agent (broker, "Probe");
    ck_assert (parley_welcome_feature (parley_client_welcome (b), "send_ack"));
    ck_assert_int_eq (parley_client_consume (b, 64, 0), PARLEY_OK);
    enum { POSTS = 300 };
    s_posts (a, 0, POSTS);
    ck_assert_int_eq (parley_client_send_flush (a), PARLEY_OK);
    size_t taken = 0, batches = 0;
    int64_t deadline = pclock_mono_ms () + S_DEADLINE_MS;
    parley_mail_t *mail = NULL;
    while (taken < POSTS) {
        ck_assert_msg (pclock_mono_ms () < deadline, "B took only %zu of %d", taken, POSTS);
        if (!parley_client_take_pushed (b, &mail)) {
            parley_client_wait (b, 100);
            continue;
        }
        size_t count = parley_mail_count (mail);
        for (size_t i = 0; i < count; i++) {
            const parley_message_t *msg = parley_mail_at (mail, i);
            char text [32] = "";
            memcpy (text, parley_message_body (msg), parley_message_body_size (msg));
            ck_assert_int_eq (atol (text + 1), (long) taken);
            if (i + 1 == count)
                ck_assert_int_eq (parley_client_ack_nowait (b, parley_message_seq (msg)),
                                  PARLEY_OK);
            s_post (b, "A", taken++);
        }
        batches++;
    }
    ck_assert_int_eq (parley_client_send_flush (b), PARLEY_OK);
    parley_mail_destroy (&mail);
    //  Every acknowledgement rode (one frame may carry two batches' in
    //  one: they are cumulative, the later replaces the held one).
    ck_assert_uint_ge (parley_client_counter (b, PARLEY_COUNTER_ACKS_RIDDEN), 1);
    ck_assert_uint_le (parley_client_counter (b, PARLEY_COUNTER_ACKS_RIDDEN), batches);
    ck_assert_uint_eq (parley_client_counter (b, PARLEY_COUNTER_ACKS_SENT), 0);
    ck_assert_uint_eq (parley_client_counter (b, PARLEY_COUNTER_FAILED_SENDS), 0);
    ck_assert_uint_eq (testcheck_pending (probe, "B"), 0);
    s_expect_range (a, 0, POSTS);
    testclient_destroy (&probe);
    parley_client_destroy (&b);
    parley_client_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

//  The broker is killed -9 mid-stream (--fsync always) and restarted from
//  its journal on the same endpoint. Every post arrives; the only ones
//  that may arrive twice are those not yet confirmed at the kill (resent
//  on the new session, at-least-once), and after a resend the stream
//  continues in order.
START_TEST (test_kill9_mid_stream)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "router");
    char *pub = tproc_dir_endpoint (dir, "pub");
    char *data = tproc_dir_path (dir, "data");
    const char *args [] = { "--router", router, "--pub", pub, "--data-dir", data,
                            "--fsync", "always", NULL };
    testbroker_t *broker = testcheck_start (args);
    parley_client_t *rx = s_client (router, "B");
    parley_client_t *tx = s_client (router, "A");
    parley_client_set_timeout (tx, 2000, 200);
    parley_client_set_coalesce (tx, 32, 0, 1000);
    enum { POSTS = 3000, KILL_AT = 1200 };
    uint64_t unconfirmed = 0;
    for (size_t i = 0; i < POSTS; i++) {
        if (i == KILL_AT / 2) {
            //  Half of what goes before the kill is confirmed, so in the
            //  journal: the restarted broker holds it.
            ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
            ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_CONFIRMED), i);
        }
        if (i == KILL_AT) {
            s_freeze (broker);
            //  What the journal may hold twice: the posts not confirmed
            //  now (the broker applies nothing more before the kill).
            s_post (tx, "B", i++);
            unconfirmed = parley_client_counter (tx, PARLEY_COUNTER_POSTED)
                        - parley_client_counter (tx, PARLEY_COUNTER_CONFIRMED);
            testbroker_signal (broker, SIGKILL);
            testbroker_wait (broker, 10000);
            testbroker_stop (&broker);
            broker = testcheck_start (args);
        }
        s_post (tx, "B", i);
    }
    ck_assert_int_eq (parley_client_send_flush (tx), PARLEY_OK);
    ck_assert_uint_ge (parley_client_counter (tx, PARLEY_COUNTER_RESENT), 1);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FAILED_SENDS), 0);
    ck_assert_uint_eq (parley_client_counter (tx, PARLEY_COUNTER_FAILED_MESSAGES), 0);
    ck_assert_uint_lt (parley_client_counter (tx, PARLEY_COUNTER_SEND_FRAMES), POSTS);
    static long got [2 * POSTS];
    //  At least every post; the duplicates come before the last ones, so
    //  once m<POSTS-1> is in, all are.
    size_t count = 0;
    while (count == 0 || got [count - 1] != POSTS - 1)
        count += s_receive (rx, 1, got + count, 2 * POSTS - count);
    static unsigned seen [POSTS];
    size_t duplicates = 0;
    long high = -1;
    for (size_t i = 0; i < count; i++) {
        ck_assert_int_ge (got [i], 0);
        ck_assert_int_lt (got [i], POSTS);
        if (seen [got [i]]++) {
            duplicates++;
            ck_assert_uint_eq (seen [got [i]], 2);
        }
        else
            //  A message seen first is the next one: nothing skipped.
            ck_assert_int_eq (got [i], high + 1);
        if (got [i] > high)
            high = got [i];
    }
    for (long i = 0; i < POSTS; i++)
        ck_assert_msg (seen [i] >= 1, "m%ld was lost", i);
    ck_assert_msg (duplicates <= unconfirmed, "%zu duplicates; only %llu posts were unconfirmed "
                   "at the kill", duplicates, (unsigned long long) unconfirmed);
    s_expect_no_more (rx, 200);
    parley_client_destroy (&tx);
    parley_client_destroy (&rx);
    testcheck_stop (&broker);
    free (router);
    free (pub);
    free (data);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("coalesce");
    TCase *tc = tcase_create ("coalesce");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_coalesced_in_order);
    tcase_add_test (tc, test_linger_zero_does_not_coalesce);
    tcase_add_test (tc, test_item_failure_names_its_post);
    tcase_add_test (tc, test_frame_refused_whole);
    tcase_add_test (tc, test_request_after_held_posts_keeps_order);
    tcase_add_test (tc, test_destroy_sends_held_posts);
    tcase_add_test (tc, test_acks_ride_on_send);
    tcase_add_test (tc, test_kill9_mid_stream);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
