/*  bench_relay - broker relay throughput and request round trip, each
    beside a bare ZeroMQ baseline measured in the same run.

    Relay: one sender -> server -> one receiver, 64 B and 256 B bodies.
      parley    the real parley-broker; the sender SENDs batches of B
                messages (up to 4 requests in flight), the receiver FETCHes
                batches of up to B (ack = last seq) and waits for MAIL_READY
                on the PUB socket when its inbox is empty. Twice: with one
                FETCH at a time (key suffix _f1), and with FETCH_DEPTH
                FETCHes in flight (`stream: true`, PROTOCOL.md §3).
      forwarder a bare ROUTER-to-ROUTER forwarder in C on the same
                transport (tcp loopback): one message per frame, routed by
                identity, ROUTER_MANDATORY so a full pipe blocks instead of
                dropping. This is the "per-message" baseline.
      libparley the same relay through the C client library every program
                in the tree uses (typed SEND with a batch id, one at a
                time; typed FETCH with ack = last seq and the duplicate
                filter; MAIL_READY through parley_client_wait), against
                relay_parley_*_f1 (the same receiver shape on a raw
                socket, whose sender keeps 4 SENDs in flight where the
                library's request/reply API has one): the price of the
                library, strict reply decoding included.
    Round trip: HEARTBEAT -> OK and an empty FETCH -> MAIL against the
    broker, vs a raw ROUTER echo of a frame of the same size.

    The server (broker, forwarder, echo) is pinned to CPU 0, the clients to
    CPU 1 (bench_util.h). Rates are measured by the receiver, from its first
    message to its last, so connection setup is not counted.

    Usage: bench_relay [--count N] [--quick]
*/
#include <signal.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "parley/client.h"
#include "tests/lib/testbroker.h"

#define RTT_ROUNDS 20000
#define RTT_WARMUP 1000
#define FETCH_DEPTH 3           //  streaming FETCHes the receiver keeps in flight

static long s_count = 1000000;          //  messages per relay run

// ---------------------------------------------------------------------
//  Baseline servers: forwarder and echo, in a forked child on CPU 0.

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
//  Parley relay

//  One FETCH: `stream` continues after what earlier FETCHes handed out
//  (PROTOCOL.md §4), so several can be in flight; the first is plain.
static void
s_fetch_send (bench_conn_t *conn, uint64_t ack, size_t batch, bool stream)
{
    penc_t *enc = bench_conn_begin (conn, PMSG_FETCH, 1 + (ack ? 1 : 0) + (stream ? 1 : 0));
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    penc_kv_uint (enc, "max", batch);
    if (stream)
        penc_kv_bool (enc, "stream", true);
    bench_conn_send (conn);
}

//  Receives s_count messages with `depth` FETCHes in flight (1: the old
//  strict request/reply, each FETCH acking the previous batch). Each new
//  FETCH acks everything received so far.
static void
s_parley_receiver (const char *router, const char *pub, size_t batch, int depth,
                   int ready_fd, int result_fd)
{
    bench_pin (0, 1);
    bench_conn_t *conn = bench_conn_new (router);
    bench_hello (conn, "dst");
    void *sub = zmq_socket (conn->ctx, ZMQ_SUB);
    zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "mail.dst", 8);
    zmq_connect (sub, pub);
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0, first_batch = 0;
    uint64_t ack = 0;
    int64_t first = 0, last = 0;
    int in_flight = 0;
    bool draining = false;      //  an empty reply came: let the rest come back
    while (received < s_count) {
        //  With nothing in flight the FETCH is plain (it restarts from
        //  acked, which its own ack just moved to everything received);
        //  the ones behind it stream on from there.
        while (!draining && in_flight < depth) {
            s_fetch_send (conn, ack, batch, in_flight > 0);
            in_flight++;
        }
        const msgpack_object *mail = bench_conn_recv (conn, 30000);
        in_flight--;
        bench_expect (mail, "MAIL");
        const msgpack_object *items = pobj_get (mail, "messages");
        size_t n = items->via.array.size;
        if (n == 0) {
            //  Inbox empty: once every FETCH is back, wait for a wake-up
            //  rather than spin.
            draining = in_flight > 0;
            if (!draining) {
                zmq_pollitem_t item = { sub, 0, ZMQ_POLLIN, 0 };
                if (zmq_poll (&item, 1, 5) > 0)
                    while (zmq_recv (sub, NULL, 0, ZMQ_DONTWAIT) >= 0)
                        ;
            }
            continue;
        }
        if (in_flight == 0)
            draining = false;
        ack = pobj_uint (&items->via.array.ptr [n - 1], "seq", 0);
        last = pclock_mono_us ();
        if (received == 0) {
            first = last;
            first_batch = (long) n;
        }
        received += (long) n;
    }
    //  Replies still in flight come back empty (or with nothing new).
    while (in_flight-- > 0)
        bench_conn_recv (conn, 30000);
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    penc_t *bye = bench_conn_begin (conn, PMSG_BYE, 1);
    penc_kv_bool (bye, "forget", true);
    bench_call (conn);
    zmq_close (sub);
    bench_conn_destroy (&conn);
    _exit (0);
}

static double
s_parley_relay (const char *router, const char *pub, size_t body_size, size_t batch, int depth)
{
    int ready [2], result [2];
    if (pipe (ready) != 0 || pipe (result) != 0)
        exit (1);
    pid_t receiver = fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_parley_receiver (router, pub, batch, depth, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);

    //  A SEND frame must stay under the 1 MiB frame limit (a bigger one
    //  closes the connection): 4096 bodies of 256 B do not fit.
    size_t fit = (PROTO_MAX_FRAME - 4096) / (body_size + 24);
    if (batch > fit) {
        printf ("bench_relay: SEND batch %zu capped to %zu by the 1 MiB frame\n", batch, fit);
        batch = fit;
    }
    bench_conn_t *conn = bench_conn_new (router);
    bench_hello (conn, "src");
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    long sent = 0, in_flight = 0, accepted = 0;
    while (sent < s_count || in_flight > 0) {
        if (sent < s_count && in_flight < 4) {
            size_t n = (size_t) (s_count - sent) < batch ? (size_t) (s_count - sent) : batch;
            penc_t *enc = bench_conn_begin (conn, PMSG_SEND, 1);
            penc_key (enc, "messages");
            msgpack_packer *pk = penc_packer (enc);
            msgpack_pack_array (pk, (uint32_t) n);
            for (size_t i = 0; i < n; i++) {
                msgpack_pack_map (pk, 2);
                penc_kv_cstr (enc, "to", "dst");
                penc_kv_str (enc, "body", body, body_size);
            }
            bench_conn_send (conn);
            sent += (long) n;
            in_flight++;
            continue;
        }
        const msgpack_object *reply = bench_conn_recv (conn, 30000);
        bench_expect (reply, "SENT");
        accepted += (long) pobj_uint (reply, "accepted", 0);
        in_flight--;
    }
    if (accepted != s_count)
        fprintf (stderr, "bench_relay: only %ld of %ld accepted\n", accepted, s_count);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_relay: the receiver failed\n");
        exit (1);
    }
    close (result [0]);
    waitpid (receiver, NULL, 0);
    //  Both agents leave for good (the receiver did already), so the next
    //  run starts with empty inboxes.
    penc_t *enc = bench_conn_begin (conn, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    bench_call (conn);
    bench_conn_destroy (&conn);
    free (body);
    return rate;
}

// ---------------------------------------------------------------------
//  The relay through libparley. Both ends run in forked children: the
//  library's sockets live in czmq's context, which must not cross a fork,
//  and the parent forks again for the next run.

static void
s_lib_receiver (const char *router, size_t batch, int ready_fd, int result_fd)
{
    bench_pin (0, 1);
    parley_client_t *client = parley_client_new (router, "ldst");
    if (parley_client_connect (client) != PARLEY_OK)
        _exit (1);
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0, first_batch = 0;
    uint64_t ack = 0;
    int64_t first = 0, last = 0;
    while (received < s_count) {
        parley_mail_batch_t mail;
        if (parley_client_fetch (client, ack, batch, false, &mail) != PARLEY_OK) {
            fprintf (stderr, "bench_relay: FETCH: %s\n", parley_client_error_text (client));
            _exit (1);
        }
        if (mail.count == 0) {
            if (!parley_client_take_mail (client))
                parley_client_wait (client, 5);
            continue;
        }
        ack = mail.messages [mail.count - 1].seq;
        last = pclock_mono_us ();
        if (received == 0) {
            first = last;
            first_batch = (long) mail.count;
        }
        received += (long) mail.count;
    }
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    parley_client_ack (client, ack);
    parley_client_bye (client, true);
    parley_client_destroy (&client);
    _exit (0);
}

static void
s_lib_sender (const char *router, size_t body_size, size_t batch)
{
    bench_pin (0, 1);
    parley_client_t *client = parley_client_new (router, "lsrc");
    if (parley_client_connect (client) != PARLEY_OK)
        _exit (1);
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    parley_outgoing_t *items = calloc (batch, sizeof (parley_outgoing_t));
    for (size_t i = 0; i < batch; i++)
        items [i] = (parley_outgoing_t) { .to = "ldst", .body = body, .body_len = body_size };
    for (long sent = 0; sent < s_count; ) {
        size_t n = (size_t) (s_count - sent) < batch ? (size_t) (s_count - sent) : batch;
        parley_sent_t result;
        if (parley_client_send (client, items, n, &result) != PARLEY_OK || result.accepted != n) {
            fprintf (stderr, "bench_relay: SEND: %s\n", parley_client_error_text (client));
            _exit (1);
        }
        sent += (long) n;
    }
    parley_client_bye (client, true);
    parley_client_destroy (&client);
    free (items);
    free (body);
    _exit (0);
}

static double
s_lib_relay (const char *router, size_t body_size, size_t batch)
{
    int ready [2], result [2];
    if (pipe (ready) != 0 || pipe (result) != 0)
        exit (1);
    pid_t receiver = fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_lib_receiver (router, batch, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    pid_t sender = fork ();
    if (sender == 0)
        s_lib_sender (router, body_size, batch);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_relay: the libparley receiver failed\n");
        exit (1);
    }
    close (result [0]);
    waitpid (sender, NULL, 0);
    waitpid (receiver, NULL, 0);
    return rate;
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

static size_t
s_parley_rtt (const char *router, pmsg_type_t type, const char *key)
{
    bench_conn_t *conn = bench_conn_new (router);
    bench_hello (conn, "rtt");
    static int64_t times [RTT_ROUNDS];
    size_t request_size = 0;
    for (int i = 0; i < RTT_WARMUP + RTT_ROUNDS; i++) {
        bench_conn_begin (conn, type, 0);
        request_size = penc_size (&conn->enc);
        int64_t t0 = pclock_mono_us ();
        bench_call (conn);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = pclock_mono_us () - t0;
    }
    s_report_rtt (key, times, RTT_ROUNDS);
    penc_t *enc = bench_conn_begin (conn, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    bench_call (conn);
    bench_conn_destroy (&conn);
    return request_size;
}

int
main (int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--count") == 0 && i + 1 < argc)
            s_count = atol (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0)
            s_count = 100000;
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
    const char *pub = testbroker_pub (broker);
    printf ("bench_relay: %ld messages per run; server on CPU 0, clients on CPU 1%s\n",
            s_count, bench_pin_enabled () ? "" : " (pinning off)");

    static const size_t sizes [] = { 64, 256 };
    static const size_t batches [] = { 256, 4096 };
    for (size_t s = 0; s < 2; s++) {
        char key [64];
        snprintf (key, sizeof key, "relay_forwarder_%zu", sizes [s]);
        bench_result (key, s_forwarder_relay (sizes [s]), "msg/s");
        for (size_t b = 0; b < 2; b++) {
            //  The old shape first (one FETCH at a time), kept for
            //  comparison, then FETCH_DEPTH streaming FETCHes in flight.
            snprintf (key, sizeof key, "relay_parley_%zu_b%zu_f1", sizes [s], batches [b]);
            bench_result (key, s_parley_relay (router, pub, sizes [s], batches [b], 1), "msg/s");
            snprintf (key, sizeof key, "relay_parley_%zu_b%zu", sizes [s], batches [b]);
            bench_result (key, s_parley_relay (router, pub, sizes [s], batches [b],
                                               FETCH_DEPTH), "msg/s");
        }
        snprintf (key, sizeof key, "relay_libparley_%zu_b256", sizes [s]);
        bench_result (key, s_lib_relay (router, sizes [s], 256), "msg/s");
    }
    size_t size = s_parley_rtt (router, PMSG_HEARTBEAT, "rtt_heartbeat");
    s_parley_rtt (router, PMSG_FETCH, "rtt_fetch_empty");
    s_echo_rtt (size);
    return testbroker_stop (&broker) == 0 ? 0 : 1;
}
