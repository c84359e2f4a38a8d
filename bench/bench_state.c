// SPDX-License-Identifier: MIT
/*  bench_state - shared-state writes per second, with a replica.

    WRITE requests of `update` ops (replace reducer, a 64-byte str value,
    keys cycling over 1000 names, like the redis SET baseline) in three
    shapes:
      sync       one op per WRITE, one request in flight (a round trip each)
      pipelined  one op per WRITE, 256 requests in flight
      batched    256 ops per WRITE, 4 requests in flight
    A replica process subscribes to the keys' STATE_UPDATE events on the
    PUB socket (the Clone pattern's update stream) and counts them; its
    figure says whether the update stream keeps up with the writes, and a
    shortfall (PUB high-water mark) is reported. Broker on CPU 0, writer
    and replica on CPU 1. The writer is a libparley client (its pipeline
    for the requests in flight) in a process of its own, forked like the
    replica: libparley's context must not cross a fork.

    The floor: a bare ZeroMQ ROUTER echo (C, on CPU 0) answered by a
    DEALER (CPU 1) with a frame of a one-op WRITE's size, one round trip
    at a time and 256 in flight (state_echo_sync, state_echo_pipelined).
    No broker can answer a WRITE faster than ZeroMQ carries the request
    and its reply, so that figure beside redis SET's says how much of a
    gap is the transport's.

    Usage: bench_state [--quick]
*/
#include <signal.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "tests/lib/testbroker.h"

static long s_scale = 1;        //  divisor for --quick

//  The replica: counts STATE_UPDATE events on "state.bk" until `expected`
//  arrived or 3 s pass without one; writes count and rate to `fd`.
static void
s_replica (const char *pub, long expected, int ready_fd, int result_fd)
{
    void *ctx = zmq_ctx_new ();
    void *sub = zmq_socket (ctx, ZMQ_SUB);
    int hwm = 0;
    zmq_setsockopt (sub, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "state.bk", 8);
    zmq_connect (sub, pub);
    //  PUB/SUB joins asynchronously: the writer repeats a probe write until
    //  we see it, so no real update is missed for lack of a subscription.
    char topic [300];
    while (zmq_recv (sub, topic, sizeof topic, 0) >= 0) {
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        zmq_msg_recv (&msg, sub, 0);
        zmq_msg_close (&msg);
        if (strncmp (topic, "state.bkprobe", 13) == 0)
            break;
    }
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0;
    int64_t first = 0, last = 0;
    zmq_pollitem_t item = { sub, 0, ZMQ_POLLIN, 0 };
    while (received < expected && zmq_poll (&item, 1, 3000) > 0) {
        int more = 0;
        size_t more_size = sizeof more;
        do {
            zmq_msg_t msg;
            zmq_msg_init (&msg);
            zmq_msg_recv (&msg, sub, 0);
            zmq_msg_close (&msg);
            zmq_getsockopt (sub, ZMQ_RCVMORE, &more, &more_size);
        } while (more);
        last = pclock_mono_us ();
        if (received++ == 0)
            first = last;
    }
    double result [2] = { (double) received,
                          received > 1 ? (double) (received - 1) * 1e6 / (double) (last - first) : 0 };
    if (write (result_fd, result, sizeof result) < 0)
        _exit (1);
    zmq_close (sub);
    zmq_ctx_term (ctx);
    _exit (0);
}

// ---------------------------------------------------------------------
//  The bare ZeroMQ floor

//  A ROUTER that sends every request back, in a forked child on CPU 0;
//  its endpoint into `endpoint`.
static pid_t
s_echo_start (char *endpoint, size_t size)
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
        if (zmq_bind (router, "tcp://127.0.0.1:*") != 0)
            _exit (1);
        char bound [256];
        size_t len = sizeof bound;
        zmq_getsockopt (router, ZMQ_LAST_ENDPOINT, bound, &len);
        if (write (fds [1], bound, strlen (bound) + 1) < 0)
            _exit (1);
        close (fds [1]);
        zmq_msg_t id, body;
        zmq_msg_init (&id);
        zmq_msg_init (&body);
        while (zmq_msg_recv (&id, router, 0) >= 0 && zmq_msg_recv (&body, router, 0) >= 0) {
            zmq_msg_send (&id, router, ZMQ_SNDMORE);
            zmq_msg_send (&body, router, 0);
        }
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

//  `total` round trips of a `frame_size` frame, `window` in flight;
//  prints RESULT state_echo_<shape>.
static void
s_echo_run (const char *endpoint, const char *shape, long total, int window, size_t frame_size)
{
    void *ctx = zmq_ctx_new ();
    void *dealer = zmq_socket (ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt (dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect (dealer, endpoint);
    char frame [256], reply [256];
    memset (frame, 'w', sizeof frame);
    //  the connection first, not timed
    zmq_send (dealer, frame, frame_size, 0);
    zmq_recv (dealer, reply, sizeof reply, 0);
    long sent = 0, received = 0;
    int64_t start = pclock_mono_us ();
    while (received < total) {
        while (sent < total && sent - received < window) {
            zmq_send (dealer, frame, frame_size, 0);
            sent++;
        }
        if (zmq_recv (dealer, reply, sizeof reply, 0) < 0)
            break;
        received++;
    }
    double rate = (double) received * 1e6 / (double) (pclock_mono_us () - start);
    char key [64];
    snprintf (key, sizeof key, "state_echo_%s", shape);
    bench_result (key, rate, "round trips/s");
    zmq_close (dealer);
    zmq_ctx_term (ctx);
}

//  Both shapes, in a forked child on CPU 1 (ZeroMQ contexts stay out of
//  this process, which forks the Parley writers after).
static void
s_echo_floor (size_t frame_size)
{
    char endpoint [256];
    pid_t server = s_echo_start (endpoint, sizeof endpoint);
    pid_t client = fork ();
    if (client == 0) {
        bench_pin (0, 1);
        s_echo_run (endpoint, "sync", 20000 / s_scale, 1, frame_size);
        s_echo_run (endpoint, "pipelined", 200000 / s_scale, 256, frame_size);
        _exit (0);
    }
    waitpid (client, NULL, 0);
    kill (server, SIGKILL);
    waitpid (server, NULL, 0);
}

static char s_keys [1000][8];          //  "bk0" .. "bk999"

//  The writer: repeats a probe WRITE until the replica saw one (its
//  subscription is live), then writes `total` ops in WRITEs of `ops`, up
//  to `window` in flight; writes its rate to `result_fd`.
static void
s_writer (const char *router, long total, int ops, int window, int ready_fd, int result_fd)
{
    parley_client_t *client = bench_client (router, "writer");
    unsigned char probe [16], value [80];
    char text [65];
    memset (text, 'v', 64);
    text [64] = 0;
    size_t probe_size = parley_pack_str (probe, sizeof probe, "probe");
    size_t value_size = parley_pack_str (value, sizeof value, text);
    parley_ops_t *batch = parley_ops_new ();
    parley_ops_update (batch, "bkprobe", probe, probe_size);
    zmq_pollitem_t item = { NULL, ready_fd, ZMQ_POLLIN, 0 };
    do
        bench_check (client, parley_client_write (client, batch, NULL), "WRITE");
    while (zmq_poll (&item, 1, 50) == 0);

    parley_ticket_t *tickets = calloc ((size_t) window, sizeof (parley_ticket_t));
    long done = 0, head = 0, tail = 0;         //  tickets [tail .. head) are in flight
    int64_t start = pclock_mono_us ();
    while (done < total || tail < head) {
        if (done < total && head - tail < window) {
            parley_ops_reset (batch);
            for (int i = 0; i < ops; i++)
                parley_ops_update (batch, s_keys [(done + i) % 1000], value, value_size);
            bench_check (client, parley_client_post_write (client, batch,
                                                           &tickets [head++ % window]), "WRITE");
            done += ops;
            continue;
        }
        bench_check (client, parley_client_collect_written (client, tickets [tail++ % window],
                                                            NULL), "WRITE");
    }
    double rate = (double) total * 1e6 / (double) (pclock_mono_us () - start);
    if (write (result_fd, &rate, sizeof rate) != sizeof rate)
        _exit (1);
    bench_client_leave (&client);
    parley_ops_destroy (&batch);
    free (tickets);
    _exit (0);
}

static void
s_run (const char *router, const char *pub, const char *shape, long total, int ops, int window)
{
    int ready [2], result [2], written [2];
    if (pipe (ready) != 0 || pipe (result) != 0 || pipe (written) != 0)
        exit (1);
    pid_t replica = fork ();
    if (replica == 0) {
        close (ready [0]);
        close (result [0]);
        close (written [0]);
        close (written [1]);
        s_replica (pub, total, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    pid_t writer = fork ();
    if (writer == 0) {
        close (written [0]);
        s_writer (router, total, ops, window, ready [0], written [1]);
    }
    close (ready [0]);
    close (written [1]);
    double rate = 0;
    if (read (written [0], &rate, sizeof rate) != sizeof rate) {
        fprintf (stderr, "bench_state: the writer failed\n");
        exit (1);
    }
    close (written [0]);
    double replica_result [2] = { 0, 0 };
    if (read (result [0], replica_result, sizeof replica_result) != sizeof replica_result)
        fprintf (stderr, "bench_state: the replica failed\n");
    close (result [0]);
    waitpid (replica, NULL, 0);
    waitpid (writer, NULL, 0);
    char key [64];
    snprintf (key, sizeof key, "state_parley_%s", shape);
    bench_result (key, rate, "ops/s");
    snprintf (key, sizeof key, "state_replica_%s", shape);
    bench_result (key, replica_result [1], "updates/s");
    printf ("bench_state: %s: %ld ops in WRITEs of %d, %d in flight; the replica got %.0f of %ld "
            "updates\n", shape, total, ops, window, replica_result [0], total);
}

int
main (int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp (argv [i], "--quick") == 0)
            s_scale = 10;
    for (int i = 0; i < 1000; i++)
        snprintf (s_keys [i], sizeof s_keys [i], "bk%d", i);
    //  A one-op WRITE of the writer below: envelope, ops [{op, key, value}]
    //  with a 64-byte value: about 100 bytes.
    s_echo_floor (100);
    const char *args [] = { "--log-level", "warn", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    const char *router = testbroker_router (broker);
    const char *pub = testbroker_pub (broker);
    s_run (router, pub, "sync", 20000 / s_scale, 1, 1);
    s_run (router, pub, "pipelined", 200000 / s_scale, 1, 256);
    s_run (router, pub, "batched", 1024000 / s_scale, 256, 4);
    return testbroker_stop (&broker) == 0 ? 0 : 1;
}
