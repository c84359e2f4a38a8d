// SPDX-License-Identifier: MIT
/*  check_model_turns - scenarios/newsroom played by parley-agent processes
    whose model is tests/openai_server.py's scripted newsroom, against the
    real broker.

    - Each answer mode on the server that supports it: tools (a server with
      function calling), json-schema (tools refused with HTTP 400,
      response_format honoured), text (neither): the run is done, the
      requests had the shape the mode asks for, the status the model gave
      (in_progress after a revision) is the workflow's, and the model use
      of every workflow agent is in AGENTS and in STATS per role.
    - A refused op: the writer appends a string where the scenario
      declares append; the broker's sentence reaches the next request (a
      tool result, or a user message in text mode) and the corrected
      answer is accepted.
    - A model that never corrects: after exactly 1 + workflow.corrections
      answers the scenario's fallback takes the turn: the human approver
      (newsroom), or the entry role with the reason in the note (once:
      the second fallback of the same agent fails the run), or the run
      fails with the reason.
    - An outage mid-run: the reviewer's server answers 503; the turn is
      held (nothing handed over, the run not ended) and taken once the
      server is back.
    - A role file whose scenario is wrong: parley-agent exits 2 naming
      the file and line of the mistake.
*/
#include <check.h>
#include <czmq.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/openai_server.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"
#include "pclock.h"

#define DEADLINE_MS 60000

static const char *s_url;

static void
s_server_up (void)
{
    s_url = openai_server_start ();
}

static const char *
s_scenario (const char *name)
{
    static char path [1024];
    snprintf (path, sizeof path, "%s/../scenarios/%s", getenv ("PARLEY_TEST_DIR"), name);
    return path;
}

//  parley-agent playing `role` of the scenario in `dir` with `model`.
static tproc_t *
s_role (testbroker_t *broker, const char *dir, const char *role, const char *model,
        const char *const *extra)
{
    char path [1200];
    snprintf (path, sizeof path, "%s/roles/%s.yaml", dir, role);
    const char *argv [24] = { "parley-agent", "--broker", testbroker_router (broker),
                              "--role", path, "--id", role, "--memory-dir", "none",
                              "--llm-url", s_url, "--llm-model", model, "--log-level", "info" };
    size_t n = 15;
    for (size_t i = 0; extra && extra [i] && n < 23; i++)
        argv [n++] = extra [i];
    argv [n] = NULL;
    tproc_t *proc = tproc_start (argv, true, NULL);
    ck_assert_ptr_nonnull (proc);
    return proc;
}

//  WORKFLOW_INFO once `holder` holds the turn (NULL: once the run ended),
//  failing the test at the deadline.
static pmsg_t *
s_wait_holder (testclient_t *client, const char *holder, tproc_t *const *agents, size_t count)
{
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (pclock_mono_ms () < deadline) {
        pmsg_t *info = testclient_call0 (client, PMSG_WORKFLOW);
        EXPECT (info, PMSG_WORKFLOW_INFO);
        char who [80] = "", status [32] = "";
        pmsg_strcpy (info, "holder", who, sizeof who);
        pmsg_strcpy (info, "status", status, sizeof status);
        bool ended = strcmp (status, "done") == 0 || strcmp (status, "failed") == 0;
        if ((holder && strcmp (who, holder) == 0) || (!holder && ended))
            return info;
        ck_assert_msg (!ended || !holder, "the run ended (%s: %s) before %s held the turn",
                       status, testflow_str (info, "reason"), holder);
        pmsg_destroy (&info);
        zclock_sleep (50);
    }
    for (size_t i = 0; i < count; i++)
        fprintf (stderr, "--- agent %zu\n%s\n", i, tproc_err (agents [i]));
    ck_abort_msg ("%s never held the turn", holder ? holder : "nobody: the run never ended");
    return NULL;
}

//  The person approving: one HANDOVER as parley-ctl submit makes it.
static void
s_approve (testbroker_t *broker)
{
    testclient_t *person = testflow_agent (broker, "ctl-ana", "approver");
    testflow_handover_ok (person, "[{\"op\":\"update\",\"key\":\"approval\",\"value\":\"approved\"}]",
                          NULL, "done");
    testclient_destroy (&person);
}

static void
s_finish (tproc_t **agents, size_t count, int want)
{
    for (size_t i = 0; i < count; i++) {
        int status = tproc_wait (agents [i], DEADLINE_MS);
        ck_assert_msg (status == want, "agent %zu exit %d (want %d)\n%s", i, status, want,
                       tproc_err (agents [i]));
        tproc_destroy (&agents [i]);
    }
}

//  Requests of `model` whose user prompt plays `role` (the probe's aside).
static json_t *
s_requests_of (const char *model, const char *role)
{
    json_t *all = openai_server_requests (model);
    json_t *mine = json_array ();
    char mark [80];
    snprintf (mark, sizeof mark, "Your role: %s.", role);
    size_t i;
    json_t *request;
    json_array_foreach (all, i, request) {
        const char *user = json_string_value (json_object_get (json_array_get (
            json_object_get (request, "messages"), 1), "content"));
        if (user && strstr (user, mark))
            json_array_append (mine, request);
    }
    json_decref (all);
    return mine;
}

//  The whole conversation of a request as one string (the caller frees).
static char *
s_dump (const json_t *request)
{
    return json_dumps (json_object_get (request, "messages"), JSON_COMPACT);
}

// ---------------------------------------------------------------------------

typedef struct {
    const char *model;
    const char *mode;           //  the answer mode auto must pick
} mode_case_t;

static const mode_case_t s_modes [] = {
    { "news:modes-tools", "tools" },
    { "news-schema:modes-schema", "json-schema" },
    { "news-plain:modes-plain", "text" },
};

START_TEST (test_answer_modes)
{
    const mode_case_t *c = &s_modes [_i];
    const char *dir = s_scenario ("newsroom");
    const char *args [] = { "--scenario", dir, NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    tproc_t *agents [3] = {
        s_role (broker, dir, "writer", c->model, NULL),
        s_role (broker, dir, "reviewer", c->model, NULL),
        s_role (broker, dir, "editor", c->model, NULL),
    };
    pmsg_t *info = s_wait_holder (watch, "approver", agents, 3);
    ck_assert (pmsg_bool (info, "paused", false));
    ck_assert_uint_eq (pmsg_uint (info, "revisions", 0), 1);
    pmsg_destroy (&info);
    testflow_expect_key (watch, "headline", "\"Night bus runs on time, riders say\"");
    s_approve (broker);
    info = s_wait_holder (watch, NULL, agents, 3);
    ck_assert_str_eq (testflow_str (info, "status"), "done");
    pmsg_destroy (&info);
    for (size_t i = 0; i < 3; i++) {
        char want [80];
        snprintf (want, sizeof want, "answer mode %s (--llm-mode auto", c->mode);
        ck_assert_msg (tproc_wait_for_err (agents [i], want, DEADLINE_MS), "%s",
                       tproc_err (agents [i]));
    }
    //  Every model agent's use, per agent in AGENTS and per role in STATS.
    pmsg_t *list = testclient_call0 (watch, PMSG_AGENTS);
    pmsg_t *stats = testclient_call0 (watch, PMSG_STATS);
    const msgpack_object *roles = pmsg_field (stats, "model_roles");
    ck_assert_msg (roles, "STATS has no model_roles: %s", testclient_describe (stats));
    const char *names [] = { "writer", "reviewer", "editor" };
    const uint64_t turns [] = { 2, 2, 1 };
    for (size_t i = 0; i < 3; i++) {
        const msgpack_object *agent = testcheck_find_agent (list, names [i]);
        ck_assert_uint_eq (pobj_uint (agent, "model_calls", 0), turns [i]);
        ck_assert_uint_eq (pobj_uint (agent, "model_ok", 0), turns [i]);
        const msgpack_object *role = pobj_get (roles, names [i]);
        ck_assert_msg (role, "no role %s in model_roles", names [i]);
        ck_assert_uint_eq (pobj_uint (role, "agents", 0), 1);
        ck_assert_uint_eq (pobj_uint (role, "model_calls", 0), turns [i]);
    }
    pmsg_destroy (&stats);
    pmsg_destroy (&list);
    //  And as a person reads them: parley-ctl stats (per role) and agents.
    const char *ctl [] = { "parley-ctl", "--broker", testbroker_router (broker), "stats", NULL };
    tproc_t *proc = tproc_run (ctl, true);
    ck_assert_int_eq (tproc_status (proc), 0);
    ck_assert_msg (strstr (tproc_out (proc), "\"writer\":{\"agents\":1,\"model_calls\":2,"),
                   "%s", tproc_out (proc));
    tproc_destroy (&proc);
    ctl [3] = "agents";
    proc = tproc_run (ctl, true);
    ck_assert_int_eq (tproc_status (proc), 0);
    ck_assert_msg (testsuite_matches (tproc_out (proc), "\nreviewer +reviewer +(online|offline) [^\n]* 2 +[0-9]+\n"),
                   "%s", tproc_out (proc));
    tproc_destroy (&proc);
    s_finish (agents, 3, 0);

    //  The requests had the mode's shape, and the reviewer's second
    //  prompt shows the status the writer's model gave after the revision.
    json_t *requests = s_requests_of (c->model, "reviewer");
    ck_assert_uint_eq (json_array_size (requests), 2);
    size_t i;
    json_t *request;
    json_array_foreach (requests, i, request) {
        bool tools = json_object_get (request, "tools") != NULL;
        bool format = json_object_get (request, "response_format") != NULL;
        ck_assert (tools == (strcmp (c->mode, "tools") == 0));
        ck_assert (format == (strcmp (c->mode, "json-schema") == 0));
    }
    char *second = s_dump (json_array_get (requests, 1));
    ck_assert_msg (strstr (second, "\\\"workflow_status\\\": \\\"in_progress\\\""), "%s", second);
    free (second);
    if (strcmp (c->mode, "tools") == 0) {
        //  The tools come from the role file and the scenario: notes takes
        //  a list (append), next one of the roles it may hand to.
        const json_t *tools = json_object_get (json_array_get (requests, 0), "tools");
        char *text = json_dumps (tools, JSON_COMPACT | JSON_SORT_KEYS);
        ck_assert_msg (strstr (text, "\"name\":\"write_notes\""), "%s", text);
        ck_assert_msg (strstr (text, "\"value\":{\"description\":\"a list: its items are added "
                                     "to the end\",\"type\":\"array\"}"), "%s", text);
        ck_assert_msg (strstr (text, "\"enum\":[\"writer\",\"editor\",\"approver\"]"), "%s", text);
        ck_assert_msg (!strstr (text, "write_draft"), "the reviewer does not write the draft");
        free (text);
    }
    json_decref (requests);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_refused_op_corrected)
{
    //  tools: the refusal is the tool result; text: a user message.
    const char *models [] = { "news-err-once:fix-tools", "news-err-once-plain:fix-text" };
    const char *model = models [_i];
    const char *dir = s_scenario ("newsroom");
    const char *args [] = { "--scenario", dir, NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    tproc_t *writer = s_role (broker, dir, "writer", model, NULL);
    pmsg_t *info = s_wait_holder (watch, "reviewer", &writer, 1);
    ck_assert_str_eq (testflow_str (info, "status"), "in_progress");
    pmsg_destroy (&info);
    testflow_expect_key (watch, "notes", "[\"draft written\"]");
    json_t *requests = s_requests_of (model, "writer");
    ck_assert_uint_eq (json_array_size (requests), 2);
    char *first = s_dump (json_array_get (requests, 0));
    char *second = s_dump (json_array_get (requests, 1));
    ck_assert_msg (!strstr (first, "REDUCER_MISMATCH"), "%s", first);
    ck_assert_msg (strstr (second, "HANDOVER refused: REDUCER_MISMATCH: op 1: reducer append "
                                   "needs an array, got a string; nothing was written "
                                   "(correction 1 of 3)"), "%s", second);
    const json_t *messages = json_object_get (json_array_get (requests, 1), "messages");
    const json_t *told = json_array_get (messages, json_array_size (messages) - 1);
    ck_assert_str_eq (json_string_value (json_object_get (told, "role")),
                      _i == 0 ? "tool" : "user");
    ck_assert_msg (tproc_wait_for_err (writer, "turn 1: answer refused", DEADLINE_MS), "%s",
                   tproc_err (writer));
    free (first);
    free (second);
    json_decref (requests);
    tproc_signal (writer, SIGTERM);
    ck_assert_int_eq (tproc_wait (writer, DEADLINE_MS), 0);
    tproc_destroy (&writer);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
}
END_TEST

//  A copy of the newsroom with `edits` applied: {file, from, to} each.
static tproc_dir_t *
s_variant (const char *const (*edits) [3], size_t count)
{
    tproc_dir_t *dir = tproc_dir_new ();
    const char *files [] = { "scenario.yaml", "roles/writer.yaml", "roles/reviewer.yaml",
                             "roles/editor.yaml", "roles/approver.yaml" };
    char *roles = tproc_dir_path (dir, "roles");
    ck_assert_int_eq (mkdir (roles, 0700), 0);
    free (roles);
    for (size_t i = 0; i < 5; i++) {
        char source [1200];
        snprintf (source, sizeof source, "%s/%s", s_scenario ("newsroom"), files [i]);
        char *text = testsuite_read_file (source, NULL);
        for (size_t e = 0; e < count; e++) {
            if (strcmp (edits [e][0], files [i]) != 0)
                continue;
            char *at = strstr (text, edits [e][1]);
            ck_assert_msg (at, "no \"%s\" in %s", edits [e][1], files [i]);
            char *out = NULL;
            ck_assert_int_ge (asprintf (&out, "%.*s%s%s", (int) (at - text), text, edits [e][2],
                                        at + strlen (edits [e][1])), 0);
            free (text);
            text = out;
        }
        char *path = tproc_dir_path (dir, files [i]);
        ck_assert (tproc_write_file (path, text));
        free (path);
        free (text);
    }
    return dir;
}

START_TEST (test_never_corrects_to_human)
{
    //  The newsroom's fallback: the approver (a person) with the reason.
    const char *model = "news-stubborn:to-human";
    const char *dir = s_scenario ("newsroom");
    const char *args [] = { "--scenario", dir, NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    tproc_t *writer = s_role (broker, dir, "writer", model, NULL);
    pmsg_t *info = s_wait_holder (watch, "approver", &writer, 1);
    ck_assert (pmsg_bool (info, "paused", false));
    ck_assert_uint_eq (pmsg_uint (info, "turn", 0), 2);
    ck_assert_msg (strstr (testflow_str (info, "reason"), "writer (writer): the model's answer "
                           "was refused 4 times: HANDOVER refused: REDUCER_MISMATCH"),
                   "%s", testflow_str (info, "reason"));
    pmsg_destroy (&info);
    char *notes = testflow_get (watch, "notes");
    ck_assert_msg (strstr (notes, "the model's answer was refused 4 times"), "%s", notes);
    free (notes);
    //  1 + 3 corrections, each request different from the one before.
    json_t *requests = s_requests_of (model, "writer");
    ck_assert_uint_eq (json_array_size (requests), 4);
    for (size_t i = 1; i < 4; i++)
        ck_assert (!json_equal (json_array_get (requests, i - 1), json_array_get (requests, i)));
    json_decref (requests);
    ck_assert_msg (tproc_wait_for_err (writer, "the scenario's fallback takes the turn",
                                       DEADLINE_MS), "%s", tproc_err (writer));
    tproc_signal (writer, SIGTERM);
    ck_assert_int_eq (tproc_wait (writer, DEADLINE_MS), 0);
    tproc_destroy (&writer);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_never_corrects_fails)
{
    const char *const edits [][3] = {
        { "scenario.yaml", "fallback: approver", "fallback: fail" } };
    tproc_dir_t *dir = s_variant (edits, 1);
    const char *args [] = { "--scenario", tproc_dir_name (dir), NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    tproc_t *writer = s_role (broker, tproc_dir_name (dir), "writer", "news-stubborn:to-fail",
                              (const char *[]) { "--llm-mode", "text", NULL });
    pmsg_t *info = s_wait_holder (watch, NULL, &writer, 1);
    ck_assert_str_eq (testflow_str (info, "status"), "failed");
    ck_assert_msg (strstr (testflow_str (info, "reason"), "refused 4 times: HANDOVER refused: "
                           "REDUCER_MISMATCH"), "%s", testflow_str (info, "reason"));
    pmsg_destroy (&info);
    ck_assert_int_eq (tproc_wait (writer, DEADLINE_MS), 1);
    tproc_destroy (&writer);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_never_corrects_to_entry)
{
    //  The reviewer never corrects: the writer (entry) gets the turn back
    //  with the reason in notes, hands it to the reviewer again, and the
    //  reviewer's second fallback fails the run: bounded, no loop.
    //  Every model role may hand the turn to the entry role (the checks
    //  refuse a scenario whose fallback hand-over would be refused).
    const char *const edits [][3] = {
        { "scenario.yaml", "fallback: approver", "fallback: entry" },
        { "roles/editor.yaml", "handover: [approver]", "handover: [approver, writer]" } };
    tproc_dir_t *dir = s_variant (edits, 2);
    const char *args [] = { "--scenario", tproc_dir_name (dir), NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    const char *model = "news-reviewer-stubborn:to-entry";
    tproc_t *agents [2] = {
        s_role (broker, tproc_dir_name (dir), "writer", model, NULL),
        s_role (broker, tproc_dir_name (dir), "reviewer", model, NULL),
    };
    pmsg_t *info = s_wait_holder (watch, NULL, agents, 2);
    ck_assert_str_eq (testflow_str (info, "status"), "failed");
    ck_assert_msg (strstr (testflow_str (info, "reason"), "this agent fell back once already"),
                   "%s", testflow_str (info, "reason"));
    ck_assert_uint_eq (pmsg_uint (info, "turn", 0), 4);
    pmsg_destroy (&info);
    //  The writer's second prompt showed why the turn came back.
    json_t *requests = s_requests_of (model, "writer");
    ck_assert_uint_eq (json_array_size (requests), 2);
    char *second = s_dump (json_array_get (requests, 1));
    ck_assert_msg (strstr (second, "reviewer (reviewer): the model's answer was refused 4 times"),
                   "%s", second);
    free (second);
    json_decref (requests);
    s_finish (agents, 2, 1);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_outage_holds_the_turn)
{
    const char *model = "news:outage";
    const char *dir = s_scenario ("newsroom");
    const char *args [] = { "--scenario", dir, NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watch = testcheck_agent (broker, "watch");
    const char *fast [] = { "--llm-breaker-ms", "1000", NULL };
    tproc_t *agents [3] = { s_role (broker, dir, "writer", model, fast), NULL, NULL };
    pmsg_t *info = s_wait_holder (watch, "reviewer", agents, 1);
    pmsg_destroy (&info);
    //  The reviewer comes while its server is down.
    openai_server_set_down ("outage", true);
    agents [1] = s_role (broker, dir, "reviewer", model, fast);
    //  It holds the turn: says so once, asks again, hands nothing over,
    //  and the run goes on (looked at all along, which also keeps the
    //  watcher's session alive).
    //  One ask is 4 HTTP attempts (3 retries of a 503): more is a second ask.
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    size_t asked = 0;
    bool said = false;
    while (pclock_mono_ms () < deadline && (asked <= 4 || !said)) {
        pmsg_t *now = testclient_call0 (watch, PMSG_WORKFLOW);
        ck_assert_msg (strcmp (testflow_str (now, "holder"), "reviewer") == 0
                       && strcmp (testflow_str (now, "status"), "in_progress") == 0
                       && pmsg_uint (now, "turn", 0) == 2, "%s\n%s",
                       testclient_describe (now), tproc_err (agents [1]));
        pmsg_destroy (&now);
        json_t *seen = s_requests_of (model, "reviewer");
        asked = json_array_size (seen);
        json_decref (seen);
        tproc_read (agents [1], 100);
        said = strstr (tproc_err (agents [1]), "the model gave no answer") != NULL;
    }
    ck_assert_msg (asked > 4 && said, "asked %zu times\n%s", asked, tproc_err (agents [1]));
    //  Back: the held turn is taken, and the run goes to its end.
    openai_server_set_down ("outage", false);
    agents [2] = s_role (broker, dir, "editor", model, fast);
    info = s_wait_holder (watch, "approver", agents, 3);
    pmsg_destroy (&info);
    ck_assert (tproc_wait_for_err (agents [1], "the model answers again", DEADLINE_MS));
    s_approve (broker);
    s_finish (agents, 3, 0);
    testclient_destroy (&watch);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_bad_files_exit_2)
{
    //  The agent loads its role's scenario too, and names the mistake.
    char *path = testsuite_test_path ("corpus/config/role-misnamed.dir/roles/reviewer.yaml");
    const char *argv [] = { "parley-agent", "--role", path, "--broker", "tcp://127.0.0.1:1",
                            "--memory-dir", "none", NULL };
    tproc_t *proc = tproc_run (argv, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), "role-misnamed.dir/roles/editor.yaml:2: role: "
                           "\"editr\" is not \"editor\""), "%s", tproc_err (proc));
    tproc_destroy (&proc);
    free (path);
    path = testsuite_test_path ("corpus/config/builtin-elsewhere.dir");
    const char *broker [] = { "parley-broker", "--scenario", path, "--router", "tcp://127.0.0.1:*",
                              "--pub", "tcp://127.0.0.1:*", "--tap", "off", NULL };
    proc = tproc_run (broker, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), "builtin-elsewhere.dir/roles/critic.yaml:3: policy: "
                           "scene_critic is written for the scene scenario"), "%s",
                   tproc_err (proc));
    tproc_destroy (&proc);
    free (path);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("model_turns");
    TCase *runs = tcase_create ("newsroom");
    tcase_add_unchecked_fixture (runs, s_server_up, openai_server_stop);
    tcase_set_timeout (runs, 180);
    tcase_add_loop_test (runs, test_answer_modes, 0, 3);
    tcase_add_loop_test (runs, test_refused_op_corrected, 0, 2);
    tcase_add_test (runs, test_never_corrects_to_human);
    tcase_add_test (runs, test_never_corrects_fails);
    tcase_add_test (runs, test_never_corrects_to_entry);
    tcase_add_test (runs, test_outage_holds_the_turn);
    tcase_add_test (runs, test_bad_files_exit_2);
    suite_add_tcase (suite, runs);
    return testsuite_run (suite);
}
