// SPDX-License-Identifier: MIT
/*  check_proto_api - proto/ by hand: typed getters on real frames
    (HELLO/WELCOME, SEND/MAIL, ERROR, raw values), the envelope rules,
    unknown fields, duplicate keys inside any-values, the to/channel rule,
    names, the type/record/error tables and custom limits.

    check_proto.c covers every type generically from the schema table;
    check_proto_wire.c the byte-level rejections and the corpus.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"
#include "lib/testproto.h"
#include "lib/testsuite.h"

START_TEST (test_hello_welcome)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_HELLO, UINT64_MAX, 2);
    penc_kv_cstr (&enc, "agent", "Agent1");
    penc_key (&enc, "caps");
    msgpack_pack_array (penc_packer (&enc), 2);
    penc_cstr (&enc, "explore");
    penc_cstr (&enc, "llm");
    perr_t err;
    char why [256], name [PROTO_MAX_NAME + 1];
    pmsg_t *msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    ck_assert_int_eq (pmsg_type_kind (pmsg_type (msg)), PMSG_REQUEST);
    ck_assert_uint_eq (pmsg_id (msg), UINT64_MAX);
    ck_assert (pmsg_strcpy (msg, "agent", name, sizeof (name)));
    ck_assert_str_eq (name, "Agent1");
    const msgpack_object *caps = pmsg_field (msg, "caps");
    ck_assert_int_eq (caps->type, MSGPACK_OBJECT_ARRAY);
    ck_assert (pobj_streq (&caps->via.array.ptr [1], "llm"));
    pmsg_destroy (&msg);

    penc_begin (&enc, PMSG_WELCOME, 1, 9);
    penc_kv_uint (&enc, "version", PROTO_VERSION);
    penc_kv_cstr (&enc, "agent", "Agent1");
    penc_kv_cstr (&enc, "pub", "tcp://127.0.0.1:5556");
    penc_kv_uint (&enc, "heartbeat_ms", 1000);
    penc_kv_uint (&enc, "liveness_ms", 5000);
    penc_kv_uint (&enc, "max_body", PROTO_MAX_BODY);
    penc_kv_uint (&enc, "max_batch", PROTO_MAX_BATCH);
    penc_kv_uint (&enc, "acked", 17);
    penc_key (&enc, "world");
    msgpack_pack_map (penc_packer (&enc), 3);
    penc_kv_cstr (&enc, "kind", "line");
    penc_kv_num (&enc, "coverage", 0.75);
    penc_kv_bool (&enc, "done", false);
    msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    ck_assert_uint_eq (pmsg_uint (msg, "liveness_ms", 0), 5000);
    ck_assert_uint_eq (pmsg_uint (msg, "mail_seq", 3), 3);      //  absent: fallback
    const msgpack_object *world = pmsg_field (msg, "world");
    ck_assert_double_eq (pobj_num (world, "coverage", -1), 0.75);
    ck_assert (!pobj_bool (world, "done", true));
    ck_assert (pobj_strcpy (world, "kind", name, sizeof (name)));
    ck_assert_str_eq (name, "line");
    pmsg_destroy (&msg);
    penc_fini (&enc);
}
END_TEST

START_TEST (test_send_and_mail)
{
    penc_t enc;
    penc_init (&enc);
    msgpack_packer *pk = penc_packer (&enc);
    penc_begin (&enc, PMSG_MAIL, 5, 3);
    penc_key (&enc, "messages");
    msgpack_pack_array (pk, 2);
    msgpack_pack_map (pk, 5);
    penc_kv_uint (&enc, "seq", 11);
    penc_kv_uint (&enc, "ts", 1700000000000000ull);
    penc_kv_cstr (&enc, "from", "a");
    penc_kv_cstr (&enc, "to", "all");
    penc_kv_bin (&enc, "body", "x\0y", 3);
    msgpack_pack_map (pk, 5);
    penc_kv_uint (&enc, "seq", 12);
    penc_kv_uint (&enc, "ts", 1);
    penc_kv_cstr (&enc, "from", "$broker");
    penc_kv_cstr (&enc, "channel", "news");
    penc_kv_cstr (&enc, "body", "");
    penc_kv_uint (&enc, "pending", 0);
    penc_kv_uint (&enc, "acked", 10);
    perr_t err;
    char why [256];
    pmsg_t *msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    const msgpack_object *items = pmsg_field (msg, "messages");
    ck_assert_uint_eq (items->via.array.size, 2);
    const msgpack_object *first = &items->via.array.ptr [0], *second = &items->via.array.ptr [1];
    size_t len;
    const char *body = pobj_str (first, "body", &len);
    ck_assert_uint_eq (len, 3);
    ck_assert_mem_eq (body, "x\0y", 3);
    ck_assert_uint_eq (pobj_uint (first, "ts", 0), 1700000000000000ull);
    ck_assert_ptr_null (pobj_str (first, "channel", &len));
    body = pobj_str (second, "body", &len);
    ck_assert_ptr_nonnull (body);                   //  empty, not absent
    ck_assert_uint_eq (len, 0);
    char text [8];
    ck_assert (!pobj_strcpy (first, "body", text, sizeof (text)));   //  has a NUL
    ck_assert (!pobj_strcpy (second, "from", text, 4));              //  too long
    ck_assert_uint_eq (pmsg_uint (msg, "acked", 0), 10);
    pmsg_destroy (&msg);
    penc_fini (&enc);
}
END_TEST

START_TEST (test_error_reply)
{
    penc_t enc;
    penc_init (&enc);
    penc_error (&enc, 77, PERR_INBOX_FULL, "inbox of %s is full (%d)", "Agent2", 100);
    perr_t err;
    char why [256], text [PROTO_MAX_TEXT + 1];
    pmsg_t *msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    ck_assert_int_eq (pmsg_type (msg), PMSG_ERROR);
    ck_assert_uint_eq (pmsg_id (msg), 77);
    ck_assert_uint_eq (pmsg_uint (msg, "code", 0), PERR_INBOX_FULL);
    ck_assert (pmsg_strcpy (msg, "error", text, sizeof (text)));
    ck_assert_str_eq (text, "INBOX_FULL");
    ck_assert (pmsg_strcpy (msg, "message", text, sizeof (text)));
    ck_assert_str_eq (text, "inbox of Agent2 is full (100)");
    pmsg_destroy (&msg);
    //  Over-long messages are cut to the protocol's text limit, and the
    //  same encoder is reused without leftovers from the previous frame.
    char *big = malloc (PROTO_MAX_TEXT * 2);
    memset (big, 'z', PROTO_MAX_TEXT * 2 - 1);
    big [PROTO_MAX_TEXT * 2 - 1] = 0;
    penc_error (&enc, 0, PERR_MALFORMED, "%s", big);
    free (big);
    msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    size_t len;
    ck_assert_ptr_nonnull (pmsg_str (msg, "message", &len));
    ck_assert_uint_eq (len, PROTO_MAX_TEXT);
    pmsg_destroy (&msg);
    penc_fini (&enc);
}
END_TEST

START_TEST (test_raw_and_object)
{
    //  A state value encoded elsewhere is copied verbatim into a WRITE op.
    penc_t value, enc;
    penc_init (&value);
    penc_init (&enc);
    msgpack_pack_array (penc_packer (&value), 2);
    msgpack_pack_int64 (penc_packer (&value), -7);
    penc_cstr (&value, "x");
    penc_begin (&enc, PMSG_WRITE, 3, 1);
    penc_key (&enc, "ops");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 3);
    penc_kv_cstr (&enc, "op", "update");
    penc_kv_cstr (&enc, "key", "notes");
    penc_kv_raw (&enc, "value", penc_data (&value), penc_size (&value));
    perr_t err;
    char why [256];
    pmsg_t *msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s", why);
    const msgpack_object *op = &pmsg_field (msg, "ops")->via.array.ptr [0];
    const msgpack_object *got = pobj_get (op, "value");
    ck_assert_int_eq (got->type, MSGPACK_OBJECT_ARRAY);
    ck_assert_int_eq (got->via.array.ptr [0].via.i64, -7);
    //  penc_object re-encodes it to the same bytes.
    penc_t again;
    penc_init (&again);
    penc_object (&again, got);
    ck_assert_uint_eq (penc_size (&again), penc_size (&value));
    ck_assert_mem_eq (penc_data (&again), penc_data (&value), penc_size (&value));
    ck_assert_int_eq (pobj_int (op, "key", -1), -1);        //  wrong kind: fallback
    pmsg_destroy (&msg);
    penc_fini (&again);
    penc_fini (&value);
    penc_fini (&enc);
}
END_TEST

//  Frames with a hand-written top level: `pairs` key/value pairs follow.
static penc_t s_enc;

static msgpack_packer *
s_start (size_t pairs)
{
    penc_init (&s_enc);
    msgpack_pack_map (penc_packer (&s_enc), pairs);
    return penc_packer (&s_enc);
}

static perr_t
s_finish (uint64_t *id)
{
    perr_t err = 99;
    char why [256];
    pmsg_t *msg = pmsg_decode (penc_data (&s_enc), penc_size (&s_enc), NULL, &err, id,
                               why, sizeof (why));
    ck_assert_int_eq (msg == NULL, err != PERR_NONE);
    pmsg_destroy (&msg);
    penc_fini (&s_enc);
    return err;
}

START_TEST (test_envelope)
{
    uint64_t id;
    s_start (1); penc_kv_cstr (&s_enc, "t", "OK");
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);              //  no v
    s_start (3); penc_kv_uint (&s_enc, "v", 2); penc_kv_cstr (&s_enc, "t", "OK");
    penc_kv_uint (&s_enc, "id", 42);
    ck_assert_int_eq (s_finish (&id), PERR_VERSION);
    ck_assert_uint_eq (id, 42);                                     //  echoed
    s_start (2); penc_kv_uint (&s_enc, "v", 0); penc_kv_cstr (&s_enc, "t", "NOPE");
    ck_assert_int_eq (s_finish (&id), PERR_VERSION);                //  v before t
    s_start (2); penc_kv_cstr (&s_enc, "v", "1"); penc_kv_cstr (&s_enc, "t", "OK");
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);
    s_start (2); penc_kv_int (&s_enc, "v", -1); penc_kv_cstr (&s_enc, "t", "OK");
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);
    s_start (1); penc_kv_uint (&s_enc, "v", 1);
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);              //  no t
    s_start (2); penc_kv_uint (&s_enc, "v", 1); penc_kv_uint (&s_enc, "t", 3);
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);
    s_start (3); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "NOPE");
    penc_kv_uint (&s_enc, "id", 9);
    ck_assert_int_eq (s_finish (&id), PERR_UNKNOWN_TYPE);
    ck_assert_uint_eq (id, 9);
    s_start (2); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "");
    ck_assert_int_eq (s_finish (&id), PERR_UNKNOWN_TYPE);
    s_start (2); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "ok");
    ck_assert_int_eq (s_finish (&id), PERR_UNKNOWN_TYPE);           //  case matters
    s_start (3); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    penc_kv_int (&s_enc, "id", -3);
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);
    s_start (3); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    penc_kv_cstr (&s_enc, "id", "x");
    ck_assert_int_eq (s_finish (&id), PERR_BAD_FIELD);
    msgpack_packer *pk = s_start (3); penc_kv_uint (&s_enc, "v", 1);
    penc_kv_cstr (&s_enc, "t", "OK"); penc_key (&s_enc, "id"); msgpack_pack_nil (pk);
    ck_assert_int_eq (s_finish (&id), PERR_NONE);                   //  nil id = 0
    ck_assert_uint_eq (id, 0);
    s_start (2); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    ck_assert_int_eq (s_finish (&id), PERR_NONE);                   //  id optional
    s_start (3); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    penc_kv_cstr (&s_enc, "t", "OK");
    ck_assert_int_eq (s_finish (&id), PERR_MALFORMED);              //  duplicate t
    s_start (4); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    penc_kv_uint (&s_enc, "id", 1); penc_kv_uint (&s_enc, "id", 2);
    ck_assert_int_eq (s_finish (&id), PERR_MALFORMED);
    pk = s_start (3); penc_kv_uint (&s_enc, "v", 1); penc_kv_cstr (&s_enc, "t", "OK");
    msgpack_pack_uint64 (pk, 7); msgpack_pack_uint64 (pk, 7);
    ck_assert_int_eq (s_finish (&id), PERR_MALFORMED);              //  int key
    penc_init (&s_enc); msgpack_pack_array (penc_packer (&s_enc), 0);
    ck_assert_int_eq (s_finish (&id), PERR_MALFORMED);              //  not a map
    penc_init (&s_enc); penc_cstr (&s_enc, "HELLO");
    ck_assert_int_eq (s_finish (&id), PERR_MALFORMED);
}
END_TEST

//  `pairs` unknown keys on a HEARTBEAT; key `dup` (if >= 0) repeats key 0.
static perr_t
s_unknown_keys (size_t pairs, long dup)
{
    s_start (2 + pairs);
    penc_kv_uint (&s_enc, "v", 1);
    penc_kv_cstr (&s_enc, "t", "HEARTBEAT");
    for (size_t i = 0; i < pairs; i++) {
        char key [32];
        snprintf (key, sizeof (key), "x-%zu", (long) i == dup ? 0 : i);
        penc_kv_uint (&s_enc, key, i);
    }
    return s_finish (NULL);
}

START_TEST (test_unknown_fields)
{
    ck_assert_int_eq (s_unknown_keys (1, -1), PERR_NONE);
    ck_assert_int_eq (s_unknown_keys (3, -1), PERR_NONE);
    ck_assert_int_eq (s_unknown_keys (3, 2), PERR_MALFORMED);
    ck_assert_int_eq (s_unknown_keys (500, -1), PERR_NONE);
    ck_assert_int_eq (s_unknown_keys (500, 499), PERR_MALFORMED);   //  sorted path
    //  An unknown field in a record is ignored too.
    msgpack_packer *pk = s_start (3);
    penc_kv_uint (&s_enc, "v", 1);
    penc_kv_cstr (&s_enc, "t", "SEND");
    penc_key (&s_enc, "messages");
    msgpack_pack_array (pk, 1);
    msgpack_pack_map (pk, 3);
    penc_kv_cstr (&s_enc, "to", "b");
    penc_kv_cstr (&s_enc, "body", "hi");
    penc_kv_cstr (&s_enc, "priority", "high");
    ck_assert_int_eq (s_finish (NULL), PERR_NONE);
}
END_TEST

//  A WRITE whose one op carries `value` (raw msgpack) verbatim.
static perr_t
s_write_value (const void *value, size_t len)
{
    msgpack_packer *pk = s_start (3);
    penc_kv_uint (&s_enc, "v", 1);
    penc_kv_cstr (&s_enc, "t", "WRITE");
    penc_key (&s_enc, "ops");
    msgpack_pack_array (pk, 1);
    msgpack_pack_map (pk, 3);
    penc_kv_cstr (&s_enc, "op", "set");
    penc_kv_cstr (&s_enc, "key", "k");
    penc_kv_raw (&s_enc, "value", value, len);
    return s_finish (NULL);
}

static perr_t
s_big_value_map (size_t keys, long dup)
{
    penc_t value;
    penc_init (&value);
    msgpack_pack_map (penc_packer (&value), keys);
    for (size_t i = 0; i < keys; i++) {
        char key [32];
        snprintf (key, sizeof (key), "key%zu", (long) i == dup ? 0 : i);
        penc_kv_uint (&value, key, i);
    }
    perr_t err = s_write_value (penc_data (&value), penc_size (&value));
    penc_fini (&value);
    return err;
}

START_TEST (test_any_values)
{
    ck_assert_int_eq (s_write_value ("\x82\xa1" "a\x01\xa1" "b\x02", 7), PERR_NONE);
    ck_assert_int_eq (s_write_value ("\x82\xa1" "a\x01\xa1" "a\x02", 7), PERR_MALFORMED);
    ck_assert_int_eq (s_write_value ("\x91\x82\xa1" "a\x01\xa1" "a\x02", 8), PERR_MALFORMED);
    ck_assert_int_eq (s_write_value ("\x82\x01\x01\x02\x02", 5), PERR_NONE);
    ck_assert_int_eq (s_write_value ("\x82\x01\x01\x01\x02", 5), PERR_MALFORMED);
    ck_assert_int_eq (s_write_value ("\x82\xc0\x01\xc0\x02", 5), PERR_MALFORMED);
    ck_assert_int_eq (s_write_value ("\x82\xc3\x01\xc2\x02", 5), PERR_NONE);
    ck_assert_int_eq (s_write_value ("\x82\xa1" "a\x01\xc4\x01" "a\x02", 8), PERR_NONE);
    ck_assert_int_eq (s_write_value ("\x81\x90\x01", 3), PERR_BAD_FIELD);   //  array key
    ck_assert_int_eq (s_write_value ("\x81\x80\x01", 3), PERR_BAD_FIELD);   //  map key
    ck_assert_int_eq (s_write_value ("\xc0", 1), PERR_NONE);                //  nil = absent
    ck_assert_int_eq (s_big_value_map (100, -1), PERR_NONE);
    ck_assert_int_eq (s_big_value_map (100, 57), PERR_MALFORMED);
}
END_TEST

//  A SEND with one item holding `to` and/or `channel`.
static perr_t
s_send_item (const char *to, const char *channel)
{
    msgpack_packer *pk = s_start (3);
    penc_kv_uint (&s_enc, "v", 1);
    penc_kv_cstr (&s_enc, "t", "SEND");
    penc_key (&s_enc, "messages");
    msgpack_pack_array (pk, 1);
    msgpack_pack_map (pk, 1 + (to != NULL) + (channel != NULL));
    if (to)
        penc_kv_cstr (&s_enc, "to", to);
    if (channel)
        penc_kv_cstr (&s_enc, "channel", channel);
    penc_kv_cstr (&s_enc, "body", "hello");
    return s_finish (NULL);
}

START_TEST (test_one_of)
{
    ck_assert_int_eq (s_send_item ("b", NULL), PERR_NONE);
    ck_assert_int_eq (s_send_item (NULL, "news"), PERR_NONE);
    ck_assert_int_eq (s_send_item ("b", "news"), PERR_BAD_FIELD);
    ck_assert_int_eq (s_send_item (NULL, NULL), PERR_BAD_FIELD);
    ck_assert_int_eq (s_send_item ("all", NULL), PERR_NONE);
    ck_assert_int_eq (s_send_item ("$x", NULL), PERR_NONE);     //  broker decides
    ck_assert_int_eq (s_send_item ("a b", NULL), PERR_BAD_NAME);
    ck_assert_int_eq (s_send_item ("", NULL), PERR_BAD_NAME);
}
END_TEST

START_TEST (test_names)
{
    const char *good [] = { "a", "Agent1", "agent_1", "x.y", "ns:agent", "a-b", "9", "$broker",
                            "a.", "A-" };
    const char *bad [] = { "", ".a", "-a", "a b", "a/b", "é", "a\n", "$", "$$a", "$.a", "a$",
                           "tab\t" };
    for (size_t i = 0; i < sizeof (good) / sizeof (good [0]); i++)
        ck_assert_msg (pmsg_name_valid (good [i], strlen (good [i])), "%s", good [i]);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad [0]); i++)
        ck_assert_msg (!pmsg_name_valid (bad [i], strlen (bad [i])), "%s", bad [i]);
    ck_assert (!pmsg_name_valid ("nul\0x", 5));
    char longest [PROTO_MAX_NAME + 2];
    memset (longest, 'n', sizeof (longest));
    ck_assert (pmsg_name_valid (longest, PROTO_MAX_NAME));
    ck_assert (!pmsg_name_valid (longest, PROTO_MAX_NAME + 1));
    ck_assert (!pmsg_name_valid (NULL, 3));
}
END_TEST

START_TEST (test_type_names)
{
    for (int i = 0; i < PMSG__COUNT; i++) {
        const char *name = pmsg_type_name ((pmsg_type_t) i);
        pmsg_type_t type;
        ck_assert (pmsg_type_from_name (name, strlen (name), &type));
        ck_assert_int_eq (type, i);
        ck_assert_str_eq (pmsg_schema (type)->name, name);
        pmsg_kind_t kind = pmsg_type_kind (type);
        if (i <= PMSG_TAP)
            ck_assert_int_eq (kind, i < PMSG_WELCOME ? PMSG_REQUEST
                                    : i < PMSG_MAIL_READY ? PMSG_REPLY : PMSG_EVENT);
    }
    //  Types added after the first table name their kind one by one.
    pmsg_type_t requests [] = { PMSG_HANDOVER, PMSG_WORKFLOW, PMSG_CHECKPOINTS,
                                PMSG_CHECKPOINT, PMSG_RESUME, PMSG_STEP };
    for (size_t i = 0; i < sizeof requests / sizeof requests [0]; i++)
        ck_assert_int_eq (pmsg_type_kind (requests [i]), PMSG_REQUEST);
    pmsg_type_t replies [] = { PMSG_WORKFLOW_INFO, PMSG_CHECKPOINT_LIST, PMSG_CHECKPOINT_STATE,
                               PMSG_STEPPED, PMSG_CONFIRM };
    for (size_t i = 0; i < sizeof replies / sizeof replies [0]; i++)
        ck_assert_int_eq (pmsg_type_kind (replies [i]), PMSG_REPLY);
    ck_assert_int_eq (pmsg_type_kind (PMSG_WORKFLOW_EVENT), PMSG_EVENT);
    ck_assert (!pmsg_type_from_name ("HELL", 4, NULL));
    ck_assert (!pmsg_type_from_name ("HELLOX", 6, NULL));
    ck_assert (!pmsg_type_from_name ("", 0, NULL));
    ck_assert_str_eq (pmsg_type_name (PMSG__COUNT), "UNKNOWN");
    ck_assert_ptr_null (pmsg_schema (PMSG__COUNT));
    //  STEPPED's parts: sent_result, written_result, observation,
    //  part_error; CONFIRM's confirm_error.
    ck_assert_uint_eq (pmsg_record_schema_count (), 14);
    ck_assert_ptr_nonnull (pmsg_record_schema ("confirm_error"));
    for (size_t i = 0; i < pmsg_record_schema_count (); i++) {
        const pschema_t *rec = pmsg_record_schema_at (i);
        ck_assert_ptr_eq (pmsg_record_schema (rec->name), rec);
    }
    ck_assert_ptr_null (pmsg_record_schema ("nope"));
    ck_assert_ptr_null (pmsg_record_schema_at (99));
}
END_TEST

START_TEST (test_error_names)
{
    int listed = 0;
    for (int code = 1; code < PERR__COUNT; code++)
        listed += strcmp (perr_name (code), "UNKNOWN") != 0;
    ck_assert_int_eq (listed, 33);
    ck_assert_str_eq (perr_name (PERR_MALFORMED), "MALFORMED");
    ck_assert_str_eq (perr_name (PERR_UNAUTHORIZED), "UNAUTHORIZED");
    ck_assert_str_eq (perr_name (PERR_NO_SUCH_TARGET), "NO_SUCH_TARGET");
    ck_assert_str_eq (perr_name (PERR_SHUTTING_DOWN), "SHUTTING_DOWN");
    ck_assert_str_eq (perr_name (PERR_QUEUES_FULL), "QUEUES_FULL");
    ck_assert_str_eq (perr_name (7), "UNKNOWN");
    ck_assert_str_eq (perr_name (-1), "UNKNOWN");
    ck_assert_str_eq (perr_name (PERR__COUNT), "UNKNOWN");
}
END_TEST

START_TEST (test_limits)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_HELLO, 1, 2);
    penc_kv_cstr (&enc, "agent", "a");
    penc_key (&enc, "caps");
    msgpack_pack_array (penc_packer (&enc), 1);
    penc_cstr (&enc, "x");
    pwire_limits_t small = *pwire_default_limits ();
    small.max_frame = penc_size (&enc) - 1;
    perr_t err;
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), &small, &err, NULL, NULL, 0);
    ck_assert_ptr_null (msg);
    ck_assert_int_eq (err, PERR_TOO_LARGE);
    small.max_frame = penc_size (&enc);
    msg = pmsg_decode (penc_data (&enc), penc_size (&enc), &small, &err, NULL, NULL, 0);
    ck_assert_ptr_nonnull (msg);
    pmsg_destroy (&msg);
    small.max_depth = 1;                    //  caps is an array inside the map
    msg = pmsg_decode (penc_data (&enc), penc_size (&enc), &small, &err, NULL, NULL, 0);
    ck_assert_int_eq (err, PERR_TOO_LARGE);
    small.max_depth = 2;
    small.max_objects = 3;
    msg = pmsg_decode (penc_data (&enc), penc_size (&enc), &small, &err, NULL, NULL, 0);
    ck_assert_int_eq (err, PERR_TOO_LARGE);
    penc_fini (&enc);
}
END_TEST

//  A TAP of a maximal frame is over PROTO_MAX_FRAME but within the tap limit.
START_TEST (test_tap_limits)
{
    size_t len = PROTO_MAX_FRAME;
    char *frame = calloc (1, len);
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_TAP, 0, 5);
    penc_kv_uint (&enc, "tseq", 1);
    penc_kv_uint (&enc, "ts", 2);
    penc_kv_cstr (&enc, "dir", "in");
    penc_kv_cstr (&enc, "peer", "Agent1");
    penc_kv_bin (&enc, "body", frame, len);
    free (frame);
    perr_t err;
    char why [256];
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), NULL, &err, NULL, why, 256);
    ck_assert_ptr_null (msg);
    ck_assert_int_eq (err, PERR_TOO_LARGE);
    msg = pmsg_decode (penc_data (&enc), penc_size (&enc), pwire_tap_limits (), &err, NULL,
                       why, sizeof (why));
    ck_assert_msg (msg != NULL, "%s", why);
    size_t got;
    ck_assert_ptr_nonnull (pmsg_str (msg, "body", &got));
    ck_assert_uint_eq (got, len);
    pmsg_destroy (&msg);
    penc_fini (&enc);
}
END_TEST


//  --------------------------------------------------------------------------

//  pmsg_decode_with_type names the type "t" gives even when the frame is
//  then rejected, and only when "t" was read and names a known type.
static void
s_decode_typed (const void *data, size_t size, perr_t want_err, bool want_known,
                pmsg_type_t want_type)
{
    perr_t err = PERR_NONE;
    uint64_t id = 0;
    pmsg_type_t type = PMSG__COUNT;
    bool known = !want_known;
    char why [256];
    pmsg_t *msg = pmsg_decode_with_type (data, size, pwire_default_limits (), &err, &id,
                                         &type, &known, why, sizeof why);
    ck_assert_ptr_null (msg);
    ck_assert_msg (err == want_err, "got %s (%s), wanted %s", perr_name (err), why,
                   perr_name (want_err));
    ck_assert (known == want_known);
    if (want_known)
        ck_assert_int_eq (type, want_type);
}

START_TEST (test_decode_with_type)
{
    penc_t enc;
    penc_init (&enc);
    //  A WELCOME missing its fields: rejected, but its type is known.
    penc_begin (&enc, PMSG_WELCOME, 7, 0);
    s_decode_typed (penc_data (&enc), penc_size (&enc), PERR_BAD_FIELD, true, PMSG_WELCOME);
    //  A bad "id" does not hide the type either.
    penc_reset (&enc);
    msgpack_pack_map (penc_packer (&enc), 3);
    penc_kv_uint (&enc, "v", PROTO_VERSION);
    penc_kv_cstr (&enc, "t", "MAIL_READY");
    penc_kv_cstr (&enc, "id", "x");
    s_decode_typed (penc_data (&enc), penc_size (&enc), PERR_BAD_FIELD, true, PMSG_MAIL_READY);
    //  An unknown name, or bytes that never reach the envelope: no type.
    penc_reset (&enc);
    msgpack_pack_map (penc_packer (&enc), 2);
    penc_kv_uint (&enc, "v", PROTO_VERSION);
    penc_kv_cstr (&enc, "t", "NOPE");
    s_decode_typed (penc_data (&enc), penc_size (&enc), PERR_UNKNOWN_TYPE, false, PMSG_HELLO);
    s_decode_typed ("\xdd\xff\xff\xff\xff", 5, PERR_MALFORMED, false, PMSG_HELLO);
    //  A good frame: decoded, and the type reported.
    penc_begin (&enc, PMSG_HEARTBEAT, 3, 0);
    perr_t err;
    pmsg_type_t type = PMSG__COUNT;
    bool known = false;
    pmsg_t *msg = pmsg_decode_with_type (penc_data (&enc), penc_size (&enc), pwire_default_limits (), &err, NULL,
                                         &type, &known, NULL, 0);
    ck_assert_ptr_nonnull (msg);
    ck_assert (known && type == PMSG_HEARTBEAT);
    pmsg_destroy (&msg);
    penc_fini (&enc);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("proto_api");
    TCase *tc = tcase_create ("messages");
    tcase_add_test (tc, test_hello_welcome);
    tcase_add_test (tc, test_send_and_mail);
    tcase_add_test (tc, test_error_reply);
    tcase_add_test (tc, test_raw_and_object);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("rules");
    tcase_add_test (tc, test_envelope);
    tcase_add_test (tc, test_unknown_fields);
    tcase_add_test (tc, test_any_values);
    tcase_add_test (tc, test_one_of);
    tcase_add_test (tc, test_limits);
    tcase_add_test (tc, test_tap_limits);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("tables");
    tcase_add_test (tc, test_names);
    tcase_add_test (tc, test_type_names);
    tcase_add_test (tc, test_error_names);
    tcase_add_test (tc, test_decode_with_type);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
