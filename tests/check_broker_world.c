// SPDX-License-Identifier: MIT
/*  check_broker_world - the exploration world over the wire: PERCEIVE and
    ACT, edges on a line and a grid, BAD_ACTION, coverage by unique names,
    the "explored" event (once) and WORLD_RESET with its event and state,
    idempotent ACT (a repeated `step` gets the same answer, no second move).
*/
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

static testbroker_t *s_broker;

static pmsg_t *
s_act (testclient_t *client, const char *action)
{
    penc_t *enc = testclient_begin (client, PMSG_ACT, 1);
    penc_kv_cstr (enc, "action", action);
    return testclient_call (client);
}

static bool
s_outcome_is (const pmsg_t *obs, const char *outcome)
{
    return pobj_streq (pmsg_field (obs, "outcome"), outcome);
}

START_TEST (test_line_edges_and_coverage)
{
    const char *args [] = { "--world-size", "5", "--seed", "42", NULL };
    s_broker = testbroker_start (args);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testsub_t *sub = testsub_new (testbroker_pub (s_broker), "world.");
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert (s_outcome_is (obs, "perceived"));
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 0);     //  first agent starts at 0
    size_t objects = testclient_array_size (obs, "objects");
    ck_assert (objects >= 1 && objects <= 3);
    uint64_t total = pmsg_uint (obs, "objects_total", 0);
    ck_assert_uint_gt (total, 0);
    ck_assert_uint_gt (pmsg_uint (obs, "explored", 0), 0);      //  the start counts
    pmsg_destroy (&obs);
    //  Backward at 0: the edge, no move.
    obs = s_act (a, "backward");
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert (s_outcome_is (obs, "edge"));
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 0);
    pmsg_destroy (&obs);
    //  left/right on a line: BAD_ACTION, and an unknown action too.
    obs = s_act (a, "left");
    EXPECT_ERROR (obs, PERR_BAD_ACTION);
    pmsg_destroy (&obs);
    obs = s_act (a, "jump");
    EXPECT_ERROR (obs, PERR_BAD_ACTION);
    pmsg_destroy (&obs);
    obs = s_act (a, "stay");
    ck_assert (s_outcome_is (obs, "stayed"));
    pmsg_destroy (&obs);
    //  Walk to the far edge: everything explored, coverage 1.
    bool done = false;
    double coverage = 0;
    for (int i = 0; i < 4; i++) {
        obs = s_act (a, "forward");
        EXPECT (obs, PMSG_OBSERVATION);
        ck_assert (s_outcome_is (obs, "moved"));
        ck_assert_uint_eq (pmsg_uint (obs, "position", 99), (uint64_t) i + 1);
        double now = pmsg_num (obs, "coverage", -1);
        ck_assert (now >= coverage);
        coverage = now;
        done = pmsg_bool (obs, "done", false);
        pmsg_destroy (&obs);
    }
    ck_assert (done);
    ck_assert (coverage == 1.0);
    obs = s_act (a, "forward");
    ck_assert (s_outcome_is (obs, "edge"));
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 4);
    ck_assert_uint_eq (testclient_array_size (obs, "new_objects"), 0);
    pmsg_destroy (&obs);
    //  The state mirrors it.
    penc_t *enc = testclient_begin (a, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, "world.agent_positions");
    pmsg_t *state = testclient_call (a);
    EXPECT (state, PMSG_STATE);
    const msgpack_object *value = pobj_get (testclient_array_at (state, "entries", 0), "value");
    ck_assert_ptr_nonnull (value);
    ck_assert_uint_eq (pobj_uint (value, "A", 99), 4);
    pmsg_destroy (&state);
    testsub_destroy (&sub);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

START_TEST (test_explored_event_and_reset)
{
    const char *args [] = { "--world-size", "3", "--seed", "7", NULL };
    s_broker = testbroker_start (args);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    //  Proven live on its own socket: a probe on another SUB would only
    //  prove that other connection.
    testsub_t *sub = testsub_new (testbroker_pub (s_broker), "world.");
    testcheck_sub_join (sub, a);
    pmsg_t *event = NULL;
    char topic [128];
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    pmsg_destroy (&obs);
    for (int i = 0; i < 2; i++) {
        obs = s_act (a, "forward");
        pmsg_destroy (&obs);
    }
    //  Everything explored: one "explored" event.
    event = testsub_recv (sub, topic, sizeof topic, 15000);
    ck_assert_ptr_nonnull (event);
    ck_assert_str_eq (topic, "world.explored");
    ck_assert_int_eq (pmsg_type (event), PMSG_WORLD_EVENT);
    ck_assert (pmsg_num (event, "coverage", 0) == 1.0);
    pmsg_destroy (&event);
    //  More moves: no second event.
    obs = s_act (a, "backward");
    pmsg_destroy (&obs);
    //  Reset with a new seed: event "reset", coverage back to the start.
    penc_t *enc = testclient_begin (a, PMSG_WORLD_RESET, 1);
    penc_kv_uint (enc, "seed", 99);
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    event = testsub_recv (sub, topic, sizeof topic, 15000);
    ck_assert_ptr_nonnull (event);
    ck_assert_str_eq (topic, "world.reset");          //  not a second "explored"
    ck_assert_uint_eq (pmsg_uint (event, "explored", 99), 0);
    pmsg_destroy (&event);
    //  The agent re-enters the fresh world at its first step.
    obs = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert (!pmsg_bool (obs, "done", true));
    pmsg_destroy (&obs);
    //  WELCOME's summary follows the world.
    testclient_t *b = testclient_new (testbroker_router (s_broker));
    reply = testclient_hello (b, "B");
    EXPECT (reply, PMSG_WELCOME);
    const msgpack_object *world = pmsg_field (reply, "world");
    ck_assert_uint_eq (pobj_uint (world, "width", 0), 3);
    ck_assert (!pobj_bool (world, "done", true));
    pmsg_destroy (&reply);
    testclient_destroy (&b);
    testsub_destroy (&sub);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

START_TEST (test_grid_moves)
{
    const char *args [] = { "--grid", "3x2", "--seed", "1", NULL };
    s_broker = testbroker_start (args);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert_uint_eq (pmsg_uint (obs, "x", 9), 0);
    ck_assert_uint_eq (pmsg_uint (obs, "y", 9), 0);
    pmsg_destroy (&obs);
    obs = s_act (a, "left");                            //  y - 1 at y = 0: edge
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert (s_outcome_is (obs, "edge"));
    pmsg_destroy (&obs);
    obs = s_act (a, "right");
    ck_assert (s_outcome_is (obs, "moved"));
    ck_assert_uint_eq (pmsg_uint (obs, "y", 9), 1);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 3);  //  y * width + x
    pmsg_destroy (&obs);
    obs = s_act (a, "right");
    ck_assert (s_outcome_is (obs, "edge"));
    pmsg_destroy (&obs);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

START_TEST (test_two_agents_share_exploration)
{
    const char *args [] = { "--world-size", "6", NULL };
    s_broker = testbroker_start (args);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    uint64_t after_a = pmsg_uint (obs, "explored", 0);
    pmsg_destroy (&obs);
    obs = testclient_call0 (b, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 2);     //  6 / 3
    ck_assert_uint_ge (pmsg_uint (obs, "explored", 0), after_a);
    pmsg_destroy (&obs);
    //  BYE forget takes B out of agent_positions.
    penc_t *enc = testclient_begin (b, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    pmsg_t *reply = testclient_call (b);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    enc = testclient_begin (a, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, "world.agent_positions");
    reply = testclient_call (a);
    const msgpack_object *value = pobj_get (testclient_array_at (reply, "entries", 0), "value");
    ck_assert_ptr_nonnull (value);
    ck_assert_ptr_null (pobj_get (value, "B"));
    ck_assert_ptr_nonnull (pobj_get (value, "A"));
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

static pmsg_t *
s_act_step (testclient_t *client, const char *action, uint64_t step)
{
    penc_t *enc = testclient_begin (client, PMSG_ACT, 2);
    penc_kv_cstr (enc, "action", action);
    penc_kv_uint (enc, "step", step);
    return testclient_call (client);
}

static uint64_t
s_position (testclient_t *client)
{
    pmsg_t *obs = testclient_call0 (client, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    uint64_t position = pmsg_uint (obs, "position", 999);
    pmsg_destroy (&obs);
    return position;
}

//  The fields of an OBSERVATION, without the envelope (id differs).
static void
s_same_observation (const pmsg_t *a, const pmsg_t *b)
{
    const char *fields [] = { "position", "explored", "objects_total" };
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq (pmsg_uint (a, fields [i], 999), pmsg_uint (b, fields [i], 998));
    size_t la, lb;
    const char *oa = pmsg_str (a, "outcome", &la), *ob = pmsg_str (b, "outcome", &lb);
    ck_assert (oa && ob && la == lb && memcmp (oa, ob, la) == 0);
    ck_assert_uint_eq (testclient_array_size (a, "new_objects"),
                       testclient_array_size (b, "new_objects"));
    ck_assert_uint_eq (testclient_array_size (a, "objects"), testclient_array_size (b, "objects"));
}

START_TEST (test_act_step_idempotent)
{
    const char *args [] = { "--world-size", "6", "--seed", "7", NULL };
    s_broker = testbroker_start (args);
    ck_assert_ptr_nonnull (s_broker);
    testclient_t *a = testcheck_agent (s_broker, "A");
    ck_assert_uint_eq (s_position (a), 0);
    pmsg_t *first = s_act_step (a, "forward", 1);
    EXPECT (first, PMSG_OBSERVATION);
    ck_assert (s_outcome_is (first, "moved"));
    ck_assert_uint_eq (pmsg_uint (first, "position", 99), 1);
    //  The same step again (a lost reply retried): the same answer, no move.
    pmsg_t *again = s_act_step (a, "forward", 1);
    EXPECT (again, PMSG_OBSERVATION);
    s_same_observation (first, again);
    ck_assert (s_outcome_is (again, "moved"));
    ck_assert_uint_eq (s_position (a), 1);
    pmsg_destroy (&again);
    //  Even from a new connection (the agent restarted).
    pmsg_t *bye = testclient_call0 (a, PMSG_BYE);
    pmsg_destroy (&bye);
    testclient_destroy (&a);
    a = testcheck_agent (s_broker, "A");
    again = s_act_step (a, "forward", 1);
    EXPECT (again, PMSG_OBSERVATION);
    s_same_observation (first, again);
    ck_assert_uint_eq (s_position (a), 1);
    pmsg_destroy (&again);
    pmsg_destroy (&first);
    //  The next step moves.
    pmsg_t *obs = s_act_step (a, "forward", 2);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 2);
    pmsg_destroy (&obs);
    //  A step-less ACT always acts, and forgets the remembered step.
    obs = s_act (a, "forward");
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 3);
    pmsg_destroy (&obs);
    obs = s_act_step (a, "forward", 2);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 4);
    pmsg_destroy (&obs);
    //  A rejected ACT is not remembered: the retry is rejected too, and a
    //  good action under that step then acts.
    obs = s_act_step (a, "jump", 3);
    EXPECT_ERROR (obs, PERR_BAD_ACTION);
    pmsg_destroy (&obs);
    obs = s_act_step (a, "backward", 3);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 99), 3);
    pmsg_destroy (&obs);
    //  WORLD_RESET forgets remembered answers: step 3 acts in the new world.
    pmsg_t *ok = testclient_call0 (a, PMSG_WORLD_RESET);
    EXPECT (ok, PMSG_OK);
    pmsg_destroy (&ok);
    obs = s_act_step (a, "stay", 3);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert (s_outcome_is (obs, "stayed"));
    pmsg_destroy (&obs);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_world");
    TCase *tc = tcase_create ("world");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_line_edges_and_coverage);
    tcase_add_test (tc, test_explored_event_and_reset);
    tcase_add_test (tc, test_grid_moves);
    tcase_add_test (tc, test_two_agents_share_exploration);
    tcase_add_test (tc, test_act_step_idempotent);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
