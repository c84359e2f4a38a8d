// SPDX-License-Identifier: MIT
/*  bench_relay - broker relay throughput and request round trip, each
    beside a bare ZeroMQ baseline measured in the same run.

    Every Parley request here goes through libparley, the client library
    the agent and the tools use (bench_util.h): typed SEND with a batch id,
    typed FETCH with strict reply decoding and the duplicate filter, and
    its pipeline (post / collect by ticket) for requests in flight.

    Relay: one sender -> server -> one receiver, 64 B and 256 B bodies.
      parley    the real parley-broker; the sender SENDs batches of B
                messages (SEND_DEPTH requests in flight), the receiver
                FETCHes batches of up to B (ack = last seq) and waits for
                MAIL_READY on the client's event fd when its inbox is
                empty. Twice: with one FETCH at a time (key suffix _f1),
                and with FETCH_DEPTH FETCHes in flight (`stream: true`,
                PROTOCOL.md §3).
      libparley the same relay with the blocking calls only (one SEND and
                one FETCH at a time, parley_client_send / _fetch), against
                relay_parley_*_f1: what the pipelined sender is worth.
      forwarder a bare ROUTER-to-ROUTER forwarder in C on the same
                transport (tcp loopback): one message per frame, routed by
                identity, ROUTER_MANDATORY so a full pipe blocks instead of
                dropping. This is the "per-message" baseline.
    Round trip: HEARTBEAT -> OK and an empty FETCH -> MAIL against the
    broker, vs a raw ROUTER echo of a frame of the HEARTBEAT's size.

    The pushed receiver (CONSUME) and the agent-to-agent round trip are
    bench_push's.

    The server (broker, forwarder, echo) is pinned to CPU 0, the clients to
    CPU 1 (bench_util.h). Rates are measured by the receiver, from its first
    message to its last, so connection setup is not counted. Parley clients
    run in forked children (libparley's context must not cross a fork).

    Default settings (the sender side): a broker with no raised bound,
      relay_default_<size>_b1     one message per pipelined SEND (libparley's
                                  window and cumulative CONFIRMs), as an
                                  agent sends;
      relay_default_<size>_b4096  pipelined SENDs of 4096 (capped by the
                                  frame), the broker's backpressure instead
                                  of INBOX_FULL;
      each with its INBOX_FULL and lost message counts (both must be 0)
      and the SENDs the broker parked.

    Usage: bench_relay [--count N] [--quick] [--no-default] [--only-default]
*/
#include <assert.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "bench_zmq.h"
#include "pmsg.h"
#include "tests/lib/testbroker.h"

#define RTT_ROUNDS BENCH_RTT_ROUNDS
#define RTT_WARMUP BENCH_RTT_WARMUP
#define FETCH_DEPTH 3           //  streaming FETCHes the receiver keeps in flight
#define SEND_DEPTH 4            //  SENDs the sender keeps in flight

static long s_count = 1000000;          //  messages per relay run
static bool s_default_rows = true;      //  the default-settings sender rows (--no-default)
static bool s_only_default = false;     //  just those (--only-default)

// ---------------------------------------------------------------------
//  Parley relay, through libparley. Both ends run in forked children: the
//  library's sockets live in czmq's context, which must not cross a fork,
//  and the parent forks again for the next run.

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

static void
s_receiver (const char *router, size_t batch, int depth, bool blocking, int ready_fd,
            int result_fd)
{
    parley_client_t *client = bench_client (router, "dst");
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    parley_ticket_t tickets [FETCH_DEPTH];
    long received = 0, first_batch = 0, head = 0, tail = 0;    //  [tail, head) in flight
    uint64_t ack = 0;
    int64_t first = 0, last = 0;
    bool draining = false;      //  an empty reply came: let the rest come back
    parley_mail_t *mail = NULL; //  one result, refilled by every reply
    while (received < s_count) {
        if (blocking)
            bench_check (client, parley_client_fetch (client, ack, batch, false, &mail), "FETCH");
        else {
            //  With nothing in flight the FETCH is plain (it restarts from
            //  acked, which its own ack just moved to everything
            //  received); the ones behind it stream on from there.
            while (!draining && head - tail < depth) {
                bench_check (client, parley_client_post_fetch (client, ack, batch, head > tail,
                                                               &tickets [head % depth]), "FETCH");
                head++;
            }
            bench_check (client, parley_client_collect_mail (client, tickets [tail++ % depth],
                                                             &mail), "FETCH");
        }
        size_t count = parley_mail_count (mail);
        if (count == 0) {
            //  Inbox empty: once every FETCH is back, wait for a wake-up
            //  rather than spin.
            draining = head > tail;
            if (!draining)
                bench_await_mail (client);
            continue;
        }
        if (head == tail)
            draining = false;
        ack = parley_mail_last_seq (mail);
        last = pclock_mono_us ();
        if (received == 0) {
            first = last;
            first_batch = (long) count;
        }
        received += (long) count;
    }
    //  Replies still in flight come back empty (or with nothing new).
    while (tail < head)
        bench_check (client, parley_client_collect_mail (client, tickets [tail++ % depth], &mail),
                     "FETCH");
    parley_mail_destroy (&mail);
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    bench_check (client, parley_client_ack (client, ack), "ACK");
    bench_client_leave (&client);
    _exit (0);
}

//  Sends s_count messages in SENDs of `batch`, up to SEND_DEPTH in flight
//  (`blocking`: one parley_client_send at a time).
static void
s_sender (const char *router, size_t body_size, size_t batch, bool blocking)
{
    parley_client_t *client = bench_client (router, "src");
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    //  A full batch, and the shorter last one if s_count is not a multiple.
    parley_outbox_t *full = s_outbox ("dst", body, body_size, batch);
    parley_outbox_t *rest = s_outbox ("dst", body, body_size, (size_t) s_count % batch);
    parley_ticket_t tickets [SEND_DEPTH];
    parley_sent_t *result = NULL;
    long sent = 0, accepted = 0, head = 0, tail = 0;
    while (sent < s_count || tail < head) {
        size_t n = (size_t) (s_count - sent) < batch ? (size_t) (s_count - sent) : batch;
        parley_outbox_t *items = n == batch ? full : rest;
        if (blocking) {
            bench_check (client, parley_client_send (client, items, &result), "SEND");
            sent += (long) n;
            accepted += (long) parley_sent_accepted (result);
            continue;
        }
        if (sent < s_count && head - tail < SEND_DEPTH) {
            bench_check (client, parley_client_post_send (client, items,
                                                          &tickets [head++ % SEND_DEPTH]), "SEND");
            sent += (long) n;
            continue;
        }
        bench_check (client, parley_client_collect_sent (client, tickets [tail++ % SEND_DEPTH],
                                                         &result), "SEND");
        accepted += (long) parley_sent_accepted (result);
    }
    if (accepted != s_count)
        fprintf (stderr, "bench_relay: only %ld of %ld accepted\n", accepted, s_count);
    bench_client_leave (&client);
    parley_sent_destroy (&result);
    parley_outbox_destroy (&full);
    parley_outbox_destroy (&rest);
    free (body);
    _exit (accepted == s_count ? 0 : 1);
}

//  ---------------------------------------------------------------------
//  Sender side at the broker's DEFAULT settings (no raised --max-inbox):
//  pipelined SENDs (libparley's window, cumulative CONFIRMs) and the
//  broker's backpressure instead of INBOX_FULL.

typedef struct {
    long accepted;              //  messages the CONFIRMs said were queued
    long inbox_full;            //  messages that failed INBOX_FULL
    long failed;                //  every message failure, INBOX_FULL included
    long lost;                  //  posted, neither accepted nor failed
    long parked;                //  the broker's sends_parked after the run
} relay_outcome_t;

//  The broker's sends_parked (STATS), 0 if it cannot be read.
static long
s_sends_parked (parley_client_t *client)
{
    parley_stats_t *stats = NULL;
    long parked = 0;
    if (parley_client_stats (client, &stats) == PARLEY_OK)
        parked = (long) parley_stats_uint (stats, "sends_parked");
    parley_stats_destroy (&stats);
    return parked;
}

//  Sends s_count messages as pipelined SENDs of `batch` (1: one message
//  per SEND, as an agent sends). Messages that failed are sent again as
//  filler at the end so the receiver still counts s_count and stops;
//  their number is reported, never hidden.
static void
s_sender_pipelined (const char *router, size_t body_size, size_t batch, int result_fd)
{
    parley_client_t *client = bench_client (router, "src");
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    parley_outbox_t *full = s_outbox ("dst", body, body_size, batch);
    parley_outbox_t *rest = s_outbox ("dst", body, body_size, (size_t) s_count % batch);
    parley_outbox_t *one = s_outbox ("dst", body, body_size, 1);
    relay_outcome_t outcome = { 0 };
    long sent = 0, parked_before = s_sends_parked (client);
    while (sent < s_count) {
        size_t n = (size_t) (s_count - sent) < batch ? (size_t) (s_count - sent) : batch;
        bench_check (client, parley_client_send_pipelined (client, n == batch ? full : rest,
                                                           NULL), "SEND");
        sent += (long) n;
    }
    bench_check (client, parley_client_send_flush (client), "SEND flush");
    parley_failure_t *failure = NULL;
    while (parley_client_send_failure (client, &failure)) {
        outcome.failed++;
        if (parley_failure_code (failure) == PARLEY_ERR_INBOX_FULL)
            outcome.inbox_full++;
    }
    parley_failure_destroy (&failure);
    outcome.accepted = (long) parley_client_counter (client, PARLEY_COUNTER_ACCEPTED);
    outcome.lost = s_count - outcome.accepted
                 - (long) (parley_client_counter (client, PARLEY_COUNTER_FAILED_MESSAGES)
                           + parley_client_counter (client, PARLEY_COUNTER_ERRORS_OMITTED));
    for (long left = s_count - outcome.accepted; left > 0; left--)
        bench_check (client, parley_client_send (client, one, NULL), "filler SEND");
    outcome.parked = s_sends_parked (client) - parked_before;
    if (write (result_fd, &outcome, sizeof outcome) < 0)
        _exit (1);
    bench_client_leave (&client);
    parley_outbox_destroy (&full);
    parley_outbox_destroy (&rest);
    parley_outbox_destroy (&one);
    free (body);
    _exit (0);
}

//  A SEND frame must stay under the 1 MiB frame limit (a bigger one
//  closes the connection): 4096 bodies of 256 B do not fit.
static size_t
s_fit_batch (size_t body_size, size_t batch)
{
    size_t fit = (PROTO_MAX_FRAME - 4096) / (body_size + 24);
    if (batch > fit) {
        printf ("bench_relay: SEND batch %zu capped to %zu by the 1 MiB frame\n", batch, fit);
        batch = fit;
    }
    return batch;
}

//  The relay with the pipelined sender; `outcome` gets what it reported.
static double
s_parley_relay_pipelined (const char *router, size_t body_size, size_t batch,
                          relay_outcome_t *outcome)
{
    batch = s_fit_batch (body_size, batch);
    int ready [2], result [2], sender_result [2];
    if (pipe (ready) != 0 || pipe (result) != 0 || pipe (sender_result) != 0)
        exit (1);
    pid_t receiver = bench_fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_receiver (router, PROTO_MAX_BATCH, FETCH_DEPTH, false, ready [1], result [1]);
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
        s_sender_pipelined (router, body_size, batch, sender_result [1]);
    }
    close (sender_result [1]);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_relay: the receiver failed\n");
        exit (1);
    }
    close (result [0]);
    if (read (sender_result [0], outcome, sizeof *outcome) != sizeof *outcome)
        outcome->lost = -1;
    close (sender_result [0]);
    int status = 0;
    waitpid (sender, &status, 0);
    waitpid (receiver, NULL, 0);
    return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? rate : 0;
}

//  The rows at default broker settings: one message per pipelined SEND,
//  and pipelined batches of 4096, each with its INBOX_FULL and lost counts.
static void
s_default_settings (void)
{
    const char *args [] = { "--log-level", "warn", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        exit (1);
    bench_pin (testbroker_pid (broker), 0);
    static const size_t sizes [] = { 64, 256 };
    static const size_t batches [] = { 1, 4096 };
    for (size_t s = 0; s < 2; s++)
        for (size_t b = 0; b < 2; b++) {
            char key [64];
            relay_outcome_t outcome = { 0 };
            snprintf (key, sizeof key, "relay_default_%zu_b%zu", sizes [s], batches [b]);
            bench_result (key, s_parley_relay_pipelined (testbroker_router (broker), sizes [s],
                                                         batches [b], &outcome), "msg/s");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_inbox_full", sizes [s], batches [b]);
            bench_result (key, (double) outcome.inbox_full, "msgs");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_lost", sizes [s], batches [b]);
            bench_result (key, (double) outcome.lost, "msgs");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_parked", sizes [s], batches [b]);
            bench_result (key, (double) outcome.parked, "sends");
        }
    if (testbroker_stop (&broker) != 0)
        exit (1);
}


//  One relay: a receiver with `depth` FETCHes in flight and s_sender, in forked children; the
//  receiver's rate, 0 when the sender failed.
static double
s_relay_pair (const char *router, size_t body_size, size_t batch, int depth, bool blocking)
{
    batch = s_fit_batch (body_size, batch);
    int ready [2], result [2];
    if (pipe (ready) != 0 || pipe (result) != 0)
        exit (1);
    pid_t receiver = bench_fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_receiver (router, batch, depth, blocking, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    pid_t sender = bench_fork ();
    if (sender == 0)
        s_sender (router, body_size, batch, blocking);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_relay: the receiver failed\n");
        exit (1);
    }
    close (result [0]);
    int status = 0;
    waitpid (sender, &status, 0);
    waitpid (receiver, NULL, 0);
    return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? rate : 0;
}

static double
s_parley_relay (const char *router, size_t body_size, size_t batch, int depth, bool blocking)
{
    return s_relay_pair (router, body_size, batch, depth, blocking);
}

// ---------------------------------------------------------------------
//  Round trips

//  The bytes of a HEARTBEAT frame with request id `id`, as the protocol's
//  encoder writes it (nothing is sent): the echo baseline's frame size.
static size_t
s_heartbeat_size (uint64_t id)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_HEARTBEAT, id, 0);
    size_t size = penc_size (&enc);
    penc_fini (&enc);
    return size;
}

static void
s_echo_rtt (size_t size)
{
    char endpoint [256];
    pid_t server = bench_zmq_server (true, 0, endpoint, sizeof endpoint);
    void *ctx = zmq_ctx_new ();
    void *sock = bench_zmq_dealer (ctx, endpoint, NULL);
    char buf [256];
    memset (buf, 'x', sizeof buf);
    static int64_t times [RTT_ROUNDS];
    for (int i = 0; i < RTT_WARMUP + RTT_ROUNDS; i++) {
        int64_t t0 = pclock_mono_us ();
        zmq_send (sock, buf, size, 0);
        zmq_recv (sock, buf, sizeof buf, 0);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
    }
    bench_report_rtt ("rtt_echo", times, RTT_ROUNDS);
    zmq_close (sock);
    zmq_ctx_term (ctx);
    bench_zmq_stop (server);
}

//  Round trips of one request without fields, in a child (libparley must
//  not cross a fork); the child prints the figures.
static void
s_parley_rtt (const char *router, bool fetch, const char *key)
{
    pid_t child = bench_fork ();
    if (child > 0) {
        waitpid (child, NULL, 0);
        return;
    }
    parley_client_t *client = bench_client (router, "rtt");
    static int64_t times [RTT_ROUNDS];
    parley_mail_t *mail = NULL;
    for (int i = 0; i < RTT_WARMUP + RTT_ROUNDS; i++) {
        int64_t t0 = pclock_mono_us ();
        bench_check (client, fetch ? parley_client_fetch (client, 0, 0, false, &mail)
                                   : parley_client_heartbeat (client), key);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
    }
    bench_report_rtt (key, times, RTT_ROUNDS);
    parley_mail_destroy (&mail);
    bench_client_leave (&client);
    _exit (0);
}

int
main (int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--count") == 0 && i + 1 < argc)
            s_count = atol (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0)
            s_count = 100000;
        else if (strcmp (argv [i], "--no-default") == 0)
            s_default_rows = false;
        else if (strcmp (argv [i], "--only-default") == 0)
            s_only_default = true;
    }
    if (s_only_default) {
        //  With the forwarder, their baseline, measured in the same run.
        bench_pin (0, 1);
        char key [64];
        for (size_t s = 0; s < 2; s++) {
            size_t size = s ? 256 : 64;
            snprintf (key, sizeof key, "relay_forwarder_%zu", size);
            bench_result (key, bench_forwarder_relay (size, s_count), "msg/s");
        }
        s_default_settings ();
        return 0;
    }
    //  Inbox bounds above the run's size: the bench measures relay speed,
    //  not the overflow policy. The tap is on but unsubscribed (as deployed:
    //  it costs nothing until someone watches).
    char inbox [32];
    snprintf (inbox, sizeof inbox, "%ld", s_count + 10);
    const char *args [] = { "--max-inbox", inbox, "--max-inbox-bytes", "1000000000",
                            "--log-level", "warn", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    const char *router = testbroker_router (broker);
    printf ("bench_relay: %ld messages per run; server on CPU 0, clients on CPU 1%s\n",
            s_count, bench_pin_enabled () ? "" : " (pinning off)");

    static const size_t sizes [] = { 64, 256 };
    static const size_t batches [] = { 256, 4096 };
    for (size_t s = 0; s < 2; s++) {
        char key [64];
        snprintf (key, sizeof key, "relay_forwarder_%zu", sizes [s]);
        bench_result (key, bench_forwarder_relay (sizes [s], s_count), "msg/s");
        for (size_t b = 0; b < 2; b++) {
            //  One FETCH at a time first, kept for comparison, then
            //  FETCH_DEPTH streaming FETCHes in flight.
            snprintf (key, sizeof key, "relay_parley_%zu_b%zu_f1", sizes [s], batches [b]);
            bench_result (key, s_parley_relay (router, sizes [s], batches [b], 1, false), "msg/s");
            snprintf (key, sizeof key, "relay_parley_%zu_b%zu", sizes [s], batches [b]);
            bench_result (key, s_parley_relay (router, sizes [s], batches [b], FETCH_DEPTH, false),
                          "msg/s");
        }
        snprintf (key, sizeof key, "relay_libparley_%zu_b256", sizes [s]);
        bench_result (key, s_parley_relay (router, sizes [s], 256, 1, true), "msg/s");
    }
    s_parley_rtt (router, false, "rtt_heartbeat");
    s_parley_rtt (router, true, "rtt_fetch_empty");
    //  The echo's frame is the size of the HEARTBEAT the client sent (its
    //  request ids reach RTT_WARMUP + RTT_ROUNDS).
    s_echo_rtt (s_heartbeat_size (RTT_WARMUP + RTT_ROUNDS));
    int rc = testbroker_stop (&broker) == 0 ? 0 : 1;
    if (s_default_rows)
        s_default_settings ();
    return rc;
}
