// SPDX-License-Identifier: MIT
/*  check_state - the shared-state blackboard (broker/state.h), key by
    key: every reducer, clear and set on each, delete, declare conflicts,
    bad fields and protected keys. Batches, limits, change records and
    snapshots are in check_state_batch; a replica following a random
    write stream in check_state_replica.

    Ops and values are written as JSON text (tests/lib/teststate), so each
    case reads like the WRITE a client would send.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/core/state.h"
#include "lib/teststate.h"
#include "lib/testsuite.h"

//  Reasons of the calls made here directly (not through teststate).
static char s_why [512];

// ---------------------------------------------------------------------------

START_TEST (test_replace)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"plan\",\"value\":{\"a\":1}}]");
    ck_assert_int_eq (teststate_reducer (state, "plan"), STATE_REPLACE);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"plan\",\"value\":\"second\"}]");
    VALUE_IS (state, "plan", "\"second\"");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"plan\",\"value\":null}]");
    VALUE_IS (state, "plan", "null");
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"plan\",\"value\":[1,2]}]");
    VALUE_IS (state, "plan", "[1,2]");
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"plan\"}]");
    VALUE_IS (state, "plan", "null");
    ck_assert_uint_eq (state_seq (state), 5);
    state_destroy (&state);
    ck_assert_ptr_null (state);
}
END_TEST

START_TEST (test_append)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"log\",\"reducer\":\"append\"}]");
    VALUE_IS (state, "log", "[]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"log\",\"value\":[1,\"two\"]}]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"log\",\"value\":[{\"x\":3},1]}]");
    VALUE_IS (state, "log", "[1,\"two\",{\"x\":3},1]");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"log\",\"value\":5}]",
               PERR_REDUCER_MISMATCH);
    VALUE_IS (state, "log", "[1,\"two\",{\"x\":3},1]");
    //  The seed's bug: append-only lists could never be emptied.
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"log\"}]");
    VALUE_IS (state, "log", "[]");
    ck_assert_int_eq (teststate_reducer (state, "log"), STATE_APPEND);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"log\",\"value\":[7]}]");
    VALUE_IS (state, "log", "[7]");
    //  set bypasses the reducer but keeps the shape
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"log\",\"value\":[8,9]}]");
    VALUE_IS (state, "log", "[8,9]");
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"log\",\"value\":\"x\"}]",
               PERR_REDUCER_MISMATCH);
    state_destroy (&state);
}
END_TEST

//  Array headers switch from fixarray to array16 to array32 as it grows.
START_TEST (test_append_long)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"l\",\"reducer\":\"append\"}]");
    char json [256];
    size_t total = 0;
    for (int round = 0; round < 70; round++) {
        //  batches of 1000 elements, built as msgpack directly
        msgpack_sbuffer sbuf;
        msgpack_sbuffer_init (&sbuf);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
        msgpack_pack_array (&pk, 1);
        msgpack_pack_map (&pk, 3);
        msgpack_pack_str_with_body (&pk, "op", 2);
        msgpack_pack_str_with_body (&pk, "update", 6);
        msgpack_pack_str_with_body (&pk, "key", 3);
        msgpack_pack_str_with_body (&pk, "l", 1);
        msgpack_pack_str_with_body (&pk, "value", 5);
        int n = round == 0? 10: 1000;
        msgpack_pack_array (&pk, n);
        for (int i = 0; i < n; i++)
            msgpack_pack_uint32 (&pk, (uint32_t) (total + i));
        msgpack_unpacked result;
        msgpack_unpacked_init (&result);
        size_t offset = 0;
        ck_assert (msgpack_unpack_next (&result, sbuf.data, sbuf.size, &offset)
                   == MSGPACK_UNPACK_SUCCESS);
        ck_assert_int_eq (state_apply (state, &result.data, NULL, s_why, sizeof (s_why)),
                          PERR_NONE);
        msgpack_unpacked_destroy (&result);
        msgpack_sbuffer_destroy (&sbuf);
        total += n;
        if (round == 0 || round == 1 || round == 69) {
            state_entry_t entry;
            ck_assert (state_get (state, "l", &entry));
            msgpack_unpacked value;
            msgpack_unpacked_init (&value);
            offset = 0;
            ck_assert (msgpack_unpack_next (&value, entry.value, entry.size, &offset)
                       == MSGPACK_UNPACK_SUCCESS);
            ck_assert_uint_eq (offset, entry.size);
            ck_assert_int_eq (value.data.type, MSGPACK_OBJECT_ARRAY);
            ck_assert_uint_eq (value.data.via.array.size, total);
            for (size_t i = 0; i < total; i++)
                ck_assert_uint_eq (value.data.via.array.ptr [i].via.u64, i);
            msgpack_unpacked_destroy (&value);
        }
    }
    snprintf (json, sizeof (json), "[{\"op\":\"clear\",\"key\":\"l\"}]");
    APPLY_OK (state, json);
    VALUE_IS (state, "l", "[]");
    state_destroy (&state);
}
END_TEST

START_TEST (test_union)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"seen\",\"reducer\":\"union\"},"
                     " {\"op\":\"update\",\"key\":\"seen\",\"value\":[1,\"a\",1,\"a\",[2]]}]");
    VALUE_IS (state, "seen", "[1,\"a\",[2]]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"seen\",\"value\":[[2],\"b\",1,\"b\"]}]");
    VALUE_IS (state, "seen", "[1,\"a\",[2],\"b\"]");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"seen\",\"value\":{\"a\":1}}]",
               PERR_REDUCER_MISMATCH);
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"seen\"}]");
    VALUE_IS (state, "seen", "[]");
    //  membership was cleared too
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"seen\",\"value\":[\"a\",1]}]");
    VALUE_IS (state, "seen", "[\"a\",1]");
    //  set keeps the set property
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"seen\",\"value\":[3,3,4]}]");
    VALUE_IS (state, "seen", "[3,4]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"seen\",\"value\":[4,5,\"a\"]}]");
    VALUE_IS (state, "seen", "[3,4,5,\"a\"]");
    state_destroy (&state);
}
END_TEST

START_TEST (test_merge)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"pos\",\"reducer\":\"merge\"}]");
    VALUE_IS (state, "pos", "{}");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"pos\",\"value\":{\"a\":1,\"b\":2}}]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"pos\",\"value\":{\"c\":4,\"b\":3}}]");
    VALUE_IS (state, "pos", "{\"a\":1,\"b\":3,\"c\":4}");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"pos\",\"value\":[1]}]",
               PERR_REDUCER_MISMATCH);
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"pos\"}]");
    VALUE_IS (state, "pos", "{}");
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"pos\",\"value\":{\"z\":null}}]");
    VALUE_IS (state, "pos", "{\"z\":null}");
    state_destroy (&state);
}
END_TEST

//  A map with a non-string key cannot be merged (built as msgpack).
START_TEST (test_merge_int_key)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"m\",\"reducer\":\"merge\"}]");
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 1);
    msgpack_pack_int (&pk, 7);
    msgpack_pack_int (&pk, 8);
    state_raw_op_t op = { STATE_OP_UPDATE, "m", STATE_REPLACE, sbuf.data, sbuf.size };
    ck_assert_int_eq (state_apply_raw (state, &op, 1, NULL, s_why, sizeof (s_why)),
                      PERR_REDUCER_MISMATCH);
    msgpack_sbuffer_destroy (&sbuf);
    VALUE_IS (state, "m", "{}");
    state_destroy (&state);
}
END_TEST

START_TEST (test_add)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"n\",\"reducer\":\"add\"}]");
    VALUE_IS (state, "n", "0");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":5},"
                     " {\"op\":\"update\",\"key\":\"n\",\"value\":-7}]");
    VALUE_IS (state, "n", "-2");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":0.5}]");
    VALUE_IS (state, "n", "-1.5");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":2}]");
    VALUE_IS (state, "n", "0.5");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":\"1\"}]",
               PERR_REDUCER_MISMATCH);
    APPLY_OK (state, "[{\"op\":\"clear\",\"key\":\"n\"}]");
    VALUE_IS (state, "n", "0");
    //  int stays int; overflow is refused, not wrapped
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"n\",\"value\":9223372036854775807}]");
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":1}]");
    state_entry_t entry;
    ck_assert (state_get (state, "n", &entry));
    msgpack_unpacked u;
    msgpack_unpacked_init (&u);
    size_t offset = 0;
    ck_assert (msgpack_unpack_next (&u, entry.value, entry.size, &offset)
               == MSGPACK_UNPACK_SUCCESS);
    ck_assert_int_eq (u.data.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    ck_assert_uint_eq (u.data.via.u64, 9223372036854775808ULL);
    msgpack_unpacked_destroy (&u);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":9223372036854775807}]");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":1}]",
               PERR_REDUCER_MISMATCH);
    APPLY_OK (state, "[{\"op\":\"set\",\"key\":\"n\",\"value\":-9223372036854775807}]");
    APPLY_ERR (state, "[{\"op\":\"update\",\"key\":\"n\",\"value\":-2}]",
               PERR_REDUCER_MISMATCH);
    state_destroy (&state);
}
END_TEST

START_TEST (test_declare_delete)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"union\"}]");
    uint64_t seq = state_seq (state);
    //  same reducer: a no-op, no seq
    APPLY_OK (state, "[{\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"union\"}]");
    ck_assert_uint_eq (state_seq (state), seq);
    ck_assert_uint_eq (state_change_count (state), 0);
    APPLY_ERR (state, "[{\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"append\"}]",
               PERR_REDUCER_CONFLICT);
    APPLY_ERR (state, "[{\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"sum\"}]",
               PERR_BAD_REDUCER);
    APPLY_ERR (state, "[{\"op\":\"declare\",\"key\":\"k\"}]", PERR_BAD_FIELD);
    //  delete removes key and reducer
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"k\"}]");
    VALUE_IS (state, "k", "<absent>");
    const state_change_t *change = state_change_at (state, 0);
    ck_assert (change->deleted);
    ck_assert_int_eq (change->op, STATE_OP_DELETE);
    ck_assert_uint_eq (change->size, 1);
    ck_assert_int_eq (((const unsigned char *) change->value) [0], 0xc0);
    APPLY_ERR (state, "[{\"op\":\"delete\",\"key\":\"k\"}]", PERR_NO_SUCH_KEY);
    APPLY_ERR (state, "[{\"op\":\"clear\",\"key\":\"k\"}]", PERR_NO_SUCH_KEY);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"k\",\"value\":[1]}]");
    ck_assert_int_eq (teststate_reducer (state, "k"), STATE_REPLACE);
    //  redeclare after delete, in one batch
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"k\"},"
                     " {\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"add\"},"
                     " {\"op\":\"update\",\"key\":\"k\",\"value\":3}]");
    VALUE_IS (state, "k", "3");
    ck_assert_int_eq (teststate_reducer (state, "k"), STATE_ADD);
    state_destroy (&state);
}
END_TEST

START_TEST (test_bad_fields)
{
    state_t *state = state_new (NULL);
    state_protect_prefix (state, "world.");
    APPLY_ERR (state, "[]", PERR_BAD_FIELD);
    APPLY_ERR (state, "{\"op\":\"set\"}", PERR_BAD_FIELD);
    APPLY_ERR (state, "[1]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"frob\",\"key\":\"a\"}]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"a\"}]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"value\":1}]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"\",\"value\":1}]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":7,\"value\":1}]", PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"world.objects\",\"value\":1}]",
               PERR_BAD_FIELD);
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"a\\u0000b\",\"value\":1}]", PERR_BAD_FIELD);
    char json [1024];
    char key [PROTO_MAX_KEY + 2];
    memset (key, 'k', sizeof (key) - 1);
    key [sizeof (key) - 1] = 0;
    snprintf (json, sizeof (json), "[{\"op\":\"set\",\"key\":\"%s\",\"value\":1}]", key);
    APPLY_ERR (state, json, PERR_BAD_FIELD);
    key [PROTO_MAX_KEY] = 0;            //  exactly the limit is fine
    snprintf (json, sizeof (json), "[{\"op\":\"set\",\"key\":\"%s\",\"value\":1}]", key);
    APPLY_OK (state, json);
    //  the error names the op
    APPLY_ERR (state, "[{\"op\":\"set\",\"key\":\"a\",\"value\":1},{\"op\":\"set\"}]",
               PERR_BAD_FIELD);
    ck_assert_msg (strstr (teststate_why (), "op 1"), "%s", teststate_why ());
    VALUE_IS (state, "a", "<absent>");
    //  the broker may write protected keys
    unsigned char one = 0x01;
    state_raw_op_t raw = { STATE_OP_SET, "world.x", STATE_REPLACE, &one, 1 };
    ck_assert_int_eq (state_apply_raw (state, &raw, 1, NULL, NULL, 0), PERR_NONE);
    VALUE_IS (state, "world.x", "1");
    unsigned char junk [2] = { 0x92, 0x01 };  //  truncated array
    raw.value = junk;
    raw.size = 2;
    ck_assert_int_eq (state_apply_raw (state, &raw, 1, NULL, NULL, 0), PERR_BAD_FIELD);
    state_stats_t stats;
    state_stats (state, &stats);
    ck_assert_uint_eq (stats.rejected, 13);
    ck_assert_uint_eq (stats.keys, 2);
    state_destroy (&state);
}
END_TEST

static Suite *
state_suite (void)
{
    Suite *s = suite_create ("state");
    TCase *tc = tcase_create ("reducers");
    tcase_add_test (tc, test_replace);
    tcase_add_test (tc, test_append);
    tcase_add_test (tc, test_append_long);
    tcase_add_test (tc, test_union);
    tcase_add_test (tc, test_merge);
    tcase_add_test (tc, test_merge_int_key);
    tcase_add_test (tc, test_add);
    tcase_add_test (tc, test_declare_delete);
    tcase_add_test (tc, test_bad_fields);
    suite_add_tcase (s, tc);
    return s;
}

int
main (void)
{
    return testsuite_run (state_suite ());
}
