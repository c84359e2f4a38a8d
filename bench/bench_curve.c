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
#include <poll.h>
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

//  A connected libparley client, CURVE when `key` is given; the bench
//  dies when it cannot connect (see bench_client).
static parley_client_t *
s_client (const char *endpoint, const char *id, const char *key, const char *server)
{
    parley_client_t *client = parley_client_new (endpoint, id);
    parley_client_set_timeout (client, 30000, 2000);
    parley_client_set_attempts (client, 1);
    parley_client_set_connect_attempts (client, 20);
    if (key)
        bench_check (client, parley_client_set_security (client, key, server, NULL), "keys");
    bench_check (client, parley_client_connect (client), "connect");
    return client;
}

//  Child: receives s_count messages with DEPTH FETCHes in flight (the
//  first plain, the ones behind it streaming), each acking what came
//  before; writes its rate (msg/s) to result_fd.
static void
s_receiver (const char *router, const char *key, const char *server, int ready_fd, int result_fd)
{
    bench_pin (0, 1);
    parley_client_t *client = s_client (router, "dst", key, server);
    if (write (ready_fd, "r", 1) != 1)
        _exit (1);
    long received = 0, first_batch = 0;
    uint64_t ack = 0;
    int64_t first = 0, last = 0;
    parley_ticket_t tickets [DEPTH];
    long head = 0, tail = 0;
    bool draining = false;
    parley_mail_t *mail = NULL;
    while (received < s_count) {
        while (!draining && head - tail < DEPTH) {
            bench_check (client, parley_client_post_fetch (client, ack, BATCH, head > tail,
                                                           &tickets [head % DEPTH]), "FETCH");
            head++;
        }
        bench_check (client, parley_client_collect_mail (client, tickets [tail++ % DEPTH], &mail),
                     "FETCH");
        size_t count = parley_mail_count (mail);
        if (count == 0) {
            draining = head > tail;
            if (!draining)
                bench_await_mail (client);
            continue;
        }
        if (head == tail)
            draining = false;
        ack = parley_message_seq (parley_mail_at (mail, count - 1));
        last = pclock_mono_us ();
        if (received == 0) {
            first = last;
            first_batch = (long) count;
        }
        received += (long) count;
    }
    while (tail < head)
        bench_check (client, parley_client_collect_mail (client, tickets [tail++ % DEPTH], &mail),
                     "FETCH");
    parley_mail_destroy (&mail);
    double rate = (double) (received - first_batch) * 1e6 / (double) (last - first);
    if (write (result_fd, &rate, sizeof rate) < 0)
        _exit (1);
    bench_check (client, parley_client_ack (client, ack), "ACK");
    bench_client_leave (&client);
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
    parley_client_t *client = s_client (router, "src", key, server);
    static char body [BODY];
    memset (body, 'x', sizeof body);
    parley_outbox_t *items = parley_outbox_new ();
    enum { WINDOW = 4 };
    parley_ticket_t tickets [WINDOW];
    parley_sent_t *sent_result = NULL;
    long sent = 0, head = 0, tail = 0;
    while (sent < s_count || tail < head) {
        if (sent < s_count && head - tail < WINDOW) {
            size_t n = (size_t) (s_count - sent) < BATCH? (size_t) (s_count - sent): BATCH;
            if (parley_outbox_count (items) != n) {
                parley_outbox_reset (items);
                for (size_t i = 0; i < n; i++)
                    parley_outbox_to (items, "dst", body, sizeof body);
            }
            bench_check (client, parley_client_post_send (client, items,
                                                          &tickets [head++ % WINDOW]), "SEND");
            sent += (long) n;
            continue;
        }
        bench_check (client, parley_client_collect_sent (client, tickets [tail++ % WINDOW],
                                                         &sent_result), "SENT");
        if (parley_sent_accepted (sent_result) != parley_sent_count (sent_result)) {
            fprintf (stderr, "bench_curve: %zu messages refused\n",
                     parley_sent_count (sent_result) - parley_sent_accepted (sent_result));
            exit (1);
        }
    }
    parley_sent_destroy (&sent_result);
    parley_outbox_destroy (&items);
    double rate = 0;
    if (read (result [0], &rate, sizeof rate) != sizeof rate)
        exit (1);
    close (result [0]);
    waitpid (receiver, NULL, 0);
    bench_client_leave (&client);
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
