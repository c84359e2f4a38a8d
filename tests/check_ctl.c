// SPDX-License-Identifier: MIT
/*  check_ctl - parley-ctl as a person uses it, against a real broker: the
    workflow, a human turn submitted (updates and hand-over in one), the
    checkpoints listed, shown, compared (old and new values) and resumed,
    and its exit codes (usage 2, refused request 1, no broker 3); every
    command leaves nothing registered; watch's lines say what they count,
    and the scene demo runs twice in one folder; over CURVE, resume wants
    a key with the admin right, and status works with the operator's key
    alone or says why the broker refused it.
*/
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parley/client.h"
#include "pcurve.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testparley.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  Runs parley-ctl with `args` (NULL-terminated) against `router`;
//  returns the finished process.
static tproc_t *
s_ctl (const char *router, const char *const *args)
{
    const char *argv [24] = { "parley-ctl", "--broker", router };
    size_t n = 3;
    for (size_t i = 0; args [i] && n < 23; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    tproc_t *proc = tproc_run (argv, true);
    ck_assert_ptr_nonnull (proc);
    return proc;
}

static void
s_expect (const char *router, const char *const *args, int status, const char *out,
          const char *err)
{
    tproc_t *proc = s_ctl (router, args);
    ck_assert_msg (tproc_status (proc) == status, "parley-ctl %s: exit %d, wanted %d\n%s\n%s",
                   args [0], tproc_status (proc), status, tproc_out (proc), tproc_err (proc));
    if (out)
        ck_assert_msg (strstr (tproc_out (proc), out), "parley-ctl %s: no \"%s\" in\n%s",
                       args [0], out, tproc_out (proc));
    if (err)
        ck_assert_msg (strstr (tproc_err (proc), err), "parley-ctl %s: no \"%s\" in\n%s",
                       args [0], err, tproc_err (proc));
    tproc_destroy (&proc);
}

//  `needle` is on stderr exactly once (an error names its code once).
static void
s_expect_once (const char *router, const char *const *args, const char *needle)
{
    tproc_t *proc = s_ctl (router, args);
    const char *first = strstr (tproc_err (proc), needle);
    ck_assert_msg (first && !strstr (first + 1, needle), "\"%s\" not once in\n%s", needle,
                   tproc_err (proc));
    tproc_destroy (&proc);
}

//  --json prints one JSON document, an object with `field`.
static void
s_expect_doc (const char *router, const char *const *args, const char *field)
{
    tproc_t *proc = s_ctl (router, args);
    ck_assert_int_eq (tproc_status (proc), 0);
    json_error_t error;
    json_t *doc = json_loads (tproc_out (proc), 0, &error);
    ck_assert_msg (doc && json_object_get (doc, field), "parley-ctl %s: not one document with "
                   "\"%s\" (%s):\n%s", args [1], field, error.text, tproc_out (proc));
    json_decref (doc);
    tproc_destroy (&proc);
}

START_TEST (test_human_turn_and_checkpoints)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    const char *router = testbroker_router (broker);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                          "reviewer", NULL);                          //  checkpoint 2
    s_expect (router, (const char *[]) { "workflow", NULL }, 0,
              "(paused: waiting for a person)", NULL);
    //  Not the reviewer: refused, exit 1, the broker's reason shown.
    s_expect (router, (const char *[]) { "submit", "checker", NULL }, 1, NULL, "NOT_TURN_HOLDER");
    s_expect_once (router, (const char *[]) { "submit", "checker", NULL }, "NOT_TURN_HOLDER");
    //  The person's turn: an update and the hand-over, one request.
    s_expect (router, (const char *[]) { "--role", "reviewer", "submit", "checker",
                                         "update", "work", "[\"reviewed\"]", NULL },
              0, "holder      checker", NULL);                        //  checkpoint 3
    testflow_expect_key (worker, "work", "[\"draft\",\"reviewed\"]");
    s_expect (router, (const char *[]) { "checkpoints", NULL }, 0,
              "     3  turn 3    in_progress  holder checker", NULL);
    s_expect (router, (const char *[]) { "show", "3", NULL }, 0,
              "work (append) = [\"draft\",\"reviewed\"]", "");
    //  diff: each key with its value before and after.
    s_expect (router, (const char *[]) { "diff", "2", "3", NULL }, 0,
              "current_agent (replace): \"reviewer\" -> \"checker\"", NULL);
    s_expect (router, (const char *[]) { "diff", "2", "3", NULL }, 0,
              "work (append): [\"draft\"] -> [\"draft\",\"reviewed\"]", NULL);
    s_expect (router, (const char *[]) { "--json", "diff", "0", "1", NULL }, 0,
              "\"entries\":[{\"key\":\"turn\",\"reducer\":\"replace\",\"new\":1,\"old\":0}", NULL);
    s_expect (router, (const char *[]) { "show", "3", NULL }, 0,
              "changed since 2:\ncurrent_agent (replace): \"reviewer\" -> \"checker\"", NULL);
    //  One JSON document per command.
    s_expect_doc (router, (const char *[]) { "--json", "checkpoints", NULL }, "checkpoints");
    s_expect_doc (router, (const char *[]) { "--json", "show", "3", NULL }, "changes");
    s_expect_doc (router, (const char *[]) { "--json", "workflow", NULL }, "status");
    s_expect (router, (const char *[]) { "resume", "2", NULL }, 0, "holder      reviewer", NULL);
    testflow_expect_key (worker, "work", "[\"draft\"]");
    s_expect (router, (const char *[]) { "show", "9", NULL }, 1, NULL, "NO_SUCH_CHECKPOINT");
    //  Usage errors.
    s_expect (router, (const char *[]) { "show", "x", NULL }, 2, NULL, "must be a number");
    s_expect (router, (const char *[]) { "frobnicate", NULL }, 2, NULL, "unknown command");
    s_expect (router, (const char *[]) { "--role", "reviewer", "submit", "checker", "update",
                                         "work", NULL }, 2, NULL, "OP KEY [JSON]");
    s_expect (router, (const char *[]) { "--role", "reviewer", "submit", "checker", "set",
                                         "work", "[oops", NULL }, 2, NULL, "is not JSON");
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

//  Every command, then AGENTS: only the test's own agents are there. A
//  command that read as a registered agent and did not forget it would
//  show up as an agent here, in every teammate's list and in parley-web.
START_TEST (test_leaves_nothing)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    const char *router = testbroker_router (broker);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                          "reviewer", NULL);
    const char *const commands [][8] = {
        { "workflow" }, { "checkpoints" }, { "show", "2" }, { "diff", "1", "2" },
        { "status" }, { "agents" }, { "stats" }, { "health" }, { "state", "get", "work" },
        { "state", "keys" }, { "state", "set", "note", "\"hi\"" },
        { "--count", "1", "--for-ms", "300", "tail", "state.none." },
        { "show", "99" },                                   //  refused: still nothing left
        { "--role", "reviewer", "submit", "checker", "update", "work", "[\"ok\"]" },
        { "resume", "2" },
        { "--json", "workflow" },
    };
    //  An observer: it keeps no liveness and is no agent, so every id but
    //  the ones the test made itself tells of a registration some command
    //  left behind.
    parley_client_t *eyes = testparley_observer (router, "TestEyes", 0);
    for (size_t i = 0; i < sizeof commands / sizeof commands [0]; i++) {
        tproc_t *proc = s_ctl (router, commands [i]);
        char list [1024];
        testparley_registered (eyes, list, sizeof list);
        ck_assert_msg (strcmp (list, "W1,") == 0, "after parley-ctl %s %s: agents %s\n%s",
                       commands [i][0], commands [i][1] ? commands [i][1] : "", list,
                       tproc_err (proc));
        tproc_destroy (&proc);
    }
    parley_client_destroy (&eyes);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

//  parley-ctl watch through a run of the loop scenario: each turn once,
//  a person's turn said as such, an appended list by what the turn added
//  and how many it holds, old values beside new ones, and the run's end
//  on a line of its own that is no second line for the last turn.
START_TEST (test_watch_says_what_it_counts)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    const char *router = testbroker_router (broker);
    tproc_t *watch = tproc_start ((const char *[]) { "parley-ctl", "--broker", router, "watch",
                                                     "report", NULL }, true, NULL);
    ck_assert_msg (tproc_wait_for (watch, "workflow pending", 30000), "%s", tproc_err (watch));
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\",\"b\"]}]",
                          "reviewer", NULL);
    ck_assert_msg (tproc_wait_for (watch, "waiting for a person", 30000), "%s", tproc_out (watch));
    s_expect (router, (const char *[]) { "--role", "reviewer", "submit", "checker", "update",
                                         "work", "[\"c\"]", NULL }, 0, NULL, NULL);
    testclient_t *checker = testflow_agent (broker, "C1", "checker");
    testflow_handover_ok (checker, "[{\"op\":\"set\",\"key\":\"report\",\"value\":\"fine\"}]",
                          NULL, "done");
    ck_assert_int_eq (tproc_wait (watch, 30000), 0);
    const char *out = tproc_out (watch);
    ck_assert_msg (strstr (out, "turn 2   worker -> reviewer  [in_progress, revisions 0]  "
                                "waiting for a person"), "%s", out);
    ck_assert_msg (strstr (out, "      work: +2 entries, 2 in all\n"), "%s", out);
    ck_assert_msg (strstr (out, "      work: +1 entry, 3 in all\n"), "%s", out);
    ck_assert_msg (strstr (out, "      report = \"fine\"\n"), "%s", out);
    ck_assert_msg (strstr (out, "turn = 3  (was 2)"), "%s", out);
    ck_assert_msg (strstr (out, "end      checker ended the run after turn 3: done"), "%s", out);
    const char *turn3 = strstr (out, "turn 3 ");
    ck_assert_msg (turn3 && !strstr (turn3 + 1, "turn 3 "), "turn 3 twice:\n%s", out);
    ck_assert_msg (strstr (out, "\nreport:\nfine\n"), "%s", out);
    tproc_destroy (&watch);
    testclient_destroy (&checker);
    testclient_destroy (&worker);
    testflow_stop (&broker);
}
END_TEST

//  make demo-scene twice from one folder: the second run is a run of its
//  own (its broker's journal is the demo's, not ./parley-data), and the
//  scene's objects are counted as entries and as distinct objects.
START_TEST (test_demo_scene_twice)
{
    const char *tests = getenv ("PARLEY_TEST_DIR");
    ck_assert_ptr_nonnull (tests);
    tproc_dir_t *dir = tproc_dir_new ();
    char command [4096];
    snprintf (command, sizeof command, "cd '%s' && '%s/../scripts/demo-scene.sh'",
              tproc_dir_name (dir), tests);
    for (int run = 0; run < 2; run++) {
        tproc_t *demo = tproc_start ((const char *[]) { "sh", "-c", command, NULL }, false, NULL);
        int status = tproc_wait (demo, 120000);
        const char *out = tproc_out (demo);
        ck_assert_msg (status == 0, "run %d: exit %d\n%s\n%s", run + 1, status, out,
                       tproc_err (demo));
        ck_assert_msg (strstr (out, "scene_objects: +3 entries, 12 in all (3 distinct ids)"),
                       "%s", out);
        ck_assert_msg (strstr (out, "end      critic ended the run after turn 9: done"), "%s", out);
        const char *turn9 = strstr (out, "turn 9 ");
        ck_assert_msg (turn9 && !strstr (turn9 + 1, "turn 9 "), "turn 9 twice:\n%s", out);
        tproc_destroy (&demo);
    }
    char data [1200];
    snprintf (data, sizeof data, "%s/parley-data", tproc_dir_name (dir));
    ck_assert_msg (access (data, F_OK) != 0, "the demo left %s behind", data);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_no_broker)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "nobody");
    s_expect (router, (const char *[]) { "--timeout-ms", "200", "workflow", NULL }, 3, NULL,
              "cannot connect");
    free (router);
    tproc_dir_destroy (&dir);
}
END_TEST

//  A CURVE broker running the loop scenario: reading the checkpoints is an
//  agent's right, RESUME an operator's (admin).
START_TEST (test_curve_resume_needs_admin)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char keys [1100], allow [1100], why [512], server [1200], scout [1200], ops [1200];
    snprintf (keys, sizeof keys, "%s/keys", tproc_dir_name (dir));
    snprintf (allow, sizeof allow, "%s/allow", tproc_dir_name (dir));
    ck_assert_int_eq (mkdir (allow, 0700), 0);
    ck_assert_msg (pcurve_keygen (keys, "broker", NULL, PCURVE_RIGHT_AGENT, why, sizeof why) == 0,
                   "%s", why);
    ck_assert (pcurve_keygen (keys, "scout", "Scout", PCURVE_RIGHT_AGENT, why, sizeof why) == 0);
    ck_assert (pcurve_keygen (keys, "ops", "Operator", PCURVE_RIGHT_AGENT | PCURVE_RIGHT_ADMIN,
                              why, sizeof why) == 0);
    ck_assert (pcurve_keygen (keys, "viewer", NULL, PCURVE_RIGHT_TAP, why, sizeof why) == 0);
    ck_assert (pcurve_keygen (keys, "pair", "Left,Right", PCURVE_RIGHT_AGENT, why, sizeof why) == 0);
    char copy [6000];
    snprintf (copy, sizeof copy, "cp '%s/scout' '%s/ops' '%s/viewer' '%s/pair' '%s/'", keys, keys,
              keys, keys, allow);
    ck_assert_int_eq (system (copy), 0);
    snprintf (server, sizeof server, "%s/broker", keys);
    snprintf (scout, sizeof scout, "%s/scout", keys);
    snprintf (ops, sizeof ops, "%s/ops", keys);
    const char *args [] = { "--scenario", testflow_scenario (&testflow_default),
                            "--curve-keys", keys, "--curve-allow", allow, NULL };
    testbroker_t *broker = testcheck_start (args);
    const char *router = testbroker_router (broker);
    s_expect (router, (const char *[]) { "--curve-key", scout, "--curve-server-key", server,
                                         "--id", "Scout", "checkpoints", NULL },
              0, "     0  turn 0", NULL);
    s_expect (router, (const char *[]) { "--curve-key", scout, "--curve-server-key", server,
                                         "--id", "Scout", "resume", "0", NULL },
              1, NULL, "RESUME: UNAUTHORIZED");
    s_expect (router, (const char *[]) { "--curve-key", ops, "--curve-server-key", server,
                                         "--id", "Operator", "resume", "0", NULL },
              0, "turn        ", NULL);
    //  The operator commands over CURVE; a probe without keys finds no
    //  broker it can talk to (exit 3).
    s_expect (router, (const char *[]) { "--curve-key", ops, "--curve-server-key", server,
                                         "--id", "Operator", "status", NULL },
              0, "0 live of ", NULL);
    s_expect (router, (const char *[]) { "--curve-key", ops, "--curve-server-key", server,
                                         "--id", "Operator", "health", NULL }, 0, "healthy", NULL);
    //  Without --id: the one id the key names (ops: Operator, no tap right,
    //  so status reads as that agent and forgets it); a key with the tap
    //  right only reads as an observer; a key naming two ids has no id to
    //  choose, and status says the broker is up and why it refused.
    s_expect (router, (const char *[]) { "--curve-key", ops, "--curve-server-key", server,
                                         "status", NULL }, 0, "0 live of 0 registered", NULL);
    s_expect (router, (const char *[]) { "--curve-key", ops, "--curve-server-key", server,
                                         "workflow", NULL }, 0, "status      pending", NULL);
    char viewer [1200], pair [1200];
    snprintf (viewer, sizeof viewer, "%s/viewer", keys);
    snprintf (pair, sizeof pair, "%s/pair", keys);
    s_expect (router, (const char *[]) { "--curve-key", viewer, "--curve-server-key", server,
                                         "status", NULL }, 0, "0 live of 0 registered", NULL);
    s_expect (router, (const char *[]) { "--curve-key", pair, "--curve-server-key", server,
                                         "status", NULL }, 1, "broker      up at ",
              NULL);
    s_expect (router, (const char *[]) { "--curve-key", pair, "--curve-server-key", server,
                                         "status", NULL }, 1, "refused HELLO as ctl-", NULL);
    s_expect (router, (const char *[]) { "--curve-key", pair, "--curve-server-key", server,
                                         "agents", NULL }, 1, NULL, "refused HELLO as ctl-");
    s_expect (router, (const char *[]) { "--timeout-ms", "400", "health", NULL }, 3,
              "unhealthy", NULL);
    //  A key that may not speak for the id: the broker answers, and refuses.
    s_expect (router, (const char *[]) { "--curve-key", scout, "--curve-server-key", server,
                                         "--id", "Operator", "health", NULL }, 1,
              "unhealthy: ", NULL);
    //  Without the keys there is no talking to it at all; a bad key file
    //  is a usage error.
    s_expect (router, (const char *[]) { "--timeout-ms", "200", "workflow", NULL }, 3, NULL,
              "cannot connect");
    s_expect (router, (const char *[]) { "--curve-key", "/nonexistent", "--curve-server-key",
                                         server, "workflow", NULL }, 2, NULL, NULL);
    testflow_stop (&broker);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("ctl");
    TCase *tc = tcase_create ("ctl");
    tcase_add_test (tc, test_human_turn_and_checkpoints);
    tcase_add_test (tc, test_leaves_nothing);
    tcase_add_test (tc, test_watch_says_what_it_counts);
    tcase_add_test (tc, test_demo_scene_twice);
    tcase_add_test (tc, test_no_broker);
    tcase_add_test (tc, test_curve_resume_needs_admin);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
