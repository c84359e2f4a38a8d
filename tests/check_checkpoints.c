// SPDX-License-Identifier: MIT
/*  check_checkpoints - the workflow's checkpoints over the wire: list,
    show and diff; resume from every checkpoint of a recorded run reaches
    the same final state as the uninterrupted run; the retention bound;
    a key deleted and re-declared since comes back with its reducer.
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

//  One deterministic run: what each role writes depends only on the turn.
//  Returns when the workflow is done or failed.
static void
s_play (testclient_t *worker, testclient_t *checker)
{
    for (int guard = 0; guard < 40; guard++) {
        pmsg_t *info = testflow_info (worker);
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
            testflow_handover_ok (worker, ops, "checker", NULL);
        }
        else
        if (revisions < 2) {
            snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":"
                      "[\"gap-%llu\"]}]", (unsigned long long) turn);
            testflow_handover_ok (checker, ops, "worker", "revision");
        }
        else
            testflow_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"ok\"}]",
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
    testbroker_t *broker = testflow_start (&testflow_default);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    s_play (worker, checker);
    testflow_expect_status (worker, "done");
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
    testflow_stop (&broker);
}
END_TEST

//  --checkpoints 3: the oldest fold into the base, the kept ones still
//  show and resume, a folded one is gone.
START_TEST (test_checkpoint_retention)
{
    testbroker_t *broker = testflow_start_with (&testflow_default, "--checkpoints", "3");
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    for (int i = 0; i < 3; i++) {
        char ops [128];
        snprintf (ops, sizeof ops, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[%d]}]", i);
        testflow_handover_ok (worker, ops, "checker", NULL);
        testflow_handover_ok (checker, NULL, "worker", NULL);
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
    testflow_expect_key (worker, "work", "[0,1]");
    testflow_expect_key (worker, "current_agent", "\"worker\"");
    testflow_expect_key (worker, "turn", "5");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

//  RESUME brings back a key deleted since, with its reducer, and drops a
//  key created since.
START_TEST (test_resume_restores_keys)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"kept\"]}]",
                   "checker", NULL);                                  //  checkpoint 2
    testflow_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"report\",\"value\":\"r\"}]",
                   "worker", NULL);                                   //  checkpoint 3
    testflow_handover_ok (worker, "[{\"op\":\"delete\",\"key\":\"work\"},"
                   "{\"op\":\"declare\",\"key\":\"work\",\"reducer\":\"add\"},"
                   "{\"op\":\"update\",\"key\":\"work\",\"value\":5}]", "checker", NULL);
    testflow_expect_key (worker, "work", "5");
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
    testflow_expect_key (worker, "work", "[\"kept\"]");
    testflow_expect_key (worker, "report", "null");
    //  The reducer came back too: an update appends again.
    testflow_handover_ok (checker, "[{\"op\":\"update\",\"key\":\"issues\",\"value\":[1]}]",
                   "worker", NULL);
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"more\"]}]",
                   "checker", NULL);
    testflow_expect_key (worker, "work", "[\"kept\",\"more\"]");
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("checkpoints");
    TCase *tc = tcase_create ("checkpoints");
    tcase_add_test (tc, test_checkpoints_and_resume);
    tcase_add_test (tc, test_checkpoint_retention);
    tcase_add_test (tc, test_resume_restores_keys);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
