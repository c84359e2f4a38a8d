// SPDX-License-Identifier: MIT
/*  testsuite - runner and data helpers every Check suite shares; see
    testsuite.h.
*/
#include <czmq.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testsuite.h"
#include "tproc.h"

//  The suite's temporary root (see testsuite.h); false if it cannot be made.
static bool
s_make_root (char *root, size_t size)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (root, size, "%s/parley-%s-XXXXXX", tmp && *tmp? tmp: "/tmp",
              program_invocation_short_name);
    if (!mkdtemp (root)) {
        fprintf (stderr, "testsuite: cannot make %s: %s\n", root, strerror (errno));
        return false;
    }
    return setenv ("TMPDIR", root, 1) == 0;
}

int
testsuite_run (Suite *suite)
{
    assert (suite);
    SRunner *runner = srunner_create (suite);
    char root [512];
    if (!s_make_root (root, sizeof root)) {
        srunner_free (runner);
        return EXIT_FAILURE;
    }
    //  CK_ENV reads CK_VERBOSITY and falls back to CK_NORMAL.
    srunner_run_all (runner, CK_ENV);
    int failed = srunner_ntests_failed (runner);
    srunner_free (runner);
    const char *keep = getenv ("PARLEY_KEEP_TEST_DIRS");
    if (keep && streq (keep, "1"))
        fprintf (stderr, "testsuite: kept the temporary files in %s\n", root);
    else
    if (tproc_remove_tree (root) != 0) {
        fprintf (stderr, "testsuite: cannot remove %s: %s\n", root, strerror (errno));
        failed++;
    }
    return failed? EXIT_FAILURE: EXIT_SUCCESS;
}

char *
testsuite_test_path (const char *name)
{
    assert (name);
    const char *dir = getenv ("PARLEY_TEST_DIR");
    return zsys_sprintf ("%s/%s", dir && *dir? dir: "tests", name);
}

char *
testsuite_read_file (const char *path, size_t *size)
{
    assert (path);
    FILE *file = fopen (path, "rb");
    ck_assert_msg (file, "cannot open %s: %s", path, strerror (errno));
    //  Read in chunks rather than trusting ftell: works for pipes and
    //  files that change size under us.
    char *data = NULL;
    size_t used = 0, capacity = 0;
    while (true) {
        if (capacity - used < 4096) {
            capacity = capacity? capacity * 2: 8192;
            data = (char *) realloc (data, capacity);
            ck_assert_ptr_nonnull (data);
        }
        size_t n = fread (data + used, 1, capacity - used - 1, file);
        used += n;
        if (n == 0)
            break;
    }
    bool failed = ferror (file);
    fclose (file);
    ck_assert_msg (!failed, "cannot read %s", path);
    data [used] = 0;
    if (size)
        *size = used;
    return data;
}

char *
testsuite_read_test_file (const char *name, size_t *size)
{
    char *path = testsuite_test_path (name);
    char *data = testsuite_read_file (path, size);
    free (path);
    return data;
}

void
testsuite_write_file (const char *path, const void *data, size_t size)
{
    assert (path && (data || size == 0));
    FILE *file = fopen (path, "wb");
    ck_assert_msg (file, "cannot open %s: %s", path, strerror (errno));
    bool written = fwrite (data, 1, size, file) == size;
    ck_assert_msg (fclose (file) == 0 && written, "cannot write %s", path);
}

bool
testsuite_matches (const char *text, const char *pattern)
{
    assert (text);
    assert (pattern);
    regex_t re;
    ck_assert_msg (regcomp (&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB) == 0,
                   "bad pattern %s", pattern);
    bool found = regexec (&re, text, 0, NULL, 0) == 0;
    regfree (&re);
    return found;
}
