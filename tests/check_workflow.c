// SPDX-License-Identifier: MIT
/*  check_workflow - turns over the wire against the real broker: the
    atomic HANDOVER, who may hand over, the revision loop ending at exactly
    N revisions (N+1 validations), the issue list cleared per revision,
    the turn limit, a dead or silent turn holder (failure or replacement),
    a human turn, and bad scenario and role files (exit 2). Checkpoints
    are check_checkpoints.c; the shared steps are tests/lib/testflow.c.
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
#include "lib/testflow.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

START_TEST (test_start_and_guards)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    testclient_t *watcher = testcheck_agent (broker, "watcher");
    testflow_expect_key (watcher, "current_agent", "\"worker\"");
    testflow_expect_key (watcher, "workflow_status", "\"pending\"");
    testflow_expect_key (watcher, "work", "[]");
    //  The workflow keys are the broker's; there is no world.
    penc_t *enc = testclient_begin_set (watcher, "current_agent");
    penc_kv_cstr (enc, "value", "checker");
    pmsg_t *reply = testclient_call (watcher);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    reply = testclient_call0 (watcher, PMSG_PERCEIVE);
    EXPECT_ERROR (reply, PERR_BAD_ACTION);
    pmsg_destroy (&reply);
    //  Nobody holds the turn before the entry role's agent comes.
    reply = testflow_handover (watcher, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_NOT_TURN_HOLDER);
    pmsg_destroy (&reply);

    testsub_t *sub = testcheck_sub (broker, "workflow.");
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    pmsg_t *event = testflow_event (sub, "turn", "W1");
    pmsg_destroy (&event);
    testflow_expect_key (watcher, "workflow_status", "\"in_progress\"");
    testflow_expect_key (watcher, "turn", "1");
    testsub_destroy (&sub);
    testclient_destroy (&worker);
    testclient_destroy (&watcher);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_atomic_handover)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    //  Not the holder.
    pmsg_t *reply = testflow_handover (checker, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":[1]}]",
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
        reply = testflow_handover (worker, refused [i][0], refused [i][1], NULL);
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
    pmsg_t *before = testflow_info (worker);
    uint64_t seq = pmsg_uint (before, "seq", 0);
    pmsg_destroy (&before);
    reply = testflow_handover (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\"]},"
                        "{\"op\":\"update\",\"key\":\"work\",\"value\":7}]", "checker", NULL);
    EXPECT_ERROR (reply, PERR_REDUCER_MISMATCH);
    ck_assert_msg (strstr (testflow_str (reply, "message"), "op 1:"),
                   "the error names the holder's own op: %s", testclient_describe (reply));
    pmsg_destroy (&reply);
    testflow_expect_key (worker, "work", "[]");
    testflow_expect_key (worker, "current_agent", "\"worker\"");
    pmsg_t *after = testflow_info (worker);
    ck_assert_uint_eq (pmsg_uint (after, "seq", 0), seq);
    pmsg_destroy (&after);

    //  The good one: the updates and the hand-over in one batch.
    reply = testflow_handover (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\"]}]",
                        "checker", NULL);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 2);
    ck_assert_str_eq (testflow_str (reply, "holder"), "checker");
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
    reply = testflow_handover (worker, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_NOT_TURN_HOLDER);
    pmsg_destroy (&reply);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

//  The checker finds issue `round` and sends the work back; the list must
//  hold only this validation's issue.
START_TEST (test_revision_limit)
{
    const testflow_limits_t limits = { 2, 100, 0, NULL };
    testbroker_t *broker = testflow_start (&limits);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    int validations = 0;
    for (int round = 1; ; round++) {
        testflow_handover_ok (worker, NULL, "checker", NULL);
        char ops [160];
        snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":"
                  "[\"issue-%d-a\",\"issue-%d-b\"]}]", round, round);
        pmsg_t *reply = testflow_handover (checker, ops, "worker", "revision");
        validations++;
        EXPECT (reply, PMSG_WORKFLOW_INFO);
        char expect [96];
        snprintf (expect, sizeof expect, "[\"issue-%d-a\",\"issue-%d-b\"]", round, round);
        testflow_expect_key (worker, "issues", expect);
        char status [32] = "";
        pmsg_strcpy (reply, "status", status, sizeof status);
        if (strcmp (status, "failed") == 0) {
            ck_assert_uint_eq (pmsg_uint (reply, "revisions", 99), 2);
            ck_assert_msg (strstr (testflow_str (reply, "reason"), "revision limit"),
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
    testflow_expect_key (worker, "iteration_count", "2");
    testflow_expect_key (worker, "workflow_status", "\"failed\"");
    pmsg_t *reply = testflow_handover (worker, NULL, "checker", NULL);
    EXPECT_ERROR (reply, PERR_WORKFLOW_ENDED);
    pmsg_destroy (&reply);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_turn_limit)
{
    const testflow_limits_t limits = { 5, 4, 0, NULL };
    testbroker_t *broker = testflow_start (&limits);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    testflow_handover_ok (worker, NULL, "checker", NULL);              //  turn 2
    testflow_handover_ok (checker, NULL, "worker", NULL);              //  turn 3
    testflow_handover_ok (worker, NULL, "checker", NULL);              //  turn 4
    pmsg_t *reply = testflow_handover (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"x\"}]",
                                "worker", NULL);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    ck_assert_str_eq (testflow_str (reply, "status"), "failed");
    ck_assert_msg (strstr (testflow_str (reply, "reason"), "turn limit: 4 turns"),
                   "%s", testclient_describe (reply));
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 4);
    pmsg_destroy (&reply);
    //  The last turn's own writes still land with the failure.
    testflow_expect_key (worker, "report", "\"x\"");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_dead_holder)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    testsub_t *sub = testcheck_sub (broker, "workflow.");
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *spare = testflow_agent (broker, "W2", "worker");
    pmsg_t *event = testflow_event (sub, "turn", "W1");
    pmsg_destroy (&event);
    //  The holder leaves: the other worker takes its turn.
    pmsg_t *bye = testclient_call0 (worker, PMSG_BYE);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    event = testflow_event (sub, "turn", "W2");
    ck_assert_msg (strstr (testflow_str (event, "reason"), "W1 left"), "%s",
                   testflow_str (event, "reason"));
    pmsg_destroy (&event);
    testflow_handover_ok (spare, NULL, "checker", NULL);
    //  The checker's only agent leaves with the turn: the workflow fails.
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    event = testflow_event (sub, "turn", "C1");
    pmsg_destroy (&event);
    bye = testclient_call0 (checker, PMSG_BYE);
    pmsg_destroy (&bye);
    event = testflow_event (sub, "failed", NULL);
    ck_assert_msg (strstr (testflow_str (event, "reason"), "C1 (role checker) left"), "%s",
                   testflow_str (event, "reason"));
    pmsg_destroy (&event);
    testflow_expect_status (spare, "failed");
    testclient_destroy (&checker);
    testclient_destroy (&spare);
    testclient_destroy (&worker);
    testsub_destroy (&sub);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_turn_timeout)
{
    const testflow_limits_t limits = { 3, 100, 300, "replace" };
    testbroker_t *broker = testflow_start (&limits);
    testsub_t *sub = testcheck_sub (broker, "workflow.");
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *spare = testflow_agent (broker, "W2", "worker");
    //  W1 stays silent: W2 gets the turn, then stays silent too and,
    //  with W1 still there, W1 gets it back. A holder never stalls the run.
    pmsg_t *event = testflow_event (sub, "turn", "W2");
    ck_assert_msg (strstr (testflow_str (event, "reason"), "turn timeout"), "%s",
                   testflow_str (event, "reason"));
    pmsg_destroy (&event);
    testclient_destroy (&worker);
    testclient_destroy (&spare);
    testsub_destroy (&sub);
    testflow_stop (&broker);

    const testflow_limits_t alone = { 3, 100, 300, "fail" };
    broker = testflow_start (&alone);
    sub = testcheck_sub (broker, "workflow.");
    worker = testflow_agent (broker, "W1", "worker");
    event = testflow_event (sub, "failed", NULL);
    ck_assert_msg (strstr (testflow_str (event, "reason"), "300 ms turn timeout"), "%s",
                   testflow_str (event, "reason"));
    pmsg_destroy (&event);
    testclient_destroy (&worker);
    testsub_destroy (&sub);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_human_turn)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                   "reviewer", NULL);
    pmsg_t *info = testflow_info (worker);
    ck_assert (pmsg_bool (info, "paused", false));
    ck_assert_str_eq (testflow_str (info, "holder"), "reviewer");
    ck_assert_ptr_null (pmsg_field (info, "agent"));
    pmsg_destroy (&info);
    //  A person's tool says HELLO with the role and submits the turn.
    testclient_t *person = testflow_agent (broker, "ctl-ana", "reviewer");
    testflow_handover_ok (person, NULL, "checker", NULL);
    info = testflow_info (worker);
    ck_assert (!pmsg_bool (info, "paused", false));
    ck_assert_str_eq (testflow_str (info, "holder"), "checker");
    pmsg_destroy (&info);
    testclient_destroy (&person);
    testclient_destroy (&worker);
    testflow_stop (&broker);
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
    pmsg_t *reply = testflow_handover (client, NULL, "x", NULL);
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
    tcase_add_test (tc, test_bad_scenario_exits_2);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
