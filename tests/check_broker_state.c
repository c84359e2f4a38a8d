// SPDX-License-Identifier: MIT
/*  check_broker_state - the shared state over the wire: WRITE/GET/SNAPSHOT,
    every reducer and clear/set/delete on each, atomic batches, the
    protected world.* keys, and a replica built from SUB updates plus a
    SNAPSHOT (the Clone pattern) that equals the final SNAPSHOT, and a
    store too big for one frame: SNAPSHOT pages (limit, after_key, more) or
    TOO_LARGE, GET TOO_LARGE.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mpjson.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

static testbroker_t *s_broker;

//  WRITE with ops given as a JSON array; returns the reply.
static pmsg_t *
s_write (testclient_t *client, const char *json)
{
    msgpack_unpacked result;
    const msgpack_object *ops = mpjson_object (&result, json);
    ck_assert_msg (ops, "bad test JSON: %s", json);
    penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    penc_object (enc, ops);
    msgpack_unpacked_destroy (&result);
    return testclient_call (client);
}

static void
s_write_ok (testclient_t *client, const char *json)
{
    pmsg_t *reply = s_write (client, json);
    ck_assert_msg (reply && pmsg_type (reply) == PMSG_WRITTEN, "%s -> %s", json,
                   testclient_describe (reply));
    pmsg_destroy (&reply);
}

static void
s_write_error (testclient_t *client, const char *json, perr_t code)
{
    pmsg_t *reply = s_write (client, json);
    ck_assert_msg (testclient_error_code (reply) == (int) code, "%s -> %s, wanted %s", json,
                   testclient_describe (reply), perr_name (code));
    pmsg_destroy (&reply);
}

//  JSON of a value; nil (which pobj_get reports as NULL) is "null".
static char *
s_json (const msgpack_object *value)
{
    static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
    return mpjson_dump_object (value ? value : &nil);
}

//  The value of one key as JSON, or "<absent>" (static buffer).
static const char *
s_get (testclient_t *client, const char *key)
{
    static char text [8192];
    penc_t *enc = testclient_begin (client, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, key);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    if (testclient_array_size (reply, "entries") == 0)
        snprintf (text, sizeof text, "<absent>");
    else {
        const msgpack_object *entry = testclient_array_at (reply, "entries", 0);
        ck_assert (pobj_streq (pobj_get (entry, "key"), key));
        char *json = s_json (pobj_get (entry, "value"));
        snprintf (text, sizeof text, "%s", json ? json : "null");
        free (json);
    }
    pmsg_destroy (&reply);
    return text;
}

static uint64_t
s_state_seq (testclient_t *client)
{
    pmsg_t *reply = testclient_call0 (client, PMSG_STATS);
    uint64_t seq = pmsg_uint (reply, "state_seq", 0);
    pmsg_destroy (&reply);
    return seq;
}

START_TEST (test_reducers)
{
    s_broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    s_write_ok (a, "[{\"op\":\"declare\",\"key\":\"r\",\"reducer\":\"replace\"},"
                   "{\"op\":\"declare\",\"key\":\"l\",\"reducer\":\"append\"},"
                   "{\"op\":\"declare\",\"key\":\"u\",\"reducer\":\"union\"},"
                   "{\"op\":\"declare\",\"key\":\"m\",\"reducer\":\"merge\"},"
                   "{\"op\":\"declare\",\"key\":\"n\",\"reducer\":\"add\"}]");
    s_write_ok (a, "[{\"op\":\"update\",\"key\":\"r\",\"value\":\"first\"},"
                   "{\"op\":\"update\",\"key\":\"l\",\"value\":[1,2]},"
                   "{\"op\":\"update\",\"key\":\"u\",\"value\":[\"a\",\"b\"]},"
                   "{\"op\":\"update\",\"key\":\"m\",\"value\":{\"x\":1,\"y\":2}},"
                   "{\"op\":\"update\",\"key\":\"n\",\"value\":5}]");
    s_write_ok (a, "[{\"op\":\"update\",\"key\":\"r\",\"value\":\"second\"},"
                   "{\"op\":\"update\",\"key\":\"l\",\"value\":[2,3]},"
                   "{\"op\":\"update\",\"key\":\"u\",\"value\":[\"b\",\"c\"]},"
                   "{\"op\":\"update\",\"key\":\"m\",\"value\":{\"y\":20,\"z\":3}},"
                   "{\"op\":\"update\",\"key\":\"n\",\"value\":-2}]");
    ck_assert_str_eq (s_get (a, "r"), "\"second\"");
    ck_assert_str_eq (s_get (a, "l"), "[1,2,2,3]");
    ck_assert_str_eq (s_get (a, "u"), "[\"a\",\"b\",\"c\"]");
    ck_assert_str_eq (s_get (a, "m"), "{\"x\":1,\"y\":20,\"z\":3}");
    ck_assert_str_eq (s_get (a, "n"), "3");
    //  clear empties each value and keeps its reducer.
    s_write_ok (a, "[{\"op\":\"clear\",\"key\":\"r\"},{\"op\":\"clear\",\"key\":\"l\"},"
                   "{\"op\":\"clear\",\"key\":\"u\"},{\"op\":\"clear\",\"key\":\"m\"},"
                   "{\"op\":\"clear\",\"key\":\"n\"}]");
    ck_assert_str_eq (s_get (a, "r"), "null");
    ck_assert_str_eq (s_get (a, "l"), "[]");
    ck_assert_str_eq (s_get (a, "u"), "[]");
    ck_assert_str_eq (s_get (a, "m"), "{}");
    ck_assert_str_eq (s_get (a, "n"), "0");
    s_write_ok (a, "[{\"op\":\"update\",\"key\":\"l\",\"value\":[9]}]");
    ck_assert_str_eq (s_get (a, "l"), "[9]");
    //  set bypasses the reducer.
    s_write_ok (a, "[{\"op\":\"set\",\"key\":\"l\",\"value\":[7,7]}]");
    ck_assert_str_eq (s_get (a, "l"), "[7,7]");
    //  delete, then the key is gone.
    s_write_ok (a, "[{\"op\":\"delete\",\"key\":\"l\"}]");
    ck_assert_str_eq (s_get (a, "l"), "<absent>");
    //  An undeclared key updates as replace.
    s_write_ok (a, "[{\"op\":\"update\",\"key\":\"free\",\"value\":{\"k\":[1]}}]");
    ck_assert_str_eq (s_get (a, "free"), "{\"k\":[1]}");
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

START_TEST (test_errors_are_atomic)
{
    s_broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    s_write_ok (a, "[{\"op\":\"declare\",\"key\":\"list\",\"reducer\":\"append\"}]");
    uint64_t seq = s_state_seq (a);
    s_write_error (a, "[{\"op\":\"update\",\"key\":\"list\",\"value\":[1]},"
                      "{\"op\":\"update\",\"key\":\"list\",\"value\":\"not a list\"}]",
                   PERR_REDUCER_MISMATCH);
    ck_assert_str_eq (s_get (a, "list"), "[]");
    ck_assert_uint_eq (s_state_seq (a), seq);
    s_write_error (a, "[{\"op\":\"declare\",\"key\":\"list\",\"reducer\":\"add\"}]",
                   PERR_REDUCER_CONFLICT);
    s_write_error (a, "[{\"op\":\"declare\",\"key\":\"x\",\"reducer\":\"bogus\"}]",
                   PERR_BAD_REDUCER);
    s_write_error (a, "[{\"op\":\"clear\",\"key\":\"missing\"}]", PERR_NO_SUCH_KEY);
    s_write_error (a, "[{\"op\":\"delete\",\"key\":\"missing\"}]", PERR_NO_SUCH_KEY);
    s_write_error (a, "[{\"op\":\"fly\",\"key\":\"x\"}]", PERR_BAD_FIELD);
    s_write_error (a, "[]", PERR_BAD_FIELD);
    //  The world's keys are the broker's.
    s_write_error (a, "[{\"op\":\"set\",\"key\":\"world.explored_by_all\",\"value\":[]}]",
                   PERR_BAD_FIELD);
    ck_assert_uint_eq (s_state_seq (a), seq);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

START_TEST (test_get_and_snapshot)
{
    s_broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    s_write_ok (a, "[{\"op\":\"set\",\"key\":\"team.a\",\"value\":1},"
                   "{\"op\":\"set\",\"key\":\"team.b\",\"value\":2},"
                   "{\"op\":\"set\",\"key\":\"other\",\"value\":3}]");
    penc_t *enc = testclient_begin (a, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 3);
    penc_cstr (enc, "team.b");
    penc_cstr (enc, "nope");
    penc_cstr (enc, "other");
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 2);
    pmsg_destroy (&reply);
    enc = testclient_begin (a, PMSG_SNAPSHOT, 1);
    penc_kv_cstr (enc, "prefix", "team.");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 2);
    const msgpack_object *entry = testclient_array_at (reply, "entries", 0);
    ck_assert (pobj_streq (pobj_get (entry, "key"), "team.a"));
    ck_assert (pobj_streq (pobj_get (entry, "reducer"), "replace"));
    ck_assert_uint_gt (pobj_uint (entry, "seq", 0), 0);
    ck_assert_uint_eq (pmsg_uint (reply, "seq", 0), s_state_seq (a));
    pmsg_destroy (&reply);
    //  Without a prefix: everything, the world's keys included.
    reply = testclient_call0 (a, PMSG_SNAPSHOT);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_ge (testclient_array_size (reply, "entries"), 6);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

//  A replica: key -> JSON of the value.
static void
s_apply_entries (zhashx_t *replica, const pmsg_t *state)
{
    for (size_t i = 0; i < testclient_array_size (state, "entries"); i++) {
        const msgpack_object *entry = testclient_array_at (state, "entries", i);
        char key [512];
        ck_assert (pobj_strcpy (entry, "key", key, sizeof key));
        zhashx_update (replica, key, s_json (pobj_get (entry, "value")));
    }
}

START_TEST (test_replica_follows_updates)
{
    s_broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testsub_t *sub = testsub_new (testbroker_pub (s_broker), "state.");
    //  Wait until the subscription is live: write a probe until its update arrives.
    char topic [512];
    pmsg_t *event = NULL;
    for (int tries = 0; tries < 100 && !event; tries++) {
        s_write_ok (a, "[{\"op\":\"update\",\"key\":\"probe\",\"value\":1}]");
        event = testsub_recv (sub, topic, sizeof topic, 200);
    }
    ck_assert_ptr_nonnull (event);
    pmsg_destroy (&event);
    //  Writes in flight while the replica takes its snapshot.
    s_write_ok (a, "[{\"op\":\"declare\",\"key\":\"log\",\"reducer\":\"append\"},"
                   "{\"op\":\"declare\",\"key\":\"seen\",\"reducer\":\"union\"},"
                   "{\"op\":\"declare\",\"key\":\"count\",\"reducer\":\"add\"},"
                   "{\"op\":\"declare\",\"key\":\"map\",\"reducer\":\"merge\"}]");
    pmsg_t *snapshot = testclient_call0 (b, PMSG_SNAPSHOT);
    EXPECT (snapshot, PMSG_STATE);
    uint64_t snap_seq = pmsg_uint (snapshot, "seq", 0);
    zhashx_t *replica = zhashx_new ();
    zhashx_set_destructor (replica, (zhashx_destructor_fn *) zstr_free);
    s_apply_entries (replica, snapshot);
    pmsg_destroy (&snapshot);

    //  A deterministic stream of writes by two agents, the world too.
    char json [512];
    for (int i = 0; i < 200; i++) {
        testclient_t *writer = i % 2 ? a : b;
        switch (i % 7) {
            case 0: snprintf (json, sizeof json, "[{\"op\":\"update\",\"key\":\"log\",\"value\":[%d]}]", i); break;
            case 1: snprintf (json, sizeof json, "[{\"op\":\"update\",\"key\":\"seen\",\"value\":[%d,%d]}]", i % 5, i % 3); break;
            case 2: snprintf (json, sizeof json, "[{\"op\":\"update\",\"key\":\"count\",\"value\":%d},{\"op\":\"update\",\"key\":\"map\",\"value\":{\"k%d\":%d}}]", i, i % 4, i); break;
            case 3: snprintf (json, sizeof json, "[{\"op\":\"set\",\"key\":\"tmp%d\",\"value\":\"v%d\"}]", i % 3, i); break;
            case 4: snprintf (json, sizeof json, "[{\"op\":\"clear\",\"key\":\"log\"}]"); break;
            case 5: snprintf (json, sizeof json, "[{\"op\":\"update\",\"key\":\"probe\",\"value\":%d}]", i); break;
            default: snprintf (json, sizeof json, "[{\"op\":\"delete\",\"key\":\"tmp%d\"}]", i % 3); break;
        }
        pmsg_t *reply = s_write (writer, json);
        ck_assert_msg (reply, "no reply");
        //  Deletes of keys not there yet fail (NO_SUCH_KEY): fine, no update.
        pmsg_destroy (&reply);
        if (i % 25 == 0) {
            pmsg_t *obs = testclient_call0 (writer, PMSG_PERCEIVE);
            EXPECT (obs, PMSG_OBSERVATION);
            pmsg_destroy (&obs);
        }
    }
    pmsg_t *final = testclient_call0 (a, PMSG_SNAPSHOT);
    EXPECT (final, PMSG_STATE);
    uint64_t final_seq = pmsg_uint (final, "seq", 0);
    //  Apply every update after the snapshot; seqs must be contiguous.
    uint64_t next = snap_seq + 1;
    while (next <= final_seq) {
        event = testsub_recv (sub, topic, sizeof topic, 15000);
        ck_assert_msg (event, "missing updates: at %llu of %llu",
                       (unsigned long long) next, (unsigned long long) final_seq);
        ck_assert_int_eq (pmsg_type (event), PMSG_STATE_UPDATE);
        uint64_t seq = pmsg_uint (event, "seq", 0);
        char key [512];
        ck_assert (pmsg_strcpy (event, "key", key, sizeof key));
        ck_assert_str_eq (topic + 6, key);
        if (seq > snap_seq) {
            ck_assert_uint_eq (seq, next);
            next++;
            size_t len;
            const char *op = pmsg_str (event, "op", &len);
            if (len == 6 && memcmp (op, "delete", 6) == 0)
                zhashx_delete (replica, key);
            else
                zhashx_update (replica, key, s_json (pmsg_field (event, "value")));
        }
        pmsg_destroy (&event);
    }
    //  The replica equals the final snapshot.
    ck_assert_uint_eq (zhashx_size (replica), testclient_array_size (final, "entries"));
    for (size_t i = 0; i < testclient_array_size (final, "entries"); i++) {
        const msgpack_object *entry = testclient_array_at (final, "entries", i);
        char key [512];
        ck_assert (pobj_strcpy (entry, "key", key, sizeof key));
        const char *mine = zhashx_lookup (replica, key);
        ck_assert_msg (mine, "replica lacks %s", key);
        char *theirs = s_json (pobj_get (entry, "value"));
        ck_assert_msg (strcmp (mine, theirs) == 0, "%s: replica %s, snapshot %s", key, mine, theirs);
        free (theirs);
    }
    pmsg_destroy (&final);
    zhashx_destroy (&replica);
    testsub_destroy (&sub);
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

//  Writes `key` = a str of `size` bytes.
static void
s_write_big (testclient_t *client, const char *key, size_t size)
{
    char *text = malloc (size);
    memset (text, 'v', size);
    penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_packer *pk = penc_packer (enc);
    msgpack_pack_array (pk, 1);
    msgpack_pack_map (pk, 3);
    penc_kv_cstr (enc, "op", "set");
    penc_kv_cstr (enc, "key", key);
    penc_kv_str (enc, "value", text, size);
    free (text);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
}

static pmsg_t *
s_snapshot_page (testclient_t *client, const char *prefix, const char *after, uint64_t limit)
{
    penc_t *enc = testclient_begin (client, PMSG_SNAPSHOT,
                                    1 + (after ? 1 : 0) + (limit ? 1 : 0));
    penc_kv_cstr (enc, "prefix", prefix);
    if (after)
        penc_kv_cstr (enc, "after_key", after);
    if (limit)
        penc_kv_uint (enc, "limit", limit);
    return testclient_call (client);
}

static bool
s_entry_key_is (const pmsg_t *reply, size_t index, const char *key)
{
    return pobj_streq (pobj_get (testclient_array_at (reply, "entries", index), "key"), key);
}

START_TEST (test_big_store_pages)
{
    s_broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    //  Three values of 400 kB: 1.2 MB in all, over the 1 MiB frame.
    s_write_big (a, "big.1", 400000);
    s_write_big (a, "big.2", 400000);
    s_write_big (a, "big.3", 400000);
    s_write_ok (a, "[{\"op\": \"set\", \"key\": \"small\", \"value\": 1}]");
    //  Not paging: everything or TOO_LARGE, never a silent part.
    pmsg_t *reply = s_snapshot_page (a, "big.", NULL, 0);
    EXPECT_ERROR (reply, PERR_TOO_LARGE);
    size_t len;
    const char *message = pmsg_str (reply, "message", &len);
    ck_assert_ptr_nonnull (memmem (message, len, "after_key", 9));
    pmsg_destroy (&reply);
    reply = s_snapshot_page (a, "small", NULL, 0);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 1);
    ck_assert_ptr_null (pmsg_field (reply, "more"));
    pmsg_destroy (&reply);
    //  Paging: the budget cuts the first page at two entries.
    reply = s_snapshot_page (a, "big.", NULL, 100);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 2);
    ck_assert (s_entry_key_is (reply, 0, "big.1") && s_entry_key_is (reply, 1, "big.2"));
    ck_assert (pmsg_bool (reply, "more", false));
    pmsg_destroy (&reply);
    reply = s_snapshot_page (a, "big.", "big.2", 100);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 1);
    ck_assert (s_entry_key_is (reply, 0, "big.3"));
    ck_assert (!pmsg_bool (reply, "more", true));
    pmsg_destroy (&reply);
    //  limit cuts too; after_key alone pages from there.
    reply = s_snapshot_page (a, "", NULL, 1);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 1);
    ck_assert (s_entry_key_is (reply, 0, "big.1"));
    ck_assert (pmsg_bool (reply, "more", false));
    pmsg_destroy (&reply);
    reply = s_snapshot_page (a, "", "big.3", 0);
    EXPECT (reply, PMSG_STATE);
    ck_assert (s_entry_key_is (reply, 0, "small"));
    ck_assert (!pmsg_bool (reply, "more", true));
    pmsg_destroy (&reply);
    //  GET: the three big keys do not fit one reply, two do.
    penc_t *enc = testclient_begin (a, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 3);
    penc_cstr (enc, "big.1");
    penc_cstr (enc, "big.2");
    penc_cstr (enc, "big.3");
    reply = testclient_call (a);
    EXPECT_ERROR (reply, PERR_TOO_LARGE);
    pmsg_destroy (&reply);
    enc = testclient_begin (a, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 2);
    penc_cstr (enc, "big.1");
    penc_cstr (enc, "big.3");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 2);
    pmsg_destroy (&reply);
    //  The connection is still fine.
    reply = testclient_call0 (a, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_state");
    TCase *tc = tcase_create ("state");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_reducers);
    tcase_add_test (tc, test_errors_are_atomic);
    tcase_add_test (tc, test_get_and_snapshot);
    tcase_add_test (tc, test_replica_follows_updates);
    tcase_add_test (tc, test_big_store_pages);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
