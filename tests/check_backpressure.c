// SPDX-License-Identifier: MIT
/*  check_backpressure - libparley's pipelined SENDs against the real
    broker over real sockets, with a receiver slower than its senders:
    - many senders, each posting one message per pipelined SEND in a
      small window: every message arrives once, in each sender's order;
      the senders wait (window, parked SENDs) instead of failing; the
      recipient's inbox never holds more than --max-inbox and the broker
      holds no more requests than the windows allow;
    - per-message failures are reported for the failed messages only,
      with their SEND's ticket and index;
    - a SEND waiting for room returns at its deadline with INBOX_FULL
      naming the wait, and that deadline is inside the client's reply
      timeout (wait_ms is clamped to three quarters of it);
    - a broker that stops answering with SENDs in flight: the client
      reconnects and sends the unconfirmed ones again (at-least-once).
    Senders run in threads of their own (a libparley client is used from
    one thread), so the suite also runs unforked under valgrind
    (CK_FORK=no). Deadlines are checked by the clock with wide margins.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "parley/client.h"
#include "perr.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

#define SENDERS 4
#define PER_SENDER 1500
#define MAX_INBOX 64
#define WINDOW 32

static parley_client_t *
s_connected (const char *router, const char *id, int64_t timeout_ms)
{
    parley_client_t *client = parley_client_new (router, id);
    parley_client_set_timeout (client, timeout_ms, 200);
    parley_client_set_connect_attempts (client, 50);
    if (parley_client_connect (client) != PARLEY_OK) {
        fprintf (stderr, "%s cannot connect: %s\n", id, parley_client_error_text (client));
        parley_client_destroy (&client);
    }
    return client;
}

//  A sender thread: posts PER_SENDER messages "S<k>:<i>" to R, one per
//  pipelined SEND, flushes. Status 0 when every message was accepted,
//  nothing failed and the window was kept.
typedef struct {
    const char *router;
    int k;
    int status;
    atomic_bool done;
} sender_t;

static void *
s_sender (void *arg)
{
    sender_t *self = arg;
    char id [16];
    snprintf (id, sizeof id, "S%d", self->k);
    parley_client_t *client = s_connected (self->router, id, 10000);
    int status = client ? 0 : 3;
    if (client)
        parley_client_set_send_window (client, WINDOW, 1024 * 1024);
    parley_outbox_t *item = parley_outbox_new ();
    for (int i = 0; i < PER_SENDER && !status; i++) {
        char body [32];
        snprintf (body, sizeof body, "S%d:%d", self->k, i);
        parley_outbox_reset (item);
        parley_outbox_to (item, "R", body, strlen (body));
        if (parley_client_send_pipelined (client, item, NULL) != PARLEY_OK) {
            fprintf (stderr, "%s: send %d: %s\n", id, i, parley_client_error_text (client));
            status = 4;
        }
        if (parley_client_counter (client, PARLEY_COUNTER_IN_FLIGHT_MESSAGES) > WINDOW)
            status = 5;
    }
    parley_outbox_destroy (&item);
    if (!status && parley_client_send_flush (client) != PARLEY_OK)
        status = 6;
    if (client) {
        parley_failure_t *failure = NULL;
        if (parley_client_send_failure (client, &failure)) {
            fprintf (stderr, "%s: failure %s: %s\n", id,
                     parley_strerror (parley_failure_code (failure)),
                     parley_failure_message (failure));
            status = 7;
        }
        parley_failure_destroy (&failure);
        uint64_t accepted = parley_client_counter (client, PARLEY_COUNTER_ACCEPTED),
                 confirmed = parley_client_counter (client, PARLEY_COUNTER_CONFIRMED),
                 resent = parley_client_counter (client, PARLEY_COUNTER_RESENT),
                 window_waits = parley_client_counter (client, PARLEY_COUNTER_WINDOW_WAITS);
        if (!status && (accepted != PER_SENDER || confirmed != PER_SENDER
        ||  resent != 0 || window_waits == 0))
            status = 8;
        if (status)
            fprintf (stderr, "%s: status %d: accepted %llu confirmed %llu resent %llu waits "
                     "%llu\n", id, status, (unsigned long long) accepted,
                     (unsigned long long) confirmed, (unsigned long long) resent,
                     (unsigned long long) window_waits);
        parley_client_destroy (&client);
    }
    self->status = status;
    atomic_store (&self->done, true);
    return NULL;
}

START_TEST (test_many_senders_slow_receiver)
{
    char inbox [16];
    snprintf (inbox, sizeof inbox, "%d", MAX_INBOX);
    const char *args [] = { "--max-inbox", inbox, NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *r = testcheck_agent (broker, "R");
    sender_t senders [SENDERS];
    pthread_t threads [SENDERS];
    for (int k = 0; k < SENDERS; k++) {
        senders [k] = (sender_t) { .router = testbroker_router (broker), .k = k };
        ck_assert_int_eq (pthread_create (&threads [k], NULL, s_sender, &senders [k]), 0);
    }

    int next [SENDERS] = { 0 };
    long received = 0;
    uint64_t ack = 0;
    int64_t deadline = pclock_mono_ms () + 120000;
    while (received < (long) SENDERS * PER_SENDER) {
        ck_assert_msg (pclock_mono_ms () < deadline, "only %ld messages in 120 s", received);
        pmsg_t *mail = testclient_fetch (r, ack, 16);
        EXPECT (mail, PMSG_MAIL);
        size_t count = testclient_array_size (mail, "messages");
        //  The inbox bound holds: what is queued never passes it.
        ck_assert_uint_le (count + pmsg_uint (mail, "pending", 0), MAX_INBOX);
        for (size_t i = 0; i < count; i++) {
            const msgpack_object *item = testclient_array_at (mail, "messages", i);
            char body [32];
            ck_assert (pobj_strcpy (item, "body", body, sizeof body));
            int k, n;
            ck_assert_int_eq (sscanf (body, "S%d:%d", &k, &n), 2);
            ck_assert (k >= 0 && k < SENDERS);
            ck_assert_msg (n == next [k], "sender %d: got %d, expected %d", k, n, next [k]);
            next [k]++;
            ack = pobj_uint (item, "seq", 0);
            received++;
        }
        pmsg_destroy (&mail);
        if (received % 512 < 16) {
            //  The broker holds no more than the senders' windows.
            pmsg_t *stats = testclient_call0 (r, PMSG_STATS);
            ck_assert_uint_le (pmsg_uint (stats, "requests_held", 0), SENDERS * WINDOW);
            pmsg_destroy (&stats);
        }
        usleep (count ? 500 : 2000);        //  a slow receiver
    }
    pmsg_t *mail = testclient_fetch (r, ack, 16);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 0);
    pmsg_destroy (&mail);
    for (int k = 0; k < SENDERS; k++) {
        ck_assert_int_eq (pthread_join (threads [k], NULL), 0);
        ck_assert_msg (senders [k].status == 0, "sender %d failed (status %d)", k,
                       senders [k].status);
    }
    pmsg_t *stats = testclient_call0 (r, PMSG_STATS);
    EXPECT (stats, PMSG_STATS_REPLY);
    ck_assert_uint_gt (pmsg_uint (stats, "sends_parked", 0), 0);
    ck_assert_uint_eq (pmsg_uint (stats, "send_wait_timeouts", 1), 0);
    ck_assert_uint_eq (pmsg_uint (stats, "rejected", 1), 0);
    ck_assert_uint_eq (pmsg_uint (stats, "requests_refused_held", 1), 0);
    pmsg_destroy (&stats);
    testclient_destroy (&r);
    testcheck_stop (&broker);
}
END_TEST

//  Failures name only the failed messages, by ticket and index; the
//  wait is clamped inside the reply timeout and ends with INBOX_FULL.
typedef struct {
    const char *router;
    int status;
    atomic_bool done;
} worker_t;

//  Outboxes of the failures run: three, one ("one"), one ("two"), two.
typedef struct {
    parley_outbox_t *three, *one, *two_only, *two;
    parley_failure_t *failure;
    parley_sent_t *sent;
} failures_t;

static int
s_failures_run (parley_client_t *client, failures_t *f)
{
    parley_outbox_to (f->three, "B", "one", 3);
    parley_outbox_to (f->three, "Nobody", "two", 3);
    parley_outbox_to (f->three, "B", "three", 5);
    parley_outbox_to (f->one, "B", "one", 3);
    parley_outbox_to (f->two_only, "Nobody", "two", 3);
    parley_ticket_t first, second, third;
    if (parley_client_send_pipelined (client, f->three, &first) != PARLEY_OK
    ||  parley_client_send_pipelined (client, f->one, &second) != PARLEY_OK
    ||  parley_client_send_pipelined (client, f->two_only, &third) != PARLEY_OK
    ||  parley_client_send_flush (client) != PARLEY_OK)
        return 3;
    if (!parley_client_send_failure (client, &f->failure)
    ||  parley_failure_ticket (f->failure) != first || parley_failure_whole (f->failure)
    ||  parley_failure_index (f->failure) != 1
    ||  parley_failure_code (f->failure) != PARLEY_ERR_UNKNOWN_RECIPIENT)
        return 4;
    if (!parley_client_send_failure (client, &f->failure)
    ||  parley_failure_ticket (f->failure) != third || parley_failure_index (f->failure) != 0
    ||  parley_failure_code (f->failure) != PARLEY_ERR_UNKNOWN_RECIPIENT)
        return 5;
    if (parley_client_send_failure (client, &f->failure))
        return 6;
    if (parley_client_counter (client, PARLEY_COUNTER_ACCEPTED) != 3
    ||  parley_client_counter (client, PARLEY_COUNTER_FAILED_MESSAGES) != 2
    ||  parley_client_counter (client, PARLEY_COUNTER_CONFIRMED) != 3)
        return 7;
    //  B now holds 3 of its 4: a SEND of 2 waits, up to three quarters
    //  of the 4 s timeout (the 60 s asked for is clamped), then is applied
    //  as with wait_ms 0: the first fits, the second fails.
    parley_client_set_send_wait (client, 60000);
    parley_outbox_to (f->two, "B", "one", 3);
    parley_outbox_to (f->two, "B", "three", 5);
    int64_t started = pclock_mono_ms ();
    if (parley_client_send (client, f->two, &f->sent) != PARLEY_OK)
        return 8;
    int64_t took = pclock_mono_ms () - started;
    size_t errors = parley_sent_error_count (f->sent);
    const parley_failure_t *error = errors ? parley_sent_error_at (f->sent, 0) : NULL;
    if (took < 3000 || took >= 4000 || parley_sent_accepted (f->sent) != 1 || errors != 1
    ||  parley_failure_index (error) != 1 || parley_failure_code (error) != PARLEY_ERR_INBOX_FULL
    ||  !strstr (parley_failure_message (error), "waiting 3000 ms")) {
        fprintf (stderr, "took %lld ms, accepted %zu, errors %zu: %s\n", (long long) took,
                 parley_sent_accepted (f->sent), errors,
                 error ? parley_failure_message (error) : "");
        return 9;
    }
    //  The same as a pipelined SEND: a failure per message, none whole.
    parley_ticket_t late;
    if (parley_client_send_pipelined (client, f->two, &late) != PARLEY_OK
    ||  parley_client_send_flush (client) != PARLEY_OK)
        return 10;
    for (int i = 0; i < 2; i++)
        if (!parley_client_send_failure (client, &f->failure)
        ||  parley_failure_ticket (f->failure) != late || parley_failure_whole (f->failure)
        ||  parley_failure_index (f->failure) != (size_t) i
        ||  parley_failure_code (f->failure) != PARLEY_ERR_INBOX_FULL)
            return 11;
    return 0;
}

static void *
s_failures_worker (void *arg)
{
    worker_t *self = arg;
    parley_client_t *client = s_connected (self->router, "A", 4000);
    failures_t f = { parley_outbox_new (), parley_outbox_new (), parley_outbox_new (),
                     parley_outbox_new (), NULL, NULL };
    self->status = client ? s_failures_run (client, &f) : 2;
    parley_outbox_destroy (&f.three);
    parley_outbox_destroy (&f.one);
    parley_outbox_destroy (&f.two_only);
    parley_outbox_destroy (&f.two);
    parley_failure_destroy (&f.failure);
    parley_sent_destroy (&f.sent);
    parley_client_destroy (&client);
    atomic_store (&self->done, true);
    return NULL;
}

START_TEST (test_failures_and_deadline)
{
    const char *args [] = { "--max-inbox", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *b = testcheck_agent (broker, "B");
    worker_t worker = { .router = testbroker_router (broker) };
    pthread_t thread;
    ck_assert_int_eq (pthread_create (&thread, NULL, s_failures_worker, &worker), 0);
    //  B stays online (and so is waited for) while A works.
    int64_t deadline = pclock_mono_ms () + 120000;
    while (!atomic_load (&worker.done)) {
        ck_assert_msg (pclock_mono_ms () < deadline, "A did not finish");
        pmsg_t *ok = testclient_call0 (b, PMSG_HEARTBEAT);
        EXPECT (ok, PMSG_OK);
        pmsg_destroy (&ok);
        usleep (200 * 1000);
    }
    ck_assert_int_eq (pthread_join (thread, NULL), 0);
    ck_assert_msg (worker.status == 0, "A: status %d", worker.status);
    pmsg_t *stats = testclient_call0 (b, PMSG_STATS);
    ck_assert_uint_eq (pmsg_uint (stats, "send_wait_timeouts", 0), 2);
    pmsg_destroy (&stats);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

//  The broker stops answering (SIGSTOP) with pipelined SENDs in flight:
//  the client gives the connection up after its request timeout, says
//  HELLO again once the broker is back and sends every unconfirmed SEND
//  again, in order. Every message arrives at least once, first copies in
//  the order sent.
typedef struct {
    parley_client_t *client;
    int status;
} resend_t;

static void *
s_resend_worker (void *arg)
{
    resend_t *self = arg;
    parley_client_t *client = self->client;
    self->status = 0;
    parley_outbox_t *item = parley_outbox_new ();
    for (int i = 0; i < 20 && !self->status; i++) {
        char body [16];
        snprintf (body, sizeof body, "m%d", i);
        parley_outbox_reset (item);
        parley_outbox_to (item, "B", body, strlen (body));
        if (parley_client_send_pipelined (client, item, NULL) != PARLEY_OK)
            self->status = 5;
    }
    parley_outbox_destroy (&item);
    if (!self->status && parley_client_send_flush (client) != PARLEY_OK)
        self->status = 6;
    parley_failure_t *failure = NULL;
    if (!self->status && (parley_client_counter (client, PARLEY_COUNTER_RESENT) == 0
    ||  parley_client_counter (client, PARLEY_COUNTER_CONFIRMED) != 20
    ||  parley_client_send_failure (client, &failure)))
        self->status = 7;
    parley_failure_destroy (&failure);
    return NULL;
}

START_TEST (test_resend_after_reconnect)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *b = testcheck_agent (broker, "B");
    resend_t worker = { .client = s_connected (testbroker_router (broker), "A", 1000) };
    ck_assert_ptr_nonnull (worker.client);
    testbroker_signal (broker, SIGSTOP);
    pthread_t thread;
    ck_assert_int_eq (pthread_create (&thread, NULL, s_resend_worker, &worker), 0);
    //  Well past the client's 1 s timeout.
    usleep (2500 * 1000);
    testbroker_signal (broker, SIGCONT);
    ck_assert_int_eq (pthread_join (thread, NULL), 0);
    ck_assert_msg (worker.status == 0, "A: status %d", worker.status);
    parley_client_destroy (&worker.client);
    int next = 0;
    pmsg_t *mail = testclient_fetch (b, 0, 1000);
    EXPECT (mail, PMSG_MAIL);
    for (size_t i = 0; i < testclient_array_size (mail, "messages"); i++) {
        char body [16];
        ck_assert (pobj_strcpy (testclient_array_at (mail, "messages", i), "body", body,
                                sizeof body));
        int n = atoi (body + 1);
        ck_assert_int_le (n, next);         //  a copy, or the next one
        if (n == next)
            next++;
    }
    ck_assert_int_eq (next, 20);
    pmsg_destroy (&mail);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("backpressure");
    TCase *tc = tcase_create ("backpressure");
    tcase_set_timeout (tc, 240);
    tcase_add_test (tc, test_many_senders_slow_receiver);
    tcase_add_test (tc, test_failures_and_deadline);
    tcase_add_test (tc, test_resend_after_reconnect);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
