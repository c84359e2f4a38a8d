// SPDX-License-Identifier: MIT
/*  testsuite - what every Check suite needs around its tests.

    testsuite_run is each suite's main(): it runs the suite the same way
    everywhere, so scripts/run-tests.sh and CI can rely on Check's summary
    line ("100%: Checks: N, Failures: 0, Errors: 0"). Verbosity comes from
    Check's own CK_VERBOSITY (silent, minimal, normal, verbose); unset, it
    is normal. Forking, timeouts (CK_DEFAULT_TIMEOUT) stay Check's defaults.

    Temporary files: before the tests run (and so before Check forks them),
    testsuite_run makes one folder for the whole suite,
    "$TMPDIR/parley-<suite binary>-XXXXXX" (/tmp without TMPDIR), and points
    TMPDIR at it; tproc_dirs, testbroker's folders and anything else the
    tests or their children create under $TMPDIR go inside. After the run
    the folder is removed with everything in it - including what a failed
    or timed-out test (whose forked process Check killed before it could
    clean up) left behind. PARLEY_KEEP_TEST_DIRS=1 keeps it and prints
    where it is, to look at a failure's files (broker.log, memories).

    The rest finds a suite's data ($PARLEY_TEST_DIR, the tests/ folder),
    reads files whole and matches text. These fail the running test
    (ck_assert) rather than return errors: a suite that cannot find its
    data has nothing to check. Binaries under test are started from
    $PARLEY_BIN_DIR by tproc_start, and temporary folders are tproc_dirs
    (tproc.h).
*/
#ifndef PARLEY_TESTSUITE_H
#define PARLEY_TESTSUITE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

//  Runs every test of `suite` (the runner frees it) and returns
//  EXIT_SUCCESS if none failed, else EXIT_FAILURE.
int testsuite_run (Suite *suite);

//  "$PARLEY_TEST_DIR/<name>" ("tests/<name>" when unset, so a suite also
//  runs from the repository root). Caller frees.
char *testsuite_test_path (const char *name);

//  The whole file, NUL-terminated (so text can be used as a string); its
//  length in *size when size is not NULL. Fails the running test if the
//  file cannot be read. Caller frees.
char *testsuite_read_file (const char *path, size_t *size);
//  testsuite_read_file of testsuite_test_path (name).
char *testsuite_read_test_file (const char *name, size_t *size);
//  `size` bytes of `data` as the whole of the file `path` (made or
//  truncated). Fails the running test if it cannot be written.
void testsuite_write_file (const char *path, const void *data, size_t size);

//  True if the POSIX extended regex `pattern` matches somewhere in `text`;
//  ^ and $ match at every line. A bad pattern fails the running test.
bool testsuite_matches (const char *text, const char *pattern);

#endif
