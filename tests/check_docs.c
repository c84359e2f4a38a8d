// SPDX-License-Identifier: MIT
/*  check_docs - the README tells the truth about the binaries.

    README.md's flag tables are generated from each binary's --help (which
    is generated from its option table), by scripts/readme-flags.py. This
    suite runs the script in --check mode against the binaries under test,
    so a flag added, renamed or re-documented without `make readme` fails
    here instead of leaving users with a wrong README. It also checks that
    the README keeps the two commands it promises, and that a default the
    help names is the one the binary uses.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/testsuite.h"

static const char *
s_env (const char *name)
{
    const char *value = getenv (name);
    ck_assert_msg (value && *value, "%s is not set (run through make test)", name);
    return value;
}

START_TEST (test_flag_tables_match_help)
{
    char command [4096];
    snprintf (command, sizeof command, "python3 '%s/../scripts/readme-flags.py' '%s' --check 2>&1",
              s_env ("PARLEY_TEST_DIR"), s_env ("PARLEY_BIN_DIR"));
    FILE *pipe = popen (command, "r");
    ck_assert_ptr_nonnull (pipe);
    char output [4096] = "";
    size_t used = fread (output, 1, sizeof output - 1, pipe);
    output [used] = 0;
    int status = pclose (pipe);
    ck_assert_msg (status == 0, "readme-flags.py --check failed: %s", output);
}
END_TEST

START_TEST (test_readme_names_the_two_commands)
{
    char path [4096];
    snprintf (path, sizeof path, "%s/../README.md", s_env ("PARLEY_TEST_DIR"));
    FILE *file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    static char text [256 * 1024];
    size_t used = fread (text, 1, sizeof text - 1, file);
    text [used] = 0;
    fclose (file);
    ck_assert_ptr_nonnull (strstr (text, "make demo"));
    ck_assert_ptr_nonnull (strstr (text, "make test"));
    //  .ci/run must run exactly the README's test command.
    snprintf (path, sizeof path, "%s/../.ci/run", s_env ("PARLEY_TEST_DIR"));
    file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    used = fread (text, 1, sizeof text - 1, file);
    text [used] = 0;
    fclose (file);
    ck_assert_ptr_nonnull (strstr (text, "\nmake test\n"));
}
END_TEST

//  A default the help names must be the one the binary uses: the broker
//  journals into ./parley-data when --data-dir is not given.
START_TEST (test_help_names_the_default_used)
{
    char command [4096];
    snprintf (command, sizeof command, "'%s/parley-broker' --help 2>&1", s_env ("PARLEY_BIN_DIR"));
    FILE *pipe = popen (command, "r");
    ck_assert_ptr_nonnull (pipe);
    static char output [64 * 1024];
    size_t used = fread (output, 1, sizeof output - 1, pipe);
    output [used] = 0;
    pclose (pipe);
    const char *flag = strstr (output, "--data-dir=DIR");
    ck_assert_ptr_nonnull (flag);
    const char *line = strstr (flag, "env: PARLEY_DATA_DIR; default: ");
    ck_assert_msg (line, "%s", flag);
    ck_assert_msg (strncmp (line + 31, "./parley-data\n", 14) == 0, "%.200s", line);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("docs");
    TCase *tc = tcase_create ("readme");
    tcase_add_test (tc, test_flag_tables_match_help);
    tcase_add_test (tc, test_readme_names_the_two_commands);
    tcase_add_test (tc, test_help_names_the_default_used);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
