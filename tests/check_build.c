// SPDX-License-Identifier: MIT
/*  check_build - each build keeps its binaries in its own folder, and
    ./bin is the release build's alone.

    `make SANITIZE=1` used to point ./bin at build/san/bin, so whatever ran
    ./bin afterwards (a user's script, `make demo`, a benchmark) silently
    got ASan binaries until a plain `make` pointed it back. These checks
    run the real Makefile's `all` in an empty folder (make -f), with every
    binary, man page and library it would build marked as made (-o), so
    only its own recipe runs: the links it leaves in that folder's bin/
    are the ones it would leave in the tree, and the tree is not touched.
    The lists come from the Makefile itself (--eval), so a binary added
    there is covered here.
*/
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/testops.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define MAX_WORDS 64

//  The words of Makefile variable `name` with SANITIZE=`sanitize`, in
//  `words` (each a strdup; returns the count).
static size_t
s_make_list (const char *dir, const char *sanitize, const char *name, char **words)
{
    char makefile [PATH_MAX], sanitize_arg [32], target [64];
    snprintf (makefile, sizeof makefile, "%s/Makefile", testops_root ());
    snprintf (sanitize_arg, sizeof sanitize_arg, "SANITIZE=%s", sanitize);
    snprintf (target, sizeof target, "print-%s", name);
    char *argv [] = { "make", "--no-print-directory", "-s", "-f", makefile, sanitize_arg,
                      "--eval", "print-%: ; @echo $($*)", target, NULL };
    testops_result_t r = testops_run (dir, argv);
    ck_assert_msg (r.status == 0, "make %s failed:\n%s", target, r.output);
    size_t count = 0;
    for (char *word = strtok (r.output, " \n"); word; word = strtok (NULL, " \n")) {
        ck_assert_uint_lt (count, MAX_WORDS);
        words [count++] = strdup (word);
    }
    free (r.output);
    return count;
}

static void
s_free_words (char **words, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (words [i]);
}

//  Runs `make SANITIZE=<sanitize> all` in `dir` with the Makefile of the
//  tree and everything `all` depends on marked as made.
static void
s_make_all (const char *dir, const char *sanitize)
{
    char *binaries [MAX_WORDS], *mans [MAX_WORDS], *libs [MAX_WORDS];
    size_t nbin = s_make_list (dir, sanitize, "BINARIES", binaries);
    size_t nman = s_make_list (dir, sanitize, "MANPAGES", mans);
    size_t nlib = s_make_list (dir, sanitize, "LIBPARLEY", libs);
    ck_assert_uint_gt (nbin, 0);
    char makefile [PATH_MAX], sanitize_arg [32];
    snprintf (makefile, sizeof makefile, "%s/Makefile", testops_root ());
    snprintf (sanitize_arg, sizeof sanitize_arg, "SANITIZE=%s", sanitize);
    char *argv [8 + 2 * 3 * MAX_WORDS];
    size_t argc = 0;
    argv [argc++] = "make";
    argv [argc++] = "--no-print-directory";
    argv [argc++] = "-f";
    argv [argc++] = makefile;
    argv [argc++] = sanitize_arg;
    char **lists [] = { binaries, mans, libs };
    size_t counts [] = { nbin, nman, nlib };
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < counts [l]; i++) {
            argv [argc++] = "-o";
            argv [argc++] = lists [l][i];
        }
    argv [argc++] = "all";
    argv [argc] = NULL;
    testops_result_t r = testops_run (dir, argv);
    ck_assert_msg (r.status == 0, "make SANITIZE=%s all failed:\n%s", sanitize, r.output);
    free (r.output);
    s_free_words (binaries, nbin);
    s_free_words (mans, nman);
    s_free_words (libs, nlib);
}

//  Every link in `dir`/bin points into build/rel/bin; returns how many.
static int
s_release_links (const char *dir)
{
    char *binaries [MAX_WORDS];
    size_t nbin = s_make_list (dir, "0", "BINARIES", binaries);
    int links = 0;
    for (size_t i = 0; i < nbin; i++) {
        const char *name = strrchr (binaries [i], '/') + 1;
        char link [PATH_MAX], target [PATH_MAX], expect [PATH_MAX];
        snprintf (link, sizeof link, "%s/bin/%s", dir, name);
        ssize_t n = readlink (link, target, sizeof target - 1);
        if (n < 0)
            continue;
        target [n] = 0;
        snprintf (expect, sizeof expect, "../build/rel/bin/%s", name);
        ck_assert_msg (strcmp (target, expect) == 0, "bin/%s -> %s, not %s", name, target, expect);
        links++;
    }
    s_free_words (binaries, nbin);
    return links;
}

START_TEST (test_release_build_links_bin)
{
    testops_setup ();
    testops_require_tool ("make", "make");
    tproc_dir_t *dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (dir);
    s_make_all (tproc_dir_name (dir), "0");
    char *binaries [MAX_WORDS];
    size_t nbin = s_make_list (tproc_dir_name (dir), "0", "BINARIES", binaries);
    ck_assert_int_eq (s_release_links (tproc_dir_name (dir)), (int) nbin);
    s_free_words (binaries, nbin);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_sanitize_build_leaves_bin_alone)
{
    testops_setup ();
    testops_require_tool ("make", "make");
    tproc_dir_t *dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (dir);
    const char *here = tproc_dir_name (dir);
    //  Alone, a sanitizer build makes no ./bin at all...
    s_make_all (here, "1");
    ck_assert_int_eq (s_release_links (here), 0);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/bin", here);
    struct stat st;
    ck_assert_msg (stat (path, &st) != 0, "make SANITIZE=1 made bin/");
    //  ...and after a release build it leaves the release links as they are.
    s_make_all (here, "0");
    int links = s_release_links (here);
    ck_assert_int_gt (links, 0);
    s_make_all (here, "1");
    ck_assert_int_eq (s_release_links (here), links);
    //  The sanitizer build's binaries stay in a folder of their own.
    char *binaries [MAX_WORDS];
    size_t nbin = s_make_list (here, "1", "BINARIES", binaries);
    for (size_t i = 0; i < nbin; i++)
        ck_assert_msg (strncmp (binaries [i], "build/san/bin/", 14) == 0,
                       "SANITIZE=1 builds %s", binaries [i]);
    s_free_words (binaries, nbin);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("build");
    TCase *tc = tcase_create ("bin");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_release_build_links_bin);
    tcase_add_test (tc, test_sanitize_build_leaves_bin_alone);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
