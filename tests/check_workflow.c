/*  check_workflow - turns over the wire against the real broker: the
    atomic HANDOVER, who may hand over, the revision loop ending at exactly
    N revisions (N+1 validations), the issue list cleared per revision,
    the turn limit, a dead or silent turn holder (failure or replacement),
    a human turn, checkpoints (list, show, diff) and resume from every
    checkpoint of a recorded run reaching the same final state.

    Each test writes its own small scenario ("loop": a worker, a checker
    and a reviewer played by a person) into a temporary folder, so the
    limits are the test's own.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mpjson.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

typedef struct {
    int max_revisions;
    int max_turns;
    int timeout_ms;
    const char *on_timeout;
} s_limits_t;

static tproc_dir_t *s_dir;

//  Writes the loop scenario and returns its folder (owned by s_dir).
static const char *
s_scenario (const s_limits_t *limits)
{
    s_dir = tproc_dir_new ();
    char *path = tproc_dir_path (s_dir, "roles");
    ck_assert_int_eq (zsys_dir_create ("%s", path), 0);
    free (path);
    char text [2048];
    snprintf (text, sizeof text,
              "name: loop\n"
              "world: none\n"
              "state:\n"
              "  work: { reducer: append, value: [] }\n"
              "  issues: { reducer: append, value: [] }\n"
              "  report: { reducer: replace }\n"
              "workflow:\n"
              "  entry: worker\n"
              "  max_revisions: %d\n"
              "  max_turns: %d\n"
              "  turn_timeout_ms: %d\n"
              "  on_timeout: %s\n"
              "  clear_on_revision: [issues]\n",
              limits->max_revisions, limits->max_turns, limits->timeout_ms,
              limits->on_timeout ? limits->on_timeout : "fail");
    const char *files [][2] = {
        { "scenario.yaml", text },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  writes:\n"
                               "    - { key: work, reducer: append }\n"
                               "  handover: [checker, reviewer]\n" },
        { "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  writes:\n"
                                "    - { key: issues, reducer: append }\n"
                                "    - { key: report }\n  handover: [worker]\n" },
        { "roles/reviewer.yaml", "role: reviewer\ngoal: review\nhuman: true\n"
                                 "actions:\n  handover: [checker]\n" },
    };
    for (size_t i = 0; i < 4; i++) {
        char *file = tproc_dir_path (s_dir, files [i][0]);
        ck_assert (tproc_write_file (file, files [i][1]));
        free (file);
    }
    return tproc_dir_name (s_dir);
}

static testbroker_t *
s_start (const s_limits_t *limits)
{
    const char *args [] = { "--scenario", s_scenario (limits), NULL };
    return testcheck_start (args);
}

static void
s_stop (testbroker_t **broker_p)
{
    testcheck_stop (broker_p);
    tproc_dir_destroy (&s_dir);
}

static testclient_t *
s_agent (testbroker_t *broker, const char *id, const char *role)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", id);
    penc_key (enc, "caps");
    msgpack_pack_array (penc_packer (enc), 1);
    char cap [80];
    snprintf (cap, sizeof cap, "role:%s", role);
    penc_cstr (enc, cap);
    pmsg_t *welcome = testclient_call (client);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    return client;
}

//  HANDOVER with ops as JSON (NULL: none), next and status (NULL: absent).
static pmsg_t *
s_handover (testclient_t *client, const char *ops, const char *next, const char *status)
{
    msgpack_unpacked result;
    const msgpack_object *object = ops ? mpjson_object (&result, ops) : NULL;
    ck_assert (!ops || object);
    penc_t *enc = testclient_begin (client, PMSG_HANDOVER, !!ops + !!next + !!status);
    if (ops) {
        penc_key (enc, "ops");
        penc_object (enc, object);
        msgpack_unpacked_destroy (&result);
    }
    if (next)
        penc_kv_cstr (enc, "next", next);
    if (status)
        penc_kv_cstr (enc, "status", status);
    return testclient_call (client);
}

static void
s_handover_ok (testclient_t *client, const char *ops, const char *next, const char *status)
{
    pmsg_t *reply = s_handover (client, ops, next, status);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    pmsg_destroy (&reply);
}

//  A key's value as compact JSON (caller frees); "absent" when missing.
static char *
s_get (testclient_t *client, const char *key)
{
    penc_t *enc = testclient_begin (client, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, key);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    char *json = strdup ("absent");
    if (testclient_array_size (reply, "entries") == 1) {
        free (json);
        static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
        const msgpack_object *value = pobj_get (testclient_array_at (reply, "entries", 0), "value");
        json = mpjson_dump_object (value ? value : &nil);
    }
    pmsg_destroy (&reply);
    return json;
}

static void
s_expect_key (testclient_t *client, const char *key, const char *json)
{
    char *got = s_get (client, key);
    ck_assert_msg (strcmp (got, json) == 0, "%s is %s, expected %s", key, got, json);
    free (got);
}

static pmsg_t *
s_info (testclient_t *client)
{
    pmsg_t *info = testclient_call0 (client, PMSG_WORKFLOW);
    EXPECT (info, PMSG_WORKFLOW_INFO);
    return info;
}

static void
s_expect_status (testclient_t *client, const char *status)
{
    pmsg_t *info = s_info (client);
    char got [64] = "";
    pmsg_strcpy (info, "status", got, sizeof got);
    ck_assert_msg (strcmp (got, status) == 0, "status %s, expected %s", got, status);
    pmsg_destroy (&info);
}

//  Waits for a WORKFLOW_EVENT `event` (for `agent` when not NULL).
static pmsg_t *
s_event (testsub_t *sub, const char *event, const char *agent)
{
    for (int i = 0; i < 50; i++) {
        pmsg_t *got = testsub_recv (sub, NULL, 0, 15000);
        ck_assert_msg (got, "no WORKFLOW_EVENT %s", event);
        char name [64] = "", who [80] = "";
        pmsg_strcpy (got, "event", name, sizeof name);
        pmsg_strcpy (got, "agent", who, sizeof who);
        if (strcmp (name, event) == 0 && (!agent || strcmp (who, agent) == 0))
            return got;
        pmsg_destroy (&got);
    }
    ck_abort_msg ("no WORKFLOW_EVENT %s", event);
    return NULL;
}

//  A str field as a C string (static buffer: one per expression).
static const char *
s_str (const pmsg_t *msg, const char *field)
{
    static char text [PROTO_MAX_TEXT + 1];
    if (!pmsg_strcpy (msg, field, text, sizeof text))
        snprintf (text, sizeof text, "(no %s)", field);
    return text;
}

static const s_limits_t s_default = { 3, 100, 0, NULL };

START_TEST (test_start_and_guards)
{
    testbroker_t *broker = s_start (&s_default);
    testclient_t *watcher = testcheck_agent (broker, "watcher");
    s_expect_key (watcher, "current_agent", "\"worker\"");
    s_expect_key (watcher, "workflow_status", "\"pending\"");
    s_expect_key (watcher, "work", "[]");
    //  The workflow keys are the broker's; there is no world.
    penc_t *enc = testclient_begin (watcher, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "set");
    penc_kv_cstr (enc, "key", "current_agent");
    penc_kv_cstr (enc, "value", "checker");
    pmsg_t *reply = testclient_call (watcher);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    reply = testclient_call0 (watcher, PMSG_PERCEIVE);
    EXPECT_ERROR (reply, PERR_BAD_ACTION);
    pmsg_destroy (&reply);
    //  Nobody holds the turn before the entry role's agent comes.
    reply = s_handover (watcher, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_NOT_TURN_HOLDER);
    pmsg_destroy (&reply);

    testsub_t *sub = testsub_new (testbroker_pub (broker), "workflow.");
    zclock_sleep (200);             //  PUB/SUB joins asynchronously
    testclient_t *worker = s_agent (broker, "W1", "worker");
    pmsg_t *event = s_event (sub, "turn", "W1");
    pmsg_destroy (&event);
    s_expect_key (watcher, "workflow_status", "\"in_progress\"");
    s_expect_key (watcher, "turn", "1");
    testsub_destroy (&sub);
    testclient_destroy (&worker);
    testclient_destroy (&watcher);
    s_stop (&broker);
}
END_TEST

START_TEST (test_atomic_handover)
{
    testbroker_t *broker = s_start (&s_default);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    //  Not the holder.
    pmsg_t *reply = s_handover (checker, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":[1]}]",
                                "worker", NULL);
    EXPECT_ERROR (reply, PERR_NOT_TURN_HOLDER);
    pmsg_destroy (&reply);
    //  Routing outside the role file, a key the role does not write, a
    //  workflow key, an unknown role: all refused.
    const char *refused [][2] = {
        { "[{\"op\":\"update\",\"key\":\"work\",\"value\":[1]}]", "worker" },
        { "[{\"op\":\"update\",\"key\":\"report\",\"value\":1}]", "checker" },
        { "[{\"op\":\"set\",\"key\":\"turn\",\"value\":9}]", "checker" },
        { "[{\"op\":\"update\",\"key\":\"work\",\"value\":[1]}]", "nobody" },
    };
    for (size_t i = 0; i < 4; i++) {
        reply = s_handover (worker, refused [i][0], refused [i][1], NULL);
        EXPECT_ERROR (reply, PERR_BAD_FIELD);
        pmsg_destroy (&reply);
    }
    //  More ops than fit one batch beside the workflow's own: refused whole.
    penc_t *big = testclient_begin (worker, PMSG_HANDOVER, 2);
    penc_key (big, "ops");
    msgpack_pack_array (penc_packer (big), 4029);
    for (int i = 0; i < 4029; i++) {
        msgpack_pack_map (penc_packer (big), 3);
        penc_kv_cstr (big, "op", "update");
        penc_kv_cstr (big, "key", "work");
        penc_key (big, "value");
        msgpack_pack_array (penc_packer (big), 0);
    }
    penc_kv_cstr (big, "next", "checker");
    reply = testclient_call (worker);
    EXPECT_ERROR (reply, PERR_TOO_LARGE);
    pmsg_destroy (&reply);
    //  A bad op anywhere in the batch: nothing at all changes.
    pmsg_t *before = s_info (worker);
    uint64_t seq = pmsg_uint (before, "seq", 0);
    pmsg_destroy (&before);
    reply = s_handover (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\"]},"
                        "{\"op\":\"update\",\"key\":\"work\",\"value\":7}]", "checker", NULL);
    EXPECT_ERROR (reply, PERR_REDUCER_MISMATCH);
    ck_assert_msg (strstr (s_str (reply, "message"), "op 1:"),
                   "the error names the holder's own op: %s", testclient_describe (reply));
    pmsg_destroy (&reply);
    s_expect_key (worker, "work", "[]");
    s_expect_key (worker, "current_agent", "\"worker\"");
    pmsg_t *after = s_info (worker);
    ck_assert_uint_eq (pmsg_uint (after, "seq", 0), seq);
    pmsg_destroy (&after);

    //  The good one: the updates and the hand-over in one batch.
    reply = s_handover (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\"]}]",
                        "checker", NULL);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 2);
    ck_assert_str_eq (s_str (reply, "holder"), "checker");
    uint64_t batch_seq = pmsg_uint (reply, "seq", 0);
    pmsg_destroy (&reply);
    penc_t *enc = testclient_begin (worker, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 2);
    penc_cstr (enc, "work");
    penc_cstr (enc, "current_agent");
    reply = testclient_call (worker);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 2);
    for (size_t i = 0; i < 2; i++) {
        uint64_t key_seq = pobj_uint (testclient_array_at (reply, "entries", i), "seq", 0);
        ck_assert (key_seq > seq && key_seq <= batch_seq);
    }
    pmsg_destroy (&reply);
    //  The old holder's turn is over.
    reply = s_handover (worker, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_NOT_TURN_HOLDER);
    pmsg_destroy (&reply);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

//  The checker finds issue `round` and sends the work back; the list must
//  hold only this validation's issue.
START_TEST (test_revision_limit)
{
    const s_limits_t limits = { 2, 100, 0, NULL };
    testbroker_t *broker = s_start (&limits);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    int validations = 0;
    for (int round = 1; ; round++) {
        s_handover_ok (worker, NULL, "checker", NULL);
        char ops [160];
        snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":"
                  "[\"issue-%d-a\",\"issue-%d-b\"]}]", round, round);
        pmsg_t *reply = s_handover (checker, ops, "worker", "revision");
        validations++;
        EXPECT (reply, PMSG_WORKFLOW_INFO);
        char expect [96];
        snprintf (expect, sizeof expect, "[\"issue-%d-a\",\"issue-%d-b\"]", round, round);
        s_expect_key (worker, "issues", expect);
        char status [32] = "";
        pmsg_strcpy (reply, "status", status, sizeof status);
        if (strcmp (status, "failed") == 0) {
            ck_assert_uint_eq (pmsg_uint (reply, "revisions", 99), 2);
            ck_assert_msg (strstr (s_str (reply, "reason"), "revision limit"),
                           "%s", testclient_describe (reply));
            pmsg_destroy (&reply);
            break;
        }
        ck_assert_str_eq (status, "revision");
        ck_assert_uint_eq (pmsg_uint (reply, "revisions", 0), (uint64_t) round);
        pmsg_destroy (&reply);
        ck_assert_int_lt (round, 10);
    }
    //  At most N revisions and N + 1 validations.
    ck_assert_int_eq (validations, 3);
    s_expect_key (worker, "iteration_count", "2");
    s_expect_key (worker, "workflow_status", "\"failed\"");
    pmsg_t *reply = s_handover (worker, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_WORKFLOW_ENDED);
    pmsg_destroy (&reply);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

START_TEST (test_turn_limit)
{
    const s_limits_t limits = { 5, 4, 0, NULL };
    testbroker_t *broker = s_start (&limits);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    s_handover_ok (worker, NULL, "checker", NULL);              //  turn 2
    s_handover_ok (checker, NULL, "worker", NULL);              //  turn 3
    s_handover_ok (worker, NULL, "checker", NULL);              //  turn 4
    pmsg_t *reply = s_handover (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"x\"}]",
                                "worker", NULL);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    ck_assert_str_eq (s_str (reply, "status"), "failed");
    ck_assert_msg (strstr (s_str (reply, "reason"), "turn limit: 4 turns"),
                   "%s", testclient_describe (reply));
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 4);
    pmsg_destroy (&reply);
    //  The last turn's own writes still land with the failure.
    s_expect_key (worker, "report", "\"x\"");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

START_TEST (test_dead_holder)
{
    testbroker_t *broker = s_start (&s_default);
    testsub_t *sub = testsub_new (testbroker_pub (broker), "workflow.");
    zclock_sleep (200);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *spare = s_agent (broker, "W2", "worker");
    pmsg_t *event = s_event (sub, "turn", "W1");
    pmsg_destroy (&event);
    //  The holder leaves: the other worker takes its turn.
    pmsg_t *bye = testclient_call0 (worker, PMSG_BYE);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    event = s_event (sub, "turn", "W2");
    ck_assert_msg (strstr (s_str (event, "reason"), "W1 left"), "%s",
                   s_str (event, "reason"));
    pmsg_destroy (&event);
    s_handover_ok (spare, NULL, "checker", NULL);
    //  The checker's only agent leaves with the turn: the workflow fails.
    testclient_t *checker = s_agent (broker, "C1", "checker");
    event = s_event (sub, "turn", "C1");
    pmsg_destroy (&event);
    bye = testclient_call0 (checker, PMSG_BYE);
    pmsg_destroy (&bye);
    event = s_event (sub, "failed", NULL);
    ck_assert_msg (strstr (s_str (event, "reason"), "C1 (role checker) left"), "%s",
                   s_str (event, "reason"));
    pmsg_destroy (&event);
    s_expect_status (spare, "failed");
    testclient_destroy (&checker);
    testclient_destroy (&spare);
    testclient_destroy (&worker);
    testsub_destroy (&sub);
    s_stop (&broker);
}
END_TEST

START_TEST (test_turn_timeout)
{
    const s_limits_t limits = { 3, 100, 300, "replace" };
    testbroker_t *broker = s_start (&limits);
    testsub_t *sub = testsub_new (testbroker_pub (broker), "workflow.");
    zclock_sleep (200);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *spare = s_agent (broker, "W2", "worker");
    //  W1 stays silent: W2 gets the turn, then stays silent too and,
    //  with W1 still there, W1 gets it back. A holder never stalls the run.
    pmsg_t *event = s_event (sub, "turn", "W2");
    ck_assert_msg (strstr (s_str (event, "reason"), "turn timeout"), "%s",
                   s_str (event, "reason"));
    pmsg_destroy (&event);
    testclient_destroy (&worker);
    testclient_destroy (&spare);
    testsub_destroy (&sub);
    s_stop (&broker);

    const s_limits_t alone = { 3, 100, 300, "fail" };
    broker = s_start (&alone);
    sub = testsub_new (testbroker_pub (broker), "workflow.");
    zclock_sleep (200);
    worker = s_agent (broker, "W1", "worker");
    event = s_event (sub, "failed", NULL);
    ck_assert_msg (strstr (s_str (event, "reason"), "300 ms turn timeout"), "%s",
                   s_str (event, "reason"));
    pmsg_destroy (&event);
    testclient_destroy (&worker);
    testsub_destroy (&sub);
    s_stop (&broker);
}
END_TEST

START_TEST (test_human_turn)
{
    testbroker_t *broker = s_start (&s_default);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    s_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                   "reviewer", NULL);
    pmsg_t *info = s_info (worker);
    ck_assert (pmsg_bool (info, "paused", false));
    ck_assert_str_eq (s_str (info, "holder"), "reviewer");
    ck_assert_ptr_null (pmsg_field (info, "agent"));
    pmsg_destroy (&info);
    //  A person's tool says HELLO with the role and submits the turn.
    testclient_t *person = s_agent (broker, "ctl-ana", "reviewer");
    s_handover_ok (person, NULL, "checker", NULL);
    info = s_info (worker);
    ck_assert (!pmsg_bool (info, "paused", false));
    ck_assert_str_eq (s_str (info, "holder"), "checker");
    pmsg_destroy (&info);
    testclient_destroy (&person);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

//  One deterministic run: what each role writes depends only on the turn.
//  Returns when the workflow is done or failed.
static void
s_play (testclient_t *worker, testclient_t *checker)
{
    for (int guard = 0; guard < 40; guard++) {
        pmsg_t *info = s_info (worker);
        char status [32] = "", holder [64] = "";
        pmsg_strcpy (info, "status", status, sizeof status);
        pmsg_strcpy (info, "holder", holder, sizeof holder);
        uint64_t turn = pmsg_uint (info, "turn", 0);
        uint64_t revisions = pmsg_uint (info, "revisions", 0);
        pmsg_destroy (&info);
        if (strcmp (status, "done") == 0 || strcmp (status, "failed") == 0)
            return;
        char ops [200];
        if (strcmp (holder, "worker") == 0) {
            snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"work\",\"value\":"
                      "[\"piece-%llu\"]}]", (unsigned long long) turn);
            s_handover_ok (worker, ops, "checker", NULL);
        }
        else
        if (revisions < 2) {
            snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":"
                      "[\"gap-%llu\"]}]", (unsigned long long) turn);
            s_handover_ok (checker, ops, "worker", "revision");
        }
        else
            s_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"ok\"}]",
                           NULL, "done");
    }
    ck_abort_msg ("the run did not end");
}

static char *
s_snapshot (testclient_t *client)
{
    pmsg_t *state = testclient_call0 (client, PMSG_SNAPSHOT);
    EXPECT (state, PMSG_STATE);
    const msgpack_object *entries = pmsg_field (state, "entries");
    //  Values and reducers only: seqs differ between runs by design.
    char *all = strdup ("");
    for (uint32_t i = 0; i < entries->via.array.size; i++) {
        const msgpack_object *entry = &entries->via.array.ptr [i];
        static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
        const msgpack_object *value = pobj_get (entry, "value");
        char *json = mpjson_dump_object (value ? value : &nil);
        char *next = NULL;
        ck_assert_int_ge (asprintf (&next, "%s%.*s(%.*s)=%s\n", all,
                                    (int) pobj_get (entry, "key")->via.str.size,
                                    pobj_get (entry, "key")->via.str.ptr,
                                    (int) pobj_get (entry, "reducer")->via.str.size,
                                    pobj_get (entry, "reducer")->via.str.ptr, json), 0);
        free (json);
        free (all);
        all = next;
    }
    pmsg_destroy (&state);
    return all;
}

START_TEST (test_checkpoints_and_resume)
{
    testbroker_t *broker = s_start (&s_default);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    s_play (worker, checker);
    s_expect_status (worker, "done");
    char *final = s_snapshot (worker);

    pmsg_t *list = testclient_call0 (worker, PMSG_CHECKPOINTS);
    EXPECT (list, PMSG_CHECKPOINT_LIST);
    size_t count = testclient_array_size (list, "checkpoints");
    //  0: pending, 1: turn 1, then one per hand-over: 3 work turns and 3
    //  checks (2 revisions + the pass).
    ck_assert_uint_eq (count, 8);
    for (size_t i = 0; i < count; i++)
        ck_assert_uint_eq (pobj_uint (testclient_array_at (list, "checkpoints", i), "number", 99), i);
    //  Differences, not copies: a hand-over stores only what it changed.
    const msgpack_object *third = testclient_array_at (list, "checkpoints", 3);
    ck_assert_uint_le (pobj_uint (third, "changed", 0), 5);
    pmsg_destroy (&list);

    //  show and diff.
    penc_t *enc = testclient_begin (worker, PMSG_CHECKPOINT, 2);
    penc_kv_uint (enc, "number", 2);
    penc_kv_uint (enc, "since", 1);
    pmsg_t *diff = testclient_call (worker);
    EXPECT (diff, PMSG_CHECKPOINT_STATE);
    //  Turn 1 -> 2: work, current_agent, turn changed (status stayed).
    ck_assert_uint_eq (testclient_array_size (diff, "entries"), 3);
    ck_assert (pobj_streq (pobj_get (testclient_array_at (diff, "entries", 0), "key"), "current_agent"));
    pmsg_destroy (&diff);
    enc = testclient_begin (worker, PMSG_CHECKPOINT, 1);
    penc_kv_uint (enc, "number", 0);
    pmsg_t *show = testclient_call (worker);
    EXPECT (show, PMSG_CHECKPOINT_STATE);
    ck_assert_uint_eq (testclient_array_size (show, "entries"), 7);
    pmsg_destroy (&show);
    enc = testclient_begin (worker, PMSG_CHECKPOINT, 1);
    penc_kv_uint (enc, "number", 99);
    show = testclient_call (worker);
    EXPECT_ERROR (show, PERR_NO_SUCH_CHECKPOINT);
    pmsg_destroy (&show);

    //  Resume from every checkpoint: the same run ends in the same state.
    for (size_t k = 0; k < count; k++) {
        enc = testclient_begin (worker, PMSG_RESUME, 1);
        penc_kv_uint (enc, "number", k);
        pmsg_t *reply = testclient_call (worker);
        EXPECT (reply, PMSG_WORKFLOW_INFO);
        //  Back at 0 (pending) the entry role's agent begins turn 1 at once.
        ck_assert_uint_eq (pmsg_uint (reply, "checkpoint", 99), k ? k : 1);
        pmsg_destroy (&reply);
        s_play (worker, checker);
        char *again = s_snapshot (worker);
        ck_assert_msg (strcmp (again, final) == 0, "resume from %zu:\n%s\nvs\n%s", k, again, final);
        free (again);
    }
    free (final);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

//  --checkpoints 3: the oldest fold into the base, the kept ones still
//  show and resume, a folded one is gone.
START_TEST (test_checkpoint_retention)
{
    const char *args [] = { "--scenario", s_scenario (&s_default), "--checkpoints", "3", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    for (int i = 0; i < 3; i++) {
        char ops [128];
        snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[%d]}]", i);
        s_handover_ok (worker, ops, "checker", NULL);
        s_handover_ok (checker, NULL, "worker", NULL);
    }
    //  Checkpoints 0..7 were recorded; 5, 6, 7 are kept.
    pmsg_t *list = testclient_call0 (worker, PMSG_CHECKPOINTS);
    EXPECT (list, PMSG_CHECKPOINT_LIST);
    ck_assert_uint_eq (testclient_array_size (list, "checkpoints"), 3);
    ck_assert_uint_eq (pmsg_uint (list, "dropped", 0), 5);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (list, "checkpoints", 0), "number", 0), 5);
    pmsg_destroy (&list);
    penc_t *enc = testclient_begin (worker, PMSG_CHECKPOINT, 1);
    penc_kv_uint (enc, "number", 4);
    pmsg_t *reply = testclient_call (worker);
    EXPECT_ERROR (reply, PERR_NO_SUCH_CHECKPOINT);
    pmsg_destroy (&reply);
    //  The oldest kept is whole (base + its difference): checkpoint 5 is
    //  the checker's second hand-over, after work [0] and [1].
    enc = testclient_begin (worker, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", 5);
    reply = testclient_call (worker);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    pmsg_destroy (&reply);
    s_expect_key (worker, "work", "[0,1]");
    s_expect_key (worker, "current_agent", "\"worker\"");
    s_expect_key (worker, "turn", "5");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

//  RESUME brings back a key deleted since, with its reducer, and drops a
//  key created since.
START_TEST (test_resume_restores_keys)
{
    testbroker_t *broker = s_start (&s_default);
    testclient_t *worker = s_agent (broker, "W1", "worker");
    testclient_t *checker = s_agent (broker, "C1", "checker");
    s_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"kept\"]}]",
                   "checker", NULL);                                  //  checkpoint 2
    s_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"r\"}]",
                   "worker", NULL);                                   //  checkpoint 3
    s_handover_ok (worker, "[{\"op\":\"delete\",\"key\":\"work\"},"
                   "{\"op\":\"declare\",\"key\":\"work\",\"reducer\":\"add\"},"
                   "{\"op\":\"update\",\"key\":\"work\",\"value\":5}]", "checker", NULL);
    s_expect_key (worker, "work", "5");
    penc_t *enc = testclient_begin (worker, PMSG_CHECKPOINT, 2);
    penc_kv_uint (enc, "number", 4);
    penc_kv_uint (enc, "since", 2);
    pmsg_t *diff = testclient_call (worker);
    EXPECT (diff, PMSG_CHECKPOINT_STATE);
    bool saw_work = false;
    for (size_t i = 0; i < testclient_array_size (diff, "entries"); i++) {
        const msgpack_object *entry = testclient_array_at (diff, "entries", i);
        if (pobj_streq (pobj_get (entry, "key"), "work")) {
            saw_work = true;
            ck_assert (pobj_streq (pobj_get (entry, "reducer"), "add"));
        }
    }
    ck_assert (saw_work);
    pmsg_destroy (&diff);
    enc = testclient_begin (worker, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", 2);
    pmsg_t *reply = testclient_call (worker);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    pmsg_destroy (&reply);
    s_expect_key (worker, "work", "[\"kept\"]");
    s_expect_key (worker, "report", "null");
    //  The reducer came back too: an update appends again.
    s_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":[1]}]",
                   "worker", NULL);
    s_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"more\"]}]",
                   "checker", NULL);
    s_expect_key (worker, "work", "[\"kept\",\"more\"]");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    s_stop (&broker);
}
END_TEST

START_TEST (test_bad_scenario_exits_2)
{
    char *path = testsuite_test_path ("corpus/config/scenario-revisions-high.scenario.yaml");
    const char *argv [] = { "parley-broker", "--scenario", path, "--router", "tcp://127.0.0.1:*",
                            "--pub", "tcp://127.0.0.1:*", "--tap", "off", NULL };
    tproc_t *proc = tproc_run (argv, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), ":5: workflow.max_revisions: 9 is out of range 1..5"),
                   "%s", tproc_err (proc));
    tproc_destroy (&proc);
    free (path);
    //  The agent's --role too.
    path = testsuite_test_path ("corpus/config/role-unknown-key.role.yaml");
    const char *agent [] = { "parley-agent", "--role", path, "--broker", "tcp://127.0.0.1:1", NULL };
    proc = tproc_run (agent, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), ":4: unknown key \"gaol\""), "%s", tproc_err (proc));
    tproc_destroy (&proc);
    free (path);
    //  Without a workflow the requests say so.
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *client = testcheck_agent (broker, "A");
    pmsg_t *reply = s_handover (client, NULL, "x", NULL);
    EXPECT_ERROR (reply, PERR_NO_WORKFLOW);
    pmsg_destroy (&reply);
    testclient_destroy (&client);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("workflow");
    TCase *tc = tcase_create ("turns");
    tcase_add_test (tc, test_start_and_guards);
    tcase_add_test (tc, test_atomic_handover);
    tcase_add_test (tc, test_revision_limit);
    tcase_add_test (tc, test_turn_limit);
    tcase_add_test (tc, test_dead_holder);
    tcase_add_test (tc, test_turn_timeout);
    tcase_add_test (tc, test_human_turn);
    tcase_add_test (tc, test_checkpoints_and_resume);
    tcase_add_test (tc, test_checkpoint_retention);
    tcase_add_test (tc, test_resume_restores_keys);
    tcase_add_test (tc, test_bad_scenario_exits_2);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
