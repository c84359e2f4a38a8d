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
    Then recovery: a broker is filled with M queued messages for a silent
    agent and K state keys, stopped and started again, twice: once
    replaying its log, once from a snapshot (compaction forced by a small
    --compact-min-bytes). The time is the one the broker logs ("recovered
    ... in N ms").

    Broker on CPU 0, client on CPU 1. Usage: bench_journal [--quick]
*/
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"
#include "tests/lib/testbroker.h"

static long s_scale = 1;

static testbroker_t *
s_start (const char *mode, const char *dir, const char *compact)
{
    bool off = strcmp (mode, "off") == 0;
    const char *args [] = { "--data-dir", off ? "none" : dir, "--fsync", off ? "no" : mode,
                            "--max-inbox", "4000000", "--max-queued-bytes", "4000000000",
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

int
main (int argc, char **argv)
{
    if (argc > 1 && strcmp (argv [1], "--quick") == 0)
        s_scale = 10;
    bench_pin (0, 1);
    char dir [] = "/tmp/parley-bench-journal-XXXXXX";
    if (!mkdtemp (dir))
        return 1;
    char data [sizeof dir + 16];
    snprintf (data, sizeof data, "%s/data", dir);
    const char *modes [] = { "off", "everysec", "always" };
    for (int m = 0; m < 3; m++) {
        char rm [sizeof data + 16];
        snprintf (rm, sizeof rm, "rm -rf '%s'", data);
        if (system (rm) != 0)
            return 1;
        testbroker_t *broker = s_start (modes [m], data, NULL);
        double state = s_state (testbroker_router (broker), 200000 / s_scale);
        double relay = s_relay (testbroker_router (broker), 1024000 / s_scale);
        testbroker_stop (&broker);
        printf ("journal %-8s: state WRITE %.0f ops/s, relay %.0f msg/s\n", modes [m], state, relay);
        char name [64];
        snprintf (name, sizeof name, "journal_state_%s", modes [m]);
        bench_result (name, state, "ops/s");
        snprintf (name, sizeof name, "journal_relay_%s", modes [m]);
        bench_result (name, relay, "msg/s");
    }
    s_recovery (data, 100000 / s_scale, 10000 / s_scale);
    s_recovery (data, 1000000 / s_scale, 100000 / s_scale);
    char rm [sizeof dir + 16];
    snprintf (rm, sizeof rm, "rm -rf '%s'", dir);
    return system (rm) == 0 ? 0 : 1;
}
