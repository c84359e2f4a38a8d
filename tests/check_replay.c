// SPDX-License-Identifier: MIT
/*  check_replay - the journal gives the live broker back, byte for byte.

    A random workload of every request that changes something (mail to
    agents, to all and to channels, keyed and pipelined SENDs, FETCHes and
    ACKs, listens, every state op, moves and resets of the world, STEPs,
    hand-overs with revisions and ends, RESUMEs, forgets) runs against a
    real broker with a data directory, on a scenario with a workflow, with
    and without a world. The broker writes its canonical state at its
    clean stop (--dump-on-exit); a second process recovers the directory
    (--dump-state) and must write the very same bytes: after a plain
    restart, after compactions, and with other limits on the command line
    than the journal was written under.
*/
#include <check.h>
#include <czmq.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include "mpjs.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define S_AGENTS 5
#define S_STEPS 500

typedef struct {
    uint64_t state;
} s_rng_t;

static uint64_t
s_next (s_rng_t *rng)
{
    //  xorshift64*: the workload is the same for the same seed.
    rng->state ^= rng->state >> 12;
    rng->state ^= rng->state << 25;
    rng->state ^= rng->state >> 27;
    return rng->state * 2685821657736338717ULL;
}

static uint32_t
s_pick (s_rng_t *rng, uint32_t n)
{
    return (uint32_t) (s_next (rng) % n);
}

typedef struct {
    testclient_t *client;
    char id [16];
    const char *role;
    uint64_t seen;              //  the highest seq a FETCH gave it
    uint64_t keyed;             //  its last SEND batch / ACT step / STEP step
} s_agent_t;

typedef struct {
    tproc_dir_t *dir;
    char *scenario;
    char *data;
    char *live;                 //  --dump-on-exit
    bool world;
    testbroker_t *broker;
    s_agent_t agents [S_AGENTS];
    s_rng_t rng;
    uint64_t req;
} s_run_t;

static const char *s_roles [S_AGENTS] = { "worker", "checker", "worker", "checker", "scout" };
static const char *s_reducers [] = { "replace", "append", "union", "merge", "add" };

static void
s_write_scenario (s_run_t *run)
{
    char text [1024];
    snprintf (text, sizeof text,
              "name: replay\n"
              "world: %s\n"
              "state:\n"
              "  work: { reducer: append, value: [] }\n"
              "  issues: { reducer: append, value: [] }\n"
              "  report: { reducer: replace }\n"
              "workflow:\n"
              "  entry: worker\n"
              "  max_revisions: 2\n"
              "  max_turns: 40\n"
              "  clear_on_revision: [issues]\n", run->world ? "{ kind: line, size: 12 }" : "none");
    const char *files [][2] = {
        { "scenario.yaml", text },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  writes:\n"
                                        "    - { key: work, reducer: append }\n"
                                        "  handover: [checker]\n" },
        { "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  writes:\n"
                                         "    - { key: issues, reducer: append }\n"
                                         "    - { key: report }\n  handover: [worker]\n" },
        { "roles/scout.yaml", "role: scout\ngoal: look\nactions:\n"
                                       "  handover: [worker]\n" },
    };
    testflow_write (run->dir, "scenario", files, 4);
    run->scenario = tproc_dir_path (run->dir, "scenario");
}

//  The broker on the run's data directory and scenario, writing its state
//  at its clean stop, with the flags in `extra` (NULL-ended, at most 16).
static testbroker_t *
s_start_with (s_run_t *run, const char *const *extra)
{
    const char *args [26] = { "--data-dir", run->data, "--scenario", run->scenario,
                              "--fsync", "always", "--dump-on-exit", run->live };
    size_t count = 8;
    for (; *extra; extra++) {
        ck_assert_uint_lt (count, 25);
        args [count++] = *extra;
    }
    args [count] = NULL;
    testbroker_t *broker = testcheck_start (args);
    ck_assert_ptr_nonnull (broker);
    return broker;
}

static testbroker_t *
s_start (s_run_t *run, const char *flag, const char *value)
{
    return s_start_with (run, (const char *[]) { "--checkpoints", "6", flag, value, NULL });
}

static void
s_hello (s_run_t *run, s_agent_t *agent)
{
    agent->client = testflow_hello (testclient_new (testbroker_router (run->broker)),
                                    agent->id, agent->role, NULL);
}

//  One reply, whatever it is; the broker must answer.
static void
s_answered (s_agent_t *agent)
{
    pmsg_t *reply = testclient_call (agent->client);
    ck_assert_msg (reply, "%s got no reply", agent->id);
    if (pmsg_type (reply) == PMSG_MAIL) {
        const msgpack_object *messages = pmsg_field (reply, "messages");
        for (uint32_t i = 0; messages && i < messages->via.array.size; i++) {
            uint64_t seq = pobj_uint (&messages->via.array.ptr [i], "seq", 0);
            if (seq > agent->seen)
                agent->seen = seq;
        }
    }
    pmsg_destroy (&reply);
}

static void
s_pack_item (s_run_t *run, penc_t *enc, int n)
{
    char body [48];
    snprintf (body, sizeof body, "m%llu.%d", (unsigned long long) run->req, n);
    msgpack_pack_map (penc_packer (enc), 2);
    uint32_t kind = s_pick (&run->rng, 4);
    if (kind == 0)
        penc_kv_cstr (enc, "to", "all");
    else
    if (kind == 1) {
        char channel [8];
        snprintf (channel, sizeof channel, "c%u", s_pick (&run->rng, 3));
        penc_kv_cstr (enc, "channel", channel);
    }
    else
        penc_kv_cstr (enc, "to", run->agents [s_pick (&run->rng, S_AGENTS)].id);
    penc_kv_cstr (enc, "body", body);
}

static void
s_pack_ops (s_run_t *run, penc_t *enc)
{
    uint32_t count = 1 + s_pick (&run->rng, 3);
    msgpack_pack_array (penc_packer (enc), count);
    for (uint32_t i = 0; i < count; i++) {
        char key [8];
        snprintf (key, sizeof key, "k%u", s_pick (&run->rng, 6));
        uint32_t op = s_pick (&run->rng, 6);
        msgpack_packer *pk = penc_packer (enc);
        if (op == 0) {
            msgpack_pack_map (pk, 3);
            penc_kv_cstr (enc, "op", "declare");
            penc_kv_cstr (enc, "key", key);
            penc_kv_cstr (enc, "reducer", s_reducers [s_pick (&run->rng, 5)]);
        }
        else
        if (op == 4 || op == 5) {
            msgpack_pack_map (pk, 2);
            penc_kv_cstr (enc, "op", op == 4 ? "clear" : "delete");
            penc_kv_cstr (enc, "key", key);
        }
        else {
            msgpack_pack_map (pk, 3);
            penc_kv_cstr (enc, "op", op == 3 ? "set" : "update");
            penc_kv_cstr (enc, "key", key);
            penc_key (enc, "value");
            uint32_t shape = s_pick (&run->rng, 3);
            if (shape == 0)
                msgpack_pack_uint64 (pk, s_pick (&run->rng, 100));
            else
            if (shape == 1) {
                msgpack_pack_array (pk, 1);
                msgpack_pack_uint64 (pk, s_pick (&run->rng, 5));
            }
            else {
                msgpack_pack_map (pk, 1);
                penc_kv_uint (enc, "f", s_pick (&run->rng, 5));
            }
        }
    }
}

//  The agent holding the turn, or NULL.
static s_agent_t *
s_holder (s_run_t *run)
{
    s_agent_t *any = &run->agents [0];
    pmsg_t *info = testclient_call0 (any->client, PMSG_WORKFLOW);
    ck_assert_ptr_nonnull (info);
    char id [64] = "";
    pmsg_strcpy (info, "agent", id, sizeof id);
    pmsg_destroy (&info);
    for (int i = 0; i < S_AGENTS; i++)
        if (strcmp (run->agents [i].id, id) == 0)
            return &run->agents [i];
    return NULL;
}

static void
s_step (s_run_t *run)
{
    s_agent_t *agent = &run->agents [s_pick (&run->rng, S_AGENTS)];
    penc_t *enc;
    run->req++;
    switch (s_pick (&run->rng, 13)) {
        case 0: case 1: {           //  SEND, keyed or not, sometimes resent, sometimes
            uint32_t items = 1 + s_pick (&run->rng, 3);     //  acknowledging
            bool keyed = s_pick (&run->rng, 3) == 0;
            bool ack = s_pick (&run->rng, 2) == 0;
            for (int round = 0; round < (keyed ? 2 : 1); round++) {
                enc = testclient_begin (agent->client, PMSG_SEND, (keyed ? 2 : 1) + ack);
                if (keyed)
                    penc_kv_uint (enc, "batch", agent->keyed + 1);
                if (ack)
                    penc_kv_uint (enc, "ack", agent->seen);
                penc_key (enc, "messages");
                msgpack_pack_array (penc_packer (enc), items);
                for (uint32_t i = 0; i < items; i++)
                    s_pack_item (run, enc, (int) i);
                s_answered (agent);
            }
            if (keyed)
                agent->keyed++;
            break;
        }
        case 2: case 3:             //  FETCH with an ack
            enc = testclient_begin (agent->client, PMSG_FETCH, 3);
            penc_kv_uint (enc, "ack", s_pick (&run->rng, 2) ? agent->seen : 0);
            penc_kv_uint (enc, "max", 1 + s_pick (&run->rng, 5));
            penc_kv_bool (enc, "stream", s_pick (&run->rng, 2));
            s_answered (agent);
            break;
        case 4: {                   //  LISTEN / UNLISTEN
            char channel [8];
            snprintf (channel, sizeof channel, "c%u", s_pick (&run->rng, 3));
            enc = testclient_begin (agent->client, s_pick (&run->rng, 3) ? PMSG_LISTEN
                                                                          : PMSG_UNLISTEN, 1);
            penc_kv_cstr (enc, "channel", channel);
            s_answered (agent);
            break;
        }
        case 5: case 6:             //  WRITE
            enc = testclient_begin (agent->client, PMSG_WRITE, 1);
            penc_key (enc, "ops");
            s_pack_ops (run, enc);
            s_answered (agent);
            break;
        case 7: {                   //  ACT with a step, resent; or PERCEIVE
            static const char *moves [] = { "forward", "backward", "stay" };
            if (s_pick (&run->rng, 3) == 0) {
                testclient_begin (agent->client, PMSG_PERCEIVE, 0);
                s_answered (agent);
                break;
            }
            const char *move = moves [s_pick (&run->rng, 3)];
            agent->keyed++;
            for (int round = 0; round < 2; round++) {
                enc = testclient_begin (agent->client, PMSG_ACT, 2);
                penc_kv_cstr (enc, "action", move);
                penc_kv_uint (enc, "step", agent->keyed);
                s_answered (agent);
            }
            break;
        }
        case 8: {                   //  STEP of every part, resent once
            agent->keyed++;
            for (int round = 0; round < 2; round++) {
                enc = testclient_begin (agent->client, PMSG_STEP, 6);
                penc_kv_uint (enc, "step", agent->keyed);
                penc_kv_uint (enc, "ack", agent->seen);
                penc_key (enc, "messages");
                msgpack_pack_array (penc_packer (enc), 1);
                s_pack_item (run, enc, 0);
                penc_key (enc, "ops");
                s_pack_ops (run, enc);
                penc_kv_cstr (enc, "action", "forward");
                penc_kv_uint (enc, "fetch", 3);
                s_answered (agent);
            }
            break;
        }
        case 9: case 10: {          //  HANDOVER by the holder
            s_agent_t *holder = s_holder (run);
            if (!holder)
                break;
            static const char *statuses [] = { "in_progress", "revision", "revision", "done" };
            const char *status = statuses [s_pick (&run->rng, s_pick (&run->rng, 8) ? 3 : 4)];
            const char *next = strcmp (holder->role, "worker") == 0 ? "checker" : "worker";
            bool keyed = s_pick (&run->rng, 2);
            pmsg_t *info = testclient_call0 (holder->client, PMSG_WORKFLOW);
            uint64_t turn = pmsg_uint (info, "turn", 0);
            pmsg_destroy (&info);
            enc = testclient_begin (holder->client, PMSG_HANDOVER, keyed ? 4 : 3);
            penc_kv_cstr (enc, "next", next);
            penc_kv_cstr (enc, "status", status);
            if (keyed)
                penc_kv_uint (enc, "turn", turn);
            penc_key (enc, "ops");
            msgpack_pack_array (penc_packer (enc), 1);
            msgpack_pack_map (penc_packer (enc), 3);
            penc_kv_cstr (enc, "op", "update");
            penc_kv_cstr (enc, "key", strcmp (holder->role, "worker") == 0 ? "work" : "issues");
            penc_key (enc, "value");
            msgpack_pack_array (penc_packer (enc), 1);
            msgpack_pack_uint64 (penc_packer (enc), run->req);
            s_answered (holder);
            break;
        }
        case 11: {                  //  RESUME to a kept checkpoint
            pmsg_t *list = testclient_call0 (agent->client, PMSG_CHECKPOINTS);
            ck_assert_ptr_nonnull (list);
            size_t kept = testclient_array_size (list, "checkpoints");
            uint64_t number = kept ? pobj_uint (testclient_array_at (list, "checkpoints",
                                                                    s_pick (&run->rng,
                                                                            (uint32_t) kept)),
                                                "number", 0) : 0;
            pmsg_destroy (&list);
            enc = testclient_begin (agent->client, PMSG_RESUME, 1);
            penc_kv_uint (enc, "number", number);
            s_answered (agent);
            break;
        }
        default:                    //  WORLD_RESET, or a forget and a comeback
            if (run->world && s_pick (&run->rng, 2)) {
                enc = testclient_begin (agent->client, PMSG_WORLD_RESET, 1);
                penc_kv_uint (enc, "seed", s_pick (&run->rng, 1000));
                s_answered (agent);
                break;
            }
            enc = testclient_begin (agent->client, PMSG_BYE, 1);
            penc_kv_bool (enc, "forget", true);
            s_answered (agent);
            testclient_destroy (&agent->client);
            agent->seen = 0;
            s_hello (run, agent);
            break;
    }
}

static void
s_run_new (s_run_t *run, bool world, uint64_t seed)
{
    memset (run, 0, sizeof *run);
    run->dir = tproc_dir_new ();
    run->world = world;
    run->rng.state = seed;
    s_write_scenario (run);
    run->data = tproc_dir_path (run->dir, "data");
    run->live = tproc_dir_path (run->dir, "live.mp");
    for (int i = 0; i < S_AGENTS; i++) {
        snprintf (run->agents [i].id, sizeof run->agents [i].id, "A%d", i);
        run->agents [i].role = s_roles [i];
    }
}

//  BYE, whatever it answers, then close.
static void
s_bye (testclient_t **client_p)
{
    pmsg_t *reply = testclient_call0 (*client_p, PMSG_BYE);
    pmsg_destroy (&reply);
    testclient_destroy (client_p);
}

static void
s_connect (s_run_t *run)
{
    for (int i = 0; i < S_AGENTS; i++)
        s_hello (run, &run->agents [i]);
}

//  BYE (the id's resume token is given up, so the next life's HELLO
//  needs none), then close.
static void
s_disconnect (s_run_t *run)
{
    for (int i = 0; i < S_AGENTS; i++) {
        if (!run->agents [i].client)
            continue;
        s_bye (&run->agents [i].client);
    }
}

static void
s_run_destroy (s_run_t *run)
{
    s_disconnect (run);
    free (run->scenario);
    free (run->data);
    free (run->live);
    tproc_dir_destroy (&run->dir);
}

//  The live dump (written at the broker's clean stop) equals what a
//  recovery of the directory gives, with `flag value` on its command line.
static void
s_expect_replay_equals_live (s_run_t *run, const char *flag, const char *value)
{
    char *replayed = tproc_dir_path (run->dir, "replayed.mp");
    const char *argv [] = { "parley-broker", "--data-dir", run->data, "--scenario",
                            run->scenario, "--dump-state", replayed, flag, value, NULL };
    tproc_t *proc = tproc_run (argv, true);
    ck_assert_msg (tproc_status (proc) == 0, "--dump-state failed: %s", tproc_err (proc));
    ck_assert_msg (!strstr (tproc_err (proc), "diverge") && !strstr (tproc_err (proc), "met other"),
                   "the replay diverged: %s", tproc_err (proc));
    tproc_destroy (&proc);
    size_t live_size, replay_size;
    char *live = testsuite_read_file (run->live, &live_size);
    char *replay = testsuite_read_file (replayed, &replay_size);
    //  A workload that did nothing would prove nothing.
    ck_assert_uint_gt (live_size, 1000);
    size_t at = 0;
    while (at < live_size && at < replay_size && live [at] == replay [at])
        at++;
    ck_assert_msg (live_size == replay_size && at == live_size,
                   "replay differs from live at byte %zu (live %zu bytes, replay %zu)", at,
                   live_size, replay_size);
    free (live);
    free (replay);
    free (replayed);
}

//  True once a compaction wrote a snapshot into the data directory.
static bool
s_compacted (s_run_t *run)
{
    DIR *dir = opendir (run->data);
    bool found = false;
    struct dirent *entry;
    while (dir && (entry = readdir (dir)))
        if (strncmp (entry->d_name, "snapshot.", 9) == 0 && !strstr (entry->d_name, "tmp"))
            found = true;
    if (dir)
        closedir (dir);
    return found;
}

//  Waits for a compaction (the journal's one-second tick starts one once
//  the log is over --compact-min-bytes): 20 s.
static void
s_wait_compacted (s_run_t *run)
{
    int64_t deadline = pclock_mono_ms () + 20000;
    while (!s_compacted (run) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (50);
    ck_assert_msg (s_compacted (run), "no compaction within 20 s");
}

static void
s_workload (bool world, const char *flag, const char *value)
{
    s_run_t run;
    s_run_new (&run, world, 0x9e3779b97f4a7c15ULL ^ (world ? 1 : 2));
    run.broker = s_start (&run, flag, value);
    s_connect (&run);
    bool compacting = strcmp (flag, "--compact-min-bytes") == 0;
    for (int i = 0; i < S_STEPS; i++) {
        s_step (&run);
        //  Half way, a compaction (the journal's one-second tick starts
        //  it): the rest of the history goes on top of its snapshot.
        if (compacting && i == S_STEPS / 2) {
            s_wait_compacted (&run);
        }
    }
    s_disconnect (&run);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");
    //  The limits the history was applied under are the journal's: other
    //  flags at the restart change nothing of it.
    s_expect_replay_equals_live (&run, "--max-inbox", "1");
    s_expect_replay_equals_live (&run, "--max-state-keys", "8");
    //  A second life on the same directory, then the same comparison.
    run.broker = s_start (&run, flag, value);
    s_connect (&run);
    for (int i = 0; i < S_STEPS / 5; i++)
        s_step (&run);
    s_disconnect (&run);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");
    s_run_destroy (&run);
}

START_TEST (test_replay_equals_live_with_world)
{
    s_workload (true, "--log-level", "info");
}
END_TEST

START_TEST (test_replay_equals_live_without_world)
{
    s_workload (false, "--log-level", "info");
}
END_TEST

START_TEST (test_replay_equals_live_across_compactions)
{
    //  A log this small is compacted at every second tick.
    s_workload (true, "--compact-min-bytes", "4096");
}
END_TEST

//  A client that says HELLO as `id` with `role`, with the resume token
//  `token` (33 bytes) when it holds one, and keeps the one it gets.
static testclient_t *
s_agent_token (testbroker_t *broker, const char *id, const char *role, char *token)
{
    return testflow_hello (testclient_new (testbroker_router (broker)), id, role, token);
}

static testclient_t *
s_agent (testbroker_t *broker, const char *id, const char *role)
{
    return s_agent_token (broker, id, role, NULL);
}

//  A field as compact JSON (caller frees).
static char *
s_json (const msgpack_object *object)
{
    ck_assert_ptr_nonnull (object);
    json_t *json = mpjs_to_json (object);
    char *text = json_dumps (json, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref (json);
    return text;
}

static pmsg_t *
s_handover (testclient_t *client, const char *next, uint64_t turn)
{
    penc_t *enc = testclient_begin (client, PMSG_HANDOVER, 3);
    penc_kv_cstr (enc, "next", next);
    penc_kv_uint (enc, "turn", turn);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "update");
    penc_kv_cstr (enc, "key", strcmp (next, "checker") == 0 ? "work" : "issues");
    penc_key (enc, "value");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_uint64 (penc_packer (enc), turn);
    return testclient_call (client);
}

//  One WRITE of `op` on `key` (a set's value is `size` bytes of 'v').
static void
s_write_key (testclient_t *client, const char *op, const char *key, size_t size)
{
    penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), strcmp (op, "set") == 0 ? 3 : 2);
    penc_kv_cstr (enc, "op", op);
    penc_kv_cstr (enc, "key", key);
    if (strcmp (op, "set") == 0) {
        char *value = malloc (size + 1);
        memset (value, 'v', size);
        value [size] = 0;
        penc_kv_cstr (enc, "value", value);
        free (value);
    }
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
}

//  A compaction early in a journal's life, when the state had changed
//  less often than it has keys: the snapshot gives back the state_seq and
//  the key seqs it recorded (not one more per key put back), and a key of
//  the scenario's initial state deleted before it stays deleted.
START_TEST (test_replay_equals_live_after_an_early_compaction)
{
    s_run_t run;
    s_run_new (&run, true, 5);
    run.broker = s_start (&run, "--compact-min-bytes", "4096");
    testclient_t *client = s_agent (run.broker, "W", "worker");
    s_write_key (client, "delete", "report", 0);
    //  A log over --compact-min-bytes: the next tick compacts it.
    s_write_key (client, "set", "big", 5000);
    s_wait_compacted (&run);
    //  On top of the snapshot: an operation that records the state_seq.
    s_write_key (client, "set", "after", 10);
    s_bye (&client);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");
    s_run_destroy (&run);
}
END_TEST

static void
s_sent (testclient_t *client, const char *target, bool channel, const char *body)
{
    pmsg_t *reply = testclient_send_one (client, target, channel, body);
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
}

//  Under drop-oldest, a post its channel dropped stays in its listeners'
//  inboxes as a tombstone until acknowledged: it takes a place there, so
//  it decides what the inbox's own bound drops next. A compaction keeps
//  it, and the replay of what follows drops what the live broker dropped.
START_TEST (test_replay_equals_live_with_dropped_posts)
{
    s_run_t run;
    s_run_new (&run, false, 9);
    const char *args [] = { "--compact-min-bytes", "4096", "--overflow", "drop-oldest",
                            "--max-channel", "5", "--max-inbox", "6", NULL };
    run.broker = s_start_with (&run, args);
    testclient_t *poster = s_agent (run.broker, "W", "worker");
    testclient_t *reader = s_agent (run.broker, "C", "checker");
    testclient_t *both [] = { poster, reader };
    for (int i = 0; i < 2; i++)
        testmail_listen (both [i], "news");
    //  Seven posts to a channel of five: the first two are dropped by the
    //  channel and stay as tombstones in both inboxes.
    for (int i = 0; i < 7; i++) {
        char body [16];
        snprintf (body, sizeof body, "post %d", i);
        s_sent (poster, "news", true, body);
    }
    s_write_key (poster, "set", "big", 5000);
    s_wait_compacted (&run);
    //  The reader's inbox is full (six places): this pops its oldest.
    s_sent (poster, "C", false, "after");
    for (int i = 0; i < 2; i++) {
        s_bye (&both [i]);
    }
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");
    s_run_destroy (&run);
}
END_TEST

//  A restart with a lower key limit keeps the keys already there (the
//  limit refuses new ones); a compaction after it writes them all and a
//  recovery gives them all back, under the same limit.
START_TEST (test_replay_equals_live_after_limits_lowered)
{
    s_run_t run;
    s_run_new (&run, false, 13);
    run.broker = s_start (&run, "--log-level", "info");
    testclient_t *client = s_agent (run.broker, "W", "worker");
    for (int i = 0; i < 12; i++) {
        char key [16];
        snprintf (key, sizeof key, "key.%d", i);
        s_write_key (client, "set", key, 10);
    }
    s_bye (&client);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);

    const char *args [] = { "--compact-min-bytes", "4096", "--max-state-keys", "8", NULL };
    run.broker = s_start_with (&run, args);
    client = s_agent (run.broker, "W", "worker");
    //  A key that is there already: the limit has nothing to say.
    s_write_key (client, "set", "key.0", 5000);
    s_wait_compacted (&run);
    s_bye (&client);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");
    s_run_destroy (&run);
}
END_TEST

//  The same for channels: memberships above a lowered --max-channels stay
//  (the limit refuses new channels), and survive a compaction and a
//  recovery, as do the agents above a lowered --max-agents, which the
//  recovered broker still counts against the lowered limit.
START_TEST (test_replay_equals_live_after_channels_lowered)
{
    s_run_t run;
    s_run_new (&run, false, 17);
    run.broker = s_start (&run, "--log-level", "info");
    testclient_t *client = s_agent (run.broker, "W", "worker");
    testclient_t *other = s_agent (run.broker, "C", "checker");
    for (int i = 0; i < 6; i++) {
        char channel [16];
        snprintf (channel, sizeof channel, "chan.%d", i);
        testmail_listen (client, channel);
        s_sent (other, channel, true, "queued");
    }
    s_bye (&client);
    s_bye (&other);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);

    const char *args [] = { "--compact-min-bytes", "4096", "--max-channels", "3",
                            "--max-agents", "1", NULL };
    run.broker = s_start_with (&run, args);
    client = s_agent (run.broker, "W", "worker");
    s_write_key (client, "set", "big", 5000);
    s_wait_compacted (&run);
    s_bye (&client);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_expect_replay_equals_live (&run, "--log-level", "info");

    //  Recovered from the snapshot: two agents registered, one allowed.
    run.broker = s_start_with (&run, args);
    testclient_t *third = testclient_new (testbroker_router (run.broker));
    pmsg_t *reply = testclient_hello (third, "X");
    ck_assert_int_eq (testclient_error_code (reply), PERR_TOO_MANY_AGENTS);
    pmsg_destroy (&reply);
    testclient_destroy (&third);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_run_destroy (&run);
}
END_TEST

//  Two hand-overs, then a stop (clean or kill -9 under --fsync always):
//  the restarted broker is at turn 3, with both hand-overs' writes, its
//  state_seq never went back, and its origin is the same.
static void
s_workflow_restart (int signum)
{
    s_run_t run;
    s_run_new (&run, false, 7);
    run.broker = s_start (&run, "--log-level", "info");
    testclient_t *worker = s_agent (run.broker, "W", "worker");
    testclient_t *checker = s_agent (run.broker, "C", "checker");
    pmsg_t *reply = s_handover (worker, "checker", 1);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    pmsg_destroy (&reply);
    reply = s_handover (checker, "worker", 2);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    uint64_t seq = pmsg_uint (reply, "seq", 0);
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 3);
    pmsg_destroy (&reply);
    pmsg_t *welcome_before = testclient_hello (worker, "W");
    uint64_t origin = pmsg_uint (welcome_before, "origin", 0);
    pmsg_destroy (&welcome_before);
    //  The agents stay connected until the broker is gone: a holder that
    //  left first would fail the workflow (no other worker is online), and
    //  whether its departure or the stop came first would be the machine's
    //  load's choice.
    if (signum == SIGKILL) {
        testbroker_kill (&run.broker);
    }
    else
        ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    testclient_destroy (&worker);
    testclient_destroy (&checker);

    run.broker = s_start (&run, "--log-level", "info");
    testclient_t *probe = testclient_new (testbroker_router (run.broker));
    penc_t *enc = testclient_begin (probe, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "probe");
    penc_kv_bool (enc, "observe", true);
    reply = testclient_call (probe);
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_uint_eq (pmsg_uint (reply, "origin", 0), origin);
    ck_assert_uint_ge (pmsg_uint (reply, "state_seq", 0), seq);
    pmsg_destroy (&reply);
    enc = testclient_begin (probe, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 4);
    penc_cstr (enc, "turn");
    penc_cstr (enc, "work");
    penc_cstr (enc, "issues");
    penc_cstr (enc, "current_agent");
    reply = testclient_call (probe);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_ge (pmsg_uint (reply, "seq", 0), seq);
    const char *expect [][2] = { { "turn", "3" }, { "work", "[1]" }, { "issues", "[2]" },
                                 { "current_agent", "\"worker\"" } };
    for (size_t i = 0; i < 4; i++) {
        bool found = false;
        for (size_t j = 0; j < testclient_array_size (reply, "entries"); j++) {
            const msgpack_object *entry = testclient_array_at (reply, "entries", j);
            if (!pobj_streq (pobj_get (entry, "key"), expect [i][0]))
                continue;
            char *json = s_json (pobj_get (entry, "value"));
            ck_assert_msg (strcmp (json, expect [i][1]) == 0, "%s is %s, not %s",
                           expect [i][0], json, expect [i][1]);
            free (json);
            found = true;
        }
        ck_assert_msg (found, "%s is gone after the restart", expect [i][0]);
    }
    pmsg_destroy (&reply);
    testclient_destroy (&probe);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_run_destroy (&run);
}

START_TEST (test_workflow_survives_a_clean_restart)
{
    s_workflow_restart (SIGTERM);
}
END_TEST

START_TEST (test_workflow_survives_kill_9)
{
    s_workflow_restart (SIGKILL);
}
END_TEST

//  A keyed request answered, the broker killed, a resend to the restarted
//  broker: the same answer, applied once.
START_TEST (test_retry_after_restart_is_applied_once)
{
    s_run_t run;
    s_run_new (&run, true, 11);
    run.broker = s_start (&run, "--log-level", "info");
    char worker_token [33] = "", peer_token [33] = "";
    testclient_t *worker = s_agent_token (run.broker, "W", "worker", worker_token);
    testclient_t *peer = s_agent_token (run.broker, "P", "checker", peer_token);
    penc_t *enc;
    //  The four kinds of keyed request, each answered once.
    pmsg_t *first [4];
    for (int round = 0; round < 2; round++) {
        enc = testclient_begin (worker, PMSG_SEND, 2);
        penc_kv_uint (enc, "batch", 41);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), 2);
        for (int i = 0; i < 2; i++) {
            msgpack_pack_map (penc_packer (enc), 2);
            penc_kv_cstr (enc, "to", "P");
            penc_kv_cstr (enc, "body", i ? "two" : "one");
        }
        pmsg_t *sent = testclient_call (worker);
        EXPECT (sent, PMSG_SENT);
        enc = testclient_begin (worker, PMSG_ACT, 2);
        penc_kv_cstr (enc, "action", "forward");
        penc_kv_uint (enc, "step", 9);
        pmsg_t *obs = testclient_call (worker);
        EXPECT (obs, PMSG_OBSERVATION);
        enc = testclient_begin (worker, PMSG_STEP, 3);
        penc_kv_uint (enc, "step", 10);
        penc_kv_cstr (enc, "action", "forward");
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "P");
        penc_kv_cstr (enc, "body", "three");
        pmsg_t *stepped = testclient_call (worker);
        EXPECT (stepped, PMSG_STEPPED);
        pmsg_t *info = s_handover (worker, "checker", 1);
        EXPECT (info, PMSG_WORKFLOW_INFO);
        if (round == 0) {
            first [0] = sent;
            first [1] = obs;
            first [2] = stepped;
            first [3] = info;
            //  kill -9 under --fsync always: everything answered is on disk.
            testclient_destroy (&worker);
            testclient_destroy (&peer);
            testbroker_kill (&run.broker);
            run.broker = s_start (&run, "--log-level", "info");
            //  The ids were not given up (no BYE): their tokens are needed,
            //  and the registrations with them survived.
            worker = s_agent_token (run.broker, "W", "worker", worker_token);
            peer = s_agent_token (run.broker, "P", "checker", peer_token);
            continue;
        }
        //  The same answers.
        const char *keys [][3] = { { "seqs", "accepted", NULL }, { "position", "coverage", NULL },
                                   { "sent", "observation", NULL }, { "turn", "status", NULL } };
        pmsg_t *again [4] = { sent, obs, stepped, info };
        for (int k = 0; k < 4; k++)
            for (int f = 0; keys [k][f]; f++) {
                char *a = s_json (pmsg_field (first [k], keys [k][f]));
                char *b = s_json (pmsg_field (again [k], keys [k][f]));
                ck_assert_msg (strcmp (a, b) == 0, "%s after the restart: %s, before: %s",
                               keys [k][f], b, a);
                free (a);
                free (b);
            }
        ck_assert (pmsg_bool (stepped, "replayed", false));
        for (int k = 0; k < 4; k++) {
            pmsg_destroy (&first [k]);
            pmsg_destroy (&again [k]);
        }
    }
    //  Applied once: three messages for P, one move of W's plus the step's.
    pmsg_t *mail = testclient_fetch (peer, 0, 100);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 3);
    pmsg_destroy (&mail);
    pmsg_t *info = testclient_call0 (peer, PMSG_WORKFLOW);
    ck_assert_uint_eq (pmsg_uint (info, "turn", 0), 2);
    pmsg_destroy (&info);
    testclient_destroy (&worker);
    testclient_destroy (&peer);
    ck_assert_int_eq (testbroker_stop (&run.broker), 0);
    s_run_destroy (&run);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("replay");
    TCase *tc = tcase_create ("replay");
    tcase_set_timeout (tc, 240);
    tcase_add_test (tc, test_replay_equals_live_with_world);
    tcase_add_test (tc, test_replay_equals_live_without_world);
    tcase_add_test (tc, test_replay_equals_live_across_compactions);
    tcase_add_test (tc, test_replay_equals_live_after_an_early_compaction);
    tcase_add_test (tc, test_replay_equals_live_with_dropped_posts);
    tcase_add_test (tc, test_replay_equals_live_after_limits_lowered);
    tcase_add_test (tc, test_replay_equals_live_after_channels_lowered);
    tcase_add_test (tc, test_workflow_survives_a_clean_restart);
    tcase_add_test (tc, test_workflow_survives_kill_9);
    tcase_add_test (tc, test_retry_after_restart_is_applied_once);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
