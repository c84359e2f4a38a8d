/*  check_ctl - parley-ctl as a person uses it, against a real broker: the
    workflow, a human turn submitted (updates and hand-over in one), the
    checkpoints listed, shown, compared and resumed, and its exit codes
    (usage 2, refused request 1, no broker 3).
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
main (void)
{
    Suite *suite = suite_create ("ctl");
    TCase *tc = tcase_create ("ctl");
    tcase_add_test (tc, test_human_turn_and_checkpoints);
    tcase_add_test (tc, test_no_broker);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
