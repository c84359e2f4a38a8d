// SPDX-License-Identifier: MIT
/*  bench_zmq - the bare ZeroMQ baselines the relay benches measure Parley
    against, in the same run: a ROUTER forwarder and a ROUTER echo, each in
    a forked child pinned to CPU 0 (the server's CPU, bench_util.h).

    The forwarder routes by identity: a frame from "a" goes to "b" and back
    (the A -> fwd -> B -> fwd -> A round trip), anything else goes to
    "dst" (the relay's receiver). ROUTER_MANDATORY, so a full pipe blocks
    instead of dropping, and high-water marks of 100,000 frames.

    Static inline, as bench_util.h: every bench file is its own binary.
*/
#ifndef PARLEY_BENCH_ZMQ_H
#define PARLEY_BENCH_ZMQ_H

#include <signal.h>
#include <sys/wait.h>
#include "bench_util.h"

#define BENCH_RTT_ROUNDS 20000
#define BENCH_RTT_WARMUP 1000

//  fork () with stdout flushed first, so a child's fflush does not print
//  the parent's buffered lines a second time.
static inline pid_t
bench_fork (void)
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid < 0)
        exit (1);
    return pid;
}

static inline void
bench_zmq_loop (void *router, bool echo)
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

//  Starts the forwarder (or the echo) on CPU `cpu`; writes its endpoint
//  into `endpoint`; returns its pid.
static inline pid_t
bench_zmq_server (bool echo, int cpu, char *endpoint, size_t size)
{
    int fds [2];
    if (pipe (fds) != 0)
        exit (1);
    pid_t pid = bench_fork ();
    if (pid == 0) {
        close (fds [0]);
        bench_pin (0, cpu);
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
        bench_zmq_loop (router, echo);
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

static inline void
bench_zmq_stop (pid_t pid)
{
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
}

static inline void *
bench_zmq_dealer (void *ctx, const char *endpoint, const char *identity)
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

//  `count` frames of `body_size` through the forwarder: a receiver child
//  counts them (its rate, first frame to last, is returned); this process
//  sends.
static inline double
bench_forwarder_relay (size_t body_size, long count)
{
    char endpoint [256];
    pid_t server = bench_zmq_server (false, 0, endpoint, sizeof endpoint);
    int fds [2];
    if (pipe (fds) != 0)
        exit (1);
    pid_t receiver = bench_fork ();
    if (receiver == 0) {
        close (fds [0]);
        void *ctx = zmq_ctx_new ();
        void *sock = bench_zmq_dealer (ctx, endpoint, "dst");
        zmq_send (sock, "hi", 2, 0);
        zmq_msg_t msg;
        zmq_msg_init (&msg);
        int64_t first = 0, last = 0;
        for (long i = 0; i < count; i++) {
            if (zmq_msg_recv (&msg, sock, 0) < 0)
                _exit (1);
            last = pclock_mono_us ();
            if (i == 0)
                first = last;
        }
        double rate = (double) (count - 1) * 1e6 / (double) (last - first);
        if (write (fds [1], &rate, sizeof rate) < 0)
            _exit (1);
        _exit (0);
    }
    close (fds [1]);
    pclock_sleep_ms (300);              //  the receiver's hello reaches the forwarder
    void *ctx = zmq_ctx_new ();
    void *sock = bench_zmq_dealer (ctx, endpoint, "src");
    char *body = calloc (1, body_size);
    memset (body, 'x', body_size);
    for (long i = 0; i < count; i++)
        zmq_send (sock, body, body_size, 0);
    double rate = 0;
    if (read (fds [0], &rate, sizeof rate) != sizeof rate)
        rate = 0;
    close (fds [0]);
    waitpid (receiver, NULL, 0);
    zmq_close (sock);
    zmq_ctx_term (ctx);
    free (body);
    bench_zmq_stop (server);
    return rate;
}

//  RESULT <key>_p50 and <key>_p99 of `count` round-trip times (µs).
static inline void
bench_report_rtt (const char *key, int64_t *times, size_t count)
{
    char name [128];
    snprintf (name, sizeof name, "%s_p50", key);
    bench_result (name, (double) bench_percentile (times, count, 50), "us");
    snprintf (name, sizeof name, "%s_p99", key);
    bench_result (name, (double) bench_percentile (times, count, 99), "us");
}

//  A -> fwd -> B -> fwd -> A, both ends in this thread, the forwarder on
//  CPU `server_cpu`; reported under `key`.
static inline void
bench_forwarder_rtt (size_t body_size, int server_cpu, const char *key)
{
    char endpoint [256];
    pid_t server = bench_zmq_server (false, server_cpu, endpoint, sizeof endpoint);
    void *ctx = zmq_ctx_new ();
    void *a = bench_zmq_dealer (ctx, endpoint, "a");
    void *b = bench_zmq_dealer (ctx, endpoint, "b");
    char buf [1024];
    memset (buf, 'x', sizeof buf);
    //  Until the forwarder knows both peers (a message to an unknown peer
    //  is lost): ping until B hears A.
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
    static int64_t times [BENCH_RTT_ROUNDS];
    for (int i = 0; i < BENCH_RTT_WARMUP + BENCH_RTT_ROUNDS; i++) {
        int64_t t0 = pclock_mono_us ();
        zmq_send (a, buf, body_size, 0);
        zmq_recv (b, buf, sizeof buf, 0);
        zmq_send (b, buf, body_size, 0);
        zmq_recv (a, buf, sizeof buf, 0);
        if (i >= BENCH_RTT_WARMUP)
            times [i - BENCH_RTT_WARMUP] = pclock_mono_us () - t0;
    }
    bench_report_rtt (key, times, BENCH_RTT_ROUNDS);
    zmq_close (a);
    zmq_close (b);
    zmq_ctx_term (ctx);
    bench_zmq_stop (server);
}

#endif
