// SPDX-License-Identifier: MIT
/*  testops - helpers of the operations suites; see testops.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testops.h"

static char s_root [TESTOPS_DIR_MAX];
static char s_bin [TESTOPS_DIR_MAX];

void
testops_setup (void)
{
    const char *test_dir = getenv ("PARLEY_TEST_DIR");
    const char *bin_dir = getenv ("PARLEY_BIN_DIR");
    ck_assert_msg (test_dir && bin_dir, "run with PARLEY_TEST_DIR and PARLEY_BIN_DIR (make test)");
    char joined [PATH_MAX];
    snprintf (joined, sizeof joined, "%s/..", test_dir);
    char *root = realpath (joined, NULL);
    char *bin = realpath (bin_dir, NULL);
    ck_assert_msg (root && strlen (root) < TESTOPS_DIR_MAX, "PARLEY_TEST_DIR %s: unusable", test_dir);
    ck_assert_msg (bin && strlen (bin) < TESTOPS_DIR_MAX, "PARLEY_BIN_DIR %s: %s", bin_dir,
                   bin ? "too long" : strerror (errno));
    snprintf (s_root, sizeof s_root, "%s", root);
    snprintf (s_bin, sizeof s_bin, "%s", bin);
    free (root);
    free (bin);
}

const char *testops_root (void) { return s_root; }
const char *testops_bin (void) { return s_bin; }

testops_result_t
testops_run (const char *cwd, char *const argv [])
{
    int fds [2];
    ck_assert_int_eq (pipe (fds), 0);
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        dup2 (fds [1], 1);
        dup2 (fds [1], 2);
        close (fds [0]);
        close (fds [1]);
        //  A nested make must not join `make test`'s jobserver.
        unsetenv ("MAKEFLAGS");
        unsetenv ("MFLAGS");
        unsetenv ("MAKELEVEL");
        if (cwd && chdir (cwd) != 0)
            _exit (126);
        execvp (argv [0], argv);
        fprintf (stderr, "cannot run %s: %s\n", argv [0], strerror (errno));
        _exit (127);
    }
    close (fds [1]);
    testops_result_t result = { 0 };
    size_t size = 0, cap = 4096;
    result.output = malloc (cap);
    ck_assert_ptr_nonnull (result.output);
    ssize_t n;
    while ((n = read (fds [0], result.output + size, cap - size - 1)) > 0) {
        size += (size_t) n;
        if (cap - size < 2) {
            cap *= 2;
            result.output = realloc (result.output, cap);
            ck_assert_ptr_nonnull (result.output);
        }
    }
    result.output [size] = 0;
    close (fds [0]);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    result.status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
    return result;
}

void
testops_require_tool (const char *tool, const char *package)
{
    char *argv [] = { "sh", "-c", "command -v \"$0\"", (char *) tool, NULL };
    testops_result_t r = testops_run (NULL, argv);
    ck_assert_msg (r.status == 0, "%s is missing: install Debian's %s (scripts/deps.sh does)",
                   tool, package);
    free (r.output);
}
