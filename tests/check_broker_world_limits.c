// SPDX-License-Identifier: MIT
/*  check_broker_world_limits - the world's own state writes (world.* keys)
    are outside the clients' state limits: a client that filled the store
    (STATE_FULL) must not make PERCEIVE, ACT or an agent leaving the world
    fail. The broker's protected keys are outside --max-state-bytes /
    --max-state-keys (bounded by the world's own size). Checked over real sockets against the real broker,
    and on the state and world classes directly for world_leave.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "broker/core/state.h"
#include "broker/core/world.h"
#include "lib/teststate.h"

//  WRITE of one `update` of `key` to a str of `size` bytes.
static pmsg_t *
s_write (testclient_t *client, const char *key, size_t size)
{
    char value [1024];
    ck_assert_uint_lt (size, sizeof value);
    memset (value, 'v', size);
    penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", "update");
    penc_kv_cstr (enc, "key", key);
    penc_kv_str (enc, "value", value, size);
    return testclient_call (client);
}

//  Writes keys k0, k1, ... of `size` bytes until STATE_FULL; returns how
//  many were written (fails the test if the store never fills).
static size_t
s_fill (testclient_t *client, size_t size)
{
    for (size_t i = 0; i < 1000; i++) {
        char key [32];
        snprintf (key, sizeof key, "k%zu", i);
        pmsg_t *reply = s_write (client, key, size);
        if (pmsg_type (reply) == PMSG_ERROR) {
            EXPECT_ERROR (reply, PERR_STATE_FULL);
            pmsg_destroy (&reply);
            return i;
        }
        EXPECT (reply, PMSG_WRITTEN);
        pmsg_destroy (&reply);
    }
    ck_abort_msg ("the store never filled");
    return 0;
}

//  The position of `agent` in world.agent_positions, or -1 when absent.
static int64_t
s_position_in_state (testclient_t *client, const char *agent)
{
    penc_t *enc = testclient_begin (client, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, "world.agent_positions");
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    ck_assert_uint_eq (testclient_array_size (reply, "entries"), 1);
    const msgpack_object *value = pobj_get (testclient_array_at (reply, "entries", 0), "value");
    ck_assert_msg (value && value->type == MSGPACK_OBJECT_MAP, "positions not a map");
    int64_t position = -1;
    for (uint32_t i = 0; i < value->via.map.size; i++) {
        const msgpack_object *k = &value->via.map.ptr [i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen (agent)
        &&  memcmp (k->via.str.ptr, agent, k->via.str.size) == 0)
            position = (int64_t) value->via.map.ptr [i].val.via.u64;
    }
    pmsg_destroy (&reply);
    return position;
}

static pmsg_t *
s_act (testclient_t *client, const char *action)
{
    penc_t *enc = testclient_begin (client, PMSG_ACT, 1);
    penc_kv_cstr (enc, "action", action);
    return testclient_call (client);
}

START_TEST (test_world_moves_with_full_state)
{
    const char *args [] = { "--max-state-bytes", "4096", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *writer = testcheck_agent (broker, "W");
    testclient_t *a = testcheck_agent (broker, "A");
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    pmsg_destroy (&obs);
    //  The client budget is the whole 4096 bytes: the world's keys (its
    //  objects alone are some hundred bytes) take none of it.
    size_t written = s_fill (writer, 500);
    ck_assert_uint_ge (written, 7);
    //  ACT still moves, and the state says where.
    for (int i = 0; i < 12; i++) {
        obs = s_act (a, "forward");
        EXPECT (obs, PMSG_OBSERVATION);
        int64_t position = (int64_t) pmsg_uint (obs, "position", 0);
        pmsg_destroy (&obs);
        ck_assert_int_eq (s_position_in_state (writer, "A"), position);
    }
    //  A new agent enters the world, and leaves it with BYE forget.
    testclient_t *b = testcheck_agent (broker, "B");
    obs = testclient_call0 (b, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    int64_t b_position = (int64_t) pmsg_uint (obs, "position", 0);
    pmsg_destroy (&obs);
    ck_assert_int_eq (s_position_in_state (writer, "B"), b_position);
    penc_t *enc = testclient_begin (b, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    pmsg_t *reply = testclient_call (b);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&b);
    ck_assert_int_eq (s_position_in_state (writer, "B"), -1);
    ck_assert_int_ge (s_position_in_state (writer, "A"), 0);
    //  The clients' limit still holds, exactly where it was.
    reply = s_write (writer, "one-more", 500);
    EXPECT_ERROR (reply, PERR_STATE_FULL);
    pmsg_destroy (&reply);
    reply = s_write (writer, "k0", 400);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&writer);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_world_keys_outside_key_limit)
{
    //  --max-state-keys 2 left no room for the world's three keys: the
    //  broker could not even start. Now the clients get both keys.
    const char *args [] = { "--max-state-keys", "2", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_uint_eq (s_fill (a, 10), 2);
    pmsg_t *obs = s_act (a, "forward");
    EXPECT (obs, PMSG_OBSERVATION);
    pmsg_destroy (&obs);
    ck_assert_int_ge (s_position_in_state (a, "A"), 0);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_world_leave_with_full_state)
{
    //  world_leave rewrites world.agent_positions with `set`; with the
    //  clients' budget spent it must still work, and the stats must count
    //  the world's bytes apart.
    state_limits_t limits = { .max_keys = 10, .max_bytes = 2048 };
    state_t *state = state_new (&limits);
    char why [256];
    world_t *world = world_new (state, NULL, why, sizeof why);
    ck_assert_msg (world, "%s", why);
    world_obs_t obs;
    ck_assert_int_eq (world_perceive (world, "A", &obs, why, sizeof why), PERR_NONE);
    ck_assert_int_eq (world_perceive (world, "B", &obs, why, sizeof why), PERR_NONE);
    APPLY_OK (state, "[{\"op\": \"update\", \"key\": \"big\", \"value\": \"x\"}]");
    //  Grow "big" until the client budget is spent.
    perr_t rc = PERR_NONE;
    char json [1200];
    for (size_t size = 100; size < 1100 && rc == PERR_NONE; size += 100) {
        char value [1100];
        memset (value, 'x', size);
        value [size] = 0;
        snprintf (json, sizeof json, "[{\"op\": \"set\", \"key\": \"big%zu\", \"value\": \"%s\"}]",
                  size, value);
        rc = teststate_apply (state, json);
    }
    ck_assert_int_eq (rc, PERR_STATE_FULL);
    state_stats_t stats;
    state_stats (state, &stats);
    ck_assert_uint_gt (stats.owned_bytes, 0);
    ck_assert_uint_eq (stats.owned_keys, 3);
    ck_assert_uint_le (stats.bytes - stats.owned_bytes, limits.max_bytes);
    ck_assert_int_eq (world_act (world, "A", "forward", 7, &obs, why, sizeof why), PERR_NONE);
    ck_assert_msg (world_leave (world, "B", why, sizeof why), "world_leave: %s", why);
    VALUE_IS (state, "world.agent_positions", "{\"A\":1}");
    ck_assert_uint_eq (world_agents (world), 1);
    //  And a reset, which rewrites every world key.
    ck_assert_int_eq (world_reset (world, NULL, why, sizeof why), PERR_NONE);
    VALUE_IS (state, "world.agent_positions", "{}");
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_world_limits");
    TCase *tc = tcase_create ("world");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_world_moves_with_full_state);
    tcase_add_test (tc, test_world_keys_outside_key_limit);
    tcase_add_test (tc, test_world_leave_with_full_state);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
