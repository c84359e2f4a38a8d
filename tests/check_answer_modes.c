// SPDX-License-Identifier: MIT
/*  check_answer_modes - the exploring agent's answer modes and what it
    does without its model, against tests/openai_server.py.

    - The probe of --llm-mode auto picks tools on a server with function
      calling, json-schema on one that refuses tools but takes a
      response_format, text on one with neither, and on one that refuses
      every request (501) or answers an HTML page; a server it cannot
      reach decides nothing.
    - The Decision stage in each mode: the request's tools (or schema)
      are generated from the step's allowed actions and message targets,
      and the answer (tool calls, JSON, text) is the same decision.
    - A refused answer in tools mode goes back as the result of the
      model's tool call; the corrected answer is taken.
    - An outage mid-run (parley-agent, --no-stop-when-explored): the
      heuristic moves while the model is away and never ends the run,
      even once the world is explored, and the model decides again once
      it is back. The heuristic alone honours --no-stop-when-explored.
    - Exit 4's words say what happened: a server never reached, or one
      that answered with something that is not a model's answer.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agent_state.h"
#include "agent/conn_mailbox.h"
#include "agent/conn_state.h"
#include "agent/conn_world.h"
#include "agent/llm_mode.h"
#include "lib/openai_server.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

#define DEADLINE_MS 90000

static const char *s_url;

static void
s_server_up (void)
{
    s_url = openai_server_start ();
}

static llm_t *
s_llm (const char *model)
{
    llm_options_t lo;
    llm_options_default (&lo);
    lo.url = s_url;
    lo.model = model;
    lo.http.max_retries = 0;
    char err [256];
    llm_t *llm = llm_new (&lo, err, sizeof err);
    ck_assert_msg (llm, "%s", err);
    return llm;
}

START_TEST (test_probe)
{
    const struct {
        const char *model;
        llm_result_t result;
        llm_mode_t mode;
    } cases [] = {
        { "explore:probe", LLM_RESULT_OK, LLM_MODE_TOOLS },
        { "explore-schema:probe", LLM_RESULT_OK, LLM_MODE_JSON_SCHEMA },
        { "explore-plain:probe", LLM_RESULT_OK, LLM_MODE_TEXT },
        { "501:probe", LLM_RESULT_OK, LLM_MODE_TEXT },
        { "html:probe", LLM_RESULT_OK, LLM_MODE_TEXT },
        { "always-500:probe", LLM_RESULT_UNREACHABLE, LLM_MODE_AUTO },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        llm_t *llm = s_llm (cases [i].model);
        llm_mode_t mode = LLM_MODE_AUTO;
        char note [600];
        llm_result_t result = llm_mode_probe (llm, &mode, note, sizeof note);
        ck_assert_msg (result == cases [i].result && mode == cases [i].mode,
                       "%s: %s, mode %s: %s", cases [i].model, llm_result_name (result),
                       llm_mode_name (mode), note);
        //  The probe's calls are counted apart from the decisions'.
        llm_totals_t totals, probe;
        llm_totals (llm, &totals);
        llm_probe_totals (llm, &probe);
        ck_assert_uint_eq (totals.calls, 0);
        ck_assert_uint_ge (probe.calls, 1);
        ck_assert_uint_le (probe.calls, 2);
        llm_destroy (&llm);
    }
    //  The modes by name, as --llm-mode takes them.
    llm_mode_t mode;
    ck_assert (llm_mode_parse ("json-schema", &mode) && mode == LLM_MODE_JSON_SCHEMA);
    ck_assert (!llm_mode_parse ("yaml", &mode));
}
END_TEST

// ---------------------------------------------------------------------------
//  The Decision stage, as agent_step calls it

static const char *const s_actions [] = { "forward", "backward", "stay", "end" };
static const char *const s_mates [] = { "Agent2" };

typedef struct {
    agent_state_t a;
    connector_t *world, *mailbox, *state;
} decision_t;

static void
s_decision_init (decision_t *d, const char *model, llm_mode_t mode)
{
    memset (d, 0, sizeof *d);
    d->world = conn_world_new (NULL);
    conn_world_set_shape (d->world, "line", 10, 1);
    world_view_t view = { .valid = true, .position = 3, .x = 3, .objects_total = 10 };
    conn_world_feed (d->world, &view);
    d->mailbox = conn_mailbox_new (NULL);
    d->state = conn_state_new (NULL, NULL, 0);
    agent_parts_t *a = &d->a.parts;
    strcpy (a->id, "Agent1");
    a->max_steps = 20;
    d->a.perceived.step = 1;
    a->world = d->world;
    a->mailbox = d->mailbox;
    a->state = d->state;
    a->connectors [0] = a->world;
    a->connectors [1] = a->mailbox;
    a->connectors [2] = a->state;
    a->mem = agentmem_new ();
    for (size_t i = 0; i < 4; i++)
        a->actions [i] = s_actions [i];
    a->action_count = 4;
    a->heuristic = policy_heuristic_new (1, "Agent1");
    a->policy = policy_llm_new (s_llm (model), 0);
    policy_llm_set_mode (a->policy, mode);
    d->a.team.ptrs [0] = s_mates [0];
    d->a.team.count = 1;
}

static stage_outcome_t
s_decide (decision_t *d)
{
    agent_state_t *s = &d->a;
    return stage_decision (&s->parts, &s->perceived, &s->recalled, &s->team, &s->decided,
                           &s->counts);
}

static void
s_decision_fini (decision_t *d)
{
    agent_parts_t *a = &d->a.parts;
    policy_destroy (&a->policy);
    policy_destroy (&a->heuristic);
    agentmem_destroy (&a->mem);
    agent_state_free_records (&d->a);
    connector_destroy (&d->world);
    connector_destroy (&d->mailbox);
    connector_destroy (&d->state);
}

START_TEST (test_decision_modes)
{
    const struct {
        const char *model;
        llm_mode_t mode;
    } cases [] = {
        { "explore:decide-tools", LLM_MODE_TOOLS },
        { "explore-schema:decide-schema", LLM_MODE_JSON_SCHEMA },
        { "explore-plain:decide-text", LLM_MODE_TEXT },
    };
    for (size_t i = 0; i < 3; i++) {
        decision_t d;
        s_decision_init (&d, cases [i].model, cases [i].mode);
        ck_assert (stage_went_on (s_decide (&d)));
        ck_assert_msg (!d.a.decided.by_fallback, "%s: %s", cases [i].model,
                       d.a.decided.answer_error);
        //  The same decision whatever the shape of the answer.
        ck_assert_str_eq (d.a.decided.action, "forward");
        ck_assert_str_eq (answer_reason (d.a.decided.answer),
                          "the positions ahead are not visited yet");
        ck_assert_uint_eq (answer_directive_count (d.a.decided.answer), 1);
        ck_assert_str_eq (answer_directive (d.a.decided.answer, 0)->target, "Agent2");
        ck_assert_str_eq (answer_directive (d.a.decided.answer, 0)->text, "I take the far side");
        json_t *requests = openai_server_requests (cases [i].model);
        ck_assert_uint_eq (json_array_size (requests), 1);
        json_t *request = json_array_get (requests, 0);
        json_t *tools = json_object_get (request, "tools");
        json_t *format = json_object_get (request, "response_format");
        ck_assert ((tools != NULL) == (cases [i].mode == LLM_MODE_TOOLS));
        ck_assert ((format != NULL) == (cases [i].mode == LLM_MODE_JSON_SCHEMA));
        //  Generated from the step: the allowed actions, the teammates.
        char *shape = json_dumps (tools ? tools : format, JSON_COMPACT | JSON_SORT_KEYS);
        if (shape) {
            ck_assert_msg (strstr (shape, "\"enum\":[\"forward\",\"backward\",\"stay\",\"end\"]"),
                           "%s", shape);
            ck_assert_msg (strstr (shape, "\"enum\":[\"Agent2\"]"), "%s", shape);
        }
        if (tools)
            ck_assert_str_eq (json_string_value (json_object_get (request, "tool_choice")),
                              "required");
        free (shape);
        json_decref (requests);
        s_decision_fini (&d);
    }
}
END_TEST

START_TEST (test_correction_as_tool_result)
{
    const char *model = "explore-err-once:correct-tools";
    decision_t d;
    s_decision_init (&d, model, LLM_MODE_TOOLS);
    ck_assert (stage_went_on (s_decide (&d)));
    ck_assert (!d.a.decided.by_fallback);
    ck_assert_str_eq (d.a.decided.action, "forward");
    ck_assert_uint_eq (d.a.counts.invalid_answers, 1);
    json_t *requests = openai_server_requests (model);
    ck_assert_uint_eq (json_array_size (requests), 2);
    json_t *messages = json_object_get (json_array_get (requests, 1), "messages");
    //  system, user, the assistant's tool calls, one result per call.
    json_t *assistant = json_array_get (messages, 2);
    ck_assert_uint_eq (json_array_size (json_object_get (assistant, "tool_calls")), 2);
    json_t *last = json_array_get (messages, json_array_size (messages) - 1);
    ck_assert_str_eq (json_string_value (json_object_get (last, "role")), "tool");
    const char *told = json_string_value (json_object_get (last, "content"));
    ck_assert_msg (strstr (told, "Your answer has action \"fly\", which is not one of: forward, "
                                 "backward, stay, end.\nCall act again"), "%s", told);
    ck_assert_msg (!strstr (told, "yaml"), "%s", told);
    json_decref (requests);
    s_decision_fini (&d);
}
END_TEST

// ---------------------------------------------------------------------------
//  parley-agent runs

static tproc_t *
s_agent (testbroker_t *broker, const char *id, const char *const *extra)
{
    tproc_t *proc = tproc_agent (testbroker_router (broker), id, "none", "info", extra);
    ck_assert_ptr_nonnull (proc);
    return proc;
}

START_TEST (test_outage_never_ends_the_run)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    openai_server_set_down ("outage", true);
    const char *extra [] = { "--policy", "llm", "--llm-url", s_url, "--llm-model",
                             "explore:outage", "--llm-mode", "tools", "--max-steps", "100000",
                             "--no-stop-when-explored", "--step-delay-ms", "20",
                             "--llm-deadline-ms", "1500", "--llm-breaker-ms", "300", NULL };
    tproc_t *agent = s_agent (broker, "Away", extra);
    //  The world gets explored while the model is away: the heuristic
    //  moves, and does not end the run.
    ck_assert_msg (tproc_wait_for (agent, "(coverage 100%) [fallback]", DEADLINE_MS),
                   "%s\n%s", tproc_out (agent), tproc_err (agent));
    ck_assert_msg (tproc_wait_for_err (agent, "never end the run", DEADLINE_MS), "%s",
                   tproc_err (agent));
    size_t seen = strlen (tproc_out (agent));
    //  Back: steps are decided by the model again (a step line without
    //  [fallback] after this point).
    openai_server_set_down ("outage", false);
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    bool modelled = false;
    while (!modelled && pclock_mono_ms () < deadline && !tproc_exited (agent)) {
        tproc_read (agent, 200);
        const char *out = tproc_out (agent);
        for (const char *line = strstr (out + seen, "\n["); line && !modelled;
             line = strstr (line + 1, "\n[")) {
            const char *end = strchr (line + 1, '\n');
            if (!end)
                break;
            modelled = memmem (line, (size_t) (end - line), "] step ", 7)
                    && !memmem (line, (size_t) (end - line), "[fallback]", 10);
        }
    }
    ck_assert_msg (modelled, "no step by the model after its return\n%s\n%s", tproc_out (agent),
                   tproc_err (agent));
    ck_assert (!tproc_exited (agent));
    tproc_signal (agent, SIGTERM);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_msg (strstr (tproc_out (agent), "end=\"stopped by a signal\""), "%s",
                   tproc_out (agent));
    ck_assert (!strstr (tproc_out (agent), "-> end "));
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_heuristic_honours_no_stop)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra [] = { "--max-steps", "40", "--no-stop-when-explored", NULL };
    tproc_t *agent = s_agent (broker, "Walker", extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    const char *out = tproc_out (agent);
    ck_assert_msg (strstr (out, "coverage=100%"), "%s", out);
    ck_assert_msg (strstr (out, "end=\"reached --max-steps\""), "%s", out);
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_exit_4_says_what_happened)
{
    const struct {
        const char *url, *model, *words;
    } cases [] = {
        { NULL, "501:exit4", "answered, but never with a model's answer: 2 requests refused" },
        { NULL, "html:exit4", "4 replies that were not a chat completion (such as an HTML page)" },
        { "http://127.0.0.1:1", "normal", "the model server was never reached" },
    };
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    for (size_t i = 0; i < 3; i++) {
        const char *extra [] = { "--policy", "llm", "--llm-url", cases [i].url ? cases [i].url : s_url,
                                 "--llm-model", cases [i].model, "--llm-mode", "text",
                                 "--max-steps", "2", "--no-stop-when-explored",
                                 "--llm-breaker-ms", "0", "--no-llm-probe", NULL };
        char id [16];
        snprintf (id, sizeof id, "NoModel%zu", i);
        tproc_t *agent = s_agent (broker, id, extra);
        ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 4);
        ck_assert_msg (strstr (tproc_err (agent), cases [i].words), "%s", tproc_err (agent));
        tproc_destroy (&agent);
    }
    testbroker_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("answer_modes");
    TCase *tc = tcase_create ("modes");
    tcase_add_unchecked_fixture (tc, s_server_up, openai_server_stop);
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_probe);
    tcase_add_test (tc, test_decision_modes);
    tcase_add_test (tc, test_correction_as_tool_result);
    tcase_add_test (tc, test_outage_never_ends_the_run);
    tcase_add_test (tc, test_heuristic_honours_no_stop);
    tcase_add_test (tc, test_exit_4_says_what_happened);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
