// SPDX-License-Identifier: MIT
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
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <zmq.h>
#include "parley/client.h"
#include "pclock.h"

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
//  Parley clients: every request a bench makes goes through libparley,
//  the client the agent and the tools use, so the figures are the
//  product's own (strict reply decoding, typed results, the duplicate
//  filter included). Only the baselines (bare forwarder, echo) and event
//  counters (a SUB) use ZeroMQ directly.
//
//  libparley's sockets live in one libzmq context its clients share,
//  which does not survive a fork: a bench that forks makes its clients in
//  the process that uses them, after the fork, and the parent keeps none
//  alive across it.

//  A connected client, or the bench dies: a bench that hangs or measures a
//  failure is worse than one that stops. Replies may take long under load
//  (a 30 s timeout, as the benches always had) and are never resent.
static inline parley_client_t *
bench_client (const char *endpoint, const char *agent)
{
    parley_client_t *client = parley_client_new (endpoint, agent);
    if (!client) {
        fprintf (stderr, "bench: out of memory\n");
        exit (1);
    }
    parley_client_set_timeout (client, 30000, 2000);
    parley_client_set_attempts (client, 1);
    parley_client_set_connect_attempts (client, 20);
    parley_err_t rc = parley_client_connect (client);
    if (rc != PARLEY_OK) {
        fprintf (stderr, "bench: %s cannot connect to %s: %s %s\n", agent, endpoint,
                 parley_strerror (rc), parley_client_error_text (client));
        exit (1);
    }
    return client;
}

//  Dies unless `rc` is PARLEY_OK.
static inline void
bench_check (parley_client_t *client, parley_err_t rc, const char *what)
{
    if (rc != PARLEY_OK) {
        fprintf (stderr, "bench: %s: %s %s\n", what, parley_strerror (rc),
                 parley_client_error_text (client));
        exit (1);
    }
}

//  After an empty MAIL: waits up to 5 ms for a MAIL_READY on the client's
//  event socket, in the caller's own loop (parley_client_fd), so a
//  receiver goes on as soon as mail is announced.
static inline void
bench_await_mail (parley_client_t *client)
{
    if (parley_client_take_mail (client))
        return;
    struct pollfd item = { parley_client_fd (client), POLLIN, 0 };
    if (item.fd >= 0 && !parley_client_process (client))
        poll (&item, 1, 5);
    parley_client_take_mail (client);
}

//  Leaves for good (BYE with forget, so the next run starts with an empty
//  inbox) and destroys the client.
static inline void
bench_client_leave (parley_client_t **client_p)
{
    parley_client_bye (*client_p, true);
    parley_client_destroy (client_p);
}

#endif
