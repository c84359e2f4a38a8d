/*  check_state - the shared-state blackboard (broker/state.h): every
    reducer, clear and set on each, delete, declare conflicts, atomic
    batches, limits, seq contiguity, snapshots, and a replica that follows
    a random write stream through encoded STATE and STATE_UPDATE frames
    decoded by the real proto decoder.

    Ops and values are written as JSON text (tests/lib/mpjson) and turned
    into msgpack, so each case reads like the WRITE a client would send.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/state.h"
#include "lib/mpjson.h"
#include "lib/testsuite.h"

static char s_why [512];

//  Applies a JSON array of write_ops.
static perr_t
apply (state_t *state, const char *json)
{
    msgpack_unpacked result;
    const msgpack_object *ops = mpjson_object (&result, json);
    ck_assert_msg (ops, "bad test JSON: %s", json);
    s_why [0] = 0;
    perr_t rc = state_apply (state, ops, NULL, s_why, sizeof (s_why));
    msgpack_unpacked_destroy (&result);
    return rc;
}

#define APPLY_OK(state, json) do { \
    perr_t rc_ = apply ((state), (json)); \
    ck_assert_msg (rc_ == PERR_NONE, "%s -> %s: %s", (json), perr_name (rc_), s_why); \
} while (0)

#define APPLY_ERR(state, json, code) do { \
    perr_t rc_ = apply ((state), (json)); \
    ck_assert_msg (rc_ == (code), "%s -> %s (want %s): %s", (json), perr_name (rc_), \
                   perr_name (code), s_why); \
    ck_assert_msg (strstr (s_why, "nothing was written"), "why: %s", s_why); \
} while (0)

//  The key's value as compact JSON, or "<absent>".
static char s_value [4096];
static const char *
value_of (state_t *state, const char *key)
{
    state_entry_t entry;
    if (!state_get (state, key, &entry))
        return "<absent>";
    char *text = mpjson_dump (entry.value, entry.size);
    snprintf (s_value, sizeof (s_value), "%s", text);
    free (text);
    return s_value;
}

#define VALUE_IS(state, key, json) \
    ck_assert_str_eq (value_of ((state), (key)), (json))

static state_reducer_t
reducer_of (state_t *state, const char *key)
{
    state_entry_t entry;
    ck_assert (state_get (state, key, &entry));
    return entry.reducer;
}

// ---------------------------------------------------------------------------

START_TEST (test_replace)
{
    state_t *state = state_new (NULL);
    APPLY_OK (state, "[{\"op\":\"update\",\"key\":\"plan\",\"value\":{\"a\":1}}]");
    ck_assert_int_eq (reducer_of (state, "plan"), STATE_REPLACE);
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
    ck_assert_int_eq (reducer_of (state, "log"), STATE_APPEND);
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
    ck_assert_int_eq (reducer_of (state, "k"), STATE_REPLACE);
    //  redeclare after delete, in one batch
    APPLY_OK (state, "[{\"op\":\"delete\",\"key\":\"k\"},"
                     " {\"op\":\"declare\",\"key\":\"k\",\"reducer\":\"add\"},"
                     " {\"op\":\"update\",\"key\":\"k\",\"value\":3}]");
    VALUE_IS (state, "k", "3");
    ck_assert_int_eq (reducer_of (state, "k"), STATE_ADD);
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
    ck_assert_msg (strstr (s_why, "op 1"), "%s", s_why);
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
    ck_assert_msg (strstr (s_why, "op 11"), "%s", s_why);
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

static TCase *
state_more_tcase (void)
{
    TCase *tc = tcase_create ("batches");
    tcase_add_test (tc, test_atomic);
    tcase_add_test (tc, test_limits);
    tcase_add_test (tc, test_changes);
    tcase_add_test (tc, test_snapshot);
    return tc;
}

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
    suite_add_tcase (s, state_more_tcase ());
    return s;
}

int
main (void)
{
    return testsuite_run (state_suite ());
}
