/*  check_flow - the node engine (agent/flow.h): transitions by action,
    loops, retries, fallbacks, errors, the guard, and the agent's own
    wiring (agent_flow.c) as built.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agent_shared.h"
#include "agent/flow.h"
#include "lib/testsuite.h"

//  A scripted node: its exec fails `failures` times, then succeeds; post
//  returns actions from a list, one per visit. Every call is logged.
typedef struct {
    const char *name;
    int failures;               //  exec failures before a success (-1: always)
    int fallback_rc;
    const char *actions[8];
    int visits;
    char *log;                  //  shared log of "name.call " entries
} script_t;

typedef struct {
    char log[4096];
} world_t;

static void
s_log (void *shared, script_t *s, const char *call)
{
    world_t *w = (world_t *) shared;
    size_t used = strlen (w->log);
    snprintf (w->log + used, sizeof (w->log) - used, "%s.%s ", s->name, call);
}

static int
s_prep (void *shared, void *ctx)
{
    s_log (shared, (script_t *) ctx, "prep");
    return 0;
}

static int
s_exec (void *shared, void *ctx)
{
    script_t *s = (script_t *) ctx;
    s_log (shared, s, "exec");
    if (s->failures < 0)
        return -1;
    if (s->failures > 0) {
        s->failures--;
        return -1;
    }
    return 0;
}

static int
s_fallback (void *shared, void *ctx)
{
    script_t *s = (script_t *) ctx;
    s_log (shared, s, "fallback");
    return s->fallback_rc;
}

static const char *
s_post (void *shared, void *ctx)
{
    script_t *s = (script_t *) ctx;
    s_log (shared, s, "post");
    const char *action = s->actions[s->visits];
    if (s->actions[s->visits + 1])
        s->visits++;
    return action;
}

static const flow_node_ops_t s_plain = { s_prep, s_exec, NULL, s_post, 0 };
static const flow_node_ops_t s_retry2 = { s_prep, s_exec, s_fallback, s_post, 2 };

START_TEST (test_linear_default)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .actions = { NULL } };
    script_t b = { .name = "B", .actions = { "done" } };
    ck_assert_int_eq (flow_add (flow, "A", &s_plain, &a), 0);
    ck_assert_int_eq (flow_add (flow, "B", &s_plain, &b), 1);
    ck_assert_int_eq (flow_add (flow, "A", &s_plain, &a), -1);         //  name taken
    ck_assert_int_eq (flow_connect (flow, "A", "default", "B"), 0);
    ck_assert_int_eq (flow_connect (flow, "A", "x", "nowhere"), -1);
    ck_assert_int_eq (flow_connect (flow, "A", "", "B"), -1);
    world_t w = { "" };
    //  A's post returns NULL -> "default" -> B; B's "done" is not wired.
    ck_assert_str_eq (flow_run (flow, &w), "done");
    ck_assert_str_eq (w.log, "A.prep A.exec A.post B.prep B.exec B.post ");
    ck_assert_str_eq (flow_last_node (flow), "B");
    flow_destroy (&flow);
    ck_assert_ptr_null (flow);
}
END_TEST

START_TEST (test_loop_until_end)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .actions = { "default" } };
    script_t b = { .name = "B", .actions = { "continue", "continue", "end" } };
    flow_add (flow, "A", &s_plain, &a);
    flow_add (flow, "B", &s_plain, &b);
    flow_connect (flow, "A", "default", "B");
    flow_connect (flow, "B", "continue", "A");
    world_t w = { "" };
    ck_assert_str_eq (flow_run (flow, &w), "end");
    flow_node_stats_t stats;
    ck_assert (flow_node_stats (flow, "A", &stats));
    ck_assert_uint_eq (stats.runs, 3);
    ck_assert (flow_node_stats (flow, "B", &stats));
    ck_assert_uint_eq (stats.runs, 3);
    ck_assert_uint_eq (flow_transitions (flow), 6);
    ck_assert (!flow_node_stats (flow, "C", &stats));
    flow_destroy (&flow);
}
END_TEST

START_TEST (test_branch_by_action)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .actions = { "left" } };
    script_t l = { .name = "L", .actions = { "end" } };
    script_t r = { .name = "R", .actions = { "end" } };
    flow_add (flow, "A", &s_plain, &a);
    flow_add (flow, "L", &s_plain, &l);
    flow_add (flow, "R", &s_plain, &r);
    flow_connect (flow, "A", "left", "L");
    flow_connect (flow, "A", "right", "R");
    world_t w = { "" };
    flow_run (flow, &w);
    ck_assert_str_eq (w.log, "A.prep A.exec A.post L.prep L.exec L.post ");
    //  Rewiring an action replaces its target.
    flow_connect (flow, "A", "left", "R");
    w.log[0] = 0;
    flow_run (flow, &w);
    ck_assert_str_eq (w.log, "A.prep A.exec A.post R.prep R.exec R.post ");
    //  The start node can be moved.
    ck_assert_int_eq (flow_set_start (flow, "L"), 0);
    w.log[0] = 0;
    flow_run (flow, &w);
    ck_assert_str_eq (w.log, "L.prep L.exec L.post ");
    flow_destroy (&flow);
}
END_TEST

START_TEST (test_retry_then_success)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .failures = 2, .actions = { "end" } };
    flow_add (flow, "A", &s_retry2, &a);
    world_t w = { "" };
    ck_assert_str_eq (flow_run (flow, &w), "end");
    ck_assert_str_eq (w.log, "A.prep A.exec A.exec A.exec A.post ");
    flow_node_stats_t stats;
    flow_node_stats (flow, "A", &stats);
    ck_assert_uint_eq (stats.attempts, 3);
    ck_assert_uint_eq (stats.retries, 2);
    ck_assert_uint_eq (stats.fallbacks, 0);
    flow_destroy (&flow);
}
END_TEST

START_TEST (test_fallback_after_retries)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .failures = -1, .fallback_rc = 0, .actions = { "end" } };
    flow_add (flow, "A", &s_retry2, &a);
    world_t w = { "" };
    ck_assert_str_eq (flow_run (flow, &w), "end");
    ck_assert_str_eq (w.log, "A.prep A.exec A.exec A.exec A.fallback A.post ");
    flow_node_stats_t stats;
    flow_node_stats (flow, "A", &stats);
    ck_assert_uint_eq (stats.fallbacks, 1);
    ck_assert_uint_eq (stats.errors, 0);
    flow_destroy (&flow);
}
END_TEST

START_TEST (test_error_without_fallback)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .failures = -1, .actions = { "default" } };
    script_t b = { .name = "B", .actions = { "end" } };
    script_t e = { .name = "E", .actions = { "recovered" } };
    flow_add (flow, "A", &s_plain, &a);
    flow_add (flow, "B", &s_plain, &b);
    flow_connect (flow, "A", "default", "B");
    world_t w = { "" };
    //  No fallback, no "error" exit: the flow ends with "error", no post.
    ck_assert_str_eq (flow_run (flow, &w), "error");
    ck_assert_str_eq (w.log, "A.prep A.exec ");
    //  An "error" transition is followed like any other.
    flow_add (flow, "E", &s_plain, &e);
    flow_connect (flow, "A", "error", "E");
    w.log[0] = 0;
    ck_assert_str_eq (flow_run (flow, &w), "recovered");
    ck_assert_str_eq (w.log, "A.prep A.exec E.prep E.exec E.post ");
    //  A fallback that fails is an error too.
    flow_t *flow2 = flow_new ();
    script_t f = { .name = "F", .failures = -1, .fallback_rc = -1, .actions = { "end" } };
    flow_add (flow2, "F", &s_retry2, &f);
    w.log[0] = 0;
    ck_assert_str_eq (flow_run (flow2, &w), "error");
    ck_assert_str_eq (w.log, "F.prep F.exec F.exec F.exec F.fallback ");
    flow_destroy (&flow);
    flow_destroy (&flow2);
}
END_TEST

static int s_guard_calls;
static bool
s_guard (void *shared, const char *node)
{
    return ++s_guard_calls < 4;
}

START_TEST (test_guard_stops)
{
    flow_t *flow = flow_new ();
    script_t a = { .name = "A", .actions = { "again" } };
    flow_add (flow, "A", &s_plain, &a);
    flow_connect (flow, "A", "again", "A");
    flow_set_guard (flow, s_guard);
    world_t w = { "" };
    s_guard_calls = 0;
    ck_assert_str_eq (flow_run (flow, &w), "stopped");
    flow_node_stats_t stats;
    flow_node_stats (flow, "A", &stats);
    ck_assert_uint_eq (stats.runs, 3);
    flow_destroy (&flow);
}
END_TEST

//  --------------------------------------------------------------------------
//  The agent's wiring, exactly as agent_flow_build makes it with the real
//  nodes, read back edge by edge with flow_next (running it needs a whole
//  connected agent: check_agent_e2e does that).

START_TEST (test_agent_wiring)
{
    flow_t *flow = flow_new ();
    ck_assert_int_eq (agent_flow_build (flow), 0);
    const char *lap[] = { "Perception", "RetrieveMemory", "Communication",
                          "Decision", "Execution", "UpdateMemory" };
    //  Six nodes, all there: adding any of them again fails.
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq (flow_add (flow, lap[i], &s_plain, NULL), -1);
    //  Linear defaults, Perception first.
    for (size_t i = 0; i + 1 < 6; i++) {
        const char *next = flow_next (flow, lap[i], "default");
        ck_assert_msg (next && streq (next, lap[i + 1]), "%s --default--> %s, not %s",
                       lap[i], next ? next : "(end)", lap[i + 1]);
    }
    //  Only UpdateMemory loops back, on "continue"; its "default" ends.
    ck_assert_str_eq (flow_next (flow, "UpdateMemory", "continue"), "Perception");
    ck_assert_ptr_null (flow_next (flow, "UpdateMemory", "default"));
    for (size_t i = 0; i < 6; i++) {
        //  "end", "error" and "stopped" terminate wherever they come from.
        ck_assert_ptr_null (flow_next (flow, lap[i], "end"));
        ck_assert_ptr_null (flow_next (flow, lap[i], "error"));
        ck_assert_ptr_null (flow_next (flow, lap[i], "stopped"));
        if (i != 5)
            ck_assert_ptr_null (flow_next (flow, lap[i], "continue"));
    }
    ck_assert_ptr_null (flow_next (flow, "NoSuchNode", "default"));
    flow_destroy (&flow);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("flow");
    TCase *tc = tcase_create ("flow");
    tcase_add_test (tc, test_linear_default);
    tcase_add_test (tc, test_loop_until_end);
    tcase_add_test (tc, test_branch_by_action);
    tcase_add_test (tc, test_retry_then_success);
    tcase_add_test (tc, test_fallback_after_retries);
    tcase_add_test (tc, test_error_without_fallback);
    tcase_add_test (tc, test_guard_stops);
    tcase_add_test (tc, test_agent_wiring);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
