// SPDX-License-Identifier: MIT
/*  check_ctl - parley-ctl as a person uses it, against a real broker: the
    workflow, a human turn submitted (updates and hand-over in one), the
    checkpoints listed, shown, compared and resumed, and its exit codes
    (usage 2, refused request 1, no broker 3); over CURVE, resume wants a
    key with the admin right.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcurve.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
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
    //  The person's turn: an update and the hand-over, one request.
    s_expect (router, (const char *[]) { "--role", "reviewer", "submit", "checker",
                                         "update", "work", "[\"reviewed\"]", NULL },
              0, "holder      checker", NULL);                        //  checkpoint 3
    testflow_expect_key (worker, "work", "[\"draft\",\"reviewed\"]");
    s_expect (router, (const char *[]) { "checkpoints", NULL }, 0,
              "     3  turn 3    in_progress  holder checker", NULL);
    s_expect (router, (const char *[]) { "show", "3", NULL }, 0,
              "work (append) = [\"draft\",\"reviewed\"]", "");
    s_expect (router, (const char *[]) { "diff", "2", "3", NULL }, 0,
              "current_agent (replace) = \"checker\"", NULL);
    s_expect (router, (const char *[]) { "--json", "diff", "0", "1", NULL }, 0,
              "\"entries\":[{\"key\":\"turn\"", NULL);
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
    char copy [4000];
    snprintf (copy, sizeof copy, "cp '%s/scout' '%s/ops' '%s/'", keys, keys, allow);
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
    tcase_add_test (tc, test_no_broker);
    tcase_add_test (tc, test_curve_resume_needs_admin);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
