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

    Pushed receiver (CONSUME, PROTOCOL.md): the same relay with the
    receiver taking MAIL_PUSH frames (window PUSH_CREDIT, acknowledged on
    the next take, no FETCH at all) - relay_push_<size>_b<batch>, against
    the forwarder. And the agent-to-agent round trip with both ends
    pushed: A SENDs to B (its SENT collected later), B takes the push and
    SENDs an answer, A takes that push - rtt_push_ab, against the same
    round trip through the forwarder, A -> fwd -> B -> fwd -> A
    (rtt_forwarder_ab), measured in the same run; rtt_pull_ab is the same
    exchange pulled (MAIL_READY, then FETCH), for comparison. Both ends of each run in
    one thread of one process, so neither side pays a context switch the
    other does not.

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
      and the SENDs the broker parked. And with the pushed receiver, in
      COALESCE_ROUNDS alternated rounds (the median of each):
      relay_push_default_<size>_c1      one message per pipelined call,
                                        libparley coalescing at its defaults;
      relay_push_default_<size>_c1_off  the same with coalescing off (one
                                        SEND frame per message, as 2.0 sent);
      relay_push_default_<size>_b4096   pipelined SENDs of 4096 (capped by
                                        the frame): the batched figure.

    Usage: bench_relay [--count N] [--quick] [--no-default] [--only-default] [--push-only]
      --push-only   only the pushed-receiver relay and the A -> B -> A
                    round trips (and the forwarder baselines they need)
      --only-default  only the default-settings rows (and the forwarder)
      --only-coalesce only the coalescing rows (pushed, default settings)
*/
#include <assert.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "pmsg.h"
#include "tests/lib/testbroker.h"

#define RTT_ROUNDS 20000
#define RTT_WARMUP 1000
#define FETCH_DEPTH 3           //  streaming FETCHes the receiver keeps in flight
#define SEND_DEPTH 4            //  SENDs the sender keeps in flight
#define PUSH_CREDIT 32768       //  the pushed receiver's window, messages
#define COALESCE_ROUNDS 3       //  alternated rounds of the coalescing rows

static long s_count = 1000000;          //  messages per relay run
static bool s_default_rows = true;      //  the default-settings sender rows (--no-default)
static bool s_only_default = false;     //  just those (--only-default)

// ---------------------------------------------------------------------
//  Baseline servers: forwarder and echo, in a forked child on CPU 0.

//  echo: back to the sender; else to "dst", except that "a" and "b" are
//  routed to each other (the A -> fwd -> B -> fwd -> A round trip).
static void
s_server_loop (void *router, bool echo)
{
    const char dst [] = "dst";
    zmq_msg_t id, body;
    zmq_msg_init (&id);
    zmq_msg_init (&body);
    while (true) {
        if (zmq_msg_recv (&id, router, 0) < 0 || zmq_msg_recv (&body, router, 0) < 0)
            break;
        if (echo) {
            zmq_msg_send (&id, router, ZMQ_SNDMORE);
            zmq_msg_send (&body, router, 0);
            continue;
        }
        if (zmq_msg_size (&id) == 3 && memcmp (zmq_msg_data (&id), dst, 3) == 0)
            continue;                   //  the receiver's hello
        if (zmq_msg_size (&id) == 1) {
            const char *peer = *(const char *) zmq_msg_data (&id) == 'a' ? "b" : "a";
            zmq_send (router, peer, 1, ZMQ_SNDMORE);
            zmq_msg_send (&body, router, 0);
            continue;
        }
        zmq_send (router, dst, 3, ZMQ_SNDMORE);
        zmq_msg_send (&body, router, 0);
    }
}

//  Starts the server; writes its endpoint into `endpoint`; returns its pid.
static pid_t
s_server_start (bool echo, char *endpoint, size_t size)
{
    int fds [2];
    if (pipe (fds) != 0)
        exit (1);
    pid_t pid = fork ();
    if (pid == 0) {
        close (fds [0]);
        bench_pin (0, 0);
        void *ctx = zmq_ctx_new ();
        void *router = zmq_socket (ctx, ZMQ_ROUTER);
        int one = 1, hwm = 100000;
        zmq_setsockopt (router, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
        zmq_setsockopt (router, ZMQ_SNDHWM, &hwm, sizeof hwm);
        zmq_setsockopt (router, ZMQ_RCVHWM, &hwm, sizeof hwm);
        if (zmq_bind (router, "tcp://127.0.0.1:*") != 0)
            _exit (1);
        char bound [256];
        size_t len = sizeof bound;
        zmq_getsockopt (router, ZMQ_LAST_ENDPOINT, bound, &len);
        if (write (fds [1], bound, strlen (bound) + 1) < 0)
            _exit (1);
        close (fds [1]);
        s_server_loop (router, echo);
        _exit (0);
    }
    close (fds [1]);
    ssize_t got = read (fds [0], endpoint, size - 1);
    close (fds [0]);
    if (got <= 0)
        exit (1);
    endpoint [got] = 0;
    return pid;
}

static void
s_stop (pid_t pid)
{
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
}

static void *
s_dealer (void *ctx, const char *endpoint, const char *identity)
{
    void *sock = zmq_socket (ctx, ZMQ_DEALER);
    int zero = 0, hwm = 100000;
    zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt (sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (identity)
        zmq_setsockopt (sock, ZMQ_ROUTING_ID, identity, strlen (identity));
    zmq_connect (sock, endpoint);
    return sock;
}

//  Forwarder relay: receiver child counts frames; this process sends.
static double
s_forwarder_relay (size_t body_size)
{
    char endpoint [256];
    pid_t server = s_server_start (false, endpoint, sizeof endpoint);
    int fds [2];
    if (pipe (fds) != 0)
        exit (1);
    pid_t receiver = fork ();
    if (receiver == 0) {
        close (fds [0]);
        void *ctx = zmq_ctx_new ();
        void *sock = s_dealer (ctx, endpoint, "dst");
        zmq_send (sock, "hi", 2, 0);
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        int64_t first = 0, last = 0;
        for (long i = 0; i < s_count; i++) {
            if (zmq_msg_recv (&msg, sock, 0) < 0)
                _exit (1);
            last = pclock_mono_us ();
            if (i == 0)
                first = last;
        }
        double rate = (double) (s_count - 1) * 1e6 / (double) (last - first);
        if (write (fds [1], &rate, sizeof rate) < 0)
            _exit (1);
        _exit (0);
    }
    close (fds [1]);
    pclock_sleep_ms (300);              //  the receiver's hello reaches the forwarder
    void *ctx = zmq_ctx_new ();
    void *sock = s_dealer (ctx, endpoint, "src");
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    for (long i = 0; i < s_count; i++)
        zmq_send (sock, body, body_size, 0);
    double rate = 0;
    if (read (fds [0], &rate, sizeof rate) != sizeof rate)
        rate = 0;
    close (fds [0]);
    waitpid (receiver, NULL, 0);
    zmq_close (sock);
    zmq_ctx_term (ctx);
    free (body);
    s_stop (server);
    return rate;
}

// ---------------------------------------------------------------------
//  Parley relay, through libparley. Both ends run in forked children: the
//  library's sockets live in czmq's context, which must not cross a fork,
//  and the parent forks again for the next run.

//  fork () with stdout flushed first, so a child's fflush does not print
//  the parent's buffered lines a second time.
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

static pid_t
s_fork (void)
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid < 0)
        exit (1);
    return pid;
}

//  Receives s_count messages with `depth` FETCHes in flight (1: one at a
//  time, each acking the previous batch). Each new FETCH acks everything
//  received so far. `blocking`: parley_client_fetch instead of the
//  pipeline (depth 1).
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
//  per SEND, as an agent sends), coalesced at libparley's defaults or not
//  at all. Messages that failed are sent again as filler at the end so the
//  receiver still counts s_count and stops; their number is reported,
//  never hidden.
static void
s_sender_pipelined (const char *router, size_t body_size, size_t batch, bool coalesce,
                    int result_fd)
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

static void s_push_receiver (const char *router, int ready_fd, int result_fd);

//  The relay with the pipelined sender (coalescing or not) and a pulling
//  or `pushed` receiver; `outcome` gets what the sender reported.
static double
s_parley_relay_pipelined (const char *router, size_t body_size, size_t batch, bool pushed,
                          bool coalesce, relay_outcome_t *outcome)
{
    batch = s_fit_batch (body_size, batch);
    int ready [2], result [2], sender_result [2];
    if (pipe (ready) != 0 || pipe (result) != 0 || pipe (sender_result) != 0)
        exit (1);
    pid_t receiver = s_fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        if (pushed)
            s_push_receiver (router, ready [1], result [1]);
        else
            s_receiver (router, PROTO_MAX_BATCH, FETCH_DEPTH, false, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    pid_t sender = s_fork ();
    if (sender == 0) {
        close (sender_result [0]);
        s_sender_pipelined (router, body_size, batch, coalesce, sender_result [1]);
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

static int
s_by_value (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

//  The pushed relay at default settings, one message per call coalesced
//  and not, against batches of 4096: the three alternated, COALESCE_ROUNDS
//  times, so a change in the machine's load falls on all three alike; the
//  median of each, and the coalesced run's lost and INBOX_FULL counts.
static void
s_coalesce_rows (const char *router, size_t size)
{
    static const char *names [] = { "b4096", "c1", "c1_off" };
    double rates [3][COALESCE_ROUNDS];
    long lost = 0, inbox_full = 0;
    for (int round = 0; round < COALESCE_ROUNDS; round++)
        for (int v = 0; v < 3; v++) {
            relay_outcome_t outcome = { 0 };
            rates [v][round] = s_parley_relay_pipelined (router, size, v == 0 ? 4096 : 1, true,
                                                         v != 2, &outcome);
            lost += v == 1 ? outcome.lost : 0;
            inbox_full += v == 1 ? outcome.inbox_full : 0;
        }
    char key [64];
    for (int v = 0; v < 3; v++) {
        qsort (rates [v], COALESCE_ROUNDS, sizeof (double), s_by_value);
        snprintf (key, sizeof key, "relay_push_default_%zu_%s", size, names [v]);
        bench_result (key, rates [v][COALESCE_ROUNDS / 2], "msg/s");
    }
    snprintf (key, sizeof key, "relay_push_default_%zu_c1_lost", size);
    bench_result (key, (double) lost, "msgs");
    snprintf (key, sizeof key, "relay_push_default_%zu_c1_inbox_full", size);
    bench_result (key, (double) inbox_full, "msgs");
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
                                                         batches [b], false, true, &outcome),
                          "msg/s");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_inbox_full", sizes [s], batches [b]);
            bench_result (key, (double) outcome.inbox_full, "msgs");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_lost", sizes [s], batches [b]);
            bench_result (key, (double) outcome.lost, "msgs");
            snprintf (key, sizeof key, "relay_default_%zu_b%zu_parked", sizes [s], batches [b]);
            bench_result (key, (double) outcome.parked, "sends");
        }
    for (size_t s = 0; s < 2; s++)
        s_coalesce_rows (testbroker_router (broker), sizes [s]);
    if (testbroker_stop (&broker) != 0)
        exit (1);
}

//  One relay: a receiver (pulled with `depth` FETCHes in flight, or
//  pushed when depth is 0) and s_sender, in forked children; the
//  receiver's rate, 0 when the sender failed.
static double
s_relay_pair (const char *router, size_t body_size, size_t batch, int depth, bool blocking)
{
    batch = s_fit_batch (body_size, batch);
    int ready [2], result [2];
    if (pipe (ready) != 0 || pipe (result) != 0)
        exit (1);
    pid_t receiver = s_fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        if (depth == 0)
            s_push_receiver (router, ready [1], result [1]);
        else
            s_receiver (router, batch, depth, blocking, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    pid_t sender = s_fork ();
    if (sender == 0)
        s_sender (router, body_size, batch, blocking);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_relay: the %s receiver failed\n", depth ? "pulling" : "pushed");
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
    assert (depth > 0);
    return s_relay_pair (router, body_size, batch, depth, blocking);
}

// ---------------------------------------------------------------------
//  Pushed receiver (CONSUME): no FETCH; the broker pushes within the
//  window and each take acknowledges what the one before it handed out.

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
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    bench_check (client, parley_client_consume (client, 0, 0), "CONSUME 0");
    bench_check (client, parley_client_ack (client, last_seq), "ACK");
    bench_client_leave (&client);
    _exit (0);
}

//  The relay with the pushed receiver; the sender is the pull relay's.
static double
s_push_relay (const char *router, size_t body_size, size_t batch)
{
    return s_relay_pair (router, body_size, batch, 0, false);
}

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

static void s_report_rtt (const char *key, int64_t *times, size_t count);

//  A -> B -> A, both ends consuming (`pushed`) or both fetching, in a
//  child (libparley must not cross a fork). SENDs are posted and their
//  SENTs collected after the round trip, and a consumer acknowledges
//  after answering, cumulatively every 32 messages (half its window of
//  64): neither is on the answer's path.
static void
s_ab_rtt (const char *router, size_t body_size, bool pushed, const char *key)
{
    pid_t child = s_fork ();
    if (child > 0) {
        waitpid (child, NULL, 0);
        return;
    }
    const char *id_a = pushed ? "pa" : "qa", *id_b = pushed ? "pb" : "qb";
    parley_client_t *a = bench_client (router, id_a);
    parley_client_t *b = bench_client (router, id_b);
    if (pushed) {
        bench_check (a, parley_client_consume (a, 64, 0), "CONSUME");
        bench_check (b, parley_client_consume (b, 64, 0), "CONSUME");
    }
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    parley_outbox_t *to_b = s_outbox (id_b, body, body_size, 1);
    parley_outbox_t *to_a = s_outbox (id_a, body, body_size, 1);
    parley_mail_t *mail_a = NULL, *mail_b = NULL;
    static int64_t times [RTT_ROUNDS];
    uint64_t seq_a = 0, seq_b = 0;
    for (int i = 0; i < RTT_WARMUP + RTT_ROUNDS; i++) {
        parley_ticket_t ta, tb;
        int64_t t0 = pclock_mono_us ();
        bench_check (a, parley_client_post_send (a, to_b, &ta), "SEND A");
        seq_b = s_take_one (b, pushed, seq_b, &mail_b);
        bench_check (b, parley_client_post_send (b, to_a, &tb), "SEND B");
        seq_a = s_take_one (a, pushed, seq_a, &mail_a);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
        //  Cumulative acks at half the window (64), as a consumer does.
        if (pushed && i % 32 == 31) {
            bench_check (b, parley_client_ack_nowait (b, seq_b), "ACK B");
            bench_check (a, parley_client_ack_nowait (a, seq_a), "ACK A");
        }
        bench_check (a, parley_client_collect_sent (a, ta, NULL), "SENT A");
        bench_check (b, parley_client_collect_sent (b, tb, NULL), "SENT B");
    }
    s_report_rtt (key, times, RTT_ROUNDS);
    bench_check (a, parley_client_ack (a, seq_a), "ACK");
    bench_check (b, parley_client_ack (b, seq_b), "ACK");
    parley_outbox_destroy (&to_a);
    parley_outbox_destroy (&to_b);
    parley_mail_destroy (&mail_a);
    parley_mail_destroy (&mail_b);
    free (body);
    bench_client_leave (&a);
    bench_client_leave (&b);
    _exit (0);
}

//  The same round trip through the bare forwarder: A -> fwd -> B -> fwd -> A.
static void
s_forwarder_rtt (size_t body_size)
{
    char endpoint [256];
    pid_t server = s_server_start (false, endpoint, sizeof endpoint);
    void *ctx = zmq_ctx_new ();
    void *a = s_dealer (ctx, endpoint, "a");
    void *b = s_dealer (ctx, endpoint, "b");
    char buf [1024];
    memset (buf, 'x', sizeof buf);
    //  Until the forwarder knows both peers (ROUTER_MANDATORY drops nothing
    //  silently, but a message to an unknown peer is lost): ping until B
    //  hears A.
    zmq_pollitem_t item = { b, 0, ZMQ_POLLIN, 0 };
    do
        zmq_send (a, buf, body_size, 0);
    while (zmq_poll (&item, 1, 100) <= 0);
    zmq_recv (b, buf, sizeof buf, 0);
    zmq_send (b, buf, body_size, 0);
    zmq_recv (a, buf, sizeof buf, 0);
    pclock_sleep_ms (100);              //  late pings arrive, then are dropped
    while (zmq_recv (b, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
        ;
    while (zmq_recv (a, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
        ;
    static int64_t times [RTT_ROUNDS];
    for (int i = 0; i < RTT_WARMUP + RTT_ROUNDS; i++) {
        int64_t t0 = pclock_mono_us ();
        zmq_send (a, buf, body_size, 0);
        zmq_recv (b, buf, sizeof buf, 0);
        zmq_send (b, buf, body_size, 0);
        zmq_recv (a, buf, sizeof buf, 0);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
    }
    s_report_rtt ("rtt_forwarder_ab", times, RTT_ROUNDS);
    zmq_close (a);
    zmq_close (b);
    zmq_ctx_term (ctx);
    s_stop (server);
}

//  The pushed rows: relays at 64 B and 256 B, then the A -> B -> A round
//  trips (64 B bodies).
static void
s_push_rows (const char *router, bool with_forwarder)
{
    static const size_t sizes [] = { 64, 256 };
    static const size_t batches [] = { 256, 4096 };
    for (size_t s = 0; s < 2; s++) {
        char key [64];
        if (with_forwarder) {
            snprintf (key, sizeof key, "relay_forwarder_%zu", sizes [s]);
            bench_result (key, s_forwarder_relay (sizes [s]), "msg/s");
        }
        for (size_t b = 0; b < 2; b++) {
            snprintf (key, sizeof key, "relay_push_%zu_b%zu", sizes [s], batches [b]);
            bench_result (key, s_push_relay (router, sizes [s], batches [b]), "msg/s");
        }
    }
    s_ab_rtt (router, 64, true, "rtt_push_ab");
    s_ab_rtt (router, 64, false, "rtt_pull_ab");
    s_forwarder_rtt (64);
}

// ---------------------------------------------------------------------
//  Round trips

static void
s_report_rtt (const char *key, int64_t *times, size_t count)
{
    char name [128];
    snprintf (name, sizeof name, "%s_p50", key);
    bench_result (name, (double) bench_percentile (times, count, 50), "us");
    snprintf (name, sizeof name, "%s_p99", key);
    bench_result (name, (double) bench_percentile (times, count, 99), "us");
}

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
    pid_t server = s_server_start (true, endpoint, sizeof endpoint);
    void *ctx = zmq_ctx_new ();
    void *sock = s_dealer (ctx, endpoint, NULL);
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
    s_report_rtt ("rtt_echo", times, RTT_ROUNDS);
    zmq_close (sock);
    zmq_ctx_term (ctx);
    s_stop (server);
}

//  Round trips of one request without fields, in a child (libparley must
//  not cross a fork); the child prints the figures.
static void
s_parley_rtt (const char *router, bool fetch, const char *key)
{
    pid_t child = s_fork ();
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
    s_report_rtt (key, times, RTT_ROUNDS);
    parley_mail_destroy (&mail);
    bench_client_leave (&client);
    _exit (0);
}

int
main (int argc, char **argv)
{
    bool push_only = false, only_coalesce = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--count") == 0 && i + 1 < argc)
            s_count = atol (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0)
            s_count = 100000;
        else if (strcmp (argv [i], "--no-default") == 0)
            s_default_rows = false;
        else if (strcmp (argv [i], "--only-default") == 0)
            s_only_default = true;
        else if (strcmp (argv [i], "--push-only") == 0)
            push_only = true;
        else if (strcmp (argv [i], "--only-coalesce") == 0)
            only_coalesce = true;
    }
    if (only_coalesce) {
        const char *args [] = { "--log-level", "warn", NULL };
        testbroker_t *broker = testbroker_start (args);
        if (!broker)
            return 1;
        bench_pin (testbroker_pid (broker), 0);
        bench_pin (0, 1);
        s_coalesce_rows (testbroker_router (broker), 64);
        s_coalesce_rows (testbroker_router (broker), 256);
        return testbroker_stop (&broker) == 0 ? 0 : 1;
    }
    if (s_only_default) {
        //  With the forwarder, their baseline, measured in the same run.
        bench_pin (0, 1);
        char key [64];
        for (size_t s = 0; s < 2; s++) {
            size_t size = s ? 256 : 64;
            snprintf (key, sizeof key, "relay_forwarder_%zu", size);
            bench_result (key, s_forwarder_relay (size), "msg/s");
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

    if (push_only) {
        s_push_rows (router, true);
        return testbroker_stop (&broker) == 0 ? 0 : 1;
    }
    static const size_t sizes [] = { 64, 256 };
    static const size_t batches [] = { 256, 4096 };
    for (size_t s = 0; s < 2; s++) {
        char key [64];
        snprintf (key, sizeof key, "relay_forwarder_%zu", sizes [s]);
        bench_result (key, s_forwarder_relay (sizes [s]), "msg/s");
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
    s_push_rows (router, false);
    int rc = testbroker_stop (&broker) == 0 ? 0 : 1;
    if (s_default_rows)
        s_default_settings ();
    return rc;
}
