/*  bench_util - small helpers shared by the bench programs (the files in bench/).

    Each bench file is its own binary (the Makefile builds one per file), so
    shared code lives here as static inline functions rather than in a .c.

    Output convention: every figure is printed as one line
        RESULT <key> <value> <unit>
    which scripts/bench.sh collects into build/bench/results.txt and turns
    into the tables of build/bench/results.md (ratios, targets). Any other
    line is commentary and is kept in build/bench/bench.log.

    Pinning: on this 2-core machine the server side of a pair (broker, echo
    server, forwarder) runs on CPU 0 and the bench's clients on CPU 1, so
    the two sides do not steal each other's core. BENCH_NO_PIN=1 turns it
    off (then the scheduler decides).
*/
#ifndef PARLEY_BENCH_UTIL_H
#define PARLEY_BENCH_UTIL_H

#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <msgpack.h>
#include <zmq.h>
#include "pclock.h"
#include "pmsg.h"

static inline void
bench_result (const char *key, double value, const char *unit)
{
    printf ("RESULT %s %.6g %s\n", key, value, unit);
    fflush (stdout);
}

static inline bool
bench_pin_enabled (void)
{
    const char *no = getenv ("BENCH_NO_PIN");
    return !(no && *no && strcmp (no, "0") != 0) && sysconf (_SC_NPROCESSORS_ONLN) >= 2;
}

//  Pins every thread of process `pid` (0 = this process) to `cpu`. Threads
//  started later inherit the mask of the thread that starts them, so pin
//  before creating sockets when possible; for a running process (the
//  broker: main thread + ZeroMQ I/O thread) every task is pinned.
static inline void
bench_pin (pid_t pid, int cpu)
{
    if (!bench_pin_enabled ())
        return;
    cpu_set_t set;
    CPU_ZERO (&set);
    CPU_SET (cpu, &set);
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/task", pid ? (int) pid : (int) getpid ());
    DIR *dir = opendir (path);
    if (!dir) {
        sched_setaffinity (pid, sizeof set, &set);
        return;
    }
    struct dirent *entry;
    while ((entry = readdir (dir)))
        if (entry->d_name [0] != '.')
            sched_setaffinity ((pid_t) atoi (entry->d_name), sizeof set, &set);
    closedir (dir);
}

static inline int
bench_cmp_i64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

//  Sorts `values` and returns the p-th percentile (0..100).
static inline int64_t
bench_percentile (int64_t *values, size_t count, double p)
{
    if (count == 0)
        return 0;
    qsort (values, count, sizeof values [0], bench_cmp_i64);
    size_t index = (size_t) (p / 100.0 * (double) (count - 1) + 0.5);
    return values [index < count ? index : count - 1];
}

//  Resident set size of `pid` (0 = self) in bytes, from /proc.
static inline long
bench_rss_bytes (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/statm", pid ? (int) pid : (int) getpid ());
    FILE *file = fopen (path, "r");
    if (!file)
        return -1;
    long size = 0, resident = 0;
    if (fscanf (file, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose (file);
    return resident < 0 ? -1 : resident * sysconf (_SC_PAGESIZE);
}

//  CPU time (user + system) of `pid` in seconds, from /proc/PID/stat.
static inline double
bench_cpu_seconds (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return -1;
    char buf [1024];
    size_t got = fread (buf, 1, sizeof buf - 1, file);
    fclose (file);
    buf [got] = 0;
    //  Fields after the ")" that closes the command name: state is field 3,
    //  utime 14, stime 15.
    char *p = strrchr (buf, ')');
    if (!p)
        return -1;
    unsigned long utime = 0, stime = 0;
    if (sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                &utime, &stime) != 2)
        return -1;
    return (double) (utime + stime) / (double) sysconf (_SC_CLK_TCK);
}

// ---------------------------------------------------------------------
//  A raw DEALER client for the hot loops. Requests are built with the real
//  encoder (penc); replies are read with plain msgpack_unpack, not the
//  strict pmsg_decode, because on the client core the full schema check
//  would cost about as much as the broker's own work and the figure is the
//  broker's. (Correctness of replies is the tests' job.)

typedef struct {
    void *ctx, *sock;
    bool own_ctx;
    penc_t enc;
    uint64_t next_id;
    msgpack_unpacked unpacked;
    zmq_msg_t frame;            //  the unpacked reply's strings point into it
} bench_conn_t;

//  ctx NULL: the connection gets a context (and I/O thread) of its own.
static inline bench_conn_t *
bench_conn_new_in (void *ctx, const char *endpoint)
{
    bench_conn_t *self = calloc (1, sizeof (bench_conn_t));
    self->own_ctx = ctx == NULL;
    self->ctx = ctx ? ctx : zmq_ctx_new ();
    self->sock = zmq_socket (self->ctx, ZMQ_DEALER);
    int zero = 0, hwm = 1000000;
    zmq_setsockopt (self->sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (self->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt (self->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (zmq_connect (self->sock, endpoint) != 0) {
        fprintf (stderr, "connect %s: %s\n", endpoint, zmq_strerror (zmq_errno ()));
        exit (1);
    }
    penc_init (&self->enc);
    msgpack_unpacked_init (&self->unpacked);
    zmq_msg_init (&self->frame);
    self->next_id = 1;
    return self;
}

static inline bench_conn_t *
bench_conn_new (const char *endpoint)
{
    return bench_conn_new_in (NULL, endpoint);
}

static inline void
bench_conn_destroy (bench_conn_t **self_p)
{
    bench_conn_t *self = *self_p;
    if (!self)
        return;
    zmq_close (self->sock);
    if (self->own_ctx)
        zmq_ctx_term (self->ctx);
    penc_fini (&self->enc);
    msgpack_unpacked_destroy (&self->unpacked);
    zmq_msg_close (&self->frame);
    free (self);
    *self_p = NULL;
}

static inline penc_t *
bench_conn_begin (bench_conn_t *self, pmsg_type_t type, size_t fields)
{
    penc_begin (&self->enc, type, self->next_id++, fields);
    return &self->enc;
}

static inline void
bench_conn_send (bench_conn_t *self)
{
    if (zmq_send (self->sock, penc_data (&self->enc), penc_size (&self->enc), 0) < 0) {
        fprintf (stderr, "send: %s\n", zmq_strerror (zmq_errno ()));
        exit (1);
    }
}

//  Receives one reply and returns its top-level map (valid until the next
//  recv). Exits on timeout: a bench that hangs is worse than one that fails.
static inline const msgpack_object *
bench_conn_recv (bench_conn_t *self, int timeout_ms)
{
    zmq_pollitem_t item = { self->sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll (&item, 1, timeout_ms) <= 0) {
        fprintf (stderr, "bench: no reply within %d ms\n", timeout_ms);
        exit (1);
    }
    //  msgpack_unpack_next does not copy str/bin payloads: the previous
    //  reply's frame is released only now, when it is no longer used.
    zmq_msg_close (&self->frame);
    zmq_msg_init (&self->frame);
    if (zmq_msg_recv (&self->frame, self->sock, 0) < 0)
        exit (1);
    msgpack_unpack_return rc = msgpack_unpack_next (&self->unpacked, zmq_msg_data (&self->frame),
                                                    zmq_msg_size (&self->frame), NULL);
    if (rc != MSGPACK_UNPACK_SUCCESS || self->unpacked.data.type != MSGPACK_OBJECT_MAP) {
        fprintf (stderr, "bench: undecodable reply\n");
        exit (1);
    }
    return &self->unpacked.data;
}

static inline const msgpack_object *
bench_call (bench_conn_t *self)
{
    bench_conn_send (self);
    return bench_conn_recv (self, 30000);
}

//  Dies unless the reply's type is `type` (e.g. "WELCOME").
static inline void
bench_expect (const msgpack_object *reply, const char *type)
{
    if (!pobj_streq (pobj_get (reply, "t"), type)) {
        size_t tlen = 0, len = 0;
        const char *got = pobj_str (reply, "t", &tlen);
        const char *message = pobj_str (reply, "message", &len);
        fprintf (stderr, "bench: expected %s, got %.*s %.*s\n", type, (int) tlen,
                 got ? got : "?", (int) len, message ? message : "");
        exit (1);
    }
}

static inline void
bench_hello (bench_conn_t *self, const char *agent)
{
    penc_t *enc = bench_conn_begin (self, PMSG_HELLO, 1);
    penc_kv_cstr (enc, "agent", agent);
    bench_expect (bench_call (self), "WELCOME");
}

#endif
