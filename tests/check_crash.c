// SPDX-License-Identifier: MIT
/*  check_crash - the crash harness: the real broker with --fsync always is
    killed with SIGKILL at random moments while two writers update shared
    state, a sender queues mail for a silent agent and two agents hand the
    workflow's turn to each other (each hand-over appending its turn to a
    list), each with a request always in flight. After every restart
    nothing acknowledged is missing: each writer's key holds its last
    acknowledged value (or the one in flight at the kill, which may have
    reached the disk), every message whose SENT arrived is in the inbox,
    once, with its seq, and the workflow is at the turn after the last
    acknowledged hand-over (or the one in flight), with every acknowledged
    hand-over's write in the list and a checkpoint for its turn. Then the same
    under --fsync everysec, where only the losses the docs allow (the last
    second or so) may happen, and the state never goes backwards past them.

    PARLEY_CRASH_KILLS sets the number of kills per policy (default 10;
    `make soak` runs 50).
*/
#include <check.h>
#include <czmq.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define WRITERS 2
#define MAX_SENT 200000

typedef struct {
    pid_t pid;
    int delay_ms;
    volatile bool done;
} killer_t;

static void *
s_killer (void *arg)
{
    killer_t *k = arg;
    pclock_sleep_ms (k->delay_ms);
    kill (k->pid, SIGKILL);
    k->done = true;
    return NULL;
}

//  The reply to the request in flight, or NULL once the broker is dead
//  (a reply already on its way when the kill came still counts).
static pmsg_t *
s_reply (testclient_t *client, killer_t *k)
{
    for (;;) {
        bool dead = k->done;
        pmsg_t *reply = testclient_recv (client, dead ? 200 : 50);
        if (reply || dead)
            return reply;
    }
}

static void
s_begin_write (testclient_t *client, const char *key, int64_t value)
{
    penc_t *enc = testclient_begin_set (client, key);
    penc_key (enc, "value");
    msgpack_pack_int64 (penc_packer (enc), value);
}

static void
s_begin_send (testclient_t *client, int64_t n)
{
    char body [32];
    snprintf (body, sizeof body, "m%lld", (long long) n);
    penc_t *enc = testclient_begin (client, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", "Sink");
    penc_kv_cstr (enc, "body", body);
}

typedef struct {
    int64_t turn;                   //  the workflow's turn, as the last reply said
    int64_t turn_acked;             //  turns ended by an acknowledged HANDOVER
    int64_t turn_in_flight;         //  a HANDOVER sent for this turn, no reply yet
    int64_t acked [WRITERS];        //  last value with a WRITTEN
    int64_t in_flight [WRITERS];    //  sent, no reply (yet)
    int64_t next_msg;
    bool *msg_acked;                //  by message number
    uint64_t *msg_seq;
} world_t;

//  The resume tokens the brokers issued, by agent id: as a real agent
//  keeps its token file, each one presents its token after a restart (the
//  journal keeps the id held for it).
#define MAX_TOKENS 32
static char s_token_ids [MAX_TOKENS][PROTO_MAX_NAME + 1];
static char s_tokens [MAX_TOKENS][PROTO_MAX_NAME + 1];

static char *
s_token_of (const char *id)
{
    for (int i = 0; i < MAX_TOKENS; i++)
        if (strcmp (s_token_ids [i], id) == 0)
            return s_tokens [i];
    for (int i = 0; i < MAX_TOKENS; i++)
        if (!s_token_ids [i][0]) {
            snprintf (s_token_ids [i], sizeof s_token_ids [i], "%s", id);
            s_tokens [i][0] = 0;
            return s_tokens [i];
        }
    ck_abort_msg ("more than %d agent ids", MAX_TOKENS);
    return NULL;
}

static testclient_t *
s_agent_as (testbroker_t *broker, const char *id, const char *role)
{
    char *token = s_token_of (id);
    return testflow_hello (testclient_new (testbroker_router (broker)), id, role, token);
}

static testclient_t *
s_agent (testbroker_t *broker, const char *id)
{
    return s_agent_as (broker, id, NULL);
}

//  The hand-over of turn `turn` (it appends the turn to "work").
static void
s_begin_handover (testclient_t *client, int64_t turn, const char *next)
{
    penc_t *enc = testclient_begin (client, PMSG_HANDOVER, 2);
    penc_kv_cstr (enc, "next", next);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "update");
    penc_kv_cstr (enc, "key", "work");
    penc_key (enc, "value");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_int64 (penc_packer (enc), turn);
}

//  Load until the broker dies. Each client keeps one request in flight.
static void
s_load (testbroker_t *broker, world_t *w, int delay_ms)
{
    testclient_t *writers [WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        char id [16];
        snprintf (id, sizeof id, "W%d", i);
        writers [i] = s_agent (broker, id);
    }
    testclient_t *sender = s_agent (broker, "S");
    //  The two roles of the loop: odd turns are the worker's.
    testclient_t *roles [2] = { s_agent_as (broker, "Wk", "worker"),
                                s_agent_as (broker, "Ck", "checker") };
    killer_t k = { testbroker_pid (broker), delay_ms, false };
    pthread_t thread;
    pthread_create (&thread, NULL, s_killer, &k);
    bool alive = true;
    while (alive) {
        for (int i = 0; i < WRITERS && alive; i++) {
            char key [16];
            snprintf (key, sizeof key, "w%d", i);
            w->in_flight [i] = w->acked [i] + 1;
            s_begin_write (writers [i], key, w->in_flight [i]);
            testclient_send (writers [i]);
            pmsg_t *reply = s_reply (writers [i], &k);
            if (reply && pmsg_type (reply) == PMSG_WRITTEN)
                w->acked [i] = w->in_flight [i];
            else
                alive = false;
            pmsg_destroy (&reply);
        }
        if (!alive || w->next_msg >= MAX_SENT)
            break;
        //  The holder hands the turn on; a reply that is not WORKFLOW_INFO
        //  is the kill (or a holder the broker has not given the turn yet:
        //  then the hand-over is tried again next round).
        int64_t turn = w->turn;
        bool worker = turn % 2 == 1;
        w->turn_in_flight = turn;
        s_begin_handover (roles [worker ? 0 : 1], turn, worker ? "checker" : "worker");
        testclient_send (roles [worker ? 0 : 1]);
        pmsg_t *handed = s_reply (roles [worker ? 0 : 1], &k);
        if (handed && pmsg_type (handed) == PMSG_WORKFLOW_INFO) {
            w->turn_acked = turn;
            w->turn = (int64_t) pmsg_uint (handed, "turn", 0);
            ck_assert_int_eq (w->turn, turn + 1);
        }
        else
        if (!handed)
            alive = false;
        pmsg_destroy (&handed);
        if (!alive)
            break;
        int64_t n = w->next_msg++;
        s_begin_send (sender, n);
        testclient_send (sender);
        pmsg_t *reply = s_reply (sender, &k);
        if (reply && pmsg_type (reply) == PMSG_SENT) {
            const msgpack_object *seqs = pmsg_field (reply, "seqs");
            ck_assert (seqs && seqs->type == MSGPACK_OBJECT_ARRAY && seqs->via.array.size == 1);
            w->msg_acked [n] = true;
            w->msg_seq [n] = seqs->via.array.ptr [0].via.u64;
        }
        else
            alive = false;
        pmsg_destroy (&reply);
    }
    pthread_join (thread, NULL);
    ck_assert_int_eq (testbroker_wait (broker, 10000), 128 + SIGKILL);
    for (int i = 0; i < WRITERS; i++)
        testclient_destroy (&writers [i]);
    testclient_destroy (&sender);
    testclient_destroy (&roles [0]);
    testclient_destroy (&roles [1]);
}

static int64_t
s_value (testclient_t *client, const char *key)
{
    penc_t *enc = testclient_begin (client, PMSG_SNAPSHOT, 1);
    penc_kv_cstr (enc, "prefix", key);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    int64_t value = 0;
    const msgpack_object *entry = testclient_array_at (reply, "entries", 0);
    if (entry) {
        const msgpack_object *v = pobj_get (entry, "value");
        ck_assert (v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER);
        value = (int64_t) v->via.u64;
    }
    pmsg_destroy (&reply);
    return value;
}

//  After a restart: what was acknowledged is there; returns how many
//  acknowledged messages and writes were missing (0 under always).
static int64_t
s_check (testbroker_t *broker, world_t *w, bool strict)
{
    testclient_t *reader = s_agent (broker, "Reader");
    int64_t lost = 0;
    for (int i = 0; i < WRITERS; i++) {
        char key [16];
        snprintf (key, sizeof key, "w%d", i);
        int64_t value = s_value (reader, key);
        if (strict)
            ck_assert_msg (value == w->acked [i] || value == w->in_flight [i],
                           "%s: %lld after the kill; acknowledged %lld, in flight %lld", key,
                           (long long) value, (long long) w->acked [i],
                           (long long) w->in_flight [i]);
        else
            ck_assert_msg (value <= w->in_flight [i], "%s: %lld was never written", key,
                           (long long) value);
        if (value < w->acked [i])
            lost += w->acked [i] - value;
        //  Continue from what the broker has: the replica's view now.
        w->acked [i] = value;
    }
    //  The workflow: at the turn after the last acknowledged hand-over, or
    //  after the one in flight; every acknowledged turn's write kept, once.
    pmsg_t *info = testclient_call0 (reader, PMSG_WORKFLOW);
    EXPECT (info, PMSG_WORKFLOW_INFO);
    int64_t turn = (int64_t) pmsg_uint (info, "turn", 0);
    pmsg_destroy (&info);
    if (w->turn_acked) {
        ck_assert_msg (turn == w->turn_acked + 1
                       || (turn == w->turn_in_flight + 1 && w->turn_in_flight > w->turn_acked)
                       || !strict, "the workflow is at turn %lld after the kill; hand-over of "
                       "turn %lld acknowledged", (long long) turn, (long long) w->turn_acked);
        if (turn <= w->turn_acked)
            lost += w->turn_acked + 1 - turn;
        penc_t *enc = testclient_begin (reader, PMSG_SNAPSHOT, 1);
        penc_kv_cstr (enc, "prefix", "work");
        pmsg_t *state = testclient_call (reader);
        EXPECT (state, PMSG_STATE);
        const msgpack_object *value = pobj_get (testclient_array_at (state, "entries", 0),
                                                "value");
        ck_assert (value && value->type == MSGPACK_OBJECT_ARRAY);
        ck_assert_int_eq ((int64_t) value->via.array.size, turn - 1);
        for (uint32_t i = 0; i < value->via.array.size; i++)
            ck_assert_int_eq ((int64_t) value->via.array.ptr [i].via.u64, (int64_t) i + 1);
        pmsg_destroy (&state);
        //  The checkpoint of the turn's start is kept (--checkpoints default).
        pmsg_t *list = testclient_call0 (reader, PMSG_CHECKPOINTS);
        EXPECT (list, PMSG_CHECKPOINT_LIST);
        size_t kept = testclient_array_size (list, "checkpoints");
        ck_assert_uint_gt (kept, 0);
        ck_assert_int_eq ((int64_t) pobj_uint (testclient_array_at (list, "checkpoints", kept - 1),
                                               "turn", 0), turn);
        pmsg_destroy (&list);
    }
    w->turn = turn;
    testclient_destroy (&reader);
    //  Sink's inbox: every acknowledged message, in seq order, once.
    testclient_t *sink = s_agent (broker, "Sink");
    bool *seen = calloc ((size_t) w->next_msg + 1, sizeof (bool));
    uint64_t ack = 0;
    for (;;) {
        pmsg_t *reply = testclient_fetch (sink, ack, 0);
        EXPECT (reply, PMSG_MAIL);
        size_t count = testclient_array_size (reply, "messages");
        for (size_t j = 0; j < count; j++) {
            const msgpack_object *item = testclient_array_at (reply, "messages", j);
            const msgpack_object *body = pobj_get (item, "body");
            uint64_t seq = pobj_uint (item, "seq", 0);
            ck_assert (seq > ack);
            ack = seq;
            long long n = atoll (body->via.str.ptr + 1);
            ck_assert (n >= 0 && n < w->next_msg);
            ck_assert_msg (!seen [n], "message %lld delivered twice", n);
            seen [n] = true;
            if (w->msg_acked [n])
                ck_assert_uint_eq (seq, w->msg_seq [n]);
        }
        pmsg_destroy (&reply);
        if (count == 0)
            break;
    }
    for (int64_t n = 0; n < w->next_msg; n++)
        if (w->msg_acked [n] && !seen [n]) {
            ck_assert_msg (!strict, "acknowledged message %lld (seq %llu) lost", (long long) n,
                           (unsigned long long) w->msg_seq [n]);
            lost++;
        }
    //  All read: acknowledge it (ack is sent with the next, empty, FETCH
    //  above) and forget the bookkeeping.
    memset (w->msg_acked, 0, sizeof (bool) * (size_t) w->next_msg);
    free (seen);
    pmsg_t *bye = testclient_call0 (sink, PMSG_BYE);
    pmsg_destroy (&bye);
    testclient_destroy (&sink);
    return lost;
}

static void
s_harness (const char *fsync)
{
    int kills = getenv ("PARLEY_CRASH_KILLS") ? atoi (getenv ("PARLEY_CRASH_KILLS")) : 10;
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    //  A loop of two roles, long enough for every kill of the soak.
    const char *files [][2] = {
        { "scenario.yaml", "name: loop\nworld: none\nstate:\n"
                                "  work: { reducer: append, value: [] }\n"
                                "workflow:\n  entry: worker\n  max_turns: 100000\n" },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  handover: [checker]\n" },
        { "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  handover: [worker]\n" },
    };
    testflow_write (tmp, "loop", files, 3);
    char *scenario = tproc_dir_path (tmp, "loop");
    const char *args [] = { "--data-dir", dir, "--fsync", fsync, "--max-inbox", "1000000",
                            "--compact-min-bytes", "65536", "--scenario", scenario, NULL };
    world_t w = { .turn = 1, .msg_acked = calloc (MAX_SENT, sizeof (bool)),
                  .msg_seq = calloc (MAX_SENT, sizeof (uint64_t)) };
    //  Sink is registered once; it never reads until the checks.
    testbroker_t *broker = testcheck_start (args);
    testclient_t *sink = s_agent (broker, "Sink");
    pmsg_t *bye = testclient_call0 (sink, PMSG_BYE);
    pmsg_destroy (&bye);
    testclient_destroy (&sink);
    testcheck_stop (&broker);
    unsigned seed = (unsigned) pclock_mono_ms ();
    fprintf (stderr, "crash harness (%s): %d kills, seed %u\n", fsync, kills, seed);
    int64_t lost = 0;
    for (int round = 0; round < kills; round++) {
        broker = testcheck_start (args);
        s_load (broker, &w, 20 + (int) (rand_r (&seed) % 300));
        testbroker_stop (&broker);
        broker = testcheck_start (args);
        lost += s_check (broker, &w, strcmp (fsync, "always") == 0);
        testcheck_stop (&broker);
    }
    fprintf (stderr, "crash harness (%s): %lld acknowledged writes, messages or hand-overs "
             "lost; %lld messages sent, %lld turns taken\n", fsync, (long long) lost,
             (long long) w.next_msg, (long long) w.turn - 1);
    ck_assert_int_gt (w.turn, kills);
    free (w.msg_acked);
    free (w.msg_seq);
    free (scenario);
    free (dir);
    tproc_dir_destroy (&tmp);
}

START_TEST (test_kill_always)
{
    s_harness ("always");
}
END_TEST

START_TEST (test_kill_everysec)
{
    s_harness ("everysec");
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("crash");
    TCase *tc = tcase_create ("crash");
    tcase_set_timeout (tc, 600);
    tcase_add_test (tc, test_kill_always);
    tcase_add_test (tc, test_kill_everysec);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
