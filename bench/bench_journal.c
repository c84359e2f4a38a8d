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

static void
s_write_one (bench_conn_t *conn, long i, const char *value)
{
    char key [32];
    snprintf (key, sizeof key, "bk%ld", i % 1000);
    penc_t *enc = bench_conn_begin (conn, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "set");
    penc_kv_cstr (enc, "key", key);
    penc_kv_cstr (enc, "value", value);
    bench_conn_send (conn);
}

static double
s_state (const char *router, long count)
{
    bench_conn_t *conn = bench_conn_new (router);
    bench_hello (conn, "writer");
    char value [65];
    memset (value, 'v', 64);
    value [64] = 0;
    int64_t start = pclock_mono_us ();
    long sent = 0, done = 0;
    while (done < count) {
        while (sent < count && sent - done < 256)
            s_write_one (conn, sent++, value);
        bench_expect (bench_conn_recv (conn, 30000), "WRITTEN");
        done++;
    }
    double rate = (double) count * 1e6 / (double) (pclock_mono_us () - start);
    bench_conn_destroy (&conn);
    return rate;
}

static void
s_send_batch (bench_conn_t *conn, const char *to, int n, size_t size)
{
    static char body [4097];
    memset (body, 'm', size);
    body [size] = 0;
    penc_t *enc = bench_conn_begin (conn, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (uint32_t) n);
    for (int i = 0; i < n; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        penc_kv_cstr (enc, "body", body);
    }
    bench_conn_send (conn);
}

//  Sends `count` messages to dst, then fetches them all; messages/s.
static double
s_relay (const char *router, long count)
{
    bench_conn_t *src = bench_conn_new (router);
    bench_conn_t *dst = bench_conn_new (router);
    bench_hello (src, "src");
    bench_hello (dst, "dst");
    int64_t start = pclock_mono_us ();
    long batches = count / 256, sent = 0, done = 0;
    while (done < batches) {
        while (sent < batches && sent - done < 8) {
            s_send_batch (src, "dst", 256, 64);
            sent++;
        }
        bench_expect (bench_conn_recv (src, 30000), "SENT");
        done++;
    }
    long received = 0;
    uint64_t ack = 0;
    while (received < batches * 256) {
        penc_t *enc = bench_conn_begin (dst, PMSG_FETCH, ack ? 2 : 1);
        penc_kv_uint (enc, "max", 4096);
        if (ack)
            penc_kv_uint (enc, "ack", ack);
        const msgpack_object *reply = bench_call (dst);
        bench_expect (reply, "MAIL");
        const msgpack_object *messages = pobj_get (reply, "messages");
        uint32_t n = messages ? messages->via.array.size : 0;
        if (n == 0)
            break;
        ack = pobj_uint (&messages->via.array.ptr [n - 1], "seq", 0);
        received += n;
    }
    double rate = (double) received * 1e6 / (double) (pclock_mono_us () - start);
    bench_conn_destroy (&src);
    bench_conn_destroy (&dst);
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
    bench_conn_t *conn = bench_conn_new (router);
    bench_hello (conn, "filler");
    bench_conn_t *silent = bench_conn_new (router);
    bench_hello (silent, "silent");
    for (long sent = 0; sent < messages; sent += 4096) {
        int n = messages - sent < 4096 ? (int) (messages - sent) : 4096;
        s_send_batch (conn, "silent", n, 16);
        bench_expect (bench_conn_recv (conn, 60000), "SENT");
    }
    char value [33];
    memset (value, 'k', 32);
    value [32] = 0;
    for (long done = 0; done < keys; done += 256) {
        int n = keys - done < 256 ? (int) (keys - done) : 256;
        penc_t *enc = bench_conn_begin (conn, PMSG_WRITE, 1);
        penc_key (enc, "ops");
        msgpack_pack_array (penc_packer (enc), (uint32_t) n);
        for (int i = 0; i < n; i++) {
            char key [32];
            snprintf (key, sizeof key, "key.%ld", done + i);
            msgpack_pack_map (penc_packer (enc), 3);
            penc_kv_cstr (enc, "op", "set");
            penc_kv_cstr (enc, "key", key);
            penc_kv_cstr (enc, "value", value);
        }
        bench_expect (bench_call (conn), "WRITTEN");
    }
    bench_conn_destroy (&conn);
    bench_conn_destroy (&silent);
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
