// SPDX-License-Identifier: MIT
/*  check_state_limits - what --max-state-bytes counts:
    - A union key keeps a membership set beside its encoded list (a copy of
      every element plus a hash item, ~100 B each). The set counts against
      the limit, not only the encoding (which would let a union of small
      elements hold about 20x the memory allowed), so such a write is
      STATE_FULL while the same elements as an append fit.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/teststate.h"
#include "lib/testsuite.h"

//  `[{"op":"update","key":KEY,"value":[0,1,...,n-1]}]`, after a declare.
static char *
s_update_json (const char *key, const char *reducer, int n)
{
    size_t size = 256 + (size_t) n * 8;
    char *json = malloc (size);
    ck_assert_ptr_nonnull (json);
    size_t used = (size_t) snprintf (json, size,
        "[{\"op\":\"declare\",\"key\":\"%s\",\"reducer\":\"%s\"},"
        " {\"op\":\"update\",\"key\":\"%s\",\"value\":[", key, reducer, key);
    for (int i = 0; i < n; i++)
        used += (size_t) snprintf (json + used, size - used, "%s%d", i ? "," : "", i);
    snprintf (json + used, size - used, "]}]");
    return json;
}

START_TEST (test_union_set_counts_against_max_bytes)
{
    //  1000 small ints encode in about 2.6 KB; their set costs ~100 KB.
    state_limits_t limits = { .max_bytes = 20000 };
    state_t *state = state_new (&limits);
    char *json = s_update_json ("list", "append", 1000);
    APPLY_OK (state, json);
    free (json);
    json = s_update_json ("set", "union", 1000);
    APPLY_ERR (state, json, PERR_STATE_FULL);
    free (json);
    VALUE_IS (state, "set", "<absent>");

    //  A small union still fits, and clearing it gives its bytes back.
    state_stats_t before, after;
    state_stats (state, &before);
    json = s_update_json ("set", "union", 20);
    APPLY_OK (state, json);
    free (json);
    state_stats (state, &after);
    ck_assert_uint_gt (after.bytes - before.bytes, 20 * 96);
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"set\"}]");
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"set\"}]");
    state_stats (state, &after);
    ck_assert_uint_eq (after.bytes, before.bytes);
    state_destroy (&state);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("state_limits");
    TCase *tc = tcase_create ("state");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_union_set_counts_against_max_bytes);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
