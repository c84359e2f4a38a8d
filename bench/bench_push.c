// SPDX-License-Identifier: MIT
/*  bench_push - the pushed relay and the agent-to-agent round trip at the
    broker's default settings, beside the bare ZeroMQ forwarder measured in
    the same run (scripts/bench.sh runs this in rounds, alternated with
    nats-server and NATS JetStream, and takes the medians).

    Relay (one sender -> broker -> one receiver, 64 B and 256 B bodies):
    the receiver CONSUMEs (MAIL_PUSH frames within a window of PUSH_CREDIT
    messages, each take acknowledging the one before, no FETCH), the
    sender posts pipelined SENDs (libparley's window and cumulative
    CONFIRMs):
      relay_push1_<size>         one message per pipelined call, as a program
                                 that sends one message per call does
                                 (libparley coalesces them at its defaults);
      relay_push1_off_<size>     the same with coalescing off: one SEND
                                 frame per message, as libparley 2.0 sent;
      relay_pushb_<size>         SENDs of 4096 messages (fewer at 256 B:
                                 the frame's 1 MiB), the batched figure;
      relay_push1_nodata_<size>  one message per SEND to a broker without a
                                 journal (--data-dir none);
      relay_push_forwarder_<size> the forwarder, one message per frame;
    each with _lost (messages neither confirmed nor refused) and
    _inbox_full, which must be 0. The broker keeps its defaults (journal,
    fsync everysec, the default inbox bounds: a sender that outruns the
    receiver is parked, not refused). The rate is the receiver's, first
    message to last.

    Round trip A -> B -> A (64 B): A SENDs to B, B takes the push and
    answers, A takes that push; both ends in one thread of one process
    (neither pays a context switch the other does not), SENTs collected
    after the round trip, acks cumulative every 32 messages (half the
    window of 64). Twice: the clients on CPU 1 and the broker on CPU 0
    (rtt_push_ab, "pinned apart"), then everything on CPU 0
    (rtt_push_ab_cpu0); against the forwarder in the same two placements
    (rtt_forwarder_ab, rtt_forwarder_ab_cpu0); and pulled (MAIL_READY +
    FETCH, rtt_pull_ab) for comparison.

    Usage: bench_push [--count N] [--rounds R] [--quick] [--only relay|rtt|push1]
      --count   messages per relay run (default 500,000)
      --rounds  round trips per run (default 5,000 after 500 of warm-up)
      --only    the relays, the round trips, or push1: the 64 B relay of
                one message per SEND alone (to profile the broker)
*/
#include "bench_zmq.h"
#include "pmsg.h"
#include "tests/lib/testbroker.h"

#define PUSH_CREDIT 32768       //  the pushed receiver's window, messages
#define RTT_WARMUP 500

static long s_count = 500000;
static int s_rounds = 5000;

typedef struct {
    double rate;
    long lost;                  //  posted, neither accepted nor refused
    long inbox_full;
} relay_outcome_t;

//  An outbox of `count` messages to `to`, all with `body` (not copied).
static parley_outbox_t *
s_outbox (const char *to, const char *body, size_t body_size, size_t count)
{
    parley_outbox_t *outbox = parley_outbox_new ();
    if (!outbox)
        exit (1);
    for (size_t i = 0; i < count; i++)
        if (parley_outbox_to (outbox, to, body, body_size) != PARLEY_OK)
            exit (1);
    return outbox;
}

//  The receiver: takes s_count pushed messages; writes its rate.
static void
s_push_receiver (const char *router, int ready_fd, int result_fd)
{
    parley_client_t *client = bench_client (router, "dst");
    parley_client_ack_policy (client, PARLEY_ACK_ON_TAKE);
    bench_check (client, parley_client_consume (client, PUSH_CREDIT, 0), "CONSUME");
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0, first_batch = 0;
    uint64_t last_seq = 0;
    int64_t first = 0, last = 0;
    parley_mail_t *mail = NULL;
    while (received < s_count) {
        if (!parley_client_take_pushed (client, &mail)) {
            parley_client_wait (client, 100);
            continue;
        }
        last = pclock_mono_us ();
        size_t count = parley_mail_count (mail);
        if (received == 0) {
            first = last;
            first_batch = (long) count;
        }
        received += (long) count;
        last_seq = parley_mail_last_seq (mail);
    }
    parley_mail_destroy (&mail);
    double rate = last > first ? (double) (received - first_batch) * 1e6 / (double) (last - first)
                               : 0;
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    bench_check (client, parley_client_consume (client, 0, 0), "CONSUME 0");
    bench_check (client, parley_client_ack (client, last_seq), "ACK");
    bench_client_leave (&client);
    _exit (0);
}

//  The sender: s_count messages in pipelined SENDs of `batch`, coalesced
//  at libparley's defaults or not at all. Messages that failed are sent
//  again, one by one, so the receiver still counts s_count; how many
//  failed is reported, never hidden.
static void
s_sender (const char *router, size_t body_size, size_t batch, bool coalesce, int result_fd)
{
    parley_client_t *client = bench_client (router, "src");
    if (!coalesce)
        parley_client_set_coalesce (client, 0, 0, 0);
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    parley_outbox_t *full = s_outbox ("dst", body, body_size, batch);
    parley_outbox_t *rest = s_outbox ("dst", body, body_size, (size_t) s_count % batch);
    parley_outbox_t *one = s_outbox ("dst", body, body_size, 1);
    relay_outcome_t outcome = { 0 };
    long sent = 0;
    while (sent < s_count) {
        size_t n = (size_t) (s_count - sent) < batch ? (size_t) (s_count - sent) : batch;
        bench_check (client, parley_client_send_pipelined (client, n == batch ? full : rest,
                                                           NULL), "SEND");
        sent += (long) n;
    }
    bench_check (client, parley_client_send_flush (client), "SEND flush");
    parley_failure_t *failure = NULL;
    while (parley_client_send_failure (client, &failure))
        if (parley_failure_code (failure) == PARLEY_ERR_INBOX_FULL)
            outcome.inbox_full++;
    parley_failure_destroy (&failure);
    long accepted = (long) parley_client_counter (client, PARLEY_COUNTER_ACCEPTED);
    outcome.lost = s_count - accepted
                 - (long) (parley_client_counter (client, PARLEY_COUNTER_FAILED_MESSAGES)
                           + parley_client_counter (client, PARLEY_COUNTER_ERRORS_OMITTED));
    for (long left = s_count - accepted; left > 0; left--)
        bench_check (client, parley_client_send (client, one, NULL), "filler SEND");
    if (write (result_fd, &outcome, sizeof outcome) < 0)
        _exit (1);
    bench_client_leave (&client);
    parley_outbox_destroy (&full);
    parley_outbox_destroy (&rest);
    parley_outbox_destroy (&one);
    free (body);
    _exit (0);
}

//  One relay: receiver and sender in forked children (libparley must not
//  cross a fork), both on CPU 1.
static relay_outcome_t
s_relay (const char *router, size_t body_size, size_t batch, bool coalesce)
{
    size_t fit = (PROTO_MAX_FRAME - 4096) / (body_size + 24);
    if (batch > fit)
        batch = fit;
    int ready [2], result [2], sender_result [2];
    if (pipe (ready) != 0 || pipe (result) != 0 || pipe (sender_result) != 0)
        exit (1);
    pid_t receiver = bench_fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_push_receiver (router, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    pid_t sender = bench_fork ();
    if (sender == 0) {
        close (sender_result [0]);
        s_sender (router, body_size, batch, coalesce, sender_result [1]);
    }
    close (sender_result [1]);
    relay_outcome_t outcome = { 0 };
    if (read (result [0], &outcome.rate, sizeof outcome.rate) != sizeof outcome.rate) {
        fprintf (stderr, "bench_push: the receiver failed\n");
        exit (1);
    }
    close (result [0]);
    double rate = outcome.rate;
    if (read (sender_result [0], &outcome, sizeof outcome) != sizeof outcome)
        outcome.lost = -1;
    outcome.rate = rate;
    close (sender_result [0]);
    int status = 0;
    waitpid (sender, &status, 0);
    waitpid (receiver, NULL, 0);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        outcome.rate = 0;
    return outcome;
}

static void
s_report_relay (const char *key, const relay_outcome_t *outcome)
{
    char name [96];
    bench_result (key, outcome->rate, "msg/s");
    snprintf (name, sizeof name, "%s_lost", key);
    bench_result (name, (double) outcome->lost, "msgs");
    snprintf (name, sizeof name, "%s_inbox_full", key);
    bench_result (name, (double) outcome->inbox_full, "msgs");
}

//  A broker at its defaults (journal unless `no_data`), on CPU 0.
static testbroker_t *
s_broker (bool no_data)
{
    const char *args [] = { "--log-level", "warn", no_data ? "--data-dir" : NULL, "none", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        exit (1);
    bench_pin (testbroker_pid (broker), 0);
    return broker;
}

static void
s_relay_rows (void)
{
    testbroker_t *broker = s_broker (false);
    testbroker_t *bare = s_broker (true);
    static const size_t sizes [] = { 64, 256 };
    for (size_t s = 0; s < 2; s++) {
        char key [64];
        relay_outcome_t outcome;
        snprintf (key, sizeof key, "relay_push_forwarder_%zu", sizes [s]);
        bench_result (key, bench_forwarder_relay (sizes [s], s_count), "msg/s");
        outcome = s_relay (testbroker_router (broker), sizes [s], 1, true);
        snprintf (key, sizeof key, "relay_push1_%zu", sizes [s]);
        s_report_relay (key, &outcome);
        outcome = s_relay (testbroker_router (broker), sizes [s], 1, false);
        snprintf (key, sizeof key, "relay_push1_off_%zu", sizes [s]);
        s_report_relay (key, &outcome);
        outcome = s_relay (testbroker_router (broker), sizes [s], 4096, true);
        snprintf (key, sizeof key, "relay_pushb_%zu", sizes [s]);
        s_report_relay (key, &outcome);
        outcome = s_relay (testbroker_router (bare), sizes [s], 1, true);
        snprintf (key, sizeof key, "relay_push1_nodata_%zu", sizes [s]);
        s_report_relay (key, &outcome);
    }
    if (testbroker_stop (&broker) != 0 || testbroker_stop (&bare) != 0)
        exit (1);
}

// ---------------------------------------------------------------------
//  Round trips

//  Takes the next message for `client` (waiting for it); returns its seq.
//  Pushed: the next MAIL_PUSH. Pulled: a FETCH (acknowledging `ack`)
//  after each MAIL_READY, as an agent that does not consume.
static uint64_t
s_take_one (parley_client_t *client, bool pushed, uint64_t ack, parley_mail_t **mail)
{
    if (pushed) {
        while (!parley_client_take_pushed (client, mail))
            parley_client_wait (client, 100);
    }
    else {
        while (true) {
            bench_check (client, parley_client_fetch (client, ack, 0, false, mail), "FETCH");
            if (parley_mail_count (*mail))
                break;
            while (!parley_client_take_mail (client))
                parley_client_wait (client, 1);
        }
    }
    return parley_mail_last_seq (*mail);
}

//  A -> B -> A in a child on CPU `cpu`, both ends consuming (`pushed`)
//  or both fetching.
static void
s_ab_rtt (const char *router, bool pushed, int cpu, const char *key)
{
    pid_t child = bench_fork ();
    if (child > 0) {
        waitpid (child, NULL, 0);
        return;
    }
    bench_pin (0, cpu);
    //  Distinct ids per run: a forgotten id's mail is gone, but a fresh
    //  one keeps each run's seqs apart.
    char id_a [32], id_b [32];
    snprintf (id_a, sizeof id_a, "%sa%d", pushed ? "p" : "q", cpu);
    snprintf (id_b, sizeof id_b, "%sb%d", pushed ? "p" : "q", cpu);
    parley_client_t *a = bench_client (router, id_a);
    parley_client_t *b = bench_client (router, id_b);
    if (pushed) {
        bench_check (a, parley_client_consume (a, 64, 0), "CONSUME");
        bench_check (b, parley_client_consume (b, 64, 0), "CONSUME");
    }
    char body [64];
    memset (body, 'x', sizeof body);
    parley_outbox_t *to_b = s_outbox (id_b, body, sizeof body, 1);
    parley_outbox_t *to_a = s_outbox (id_a, body, sizeof body, 1);
    parley_mail_t *mail_a = NULL, *mail_b = NULL;
    int64_t *times = calloc ((size_t) s_rounds, sizeof (int64_t));
    uint64_t seq_a = 0, seq_b = 0;
    for (int i = 0; i < RTT_WARMUP + s_rounds; i++) {
        parley_ticket_t ta, tb;
        int64_t t0 = pclock_mono_us ();
        bench_check (a, parley_client_post_send (a, to_b, &ta), "SEND A");
        seq_b = s_take_one (b, pushed, seq_b, &mail_b);
        bench_check (b, parley_client_post_send (b, to_a, &tb), "SEND B");
        seq_a = s_take_one (a, pushed, seq_a, &mail_a);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
        if (pushed && i % 32 == 31) {
            bench_check (b, parley_client_ack_nowait (b, seq_b), "ACK B");
            bench_check (a, parley_client_ack_nowait (a, seq_a), "ACK A");
        }
        bench_check (a, parley_client_collect_sent (a, ta, NULL), "SENT A");
        bench_check (b, parley_client_collect_sent (b, tb, NULL), "SENT B");
    }
    bench_report_rtt (key, times, (size_t) s_rounds);
    bench_check (a, parley_client_ack (a, seq_a), "ACK");
    bench_check (b, parley_client_ack (b, seq_b), "ACK");
    free (times);
    parley_mail_destroy (&mail_a);
    parley_mail_destroy (&mail_b);
    parley_outbox_destroy (&to_a);
    parley_outbox_destroy (&to_b);
    bench_client_leave (&a);
    bench_client_leave (&b);
    _exit (0);
}

//  The forwarder's A -> B -> A with both ends on CPU `cpu`, in a child
//  (its pin must not stay on this process).
static void
s_forwarder_rtt (int cpu, const char *key)
{
    pid_t child = bench_fork ();
    if (child > 0) {
        waitpid (child, NULL, 0);
        return;
    }
    bench_pin (0, cpu);
    bench_forwarder_rtt (64, 0, key);
    _exit (0);
}

static void
s_rtt_rows (void)
{
    testbroker_t *broker = s_broker (false);
    const char *router = testbroker_router (broker);
    s_forwarder_rtt (1, "rtt_forwarder_ab");
    s_ab_rtt (router, true, 1, "rtt_push_ab");
    s_forwarder_rtt (0, "rtt_forwarder_ab_cpu0");
    s_ab_rtt (router, true, 0, "rtt_push_ab_cpu0");
    s_ab_rtt (router, false, 1, "rtt_pull_ab");
    if (testbroker_stop (&broker) != 0)
        exit (1);
}

int
main (int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--count") == 0 && i + 1 < argc)
            s_count = atol (argv [++i]);
        else if (strcmp (argv [i], "--rounds") == 0 && i + 1 < argc)
            s_rounds = atoi (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0) {
            s_count = 100000;
            s_rounds = 2000;
        }
        else if (strcmp (argv [i], "--only") == 0 && i + 1 < argc)
            only = argv [++i];
        else {
            fprintf (stderr, "usage: bench_push [--count N] [--rounds R] [--quick] "
                     "[--only relay|rtt|push1]\n");
            return 2;
        }
    }
    if (s_count < 2 || s_rounds < 1)
        return 2;
    bench_pin (0, 1);
    printf ("bench_push: %ld messages per relay, %d round trips; broker on CPU 0, clients "
            "on CPU 1%s\n", s_count, s_rounds, bench_pin_enabled () ? "" : " (pinning off)");
    if (only && strcmp (only, "push1") == 0) {
        //  One row alone (for a profile of the broker): 64 B, one message
        //  per SEND, at default settings.
        testbroker_t *broker = s_broker (false);
        relay_outcome_t outcome = s_relay (testbroker_router (broker), 64, 1, true);
        s_report_relay ("relay_push1_64", &outcome);
        return testbroker_stop (&broker) == 0 ? 0 : 1;
    }
    if (!only || strcmp (only, "relay") == 0)
        s_relay_rows ();
    if (!only || strcmp (only, "rtt") == 0)
        s_rtt_rows ();
    return 0;
}
