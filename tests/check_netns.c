// SPDX-License-Identifier: MIT
/*  check_netns - Parley across machines: tests/netns_explore.sh as a Check test.

    The script puts the broker in one network namespace and three agents and
    a parley-tap in another, joined only by a veth pair (10.77.0.1 and
    10.77.0.2), and requires a complete exploration; see the script for the
    details and its cleanup.

    Creating namespaces needs root or CAP_NET_ADMIN. Where that is missing
    the script's --probe exits 77 and this suite registers no test and prints
    "SKIPPED: ..." with the reason: the run counts nothing as passed, and
    says why. CI runs as root, so it runs there. A probe that fails in any
    other way is a failure, not a skip.
*/
#include <check.h>
#include <czmq.h>
#include "lib/tproc.h"
#include "lib/testsuite.h"

#define SKIP_STATUS 77

static char *s_script;          //  tests/netns_explore.sh

START_TEST (test_netns_explore)
{
    tproc_t *run = tproc_start ((const char *[]) { "bash", s_script, NULL }, false, NULL);
    ck_assert_ptr_nonnull (run);
    int status = tproc_wait (run, 280 * 1000);
    //  Its progress lines, for the CI log.
    fprintf (stderr, "%s", tproc_out (run));
    ck_assert_msg (status == 0, "netns_explore.sh exited %d:\n%s\n%s", status,
                   tproc_out (run), tproc_err (run));
    ck_assert_ptr_nonnull (strstr (tproc_out (run), "PASSED"));
    tproc_destroy (&run);
}
END_TEST

//  The probe failed in an unexpected way: report it as a failure.
static char s_probe_output [4096];

START_TEST (test_netns_probe)
{
    ck_abort_msg ("netns_explore.sh --probe failed: %s", s_probe_output);
}
END_TEST

int
main (void)
{
    s_script = testsuite_test_path ("netns_explore.sh");
    tproc_t *probe = tproc_run ((const char *[]) { "bash", s_script, "--probe", NULL }, false);
    int status = probe? tproc_status (probe): -1;
    snprintf (s_probe_output, sizeof s_probe_output, "%s%s",
              probe? tproc_out (probe): "", probe? tproc_err (probe): "cannot run bash");
    tproc_destroy (&probe);

    Suite *suite = suite_create ("netns");
    TCase *tcase = tcase_create ("across_machines");
    tcase_set_timeout (tcase, 300);
    if (status == SKIP_STATUS) {
        //  One line that scripts/run-tests.sh shows and counts.
        const char *reason = strstr (s_probe_output, "SKIPPED: ");
        printf ("SKIPPED: netns: %s", reason? reason + 9: s_probe_output);
        fflush (stdout);
    }
    else
    if (status == 0)
        tcase_add_test (tcase, test_netns_explore);
    else
        tcase_add_test (tcase, test_netns_probe);
    suite_add_tcase (suite, tcase);
    int rc = testsuite_run (suite);
    free (s_script);
    return rc;
}
