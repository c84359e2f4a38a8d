// SPDX-License-Identifier: MIT
/*  bench_journal - what durability costs, and how fast the broker recovers.

    In one run, three brokers that differ only in --data-dir/--fsync:
      off        --data-dir none (in memory, the baseline)
      everysec   the default: one fdatasync a second
      always     a loop turn's replies wait for its fdatasync (group commit)
    each measured on
      state      WRITE of one `set` op (64-byte value, 1000 keys), 256 in flight
      relay      SEND batches of 256 x 64-byte messages (8 in flight) to an
                 agent, then FETCH batches of 4096 acknowledging as it goes;
                 messages/s over both phases
    with the broker's CPU time per WRITE and per message.
    Then recovery: a broker is filled with M queued messages for a silent
    agent and K state keys, stopped and started again, twice: once
    replaying its log, once from a snapshot (compaction forced by a small
    --compact-min-bytes). The time is the one the broker logs ("recovered
    ... in N ms").

    The checksum of every record: zlib's CRC-32 (the first format) against
    CRC-32C (crc32c.h, the CPU's instruction here), MB/s on records of
    64 B, 4 KiB and 64 KiB, in the same process.

    What a compaction costs the loop: a broker holding 500 MB of queued
    mail (1 KiB messages; 50 MB with --quick) is restarted twice while a
    client times HEARTBEAT round trips, each followed by a SEND of 16 x
    1 KiB: with a small --compact-min-bytes, so it forks its snapshot
    child at once, until the snapshot is in place; then for 3 s without a
    compaction. Reported: the time in the loop to start it
    and the fork within it (page tables), the broker's page faults during
    the child's life (copy-on-write), the time to install it, as the
    broker logs them, and the round trips' p50, p99 and max with and
    without the compaction. Twice: with glibc's malloc as it comes, and
    with its heap on transparent huge pages (GLIBC_TUNABLES=
    glibc.malloc.hugetlb=1, as the systemd unit runs the broker), where
    the fork copies one page-table entry per 2 MiB instead of 512.

    Broker on CPU 0, client on CPU 1.
    Usage: bench_journal [--quick] [--only checksum|compaction|modes|recovery]
*/
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "bench_util.h"
#include "broker/crc32c.h"
#include "tests/lib/testbroker.h"

static long s_scale = 1;

static testbroker_t *
s_start (const char *mode, const char *dir, const char *compact)
{
    bool off = strcmp (mode, "off") == 0;
    const char *args [] = { "--data-dir", off ? "none" : dir, "--fsync", off ? "no" : mode,
                            "--max-inbox", "4000000", "--max-queued-bytes", "4000000000",
                            "--max-inbox-bytes", "4000000000",
                            "--compact-min-bytes", compact ? compact : "67108864", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker) {
        fprintf (stderr, "bench_journal: the broker did not start\n");
        exit (1);
    }
    bench_pin (testbroker_pid (broker), 0);
    return broker;
}

//  256 WRITEs of one `set` op in flight, as bench_state does; ops/s.
static double
s_state (const char *router, long count)
{
    parley_client_t *client = bench_client (router, "writer");
    static char keys [1000][16];
    for (int i = 0; i < 1000; i++)
        snprintf (keys [i], sizeof keys [i], "bk%d", i);
    uint8_t value [80];
    char text [65];
    memset (text, 'v', 64);
    text [64] = 0;
    size_t value_size = parley_pack_str (value, sizeof value, text);
    enum { WINDOW = 256 };
    parley_ticket_t tickets [WINDOW];
    parley_ops_t *op = parley_ops_new ();
    int64_t start = pclock_mono_us ();
    long sent = 0, done = 0;
    while (done < count) {
        while (sent < count && sent - done < WINDOW) {
            parley_ops_reset (op);
            parley_ops_set (op, keys [sent % 1000], value, value_size);
            bench_check (client, parley_client_post_write (client, op, &tickets [sent % WINDOW]),
                         "WRITE");
            sent++;
        }
        bench_check (client, parley_client_collect_written (client, tickets [done % WINDOW],
                                                            NULL), "WRITTEN");
        done++;
    }
    double rate = (double) count * 1e6 / (double) (pclock_mono_us () - start);
    parley_ops_destroy (&op);
    bench_client_leave (&client);
    return rate;
}

//  One SEND of `n` messages of `size` bytes to `to`, posted.
static parley_ticket_t
s_post_batch (parley_client_t *client, const char *to, int n, size_t size)
{
    static char body [4097];
    memset (body, 'm', size);
    parley_outbox_t *items = parley_outbox_new ();
    for (int i = 0; i < n; i++)
        parley_outbox_to (items, to, body, size);
    parley_ticket_t ticket;
    bench_check (client, parley_client_post_send (client, items, &ticket), "SEND");
    parley_outbox_destroy (&items);
    return ticket;
}

//  Sends `count` messages to dst (8 SENDs of 256 in flight), then fetches
//  them all acknowledging as it goes; messages/s over both phases.
static double
s_relay (const char *router, long count)
{
    parley_client_t *src = bench_client (router, "src");
    parley_client_t *dst = bench_client (router, "dst");
    enum { WINDOW = 8 };
    parley_ticket_t tickets [WINDOW];
    parley_sent_t *result = NULL;
    int64_t start = pclock_mono_us ();
    long batches = count / 256, sent = 0, done = 0;
    while (done < batches) {
        while (sent < batches && sent - done < WINDOW) {
            tickets [sent % WINDOW] = s_post_batch (src, "dst", 256, 64);
            sent++;
        }
        bench_check (src, parley_client_collect_sent (src, tickets [done % WINDOW], &result),
                     "SENT");
        if (parley_sent_accepted (result) != parley_sent_count (result)) {
            fprintf (stderr, "bench_journal: %zu of %zu messages refused\n",
                     parley_sent_count (result) - parley_sent_accepted (result),
                     parley_sent_count (result));
            exit (1);
        }
        done++;
    }
    parley_sent_destroy (&result);
    long received = 0;
    uint64_t ack = 0;
    parley_mail_t *mail = NULL;
    while (received < batches * 256) {
        bench_check (dst, parley_client_fetch (dst, ack, 4096, false, &mail), "FETCH");
        size_t got = parley_mail_count (mail);
        if (got == 0)
            break;
        ack = parley_message_seq (parley_mail_at (mail, got - 1));
        received += (long) got;
    }
    parley_mail_destroy (&mail);
    bench_check (dst, parley_client_ack (dst, ack), "ACK");
    double rate = (double) received * 1e6 / (double) (pclock_mono_us () - start);
    bench_client_leave (&src);
    bench_client_leave (&dst);
    return rate;
}

//  "recovered ... in N ms" from the broker's log.
static long
s_recovery_ms (testbroker_t *broker)
{
    char path [4200];
    snprintf (path, sizeof path, "%s/broker.log", testbroker_dir (broker));
    FILE *file = fopen (path, "r");
    long ms = -1;
    char line [1024];
    while (file && fgets (line, sizeof line, file)) {
        char *at = strstr (line, "recovered ");
        char *in = at ? strstr (at, " in ") : NULL;
        if (in)
            ms = atol (in + 4);
    }
    if (file)
        fclose (file);
    return ms;
}

static void
s_fill (const char *router, long messages, long keys)
{
    parley_client_t *client = bench_client (router, "filler");
    parley_client_t *silent = bench_client (router, "silent");
    for (long sent = 0; sent < messages; sent += 4096) {
        int n = messages - sent < 4096 ? (int) (messages - sent) : 4096;
        parley_sent_t *result = NULL;
        bench_check (client, parley_client_collect_sent (client,
                        s_post_batch (client, "silent", n, 16), &result), "SENT");
        if (parley_sent_accepted (result) != parley_sent_count (result)) {
            fprintf (stderr, "bench_journal: the fill lost messages\n");
            exit (1);
        }
        parley_sent_destroy (&result);
    }
    char text [33];
    memset (text, 'k', 32);
    text [32] = 0;
    uint8_t value [48];
    size_t value_size = parley_pack_str (value, sizeof value, text);
    parley_ops_t *ops = parley_ops_new ();
    for (long done = 0; done < keys; done += 256) {
        int n = keys - done < 256 ? (int) (keys - done) : 256;
        parley_ops_reset (ops);
        for (int i = 0; i < n; i++) {
            char name [32];
            snprintf (name, sizeof name, "key.%ld", done + i);
            parley_ops_set (ops, name, value, value_size);
        }
        bench_check (client, parley_client_write (client, ops, NULL), "WRITE");
    }
    parley_ops_destroy (&ops);
    //  The silent agent stays registered with its mail: no BYE.
    parley_client_destroy (&client);
    parley_client_destroy (&silent);
}

static void
s_recovery (const char *dir, long messages, long keys)
{
    char path [4200];
    snprintf (path, sizeof path, "rm -rf '%s'", dir);
    if (system (path) != 0)
        exit (1);
    testbroker_t *broker = s_start ("everysec", dir, NULL);
    s_fill (testbroker_router (broker), messages, keys);
    testbroker_stop (&broker);
    broker = s_start ("everysec", dir, NULL);
    long from_log = s_recovery_ms (broker);
    testbroker_stop (&broker);
    //  Compaction: a tiny threshold makes the first tick write a snapshot.
    broker = s_start ("everysec", dir, "4096");
    char done [64];
    snprintf (done, sizeof done, "compacted into");
    int64_t deadline = pclock_mono_ms () + 120000;
    while (!testbroker_log_contains (broker, done) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (100);
    testbroker_stop (&broker);
    broker = s_start ("everysec", dir, NULL);
    long from_snapshot = s_recovery_ms (broker);
    testbroker_stop (&broker);
    printf ("recovery of %ld queued messages and %ld state keys: %ld ms replaying the log, "
            "%ld ms from a snapshot\n", messages, keys, from_log, from_snapshot);
    char name [96];
    snprintf (name, sizeof name, "recovery_log_%ldk_%ldk", messages / 1000, keys / 1000);
    bench_result (name, (double) from_log, "ms");
    snprintf (name, sizeof name, "recovery_snapshot_%ldk_%ldk", messages / 1000, keys / 1000);
    bench_result (name, (double) from_snapshot, "ms");
}

//  ---------------------------------------------------------------------
//  Checksums

static volatile uint32_t s_sink;

static double
s_checksum_rate (bool castagnoli, const uint8_t *data, size_t size)
{
    //  About 0.2 s of work each (at 1 GB/s), at least 1,000 records.
    long rounds = (long) (200000000 / size) + 1000;
    int64_t start = pclock_mono_us ();
    for (long i = 0; i < rounds; i++)
        s_sink += castagnoli ? crc32c (0, data, size)
                             : (uint32_t) crc32 (0, data, (uInt) size);
    double seconds = (double) (pclock_mono_us () - start) / 1e6;
    return (double) rounds * (double) size / seconds / 1e6;
}

static void
s_checksums (void)
{
    size_t sizes [] = { 64, 4096, 65536 };
    uint8_t *data = malloc (65536);
    for (size_t i = 0; i < 65536; i++)
        data [i] = (uint8_t) (i * 2654435761u >> 13);
    for (int s = 0; s < 3; s++) {
        //  Alternated twice, the better of each kept: a burst of load on
        //  the other core hits both.
        double zlib_rate = 0, crc32c_rate = 0;
        for (int round = 0; round < 2; round++) {
            double z = s_checksum_rate (false, data, sizes [s]);
            double c = s_checksum_rate (true, data, sizes [s]);
            zlib_rate = z > zlib_rate ? z : zlib_rate;
            crc32c_rate = c > crc32c_rate ? c : crc32c_rate;
        }
        printf ("journal checksum, %zu B records: zlib crc32 %.0f MB/s, crc32c (%s) %.0f MB/s "
                "(%.1fx)\n", sizes [s], zlib_rate, crc32c_impl (), crc32c_rate,
                crc32c_rate / zlib_rate);
        char name [64];
        snprintf (name, sizeof name, "journal_checksum_zlib_%zu", sizes [s]);
        bench_result (name, zlib_rate, "MB/s");
        snprintf (name, sizeof name, "journal_checksum_crc32c_%zu", sizes [s]);
        bench_result (name, crc32c_rate, "MB/s");
    }
    free (data);
}

//  ---------------------------------------------------------------------
//  Compaction

//  The number after `label` in the first log line holding `line`, or -1.
static double
s_log_number (testbroker_t *broker, const char *line, const char *label)
{
    char path [4200];
    snprintf (path, sizeof path, "%s/broker.log", testbroker_dir (broker));
    FILE *file = fopen (path, "r");
    double value = -1;
    char text [2048];
    while (file && value < 0 && fgets (text, sizeof text, file)) {
        char *at = strstr (text, line) ? strstr (text, label) : NULL;
        if (at)
            value = atof (at + strlen (label));
    }
    if (file)
        fclose (file);
    return value;
}

static int
s_cmp_long (const void *a, const void *b)
{
    long x = *(const long *) a, y = *(const long *) b;
    return x < y ? -1 : x > y;
}

typedef struct {
    long *rtt;
    size_t count, cap;
} samples_t;

static void
s_sample (samples_t *samples, long value)
{
    if (samples->count == samples->cap) {
        samples->cap = samples->cap ? 2 * samples->cap : 4096;
        samples->rtt = realloc (samples->rtt, samples->cap * sizeof (long));
    }
    samples->rtt [samples->count++] = value;
}

static long
s_quantile (samples_t *samples, double q)
{
    if (!samples->count)
        return -1;
    qsort (samples->rtt, samples->count, sizeof (long), s_cmp_long);
    size_t at = (size_t) (q * (double) (samples->count - 1));
    return samples->rtt [at];
}

//  A HEARTBEAT round trip then a SEND of 16 x 1 KiB, until `until` is in
//  the broker's log (or after `for_ms` when until is NULL); round trips
//  in µs into samples.
static void
s_ping (parley_client_t *client, testbroker_t *broker, const char *until, int64_t for_ms,
        samples_t *samples)
{
    int64_t deadline = pclock_mono_ms () + (until ? 600000 : for_ms);
    int64_t checked = 0;
    static char body [1024];
    memset (body, 'p', sizeof body);
    parley_outbox_t *items = parley_outbox_new ();
    for (int i = 0; i < 16; i++)
        parley_outbox_to (items, "silent", body, sizeof body);
    parley_sent_t *sent = NULL;
    while (pclock_mono_ms () < deadline) {
        int64_t start = pclock_mono_us ();
        bench_check (client, parley_client_heartbeat (client), "HEARTBEAT");
        s_sample (samples, (long) (pclock_mono_us () - start));
        bench_check (client, parley_client_send (client, items, &sent), "SEND");
        if (until && pclock_mono_ms () - checked >= 50) {
            checked = pclock_mono_ms ();
            if (testbroker_log_contains (broker, until))
                break;
        }
    }
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&items);
}

//  `huge`: the broker's malloc heap on transparent huge pages (glibc's
//  tunable, as the systemd unit sets it).
static void
s_compaction (const char *dir, long megabytes, bool huge)
{
    if (huge)
        setenv ("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    else
        unsetenv ("GLIBC_TUNABLES");
    char rm [4200];
    snprintf (rm, sizeof rm, "rm -rf '%s'", dir);
    if (system (rm) != 0)
        exit (1);
    testbroker_t *broker = s_start ("everysec", dir, "68719476736");
    parley_client_t *client = bench_client (testbroker_router (broker), "filler");
    parley_client_t *silent = bench_client (testbroker_router (broker), "silent");
    long messages = megabytes * 1024;
    parley_sent_t *result = NULL;
    for (long sent = 0; sent < messages; sent += 256) {
        bench_check (client, parley_client_collect_sent (client,
                        s_post_batch (client, "silent", 256, 1024), &result), "SENT");
        if (parley_sent_accepted (result) != parley_sent_count (result)) {
            fprintf (stderr, "bench_journal: the compaction fill lost messages\n");
            exit (1);
        }
    }
    parley_sent_destroy (&result);
    parley_client_destroy (&client);
    parley_client_destroy (&silent);
    testbroker_stop (&broker);
    //  The broker with a compaction at the first tick after the recovery,
    //  then (the baseline) without one.
    samples_t during = { 0 }, after = { 0 };
    broker = s_start ("everysec", dir, "4096");
    long rss = bench_rss_bytes (testbroker_pid (broker));
    client = bench_client (testbroker_router (broker), "pinger-b");
    s_ping (client, broker, "compacted into", 0, &during);
    parley_client_destroy (&client);
    double fork_ms = s_log_number (broker, "compacted into", "the fork took ");
    double faults = s_log_number (broker, "compacted into", "had ");
    double took_ms = s_log_number (broker, "compacted into", ") in ");
    double start_ms = s_log_number (broker, "compaction started", "(");
    double install_ms = s_log_number (broker, "compacted into", "installing took ");
    testbroker_stop (&broker);
    broker = s_start ("everysec", dir, "68719476736");
    client = bench_client (testbroker_router (broker), "pinger-a");
    s_ping (client, broker, NULL, 3000, &after);
    parley_client_destroy (&client);
    testbroker_stop (&broker);
    long p50 = s_quantile (&during, 0.5), p99 = s_quantile (&during, 0.99);
    long max = s_quantile (&during, 1.0);
    long a50 = s_quantile (&after, 0.5), a99 = s_quantile (&after, 0.99);
    long amax = s_quantile (&after, 1.0);
    unsetenv ("GLIBC_TUNABLES");
    printf ("compaction of %ld MB of mail%s (broker RSS %ld MB): child %.0f ms; in the loop: "
            "starting %.1f ms (fork %.1f ms), installing %.1f ms; %.0f page faults in the broker "
            "meanwhile; HEARTBEAT round trip during: p50 %ld, p99 %ld, max %ld us (%zu samples); "
            "outside: p50 %ld, p99 %ld, max %ld us\n", megabytes,
            huge ? ", heap on huge pages" : "", rss / 1048576, took_ms, start_ms, fork_ms,
            install_ms, faults, p50, p99, max, during.count, a50, a99, amax);
    char name [64];
    const char *suffix = huge ? "_huge" : "";
    snprintf (name, sizeof name, "compaction_%ldmb_fork%s", megabytes, suffix);
    bench_result (name, fork_ms, "ms");
    snprintf (name, sizeof name, "compaction_%ldmb_start%s", megabytes, suffix);
    bench_result (name, start_ms, "ms");
    snprintf (name, sizeof name, "compaction_%ldmb_install%s", megabytes, suffix);
    bench_result (name, install_ms, "ms");
    snprintf (name, sizeof name, "compaction_%ldmb_faults%s", megabytes, suffix);
    bench_result (name, faults, "faults");
    snprintf (name, sizeof name, "compaction_%ldmb_child%s", megabytes, suffix);
    bench_result (name, took_ms, "ms");
    snprintf (name, sizeof name, "compaction_%ldmb_rtt_during_p99%s", megabytes, suffix);
    bench_result (name, (double) p99, "us");
    snprintf (name, sizeof name, "compaction_%ldmb_rtt_during_max%s", megabytes, suffix);
    bench_result (name, (double) max, "us");
    snprintf (name, sizeof name, "compaction_%ldmb_rtt_outside_p99%s", megabytes, suffix);
    bench_result (name, (double) a99, "us");
    snprintf (name, sizeof name, "compaction_%ldmb_rtt_outside_max%s", megabytes, suffix);
    bench_result (name, (double) amax, "us");
    free (during.rtt);
    free (after.rtt);
}

int
main (int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--quick") == 0)
            s_scale = 10;
        else
        if (strcmp (argv [i], "--only") == 0 && i + 1 < argc)
            only = argv [++i];
    }
    bench_pin (0, 1);
    char dir [] = "/tmp/parley-bench-journal-XXXXXX";
    if (!mkdtemp (dir))
        return 1;
    char data [sizeof dir + 16];
    snprintf (data, sizeof data, "%s/data", dir);
    if (!only || strcmp (only, "checksum") == 0)
        s_checksums ();
    if (!only || strcmp (only, "compaction") == 0) {
        s_compaction (data, 500 / s_scale, false);
        s_compaction (data, 500 / s_scale, true);
    }
    const char *modes [] = { "off", "everysec", "always" };
    for (int m = 0; m < 3 && (!only || strcmp (only, "modes") == 0); m++) {
        char rm [sizeof data + 16];
        snprintf (rm, sizeof rm, "rm -rf '%s'", data);
        if (system (rm) != 0)
            return 1;
        testbroker_t *broker = s_start (modes [m], data, NULL);
        //  The broker's CPU time per operation too: less disturbed by
        //  what else the machine runs than the rate.
        pid_t pid = testbroker_pid (broker);
        long writes = 200000 / s_scale, messages = 1024000 / s_scale;
        double cpu0 = bench_cpu_seconds (pid);
        double state = s_state (testbroker_router (broker), writes);
        double cpu1 = bench_cpu_seconds (pid);
        double relay = s_relay (testbroker_router (broker), messages);
        double cpu2 = bench_cpu_seconds (pid);
        testbroker_stop (&broker);
        double state_cpu = (cpu1 - cpu0) * 1e6 / (double) writes;
        double relay_cpu = (cpu2 - cpu1) * 1e6 / (double) messages;
        printf ("journal %-8s: state WRITE %.0f ops/s (broker CPU %.2f us each), relay %.0f "
                "msg/s (%.3f us each)\n", modes [m], state, state_cpu, relay, relay_cpu);
        char name [64];
        snprintf (name, sizeof name, "journal_state_%s", modes [m]);
        bench_result (name, state, "ops/s");
        snprintf (name, sizeof name, "journal_relay_%s", modes [m]);
        bench_result (name, relay, "msg/s");
        snprintf (name, sizeof name, "journal_state_%s_cpu", modes [m]);
        bench_result (name, state_cpu, "us");
        snprintf (name, sizeof name, "journal_relay_%s_cpu", modes [m]);
        bench_result (name, relay_cpu, "us");
    }
    if (!only || strcmp (only, "recovery") == 0) {
        s_recovery (data, 100000 / s_scale, 10000 / s_scale);
        s_recovery (data, 1000000 / s_scale, 100000 / s_scale);
    }
    char rm [sizeof dir + 16];
    snprintf (rm, sizeof rm, "rm -rf '%s'", dir);
    return system (rm) == 0 ? 0 : 1;
}
