// SPDX-License-Identifier: MIT
/*  check_agent_step - one step of the agent (agent_step.h) and the retry
    and fallback rule its stages share (stage.h).

    - stage_attempt: a try that fails is retried up to the stage's limit,
      then the fallback is called once; its outcome is the stage's
      (STAGE_OK, STAGE_FALLBACK, STAGE_FAILED), with the counts to match;
    - the retry table is the agent's: Perception 2, RetrieveMemory 1,
      Communication 1, Decision 1, Execution 0, UpdateMemory 1;
    - a real agent (in-process, against the real parley-broker) runs the
      six stages in order, step after step, until UpdateMemory ends the run
      (--max-steps, the end action); a stop signal ends it before any stage;
    - a role's memory.store decides what the memory keeps of a step, and
      its channels are joined at start (LISTEN): their mail reaches the
      first step.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agent.h"
#include "agent/agent_state.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

//  --------------------------------------------------------------------------
//  stage_attempt, with a scripted try and fallback that log every call.

typedef struct {
    int failures;                   //  failed tries before a success (-1: always)
    stage_outcome_t fallback;       //  what the fallback answers
    char log[256];
} script_t;

static void
s_log (script_t *self, const char *call)
{
    size_t used = strlen (self->log);
    snprintf (self->log + used, sizeof (self->log) - used, "%s ", call);
}

static stage_outcome_t
s_try (void *arg)
{
    script_t *self = (script_t *) arg;
    s_log (self, "try");
    if (self->failures < 0)
        return STAGE_RETRY;
    if (self->failures > 0) {
        self->failures--;
        return STAGE_RETRY;
    }
    return STAGE_OK;
}

static stage_outcome_t
s_fallback (void *arg)
{
    script_t *self = (script_t *) arg;
    s_log (self, "fallback");
    return self->fallback;
}

START_TEST (test_first_try)
{
    stage_stats_t stats[STAGE__COUNT] = { { 0 } };
    script_t s = { .failures = 0, .fallback = STAGE_FALLBACK };
    ck_assert_int_eq (stage_attempt (STAGE_PERCEPTION, stats, s_try, s_fallback, &s), STAGE_OK);
    ck_assert_str_eq (s.log, "try ");
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].attempts, 1);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].retries, 0);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].fallbacks, 0);
    //  Only the stage's own counts move.
    ck_assert_uint_eq (stats[STAGE_DECISION].attempts, 0);
}
END_TEST

START_TEST (test_retry_then_success)
{
    stage_stats_t stats[STAGE__COUNT] = { { 0 } };
    script_t s = { .failures = 2, .fallback = STAGE_FALLBACK };
    ck_assert_int_eq (stage_attempt (STAGE_PERCEPTION, stats, s_try, s_fallback, &s), STAGE_OK);
    ck_assert_str_eq (s.log, "try try try ");
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].attempts, 3);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].retries, 2);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].fallbacks, 0);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].errors, 0);
}
END_TEST

START_TEST (test_fallback_after_retries)
{
    stage_stats_t stats[STAGE__COUNT] = { { 0 } };
    script_t s = { .failures = -1, .fallback = STAGE_FALLBACK };
    ck_assert_int_eq (stage_attempt (STAGE_PERCEPTION, stats, s_try, s_fallback, &s),
                      STAGE_FALLBACK);
    ck_assert_str_eq (s.log, "try try try fallback ");
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].fallbacks, 1);
    ck_assert_uint_eq (stats[STAGE_PERCEPTION].errors, 0);
    //  Two failures on a stage with one retry: its fallback, at once.
    script_t d = { .failures = 2, .fallback = STAGE_FALLBACK };
    ck_assert_int_eq (stage_attempt (STAGE_DECISION, stats, s_try, s_fallback, &d),
                      STAGE_FALLBACK);
    ck_assert_str_eq (d.log, "try try fallback ");
    //  Execution is not retried: one failure, the fallback.
    script_t e = { .failures = 1, .fallback = STAGE_FALLBACK };
    ck_assert_int_eq (stage_attempt (STAGE_EXECUTION, stats, s_try, s_fallback, &e),
                      STAGE_FALLBACK);
    ck_assert_str_eq (e.log, "try fallback ");
    ck_assert_uint_eq (stats[STAGE_EXECUTION].retries, 0);
}
END_TEST

START_TEST (test_failed)
{
    //  A fallback that fails: the stage failed.
    stage_stats_t stats[STAGE__COUNT] = { { 0 } };
    script_t s = { .failures = -1, .fallback = STAGE_FAILED };
    ck_assert_int_eq (stage_attempt (STAGE_UPDATE_MEMORY, stats, s_try, s_fallback, &s),
                      STAGE_FAILED);
    ck_assert_str_eq (s.log, "try try fallback ");
    ck_assert_uint_eq (stats[STAGE_UPDATE_MEMORY].fallbacks, 1);
    ck_assert_uint_eq (stats[STAGE_UPDATE_MEMORY].errors, 1);
    //  No fallback at all: failed after the tries, without counts (NULL).
    script_t n = { .failures = -1 };
    ck_assert_int_eq (stage_attempt (STAGE_COMMUNICATION, NULL, s_try, NULL, &n), STAGE_FAILED);
    ck_assert_str_eq (n.log, "try try ");
}
END_TEST

START_TEST (test_stage_table)
{
    const char *names[] = { "Perception", "RetrieveMemory", "Communication",
                            "Decision", "Execution", "UpdateMemory" };
    const unsigned retries[] = { 2, 1, 1, 1, 0, 1 };
    for (stage_id_t id = 0; id < STAGE__COUNT; id++) {
        ck_assert_str_eq (stage_name (id), names[id]);
        ck_assert_uint_eq (stage_max_retries (id), retries[id]);
    }
    ck_assert_str_eq (stage_name (STAGE__COUNT), "?");
    //  What goes on to the next stage, and what ends the step.
    ck_assert (stage_went_on (STAGE_OK));
    ck_assert (stage_went_on (STAGE_FALLBACK));
    ck_assert (!stage_went_on (STAGE_END));
    ck_assert (!stage_went_on (STAGE_STOP));
    ck_assert (!stage_went_on (STAGE_FAILED));
    ck_assert (!stage_went_on (STAGE_RETRY));
}
END_TEST

//  --------------------------------------------------------------------------
//  A real agent against a real broker.

typedef struct {
    testbroker_t *broker;
    agent_config_t config;
    agent_t *agent;
    volatile sig_atomic_t stop;
} run_t;

static void
run_init (run_t *r, const char *id, int64_t max_steps)
{
    memset (r, 0, sizeof (*r));
    r->broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (r->broker);
    r->config.broker = testbroker_router (r->broker);
    r->config.id = id;
    r->config.policy = "heuristic";
    r->config.max_steps = max_steps;
    r->config.seed = 7;
}

//  Creates and connects the agent with r->config as set.
static void
run_connect (run_t *r)
{
    char err[512];
    r->agent = agent_new (&r->config, err, sizeof (err));
    ck_assert_msg (r->agent, "%s", err);
    ck_assert_msg (agent_connect (r->agent, &r->stop, err, sizeof (err)) == 0, "%s", err);
}

static void
run_fini (run_t *r)
{
    agent_destroy (&r->agent);
    ck_assert_ptr_null (r->agent);
    testbroker_stop (&r->broker);
}

//  The agent's summary line, for its counters.
static char *
run_summary (run_t *r)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    ck_assert_ptr_nonnull (out);
    agent_summary (r->agent, out);
    fclose (out);
    return text;
}

START_TEST (test_step_order_and_end)
{
    run_t r;
    run_init (&r, "Stepper", 3);
    run_connect (&r);
    ck_assert_int_eq (agent_run (r.agent), AGENT_DONE);
    ck_assert_str_eq (agent_end_reason (r.agent), "reached --max-steps");
    ck_assert_uint_eq (agent_steps (r.agent), 3);
    //  Every stage ran once per step, and nothing else ran.
    ck_assert_uint_eq (agent_stage_entries (r.agent), 3 * STAGE__COUNT);
    for (stage_id_t id = 0; id < STAGE__COUNT; id++) {
        stage_stats_t stats;
        ck_assert (agent_stage_stats (r.agent, id, &stats));
        ck_assert_msg (stats.runs == 3, "%s ran %" PRIu64 " times", stage_name (id), stats.runs);
        ck_assert_uint_eq (stats.errors, 0);
        //  In order: the last step entered Perception 13th ... UpdateMemory 18th.
        ck_assert_msg (stats.last_entry == 2 * STAGE__COUNT + 1 + id, "%s entered %" PRIu64 "th",
                       stage_name (id), stats.last_entry);
    }
    stage_stats_t stats;
    ck_assert (!agent_stage_stats (r.agent, STAGE__COUNT, &stats));
    //  The stages that try once per run tried once per step (a broker that
    //  answers needs no retry).
    ck_assert (agent_stage_stats (r.agent, STAGE_PERCEPTION, &stats));
    ck_assert_uint_eq (stats.attempts, 3);
    ck_assert_uint_eq (stats.retries, 0);
    run_fini (&r);
}
END_TEST

START_TEST (test_stop_before_any_stage)
{
    run_t r;
    run_init (&r, "Stopped", 5);
    run_connect (&r);
    r.stop = 1;
    ck_assert_int_eq (agent_run (r.agent), AGENT_STOPPED);
    ck_assert_str_eq (agent_end_reason (r.agent), "stopped by a signal");
    ck_assert_uint_eq (agent_stage_entries (r.agent), 0);
    ck_assert_uint_eq (agent_steps (r.agent), 0);
    run_fini (&r);
}
END_TEST

//  Runs `steps` steps with `store` (or every part when `set` is false);
//  Bob posts on "news" (a channel of the role) before the first step.
//  Returns the first memory's text (caller frees).
static char *
s_first_memory (bool set, unsigned store, size_t *stored)
{
    run_t r;
    run_init (&r, "Keeper", 2);
    char *channels[] = { "news", "explorers" };
    r.config.channels = channels;
    r.config.channel_count = 2;
    r.config.memory_store_set = set;
    r.config.memory_store = store;
    run_connect (&r);
    testclient_t *bob = testcheck_agent (r.broker, "Bob");
    ck_assert_uint_gt (testmail_send (bob, "news", true, "hello team"), 0);
    ck_assert_int_eq (agent_run (r.agent), AGENT_DONE);
    *stored = agent_memories_stored (r.agent);
    const char *text = agent_memory_text (r.agent, 0);
    char *copy = text? strdup (text): NULL;
    testclient_destroy (&bob);
    run_fini (&r);
    return copy;
}

START_TEST (test_memory_store_all)
{
    size_t stored;
    char *text = s_first_memory (false, 0, &stored);
    ck_assert_uint_eq (stored, 2);
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (strncmp (text, "At position ", 12) == 0, "%s", text);
    ck_assert_msg (strstr (text, "]. I decided to "), "%s", text);
    ck_assert_msg (strstr (text, ". Reason: "), "%s", text);
    ck_assert_msg (strstr (text, ". Messages received: In news, from Bob: hello team"), "%s", text);
    free (text);
}
END_TEST

START_TEST (test_memory_store_decisions)
{
    size_t stored;
    char *text = s_first_memory (true, AGENT_STORE_DECISIONS, &stored);
    ck_assert_uint_eq (stored, 2);
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (strncmp (text, "I decided to ", 13) == 0, "%s", text);
    ck_assert_msg (!strstr (text, "At position"), "%s", text);
    ck_assert_msg (!strstr (text, "Messages received"), "%s", text);
    free (text);
}
END_TEST

START_TEST (test_memory_store_observations_messages)
{
    size_t stored;
    char *text = s_first_memory (true, AGENT_STORE_OBSERVATIONS | AGENT_STORE_MESSAGES, &stored);
    ck_assert_uint_eq (stored, 2);
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (strncmp (text, "At position ", 12) == 0, "%s", text);
    ck_assert_msg (!strstr (text, "I decided"), "%s", text);
    ck_assert_msg (strstr (text, "]. Messages received: In news, from Bob: hello team"), "%s", text);
    free (text);
}
END_TEST

START_TEST (test_memory_store_messages_only)
{
    //  Messages only: the step with Bob's mail is kept, the quiet one not
    //  (the heuristic's own report on explorers is ours, but it is mail).
    size_t stored;
    char *text = s_first_memory (true, AGENT_STORE_MESSAGES, &stored);
    ck_assert_uint_ge (stored, 1);
    ck_assert_ptr_nonnull (text);
    ck_assert_msg (strncmp (text, "Messages received: ", 19) == 0, "%s", text);
    ck_assert_msg (strstr (text, "In news, from Bob: hello team"), "%s", text);
    free (text);
    //  Nothing: nothing is stored, and the run goes on.
    text = s_first_memory (true, 0, &stored);
    ck_assert_uint_eq (stored, 0);
    ck_assert_ptr_null (text);
}
END_TEST

START_TEST (test_channels_joined_at_start)
{
    run_t r;
    run_init (&r, "Listener", 1);
    char *channels[] = { "news", "alerts", "news" };
    r.config.channels = channels;
    r.config.channel_count = 3;
    run_connect (&r);
    //  Joined before any step, each once.
    ck_assert_uint_eq (agent_channel_count (r.agent), 2);
    testclient_t *bob = testcheck_agent (r.broker, "Bob");
    ck_assert_uint_gt (testmail_send (bob, "alerts", true, "fire"), 0);
    ck_assert_int_eq (agent_run (r.agent), AGENT_DONE);
    char *summary = run_summary (&r);
    ck_assert_msg (strstr (summary, " received=1 "), "%s", summary);
    free (summary);
    testclient_destroy (&bob);
    run_fini (&r);
    //  --no-messages joins none.
    run_init (&r, "Deaf", 1);
    r.config.channels = channels;
    r.config.channel_count = 3;
    r.config.no_messages = true;
    run_connect (&r);
    ck_assert_uint_eq (agent_channel_count (r.agent), 0);
    run_fini (&r);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("agent_step");
    TCase *tc = tcase_create ("stage");
    tcase_add_test (tc, test_first_try);
    tcase_add_test (tc, test_retry_then_success);
    tcase_add_test (tc, test_fallback_after_retries);
    tcase_add_test (tc, test_failed);
    tcase_add_test (tc, test_stage_table);
    suite_add_tcase (s, tc);
    TCase *step = tcase_create ("step");
    tcase_set_timeout (step, 120);
    tcase_add_test (step, test_step_order_and_end);
    tcase_add_test (step, test_stop_before_any_stage);
    suite_add_tcase (s, step);
    TCase *role = tcase_create ("role");
    tcase_set_timeout (role, 120);
    tcase_add_test (role, test_memory_store_all);
    tcase_add_test (role, test_memory_store_decisions);
    tcase_add_test (role, test_memory_store_observations_messages);
    tcase_add_test (role, test_memory_store_messages_only);
    tcase_add_test (role, test_channels_joined_at_start);
    suite_add_tcase (s, role);
    return testsuite_run (s);
}
