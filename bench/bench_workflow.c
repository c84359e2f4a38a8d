// SPDX-License-Identifier: MIT
/*  bench_workflow - the workflow's two costs.

    1. Hand-over latency: two roles pass the turn back and forth through a
       real broker (--scenario, a generated two-role scenario). Measured
       from the moment one agent sends its HANDOVER to the moment the next
       agent, woken by WORKFLOW_EVENT on its SUB, sends its first request
       (its own HANDOVER). Baseline: the raw request round trip (HEARTBEAT
       -> OK) to the same broker in the same run. A hand-over is one round
       trip plus a PUB event plus the checkpoint, so the ratio says what
       the event and the checkpoint add.

    2. Checkpoint storage: a state of about 1 MB (1000 keys of 1 KiB), one
       key and the turn counter changed per turn, recorded as checkpoints
       (checkpoint.c, in this process) for 10, 100 and 1000 turns, all
       kept. Figure: stored bytes per turn, against a full copy per turn
       (the state's size). Also the time one record takes (it compares the
       whole state with the shadow copy).

    Usage: bench_workflow [--quick]
*/
#include <sys/stat.h>

#include "bench_util.h"
#include "broker/core/checkpoint.h"
#include "broker/core/state.h"
#include "tests/lib/testbroker.h"
#include "tests/lib/testclient.h"
#include "tests/lib/tproc.h"

static long s_turns = 4000;

static testclient_t *
s_agent (testbroker_t *broker, const char *id, const char *role)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", id);
    penc_key (enc, "caps");
    msgpack_pack_array (penc_packer (enc), 1);
    char cap [32];
    snprintf (cap, sizeof cap, "role:%s", role);
    penc_cstr (enc, cap);
    pmsg_t *welcome = testclient_call (client);
    if (!welcome || pmsg_type (welcome) != PMSG_WELCOME) {
        fprintf (stderr, "bench_workflow: HELLO failed\n");
        exit (1);
    }
    pmsg_destroy (&welcome);
    return client;
}

//  Waits for the turn event naming `agent`.
static void
s_wait_turn (testsub_t *sub, const char *agent)
{
    for (;;) {
        pmsg_t *event = testsub_recv (sub, NULL, 0, 10000);
        if (!event) {
            fprintf (stderr, "bench_workflow: no turn event\n");
            exit (1);
        }
        char who [64] = "", name [32] = "";
        pmsg_strcpy (event, "agent", who, sizeof who);
        pmsg_strcpy (event, "event", name, sizeof name);
        pmsg_destroy (&event);
        if (strcmp (name, "turn") == 0 && strcmp (who, agent) == 0)
            return;
    }
}

static void
s_handover_latency (void)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *roles = tproc_dir_path (dir, "roles");
    mkdir (roles, 0700);
    char text [512];
    snprintf (text, sizeof text, "name: pingpong\nworld: none\nstate:\n"
              "  log: { reducer: append, value: [] }\nworkflow:\n  entry: a\n"
              "  max_turns: %ld\n", s_turns * 2 + 10);
    const char *files [][2] = {
        { "scenario.yaml", text }, { "roles/a.yaml", "role: a\ngoal: ping\n" },
        { "roles/b.yaml", "role: b\ngoal: pong\n" },
    };
    for (size_t i = 0; i < 3; i++) {
        char *path = tproc_dir_path (dir, files [i][0]);
        tproc_write_file (path, files [i][1]);
        free (path);
    }
    const char *args [] = { "--scenario", tproc_dir_name (dir), NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        exit (1);
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    testsub_t *sub_a = testsub_new (testbroker_pub (broker), "workflow.turn");
    testsub_t *sub_b = testsub_new (testbroker_pub (broker), "workflow.turn");
    usleep (300 * 1000);                //  both SUBs join before the first event
    testclient_t *a = s_agent (broker, "A", "a");
    s_wait_turn (sub_a, "A");
    testclient_t *b = s_agent (broker, "B", "b");

    //  Baseline: the raw round trip, same broker, same client.
    long rounds = s_turns;
    int64_t *rtt = calloc ((size_t) rounds, sizeof (int64_t));
    for (long i = 0; i < rounds; i++) {
        int64_t start = pclock_mono_us ();
        pmsg_t *ok = testclient_call0 (b, PMSG_HEARTBEAT);
        rtt [i] = pclock_mono_us () - start;
        pmsg_destroy (&ok);
    }
    int64_t *latency = calloc ((size_t) s_turns, sizeof (int64_t));
    testclient_t *holder = a, *next = b;
    testsub_t *next_sub = sub_b;
    const char *next_role = "b", *next_id = "B";
    for (long i = 0; i < s_turns; i++) {
        penc_t *enc = testclient_begin (holder, PMSG_HANDOVER, 2);
        penc_key (enc, "ops");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_map (penc_packer (enc), 3);
        penc_kv_cstr (enc, "op", "update");
        penc_kv_cstr (enc, "key", "log");
        penc_key (enc, "value");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_int64 (penc_packer (enc), i);
        penc_kv_cstr (enc, "next", next_role);
        int64_t start = pclock_mono_us ();
        testclient_send (holder);
        s_wait_turn (next_sub, next_id);
        //  The next agent's first request goes out now: that is the latency.
        latency [i] = pclock_mono_us () - start;
        pmsg_t *reply = testclient_recv (holder, 10000);
        if (!reply || pmsg_type (reply) != PMSG_WORKFLOW_INFO) {
            fprintf (stderr, "bench_workflow: HANDOVER failed at %ld\n", i);
            exit (1);
        }
        pmsg_destroy (&reply);
        testclient_t *t = holder; holder = next; next = t;
        next_sub = next_sub == sub_b ? sub_a : sub_b;
        next_role = next_role [0] == 'b' ? "a" : "b";
        next_id = next_id [0] == 'B' ? "A" : "B";
    }
    bench_result ("handover_p50", (double) bench_percentile (latency, (size_t) s_turns, 50), "us");
    bench_result ("handover_p99", (double) bench_percentile (latency, (size_t) s_turns, 99), "us");
    bench_result ("handover_rtt_p50", (double) bench_percentile (rtt, (size_t) rounds, 50), "us");
    bench_result ("handover_rtt_p99", (double) bench_percentile (rtt, (size_t) rounds, 99), "us");
    free (latency);
    free (rtt);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testsub_destroy (&sub_a);
    testsub_destroy (&sub_b);
    testbroker_stop (&broker);
    free (roles);
    tproc_dir_destroy (&dir);
}

#define S_KEYS 1000
#define S_VALUE 1024

static void
s_set (state_t *state, const char *key, const void *value, size_t size)
{
    state_raw_op_t op = { .op = STATE_OP_SET, .key = key, .value = value, .size = size };
    char why [256];
    if (state_apply_raw (state, &op, 1, NULL, why, sizeof why)) {
        fprintf (stderr, "bench_workflow: %s\n", why);
        exit (1);
    }
}

static void
s_checkpoint_storage (long turns)
{
    state_t *state = state_new (NULL);
    checkpoints_t *checkpoints = checkpoints_new ((size_t) turns + 1);
    //  A 1 KiB str value: msgpack str16 header + bytes.
    uint8_t value [S_VALUE + 3];
    value [0] = 0xda;
    value [1] = (uint8_t) (S_VALUE >> 8);
    value [2] = (uint8_t) (S_VALUE & 0xff);
    char key [32];
    for (int k = 0; k < S_KEYS; k++) {
        memset (value + 3, 'a' + k % 26, S_VALUE);
        snprintf (key, sizeof key, "key.%04d", k);
        s_set (state, key, value, sizeof value);
    }
    state_stats_t stats;
    state_stats (state, &stats);
    checkpoint_meta_t meta = { .status = WF_IN_PROGRESS };
    checkpoint_record (checkpoints, state, &meta);
    size_t base = checkpoints_bytes (checkpoints);
    int64_t *record_us = calloc ((size_t) turns, sizeof (int64_t));
    for (long t = 0; t < turns; t++) {
        //  One turn: one value rewritten, and the turn counter.
        memset (value + 3, 'A' + (int) (t % 26), S_VALUE);
        snprintf (key, sizeof key, "key.%04ld", (t * 7) % S_KEYS);
        s_set (state, key, value, sizeof value);
        uint8_t counter [9] = { 0xcf };
        for (int i = 0; i < 8; i++)
            counter [1 + i] = (uint8_t) ((uint64_t) t >> (56 - 8 * i));
        s_set (state, "turn", counter, sizeof counter);
        meta.turn = (uint64_t) t + 1;
        int64_t start = pclock_mono_us ();
        checkpoint_record (checkpoints, state, &meta);
        record_us [t] = pclock_mono_us () - start;
    }
    double per_turn = (double) (checkpoints_bytes (checkpoints) - base) / (double) turns;
    char name [64];
    snprintf (name, sizeof name, "checkpoint_bytes_per_turn_%ld", turns);
    bench_result (name, per_turn, "B");
    snprintf (name, sizeof name, "checkpoint_full_copy_%ld", turns);
    bench_result (name, (double) stats.bytes, "B");
    snprintf (name, sizeof name, "checkpoint_record_p50_%ld", turns);
    bench_result (name, (double) bench_percentile (record_us, (size_t) turns, 50), "us");
    free (record_us);
    checkpoints_destroy (&checkpoints);
    state_destroy (&state);
}

int
main (int argc, char **argv)
{
    bool quick = argc > 1 && strcmp (argv [1], "--quick") == 0;
    if (quick)
        s_turns = 400;
    s_handover_latency ();
    s_checkpoint_storage (10);
    s_checkpoint_storage (100);
    s_checkpoint_storage (quick ? 300 : 1000);
    return 0;
}
