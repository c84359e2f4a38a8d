// SPDX-License-Identifier: MIT
/*  bench_curve - relay throughput with CURVE against the same relay in
    plain mode, measured in the same run.

    Two brokers, one plain and one with --curve-keys/--curve-allow, each
    pinned to CPU 0; sender and receiver on CPU 1. The relay: one sender
    SENDs batches of 1024 bodies of 256 B (4 requests in flight), one
    receiver FETCHes them with 3 streaming FETCHes in flight, acking as it
    goes (the pipelined client of bench_relay). The runs alternate (plain,
    CURVE, plain, CURVE, ...) and each mode reports its best, so a noisy
    moment on the machine does not land on one side only. The target is
    CURVE >= 0.7x plain (scripts/bench.sh prints the ratio).

    Usage: bench_curve [--count N] [--quick]
*/
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <czmq.h>

#include "bench_util.h"
#include "pcurve.h"
#include "tests/lib/testbroker.h"
#include "tests/lib/tproc.h"

#define BODY 256
#define BATCH 1024
#define DEPTH 3
#define ROUNDS 3

static long s_count = 500000;

//  A bench connection, CURVE when `key` is given (before connecting).
static bench_conn_t *
s_conn (const char *endpoint, const char *key, const char *server)
{
    bench_conn_t *self = calloc (1, sizeof (bench_conn_t));
    self->own_ctx = true;
    self->ctx = zmq_ctx_new ();
    self->sock = zmq_socket (self->ctx, ZMQ_DEALER);
    int zero = 0, hwm = 1000000;
    zmq_setsockopt (self->sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (self->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt (self->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (key) {
        char why [256];
        zcert_t *mine = pcurve_load (key, true, why, sizeof why);
        zcert_t *theirs = pcurve_load (server, false, why, sizeof why);
        if (!mine || !theirs) {
            fprintf (stderr, "bench_curve: %s\n", why);
            exit (1);
        }
        zcert_apply (mine, self->sock);
        zmq_setsockopt (self->sock, ZMQ_CURVE_SERVERKEY, zcert_public_txt (theirs), 40);
        zcert_destroy (&mine);
        zcert_destroy (&theirs);
    }
    if (zmq_connect (self->sock, endpoint) != 0)
        exit (1);
    penc_init (&self->enc);
    msgpack_unpacked_init (&self->unpacked);
    zmq_msg_init (&self->frame);
    self->next_id = 1;
    return self;
}

static void
s_fetch (bench_conn_t *conn, uint64_t ack, bool stream)
{
    penc_t *enc = bench_conn_begin (conn, PMSG_FETCH, 1 + (ack? 1: 0) + (stream? 1: 0));
    if (ack)
        penc_kv_uint (enc, "ack", ack);
    penc_kv_uint (enc, "max", BATCH);
    if (stream)
        penc_kv_bool (enc, "stream", true);
    bench_conn_send (conn);
}

//  Child: receives s_count messages, writes its rate (msg/s) to result_fd.
static void
s_receiver (const char *router, const char *key, const char *server, int ready_fd, int result_fd)
{
    bench_pin (0, 1);
    bench_conn_t *conn = s_conn (router, key, server);
    bench_hello (conn, "dst");
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0, first_batch = 0;
    uint64_t ack = 0;
    int64_t first = 0, last = 0;
    int in_flight = 0;
    bool draining = false;
    while (received < s_count) {
        while (!draining && in_flight < DEPTH) {
            s_fetch (conn, ack, in_flight > 0);
            in_flight++;
        }
        const msgpack_object *mail = bench_conn_recv (conn, 30000);
        in_flight--;
        bench_expect (mail, "MAIL");
        const msgpack_object *items = pobj_get (mail, "messages");
        size_t n = items->via.array.size;
        if (n == 0) {
            draining = in_flight > 0;
            if (!draining)
                pclock_sleep_ms (1);
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
    while (in_flight-- > 0)
        bench_conn_recv (conn, 30000);
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    penc_t *bye = bench_conn_begin (conn, PMSG_BYE, 1);
    penc_kv_bool (bye, "forget", true);
    bench_call (conn);
    bench_conn_destroy (&conn);
    _exit (0);
}

static double
s_relay (const char *router, const char *key, const char *server)
{
    int ready [2], result [2];
    if (pipe (ready) != 0 || pipe (result) != 0)
        exit (1);
    pid_t receiver = fork ();
    if (receiver == 0) {
        close (ready [0]);
        close (result [0]);
        s_receiver (router, key, server, ready [1], result [1]);
    }
    close (ready [1]);
    close (result [1]);
    char c;
    if (read (ready [0], &c, 1) != 1)
        exit (1);
    close (ready [0]);
    bench_conn_t *conn = s_conn (router, key, server);
    bench_hello (conn, "src");
    char body [BODY];
    memset (body, 'x', sizeof body);
    long sent = 0, in_flight = 0;
    while (sent < s_count || in_flight > 0) {
        if (sent < s_count && in_flight < 4) {
            size_t n = (size_t) (s_count - sent) < BATCH? (size_t) (s_count - sent): BATCH;
            penc_t *enc = bench_conn_begin (conn, PMSG_SEND, 1);
            penc_key (enc, "messages");
            msgpack_packer *pk = penc_packer (enc);
            msgpack_pack_array (pk, (uint32_t) n);
            for (size_t i = 0; i < n; i++) {
                msgpack_pack_map (pk, 2);
                penc_kv_cstr (enc, "to", "dst");
                penc_kv_str (enc, "body", body, sizeof body);
            }
            bench_conn_send (conn);
            sent += (long) n;
            in_flight++;
            continue;
        }
        bench_expect (bench_conn_recv (conn, 30000), "SENT");
        in_flight--;
    }
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate)
        exit (1);
    close (result [0]);
    waitpid (receiver, NULL, 0);
    penc_t *enc = bench_conn_begin (conn, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    bench_call (conn);
    bench_conn_destroy (&conn);
    return rate;
}

static testbroker_t *
s_broker (const char *keys, const char *allow)
{
    char inbox [32];
    snprintf (inbox, sizeof inbox, "%ld", s_count + 10);
    const char *plain [] = { "--max-inbox", inbox, "--max-inbox-bytes", "1000000000",
                             "--log-level", "warn", NULL };
    const char *curve [] = { "--max-inbox", inbox, "--max-inbox-bytes", "1000000000",
                             "--log-level", "warn", "--curve-keys", keys, "--curve-allow", allow,
                             NULL };
    testbroker_t *broker = testbroker_start (keys? curve: plain);
    if (!broker)
        exit (1);
    bench_pin (testbroker_pid (broker), 0);
    return broker;
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
    bench_pin (0, 1);
    tproc_dir_t *dir = tproc_dir_new ();
    char keys [1024], allow [1024], server [1100], client [1100], why [256];
    snprintf (keys, sizeof keys, "%s/keys", tproc_dir_name (dir));
    snprintf (allow, sizeof allow, "%s/allow", tproc_dir_name (dir));
    if (pcurve_keygen (keys, "broker", NULL, PCURVE_RIGHT_AGENT, why, sizeof why)
    ||  pcurve_keygen (keys, "bench", "*", PCURVE_RIGHT_AGENT, why, sizeof why)) {
        fprintf (stderr, "bench_curve: %s\n", why);
        return 1;
    }
    snprintf (server, sizeof server, "%s/broker", keys);
    snprintf (client, sizeof client, "%s/bench", keys);
    if (pcurve_copy_public (client, allow, "bench", why, sizeof why)) {
        fprintf (stderr, "bench_curve: %s\n", why);
        return 1;
    }
    testbroker_t *plain = s_broker (NULL, NULL);
    testbroker_t *curve = s_broker (keys, allow);
    printf ("bench_curve: %ld messages of %d B per run, best of %d; server on CPU 0, clients on CPU 1\n",
            s_count, BODY, ROUNDS);
    double best_plain = 0, best_curve = 0;
    for (int round = 0; round < ROUNDS; round++) {
        double p = s_relay (testbroker_router (plain), NULL, NULL);
        double c = s_relay (testbroker_router (curve), client, server);
        printf ("bench_curve: round %d: plain %.0f msg/s, curve %.0f msg/s\n", round + 1, p, c);
        best_plain = p > best_plain? p: best_plain;
        best_curve = c > best_curve? c: best_curve;
    }
    bench_result ("curve_relay_plain_256", best_plain, "msg/s");
    bench_result ("curve_relay_curve_256", best_curve, "msg/s");
    int rc = testbroker_stop (&plain) == 0 && testbroker_stop (&curve) == 0? 0: 1;
    tproc_dir_destroy (&dir);
    return rc;
}
