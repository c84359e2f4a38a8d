// SPDX-License-Identifier: MIT
/*  check_state_batch - the shared-state blackboard (broker/state.h) a
    batch at a time: atomic batches that roll back every kind of change,
    limits (keys, bytes, value size), one change record per key with
    contiguous seqs, and snapshots and GETs, each encoded frame decoded by
    the real proto decoder.

    Ops and values are written as JSON text (tests/lib/teststate).
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/core/state.h"
#include "lib/mpjson.h"
#include "lib/teststate.h"
#include "lib/testsuite.h"

//  Reasons of the calls made here directly (not through teststate).
static char s_why [512];

// ---------------------------------------------------------------------------
//  Batches

//  The whole store, encoded as a snapshot would be.
static char *
snapshot_bytes (state_t *state, size_t *size)
{
    penc_t enc;
    penc_init (&enc);
    state_encode_prefix (state, &enc, NULL, 0);
    *size = penc_size (&enc);
    char *copy = (char *) malloc (*size);
    memcpy (copy, penc_data (&enc), *size);
    penc_fini (&enc);
    return copy;
}

#define SETUP_ALL \
    "[{\"op\":\"set\",\"key\":\"r\",\"value\":\"x\"}," \
    " {\"op\":\"declare\",\"key\":\"l\",\"reducer\":\"append\"}," \
    " {\"op\":\"update\",\"key\":\"l\",\"value\":[1,2]}," \
    " {\"op\":\"declare\",\"key\":\"u\",\"reducer\":\"union\"}," \
    " {\"op\":\"update\",\"key\":\"u\",\"value\":[1]}," \
    " {\"op\":\"declare\",\"key\":\"m\",\"reducer\":\"merge\"}," \
    " {\"op\":\"update\",\"key\":\"m\",\"value\":{\"a\":1}}," \
    " {\"op\":\"declare\",\"key\":\"n\",\"reducer\":\"add\"}," \
    " {\"op\":\"update\",\"key\":\"n\",\"value\":1}," \
    " {\"op\":\"set\",\"key\":\"d\",\"value\":\"gone\"}]"

#define BIG_BATCH(last) \
    "[{\"op\":\"update\",\"key\":\"l\",\"value\":[3,4]}," \
    " {\"op\":\"update\",\"key\":\"u\",\"value\":[2,3,1]}," \
    " {\"op\":\"update\",\"key\":\"m\",\"value\":{\"b\":2,\"a\":0}}," \
    " {\"op\":\"update\",\"key\":\"n\",\"value\":5}," \
    " {\"op\":\"delete\",\"key\":\"d\"}," \
    " {\"op\":\"set\",\"key\":\"r\",\"value\":9}," \
    " {\"op\":\"declare\",\"key\":\"new\",\"reducer\":\"append\"}," \
    " {\"op\":\"update\",\"key\":\"new\",\"value\":[1]}," \
    " {\"op\":\"clear\",\"key\":\"l\"}," \
    " {\"op\":\"update\",\"key\":\"l\",\"value\":[5]}," \
    " {\"op\":\"update\",\"key\":\"u\",\"value\":[4]}" last "]"

START_TEST (test_atomic)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, SETUP_ALL);
    ck_assert_uint_eq (state_seq (state), 6);
    state_stats_t before;
    state_stats (state, &before);
    size_t size_a, size_b;
    char *snap_a = snapshot_bytes (state, &size_a);
    //  Every kind of undo record, then a bad op at the end
    APPLY_ERR (state, BIG_BATCH (", {\"op\":\"update\",\"key\":\"n\",\"value\":\"bad\"}"),
               PERR_REDUCER_MISMATCH);
    ck_assert_msg (strstr (teststate_why (), "op 11"), "%s", teststate_why ());
    ck_assert_uint_eq (state_seq (state), 6);
    ck_assert_uint_eq (state_change_count (state), 0);
    char *snap_b = snapshot_bytes (state, &size_b);
    ck_assert_uint_eq (size_a, size_b);
    ck_assert (memcmp (snap_a, snap_b, size_a) == 0);
    free (snap_b);
    state_stats_t after;
    state_stats (state, &after);
    ck_assert_uint_eq (after.bytes, before.bytes);
    ck_assert_uint_eq (after.keys, before.keys);
    //  union membership was rolled back with the elements
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"u\",\"value\":[1,2]}]");
    VALUE_IS (state, "u", "[1,2]");
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"u\",\"value\":[1]}]");
    //  the same batch without the bad op takes effect in full
    APPLY_OK (state, BIG_BATCH (""));
    VALUE_IS (state, "l", "[5]");
    VALUE_IS (state, "u", "[1,2,3,4]");
    VALUE_IS (state, "m", "{\"a\":0,\"b\":2}");
    VALUE_IS (state, "n", "6");
    VALUE_IS (state, "d", "<absent>");
    VALUE_IS (state, "r", "9");
    VALUE_IS (state, "new", "[1]");
    free (snap_a);
    state_destroy (&state);
}
END_TEST

START_TEST (test_limits)
{
    state_limits_t limits = { .max_keys = 3, .max_bytes = 100, .max_value = 50 };
    state_t *state = state_new (&limits);
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"a\",\"value\":1},"
                     " {\"op\":\"set\",\"key\":\"b\",\"value\":2},"
                     " {\"op\":\"set\",\"key\":\"c\",\"value\":3}]");
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"d\",\"value\":4}]", PERR_STATE_FULL);
    //  a delete first makes room within the same batch
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"c\"},{\"op\":\"set\",\"key\":\"d\",\"value\":4}]");
    //  one value over max_value
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"a\",\"value\":"
                      "\"0123456789012345678901234567890123456789012345678901234567890\"}]",
               PERR_STATE_FULL);
    VALUE_IS (state, "a", "1");
    //  total bytes: 3 keys of 1 + 35 bytes (str8 of 33) is 108 > 100
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"a\",\"value\":\"012345678901234567890123456789012\"},"
                     " {\"op\":\"set\",\"key\":\"b\",\"value\":\"012345678901234567890123456789012\"}]");
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"d\",\"value\":\"012345678901234567890123456789012\"}]",
               PERR_STATE_FULL);
    //  an append that would grow past max_value leaves the list as it was
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"a\"},{\"op\":\"delete\",\"key\":\"b\"},"
                     " {\"op\":\"declare\",\"key\":\"l\",\"reducer\":\"append\"},"
                     " {\"op\":\"update\",\"key\":\"l\",\"value\":[1,2,3,4,5,6,7,8,9,10,11,12,"
                     "13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40]}]");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"l\",\"value\":[1,2,3,4,5,6,7,8,9,10]}]",
               PERR_STATE_FULL);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"l\",\"value\":[41]}]");
    VALUE_IS (state, "l", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
                          "26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41]");
    state_stats_t stats;
    state_stats (state, &stats);
    ck_assert_uint_eq (stats.rejected_full, 4);
    ck_assert_uint_eq (stats.rejected, 4);
    ck_assert_uint_eq (stats.limits.max_keys, 3);
    ck_assert_uint_eq (stats.keys, 2);
    state_destroy (&state);
}
END_TEST

//  One record per key, in first-touch order, contiguous seqs; and each
//  record encodes as a STATE_UPDATE the real decoder accepts.
START_TEST (test_changes)
{
    state_t *state = state_new (NULL);
    msgpack_unpacked u;
    const msgpack_object *ops = mpjson_object (&u,
        "[{\"op\":\"set\",\"key\":\"a\",\"value\":1},"
        " {\"op\":\"declare\",\"key\":\"b\",\"reducer\":\"add\"},"
        " {\"op\":\"update\",\"key\":\"a\",\"value\":2},"
        " {\"op\":\"update\",\"key\":\"c\",\"value\":[true]}]");
    state_result_t result;
    ck_assert_int_eq (state_apply (state, ops, &result, NULL, 0), PERR_NONE);
    msgpack_unpacked_destroy (&u);
    ck_assert_uint_eq (result.seq, 3);
    ck_assert_uint_eq (result.changed, 3);
    ck_assert_uint_eq (state_change_count (state), 3);
    const char *keys [] = { "a", "b", "c" };
    const char *values [] = { "2", "0", "[true]" };
    state_op_t last_ops [] = { STATE_OP_UPDATE, STATE_OP_DECLARE, STATE_OP_UPDATE };
    for (size_t i = 0; i < 3; i++) {
        const state_change_t *change = state_change_at (state, i);
        ck_assert_str_eq (change->key, keys [i]);
        ck_assert_uint_eq (change->seq, i + 1);
        ck_assert_int_eq (change->op, last_ops [i]);
        ck_assert (!change->deleted);
        char *text = mpjson_dump (change->value, change->size);
        ck_assert_str_eq (text, values [i]);
        free (text);
        penc_t enc;
        penc_init (&enc);
        penc_begin (&enc, PMSG_STATE_UPDATE, 0, STATE_CHANGE_FIELDS);
        state_encode_change (change, &enc);
        perr_t err;
        uint64_t id;
        pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc),
                                   pwire_default_limits (), &err, &id, s_why, sizeof (s_why));
        ck_assert_msg (msg, "%s", s_why);
        ck_assert_uint_eq (pmsg_uint (msg, "seq", 0), i + 1);
        size_t len;
        const char *key = pmsg_str (msg, "key", &len);
        ck_assert (len == 1 && key [0] == keys [i][0]);
        pmsg_destroy (&msg);
        penc_fini (&enc);
    }
    ck_assert_ptr_null (state_change_at (state, 3));
    state_entry_t entry;
    ck_assert (state_get (state, "b", &entry));
    ck_assert_uint_eq (entry.seq, 2);
    //  a failed batch leaves no records and no seq
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"z\",\"value\":1},{\"op\":\"clear\",\"key\":\"q\"}]",
               PERR_NO_SUCH_KEY);
    ck_assert_uint_eq (state_change_count (state), 0);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"b\",\"value\":1}]");
    ck_assert_uint_eq (state_change_at (state, 0)->seq, 4);
    ck_assert (state_get (state, "b", &entry));
    ck_assert_uint_eq (entry.seq, 4);
    state_destroy (&state);
}
END_TEST

//  Batches past the small-batch paths: more than 16 ops (pass 1 allocates
//  its own buffers) and more than 16 changed keys (the touched hash takes
//  over from the linear scan), repeats across the switch, then a failed
//  big batch and small ones again.
START_TEST (test_many_changes)
{
    state_t *state = state_new (NULL);
    for (int round = 0; round < 3; round++) {
        char json [8192];
        size_t used = (size_t) snprintf (json, sizeof json, "[");
        for (int i = 0; i < 60; i++)
            used += (size_t) snprintf (json + used, sizeof json - used,
                                       "%s{\"op\":\"set\",\"key\":\"k%d\",\"value\":%d}",
                                       i ? "," : "", i % 25, i + round * 100);
        snprintf (json + used, sizeof json - used, "]");
        msgpack_unpacked u;
        const msgpack_object *ops = mpjson_object (&u, json);
        state_result_t result;
        ck_assert_int_eq (state_apply (state, ops, &result, s_why, sizeof s_why), PERR_NONE);
        msgpack_unpacked_destroy (&u);
        ck_assert_uint_eq (result.changed, 25);
        ck_assert_uint_eq (state_change_count (state), 25);
        for (int k = 0; k < 25; k++) {
            const state_change_t *change = state_change_at (state, (size_t) k);
            char key [8], value [16];
            snprintf (key, sizeof key, "k%d", k);
            ck_assert_str_eq (change->key, key);
            ck_assert_uint_eq (change->seq, (uint64_t) (round * 27 + k + 1));
            //  the last write to key k: op 50 + k (k < 10) or 25 + k
            snprintf (value, sizeof value, "%d", (k < 10 ? 50 + k : 25 + k) + round * 100);
            char *text = mpjson_dump (change->value, change->size);
            ck_assert_str_eq (text, value);
            free (text);
        }
        //  A failing batch of many keys leaves nothing, then a small one
        //  finds no stale record of the big one.
        APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"a1\",\"value\":1},{\"op\":\"set\",\"key\":\"a2\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"a3\",\"value\":1},{\"op\":\"set\",\"key\":\"a4\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"a5\",\"value\":1},{\"op\":\"set\",\"key\":\"a6\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"a7\",\"value\":1},{\"op\":\"set\",\"key\":\"a8\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"a9\",\"value\":1},{\"op\":\"set\",\"key\":\"b1\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"b2\",\"value\":1},{\"op\":\"set\",\"key\":\"b3\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"b4\",\"value\":1},{\"op\":\"set\",\"key\":\"b5\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"b6\",\"value\":1},{\"op\":\"set\",\"key\":\"b7\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"b8\",\"value\":1},{\"op\":\"set\",\"key\":\"b9\",\"value\":1},"
                   "{\"op\":\"clear\",\"key\":\"nothing\"}]", PERR_NO_SUCH_KEY);
        ck_assert_uint_eq (state_change_count (state), 0);
        ck_assert_str_eq (teststate_value (state, "a1"), "<absent>");
        APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"a1\",\"value\":1},{\"op\":\"set\",\"key\":\"a1\",\"value\":2}]");
        ck_assert_uint_eq (state_change_count (state), 1);
        APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"a1\"}]");
        ck_assert_uint_eq (state_change_count (state), 1);
        //  25 seqs for the big batch, none for the failed one, one each
        //  for the two small ones
        ck_assert_uint_eq (state_seq (state), (uint64_t) ((round + 1) * 27));
    }
    state_destroy (&state);
}
END_TEST

static void
count_visit (const state_entry_t *entry, void *arg)
{
    char *order = (char *) arg;
    strcat (order, entry->key);
    strcat (order, " ");
}

START_TEST (test_snapshot)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"a.2\",\"value\":2},"
                     " {\"op\":\"set\",\"key\":\"b\",\"value\":3},"
                     " {\"op\":\"set\",\"key\":\"a.1\",\"value\":1},"
                     " {\"op\":\"set\",\"key\":\"a\",\"value\":0}]");
    char order [256] = "";
    ck_assert_uint_eq (state_foreach_prefix (state, "a.", 2, count_visit, order), 2);
    ck_assert_str_eq (order, "a.1 a.2 ");
    order [0] = 0;
    ck_assert_uint_eq (state_foreach_prefix (state, NULL, 0, count_visit, order), 4);
    ck_assert_str_eq (order, "a a.1 a.2 b ");
    //  a full STATE reply, decoded by the real decoder
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_STATE, 7, 2);
    penc_kv_uint (&enc, "seq", state_seq (state));
    penc_key (&enc, "entries");
    ck_assert_uint_eq (state_encode_prefix (state, &enc, "a.", 2), 2);
    perr_t err;
    uint64_t id;
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), pwire_default_limits (),
                               &err, &id, s_why, sizeof (s_why));
    ck_assert_msg (msg, "%s", s_why);
    ck_assert_uint_eq (pmsg_uint (msg, "seq", 0), 4);
    char *text = mpjson_dump_object (pmsg_field (msg, "entries"));
    ck_assert_str_eq (text, "[{\"key\":\"a.1\",\"reducer\":\"replace\",\"seq\":3,\"value\":1},"
                            "{\"key\":\"a.2\",\"reducer\":\"replace\",\"seq\":1,\"value\":2}]");
    free (text);
    pmsg_destroy (&msg);
    //  GET: missing keys and non-strings are skipped
    penc_reset (&enc);
    msgpack_unpacked u;
    const msgpack_object *keys = mpjson_object (&u, "[\"b\",\"zz\",5,\"a.1\"]");
    ck_assert_uint_eq (state_encode_keys (state, &enc, keys), 2);
    msgpack_unpacked_destroy (&u);
    text = mpjson_dump (penc_data (&enc), penc_size (&enc));
    ck_assert_str_eq (text, "[{\"key\":\"b\",\"reducer\":\"replace\",\"seq\":2,\"value\":3},"
                            "{\"key\":\"a.1\",\"reducer\":\"replace\",\"seq\":3,\"value\":1}]");
    free (text);
    penc_fini (&enc);
    state_destroy (&state);
}
END_TEST

static Suite *
state_batch_suite (void)
{
    Suite *s = suite_create ("state_batch");
    TCase *tc = tcase_create ("batches");
    tcase_add_test (tc, test_atomic);
    tcase_add_test (tc, test_limits);
    tcase_add_test (tc, test_changes);
    tcase_add_test (tc, test_many_changes);
    tcase_add_test (tc, test_snapshot);
    suite_add_tcase (s, tc);
    return s;
}

int
main (void)
{
    return testsuite_run (state_batch_suite ());
}
