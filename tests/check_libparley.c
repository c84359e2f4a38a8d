// SPDX-License-Identifier: MIT
/*  check_libparley - libparley as a library rather than as a client:

    - the ABI: the library as built against the baseline in the
      repository (scripts/abi-check.sh), and proof that the check catches
      a removed function, an added one and a field added to a public
      struct (tests/abi_mutate.sh, on copies);
    - the shape of client/: no include or call cycle, no struct fields in
      a header, no file over 600 lines (scripts/client-graph.py).

    Running out of memory is check_libparley_nomem's.
*/
#include <check.h>
#include <czmq.h>
#include "parley/client.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  The checks are programs in the tree, run from here.

//  The tree's root, from PARLEY_TEST_DIR (its tests/).
static char *
s_root (void)
{
    char *tests = testsuite_test_path ("x");
    *strrchr (tests, '/') = 0;
    char *slash = strrchr (tests, '/');
    if (slash)
        *slash = 0;
    else
        strcpy (tests, ".");
    return tests;
}

static void
s_run (const char *const *argv, const char *expect)
{
    tproc_t *run = tproc_run (argv, false);
    ck_assert_ptr_nonnull (run);
    ck_assert_msg (tproc_status (run) == 0, "%s: exit %d\n%s\n%s", argv [0], tproc_status (run),
                   tproc_out (run), tproc_err (run));
    ck_assert_msg (strstr (tproc_out (run), expect), "%s: no \"%s\" in\n%s", argv [0], expect,
                   tproc_out (run));
    tproc_destroy (&run);
}

START_TEST (test_abi_baseline)
{
    char *root = s_root ();
    int major, minor, patch;
    parley_version (&major, &minor, &patch);
    char *script = zsys_sprintf ("%s/scripts/abi-check.sh", root);
    char *lib = zsys_sprintf ("%s/build/libparley/libparley.so.%d.%d.%d", root, major, minor,
                              patch);
    char *abi = zsys_sprintf ("%s/client/libparley.abi", root);
    char *headers = zsys_sprintf ("%s/include/parley", root);
    char *map = zsys_sprintf ("%s/client/libparley.map", root);
    s_run ((const char *[]) { "/bin/bash", script, "check", lib, abi, headers, map, NULL },
           "abi-check: ");
    zstr_free (&script);
    zstr_free (&lib);
    zstr_free (&abi);
    zstr_free (&headers);
    zstr_free (&map);
    free (root);
}
END_TEST

START_TEST (test_abi_check_catches)
{
    char *root = s_root ();
    char *script = zsys_sprintf ("%s/tests/abi_mutate.sh", root);
    tproc_t *run = tproc_run ((const char *[]) { "/bin/sh", script, root, NULL }, false);
    ck_assert_ptr_nonnull (run);
    const char *out = tproc_out (run);
    ck_assert_msg (tproc_status (run) == 0, "exit %d\n%s\n%s", tproc_status (run), out,
                   tproc_err (run));
    const char *cases [] = {
        "case unchanged: passes",
        "case removed: check fails: incompatible",
        "case removed: baseline refused with the soname kept",
        "case removed: baseline taken with libparley.so.3",
        "case added: check fails until the baseline is updated",
        "case added: baseline taken (PARLEY_2.",        //  the node after the header's minor
        "case added: baseline refused in the released node PARLEY_2.0",
        "case struct_field: check fails: incompatible",
        "abi_mutate: all cases as expected" };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        ck_assert_msg (strstr (out, cases [i]), "no \"%s\" in\n%s", cases [i], out);
    tproc_destroy (&run);
    zstr_free (&script);
    free (root);
}
END_TEST

START_TEST (test_client_graph)
{
    char *root = s_root ();
    char *script = zsys_sprintf ("%s/scripts/client-graph.py", root);
    char *dir = zsys_sprintf ("%s/client", root);
    s_run ((const char *[]) { "/usr/bin/python3", script, dir, NULL },
           "no include or call cycle");
    zstr_free (&script);
    zstr_free (&dir);
    free (root);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("libparley");
    TCase *tc = tcase_create ("shape");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_abi_baseline);
    tcase_add_test (tc, test_abi_check_catches);
    tcase_add_test (tc, test_client_graph);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
