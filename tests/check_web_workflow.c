// SPDX-License-Identifier: MIT
/*  check_web_workflow - parley-web's workflow panel against a real broker
    running the test loop scenario (tests/lib/testflow.c: a worker, a
    checker, and a reviewer played by a person).

    Over HTTP: the overview comes in the model and after every turn; a
    checkpoint's state with what it changed and the difference between two
    carry old and new values; bad paths and bodies are refused with the
    right status before anything is sent; with --allow-actions a person's
    turn is submitted and the run resumed from a checkpoint, and read-only
    the same actions are 403; the operator's short registrations leave no
    agent behind, its reads stay out of the timeline and its actions show.

    In the browser (tests/web/view.test.js, mode "workflow"): the panel
    says "waiting for a person", lists, shows and compares checkpoints,
    submits the person's turn and resumes, and the timeline shows
    HEARTBEATs only when asked; the screenshot is
    build/<rel|san>/web-workflow.png.
*/
#include <check.h>
#include <signal.h>
#include <curl/curl.h>
#include <czmq.h>
#include <jansson.h>
#include <unistd.h>
#include "mpjs.h"
#include "parley/client.h"
#include "pclock.h"
#include "pmsg.h"
#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testparley.h"
#include "lib/testsuite.h"
#include "lib/testweb.h"
#include "lib/tproc.h"

#define DEADLINE_MS 60000

//  parley-web on `router` (with --allow-actions when `allow`); its URL in *url.
static tproc_t *
s_web (tproc_dir_t *dir, const char *router, bool allow, char **url)
{
    char *ready = tproc_dir_path (dir, allow? "web.ready": "web-ro.ready");
    const char *argv [] = { "parley-web", "--broker", router, "--bind", "127.0.0.1:0",
                            "--ready-file", ready, "--log-level", "info",
                            allow? "--allow-actions": NULL, NULL };
    tproc_t *web = tproc_start (argv, true, NULL);
    ck_assert_ptr_nonnull (web);
    *url = testweb_wait_url (ready, web);
    free (ready);
    return web;
}

//  GET `path`: its status, and on 200 the document (else NULL).
static json_t *
s_get (uint16_t port, const char *path, long status)
{
    testweb_reply_t reply = testweb_http (port, "GET", path, NULL, NULL, 0);
    ck_assert_msg (reply.status == status, "GET %s: %ld, not %ld: %s", path, reply.status, status,
                   reply.body);
    json_t *json = json_loads (reply.body, 0, NULL);
    ck_assert_msg (json, "GET %s: not JSON: %s", path, reply.body);
    free (reply.body);
    return json;
}

//  POST an action; its status must be `status` and its body hold `needle`.
static void
s_post (uint16_t port, const char *action, const char *body, long status, const char *needle)
{
    char path [128];
    snprintf (path, sizeof path, "/api/actions/%s", action);
    testweb_reply_t reply = testweb_http (port, "POST", path, "application/json", body,
                                          strlen (body));
    ck_assert_msg (reply.status == status, "POST %s %s: %ld, not %ld: %s", action, body,
                   reply.status, status, reply.body);
    if (needle)
        ck_assert_msg (strstr (reply.body, needle), "POST %s %s: no \"%s\" in %s", action, body,
                       needle, reply.body);
    free (reply.body);
}

//  The entry of `key` in a diff's entries.
static const json_t *
s_entry (const json_t *diff, const char *key)
{
    size_t i;
    const json_t *entry;
    json_array_foreach (json_object_get (diff, "entries"), i, entry)
        if (streq (json_string_value (json_object_get (entry, "key")), key))
            return entry;
    ck_abort_msg ("no %s in the diff", key);
    return NULL;
}

static void
s_expect_json (const json_t *value, const char *json)
{
    char *text = json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY);
    ck_assert_msg (text && streq (text, json), "%s, expected %s", text, json);
    free (text);
}

//  Only the test's own agents are registered, once the operator's last
//  use is over: the view reads the workflow again after each turn, and
//  such a read may be under way (registered for its length) right now.
static void
s_only (parley_client_t *eyes, const char *expected)
{
    char list [512];
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    testparley_registered (eyes, list, sizeof list);
    while (!streq (list, expected) && pclock_mono_ms () < deadline) {
        zclock_sleep (50);
        testparley_registered (eyes, list, sizeof list);
    }
    ck_assert_str_eq (list, expected);
}

//  A state key's value is `json`.
static void
s_expect_key (parley_client_t *eyes, const char *key, const char *json)
{
    parley_state_t *state = NULL;
    ck_assert_int_eq (parley_client_get (eyes, &key, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (parley_state_count (state), 1);
    const parley_entry_t *entry = parley_state_at (state, 0);
    json_t *value = mpjs_decode (parley_entry_value (entry), parley_entry_value_size (entry));
    s_expect_json (value, json);
    json_decref (value);
    parley_state_destroy (&state);
}

START_TEST (test_workflow_reads_and_actions)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    const char *router = testbroker_router (broker);
    parley_client_t *eyes = testparley_observer (router, "TestEyes", 10000);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                          "reviewer", NULL);                          //  checkpoint 2
    tproc_dir_t *dir = tproc_dir_new ();
    char *url;
    tproc_t *web = s_web (dir, router, true, &url);
    uint16_t port = testweb_port (url);
    //  The overview comes with the model: a page has it without asking.
    testweb_stream_t *stream = testweb_stream_open (port, "/events");
    ck_assert_msg (testweb_stream_wait (stream, "\"paused\":true", DEADLINE_MS), "%s\n%s",
                   stream->buf, tproc_err (web));
    json_t *overview = s_get (port, "/api/workflow", 200);
    const json_t *info = json_object_get (overview, "info");
    ck_assert_str_eq (json_string_value (json_object_get (info, "holder")), "reviewer");
    ck_assert (json_is_true (json_object_get (info, "paused")));
    ck_assert_uint_eq (json_array_size (json_object_get (overview, "checkpoints")), 3);
    json_decref (overview);

    //  A checkpoint: its state, and what it changed (old and new).
    json_t *shown = s_get (port, "/api/workflow/checkpoint/2", 200);
    ck_assert_int_eq (json_integer_value (json_object_get (json_object_get (shown, "checkpoint"),
                                                           "number")), 2);
    const json_t *work = s_entry (json_object_get (shown, "changes"), "work");
    s_expect_json (json_object_get (work, "old"), "[]");
    s_expect_json (json_object_get (work, "new"), "[\"draft\"]");
    ck_assert_uint_eq (json_array_size (json_object_get (shown, "entries")), 7);
    json_decref (shown);
    json_t *diff = s_get (port, "/api/workflow/diff/0/2", 200);
    s_expect_json (json_object_get (s_entry (diff, "turn"), "old"), "0");
    s_expect_json (json_object_get (s_entry (diff, "turn"), "new"), "2");
    json_decref (diff);
    //  What does not exist, or is not a read.
    json_t *missing = s_get (port, "/api/workflow/checkpoint/99", 404);
    ck_assert_ptr_nonnull (strstr (json_string_value (json_object_get (missing, "error")),
                                   "NO_SUCH_CHECKPOINT"));
    json_decref (missing);
    const char *bad [] = { "/api/workflow/checkpoint/x", "/api/workflow/checkpoint/",
                           "/api/workflow/diff/1", "/api/workflow/diff/1/x", "/api/workflow/nope",
                           "/api/workflow/checkpoint/99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++)
        testweb_expect (port, "GET", bad [i], 404, NULL);

    //  Bad bodies: 400 before anything is sent.
    s_post (port, "submit", "{}", 400, "role");
    s_post (port, "submit", "{\"role\":\"reviewer\",\"status\":\"sleeping\"}", 400, "status");
    s_post (port, "submit", "{\"role\":\"reviewer\",\"next\":3}", 400, "next");
    s_post (port, "submit", "{\"role\":\"reviewer\",\"ops\":{}}", 400, "ops");
    s_post (port, "submit", "{\"role\":\"reviewer\",\"ops\":[{\"op\":\"bogus\",\"key\":\"k\"}]}",
            400, "ops[0]");
    s_post (port, "resume", "{\"checkpoint\":\"two\"}", 400, "checkpoint");
    s_post (port, "resume", "{}", 400, "checkpoint");
    //  The broker's refusals: a role not holding the turn, a checkpoint
    //  not kept.
    s_post (port, "submit", "{\"role\":\"checker\",\"next\":\"worker\"}", 409, "NOT_TURN_HOLDER");
    s_post (port, "resume", "{\"checkpoint\":99}", 404, "NO_SUCH_CHECKPOINT");
    //  The person's turn, as parley-ctl submit: updates and hand-over at once.
    s_post (port, "submit", "{\"role\":\"reviewer\",\"next\":\"checker\",\"reason\":\"fine\","
            "\"ops\":[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"reviewed\"]}]}", 200, NULL);
    s_expect_key (eyes, "work", "[\"draft\",\"reviewed\"]");
    ck_assert_msg (testweb_stream_wait (stream, "\"holder\":\"checker\"", DEADLINE_MS), "%s",
                   stream->buf);
    //  Back to checkpoint 2: the person's turn again.
    s_post (port, "resume", "{\"checkpoint\":2}", 200, NULL);
    s_expect_key (eyes, "work", "[\"draft\"]");
    json_t *again = s_get (port, "/api/workflow", 200);
    ck_assert (json_is_true (json_object_get (json_object_get (again, "info"), "paused")));
    json_decref (again);
    //  Every read and action said HELLO and BYE with forget: no agent is
    //  left, and the page never had the operator in its agent list. Its
    //  reads are the view's own traffic, left out of the timeline (nobody
    //  else asks CHECKPOINTS here); its actions are shown like anyone's.
    s_only (eyes, "W1,");
    char listed [96];
    snprintf (listed, sizeof listed, "\"agent\":\"web-operator-%d\",\"online\"",
              (int) tproc_pid (web));
    const char *hidden [] = { listed, "\"type\":\"CHECKPOINTS\"", "\"type\":\"CHECKPOINT\"" };
    for (int i = 0; i < 3; i++) {
        const char *seen = strstr (stream->buf, hidden [i]);
        ck_assert_msg (!seen, "%s in the stream: ...%.400s", hidden [i],
                       seen && seen - stream->buf > 100? seen - 100: stream->buf);
    }
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"type\":\"RESUME\""));
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"type\":\"HANDOVER\""));
    testweb_stream_close (&stream);

    //  Read-only: the panel reads, the actions are refused.
    char *url_ro;
    tproc_t *reader = s_web (dir, router, false, &url_ro);
    json_decref (s_get (testweb_port (url_ro), "/api/workflow", 200));
    s_post (testweb_port (url_ro), "resume", "{\"checkpoint\":1}", 403, "--allow-actions");
    s_post (testweb_port (url_ro), "submit", "{\"role\":\"reviewer\"}", 403, "--allow-actions");
    s_only (eyes, "W1,");
    tproc_signal (reader, SIGTERM);
    ck_assert_int_eq (tproc_wait (reader, DEADLINE_MS), 0);
    tproc_destroy (&reader);
    tproc_signal (web, SIGTERM);
    ck_assert_int_eq (tproc_wait (web, DEADLINE_MS), 0);
    tproc_destroy (&web);
    free (url);
    free (url_ro);
    testclient_destroy (&worker);
    parley_client_destroy (&eyes);
    tproc_dir_destroy (&dir);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_browser_workflow)
{
    char script [1024], shot [1024];
    testweb_browser ("web-workflow.png", script, shot, sizeof script);
    testbroker_t *broker = testflow_start (&testflow_default);
    const char *router = testbroker_router (broker);
    parley_client_t *eyes = testparley_observer (router, "TestEyes", 10000);
    testclient_t *worker = testflow_agent (broker, "W1", "worker");
    testflow_handover_ok (worker, "[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"draft\"]}]",
                          "reviewer", NULL);
    tproc_dir_t *dir = tproc_dir_new ();
    char *url;
    tproc_t *web = s_web (dir, router, true, &url);
    //  Some HEARTBEATs for the timeline to hide (and show when asked),
    //  once the view follows the tap (it has read the workflow by then).
    testweb_stream_t *stream = testweb_stream_open (testweb_port (url), "/events");
    ck_assert_msg (testweb_stream_wait (stream, "\"paused\":true", DEADLINE_MS), "%s", stream->buf);
    for (int i = 0; i < 3; i++) {
        pmsg_t *reply = testclient_call0 (worker, PMSG_HEARTBEAT);
        ck_assert (reply && pmsg_type (reply) == PMSG_OK);
        pmsg_destroy (&reply);
    }
    ck_assert_msg (testweb_stream_wait (stream, "\"type\":\"HEARTBEAT\"", DEADLINE_MS), "%s",
                   stream->buf);
    testweb_stream_close (&stream);
    tproc_t *node = tproc_start ((const char *[]) { "node", script, url, shot, "0", "workflow",
                                                    NULL }, false, NULL);
    int status = tproc_wait (node, DEADLINE_MS + 30000);
    ck_assert_msg (status == 0, "the workflow browser test failed (%d):\n%s\n%s\nparley-web:\n%s",
                   status, tproc_out (node), tproc_err (node), tproc_err (web));
    ck_assert_ptr_nonnull (strstr (tproc_out (node), "ok (workflow)"));
    ck_assert_msg (access (shot, R_OK) == 0, "no screenshot at %s", shot);
    //  What the page did, the broker did: resumed from 2.
    s_expect_key (eyes, "work", "[\"draft\"]");
    s_only (eyes, "W1,");
    tproc_destroy (&node);
    tproc_signal (web, SIGTERM);
    ck_assert_int_eq (tproc_wait (web, DEADLINE_MS), 0);
    tproc_destroy (&web);
    free (url);
    testclient_destroy (&worker);
    parley_client_destroy (&eyes);
    tproc_dir_destroy (&dir);
    testflow_stop (&broker);
}
END_TEST

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    Suite *suite = suite_create ("web_workflow");
    TCase *tc = tcase_create ("web_workflow");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_workflow_reads_and_actions);
    tcase_add_test (tc, test_browser_workflow);
    suite_add_tcase (suite, tc);
    int rc = testsuite_run (suite);
    curl_global_cleanup ();
    return rc;
}
