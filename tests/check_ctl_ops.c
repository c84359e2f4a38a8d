// SPDX-License-Identifier: MIT
/*  check_ctl_ops - parley-ctl's operator commands against a real broker:
    status, agents, stats, state get|set|keys, health and tail, each in
    text and with --json (parsed here with jansson: one document per
    command, one per line for tail), and their exit codes: health 0 with
    the broker up and 3 with it gone, 1 for a refused request or a missing
    key, 2 for bad JSON, an unknown command or verb. A journaling broker's
    figures come through STATS to status and stats.
    The agents' figures come from real requests made through libparley
    (an ACT with a step, mail fetched and not acknowledged, a model report).
*/
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley/client.h"
#include "pmsg.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  Runs parley-ctl --broker ROUTER ARGS... to the end; checks its exit.
static tproc_t *
s_ctl (const char *router, const char *const *args, int status)
{
    const char *argv [24] = { "parley-ctl", "--broker", router };
    size_t n = 3;
    for (size_t i = 0; args [i] && n < 23; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    tproc_t *proc = tproc_run (argv, true);
    ck_assert_ptr_nonnull (proc);
    ck_assert_msg (tproc_status (proc) == status, "parley-ctl %s %s: exit %d, wanted %d\n%s\n%s",
                   args [0], args [1] ? args [1] : "", tproc_status (proc), status,
                   tproc_out (proc), tproc_err (proc));
    return proc;
}

//  A one-shot command's --json: exactly one JSON document on stdout.
static json_t *
s_ctl_doc (const char *router, const char *const *args, int status)
{
    tproc_t *proc = s_ctl (router, args, status);
    json_error_t error;
    json_t *doc = json_loads (tproc_out (proc), 0, &error);
    ck_assert_msg (doc, "parley-ctl %s: not one JSON document (%s):\n%s", args [1], error.text,
                   tproc_out (proc));
    tproc_destroy (&proc);
    return doc;
}

static void
s_ctl_text (const char *router, const char *const *args, int status, const char *out,
            const char *err)
{
    tproc_t *proc = s_ctl (router, args, status);
    if (out)
        ck_assert_msg (strstr (tproc_out (proc), out), "no \"%s\" in\n%s", out, tproc_out (proc));
    if (err)
        ck_assert_msg (strstr (tproc_err (proc), err), "no \"%s\" in\n%s", err, tproc_err (proc));
    tproc_destroy (&proc);
}

//  A broker on an ipc endpoint of its own: on a shared machine an agent
//  of some other run retrying a tcp port could otherwise join it and be
//  counted here.
static tproc_dir_t *s_dir;

static testbroker_t *
s_start (void)
{
    s_dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (s_dir, "router");
    testbroker_t *broker = testcheck_start ((const char *[]) { "--router", router, NULL });
    free (router);
    return broker;
}

static void
s_stop (testbroker_t **broker_p)
{
    testcheck_stop (broker_p);
    tproc_dir_destroy (&s_dir);
}

static parley_client_t *
s_agent (const char *router, const char *id, const char *role)
{
    parley_client_t *client = parley_client_new (router, id);
    char cap [80];
    snprintf (cap, sizeof cap, "role:%s", role);
    parley_client_add_cap (client, cap);
    parley_client_set_timeout (client, TESTCLIENT_TIMEOUT_MS, 200);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

static const char *
s_unit (const json_t *stats, const char *name)
{
    const char *unit = json_string_value (json_object_get (json_object_get (stats, name), "unit"));
    ck_assert_msg (unit, "no unit for %s", name);
    return unit;
}

static json_int_t
s_int (const json_t *object, const char *path)
{
    const json_t *value = json_object_get (object, path);
    ck_assert_msg (json_is_integer (value), "no integer %s", path);
    return json_integer_value (value);
}

static const json_t *
s_agent_line (const json_t *lines, const char *id)
{
    for (size_t i = 0; i < json_array_size (lines); i++) {
        const json_t *line = json_array_get (lines, i);
        const char *agent = json_string_value (json_object_get (line, "agent"));
        if (agent && strcmp (agent, id) == 0)
            return line;
    }
    return NULL;
}

START_TEST (test_status_agents_stats)
{
    testbroker_t *broker = s_start ();
    const char *router = testbroker_router (broker);
    parley_client_t *scout = s_agent (router, "Scout", "scout");
    parley_client_t *writer = s_agent (router, "Writer", "writer");
    //  Scout moves at step 7 and reports its model use; Writer gets two
    //  messages, fetches one and acknowledges none.
    parley_observation_t *obs = NULL;
    ck_assert_int_eq (parley_client_act (scout, "forward", 7, &obs), PARLEY_OK);
    parley_observation_destroy (&obs);
    uint64_t report [PARLEY_MODEL_FIELDS] = {
        [PARLEY_MODEL_CALLS] = 5, [PARLEY_MODEL_OK] = 4, [PARLEY_MODEL_FAILED] = 1,
        [PARLEY_MODEL_PROMPT_TOKENS] = 300, [PARLEY_MODEL_COMPLETION_TOKENS] = 45,
        [PARLEY_MODEL_LATENCY_MS] = 900 };
    parley_client_set_report (scout, report, PARLEY_MODEL_FIELDS);
    ck_assert_int_eq (parley_client_heartbeat (scout), PARLEY_OK);
    parley_outbox_t *mail = parley_outbox_new ();
    parley_outbox_to (mail, "Writer", "one", 3);
    parley_outbox_to (mail, "Writer", "two!", 4);
    ck_assert_int_eq (parley_client_send (scout, mail, NULL), PARLEY_OK);
    parley_outbox_destroy (&mail);
    parley_mail_t *batch = NULL;
    ck_assert_int_eq (parley_client_fetch (writer, 0, 1, false, &batch), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (batch), 1);
    parley_mail_destroy (&batch);

    json_t *doc = s_ctl_doc (router, (const char *[]) { "--json", "agents", NULL }, 0);
    const json_t *lines = json_object_get (doc, "agents");
    ck_assert_uint_eq (json_array_size (lines), 2);     //  ctl itself is no agent
    const json_t *a = s_agent_line (lines, "Scout");
    ck_assert_ptr_nonnull (a);
    ck_assert_str_eq (json_string_value (json_object_get (a, "role")), "scout");
    ck_assert (json_is_true (json_object_get (a, "online")));
    ck_assert_int_eq (s_int (a, "step"), 7);
    ck_assert_int_eq (s_int (a, "acts"), 1);
    const json_t *model = json_object_get (a, "model");
    ck_assert_int_eq (s_int (model, "calls"), 5);
    ck_assert_int_eq (s_int (model, "prompt_tokens"), 300);
    ck_assert_int_eq (s_int (model, "completion_tokens"), 45);
    const json_t *w = s_agent_line (lines, "Writer");
    ck_assert_int_eq (s_int (w, "inbox"), 2);
    ck_assert_int_eq (s_int (w, "unacked"), 1);
    ck_assert_int_eq (s_int (w, "inbox_bytes"), 7);
    ck_assert_int_eq (s_int (w, "step"), 0);
    ck_assert_ptr_null (json_object_get (w, "model"));
    json_decref (doc);
    s_ctl_text (router, (const char *[]) { "agents", NULL }, 0, "Scout", NULL);
    s_ctl_text (router, (const char *[]) { "agents", NULL }, 0, "scout", NULL);

    json_t *status = s_ctl_doc (router, (const char *[]) { "--json", "status", NULL }, 0);
    ck_assert (json_is_true (json_object_get (status, "up")));
    ck_assert_int_eq (s_int (status, "live_agents"), 2);
    ck_assert_int_eq (s_int (status, "agents"), 2);
    ck_assert_int_eq (s_int (status, "connections"), 2);
    ck_assert_int_eq (s_int (status, "queued"), 2);
    ck_assert_int_eq (s_int (status, "queued_bytes"), 7);
    ck_assert_int_eq (s_int (status, "model_calls"), 5);
    ck_assert_int_eq (s_int (status, "model_tokens"), 345);
    ck_assert_int_gt (s_int (status, "uptime_ms"), 0);
    ck_assert_str_eq (json_string_value (json_object_get (status, "version")),
                      json_string_value (json_object_get (status, "ctl_version")));
    //  This broker keeps everything in memory: no journal figures.
    ck_assert_uint_eq (json_object_size (json_object_get (status, "journal")), 0);
    json_decref (status);
    s_ctl_text (router, (const char *[]) { "status", NULL }, 0, "2 live of 2 registered", NULL);
    s_ctl_text (router, (const char *[]) { "status", NULL }, 0, "journal     none", NULL);

    //  stats: every field of the protocol's STATS_REPLY, each with a unit
    //  (the journal's only from a broker that journals).
    json_t *stats = s_ctl_doc (router, (const char *[]) { "--json", "stats", NULL }, 0);
    const pschema_t *schema = pmsg_schema (PMSG_STATS_REPLY);
    for (size_t i = 0; i < schema->count; i++) {
        if (strncmp (schema->fields [i].name, "journal_", 8) == 0)
            continue;
        const json_t *field = json_object_get (stats, schema->fields [i].name);
        ck_assert_msg (field, "stats --json lacks %s", schema->fields [i].name);
        ck_assert (json_object_get (field, "value"));
        ck_assert (json_is_string (json_object_get (field, "unit")));
    }
    ck_assert_str_eq (s_unit (stats, "uptime_ms"), "ms");
    ck_assert_str_eq (s_unit (stats, "queued_bytes"), "bytes");
    ck_assert_str_eq (s_unit (stats, "queued_memory"), "bytes");
    ck_assert_int_eq (json_integer_value (json_object_get (json_object_get (stats, "queued"),
                                                           "value")), 2);
    json_decref (stats);
    //  Text: the memory in bytes, and every unit in one column however
    //  long the name or the value.
    tproc_t *proc = s_ctl (router, (const char *[]) { "stats", NULL }, 0);
    const char *text = tproc_out (proc);
    ck_assert_msg (strstr (text, "queued_memory") && !strstr (text, "count       memory"),
                   "%s", text);
    int unit_column = -1;
    for (const char *line = text; *line; line = strchr (line, '\n') + 1) {
        const char *unit = strstr (line, " ms ");
        if (!unit || unit > strchr (line, '\n'))
            unit = strstr (line, " count ");
        if (!unit || unit > strchr (line, '\n'))
            unit = strstr (line, " bytes ");
        if (unit && unit < strchr (line, '\n')) {
            if (unit_column < 0)
                unit_column = (int) (unit - line);
            ck_assert_msg ((int) (unit - line) == unit_column, "misaligned units:\n%s", text);
        }
        if (!strchr (line, '\n'))
            break;
    }
    ck_assert_int_gt (unit_column, 0);
    tproc_destroy (&proc);
    s_ctl_text (router, (const char *[]) { "stats", NULL }, 0, "messages/s", NULL);

    parley_client_destroy (&scout);
    parley_client_destroy (&writer);
    s_stop (&broker);
}
END_TEST

START_TEST (test_state)
{
    testbroker_t *broker = s_start ();
    const char *router = testbroker_router (broker);
    s_ctl_text (router, (const char *[]) { "state", "set", "team.plan", "{\"goal\":\"map\"}",
                                           "team.count", "3", NULL }, 0, "2 keys changed", NULL);
    json_t *lines = s_ctl_doc (router, (const char *[]) { "--json", "state", "get",
                                                           "team.plan", "team.count", NULL }, 0);
    const json_t *got = lines;
    const json_t *plan = json_object_get (json_object_get (got, "team.plan"), "value");
    ck_assert_str_eq (json_string_value (json_object_get (plan, "goal")), "map");
    ck_assert_int_eq (json_integer_value (json_object_get (json_object_get (got, "team.count"),
                                                           "value")), 3);
    json_decref (lines);
    s_ctl_text (router, (const char *[]) { "state", "get", "team.count", NULL }, 0,
                "team.count (replace, seq ", NULL);
    //  Keys by prefix, paged: one, then the rest after it.
    lines = s_ctl_doc (router, (const char *[]) { "--json", "--limit", "1", "state", "keys",
                                                   "team.", NULL }, 0);
    const json_t *page = lines;
    ck_assert_uint_eq (json_array_size (json_object_get (page, "keys")), 1);
    ck_assert (json_is_true (json_object_get (page, "more")));
    ck_assert_str_eq (json_string_value (json_object_get (page, "next_after")), "team.count");
    json_decref (lines);
    lines = s_ctl_doc (router, (const char *[]) { "--json", "--after", "team.count", "state",
                                                   "keys", "team.", NULL }, 0);
    page = lines;
    ck_assert_uint_eq (json_array_size (json_object_get (page, "keys")), 1);
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (
                          json_object_get (page, "keys"), 0), "key")), "team.plan");
    ck_assert (json_is_false (json_object_get (page, "more")));
    json_decref (lines);
    //  Errors: a key that does not exist (1, the others still printed),
    //  bad JSON (2, nothing written), a key the broker refuses (1, its
    //  code shown), a verb that does not exist (2).
    s_ctl_text (router, (const char *[]) { "state", "get", "team.count", "team.none", NULL }, 1,
                "team.count", "no key \"team.none\"");
    s_ctl_text (router, (const char *[]) { "state", "set", "team.count", "{oops", NULL }, 2,
                NULL, "is not JSON");
    s_ctl_text (router, (const char *[]) { "state", "get", "team.count", NULL }, 0, "= 3", NULL);
    char long_key [400];
    memset (long_key, 'k', sizeof long_key - 1);
    long_key [sizeof long_key - 1] = 0;
    s_ctl_text (router, (const char *[]) { "state", "set", long_key, "1", NULL }, 1,
                NULL, "TOO_LARGE");
    s_ctl_text (router, (const char *[]) { "state", "set", "team.count", NULL }, 2, NULL,
                "KEY JSON pairs");
    s_ctl_text (router, (const char *[]) { "state", "drop", NULL }, 2, NULL, "get, set or keys");
    s_ctl_text (router, (const char *[]) { "frobnicate", NULL }, 2, NULL, "unknown command");
    s_stop (&broker);
}
END_TEST

START_TEST (test_health)
{
    //  On an ipc endpoint: once the broker is gone nobody else can take
    //  its address (a tcp port could be another test's next).
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "router");
    testbroker_t *broker = testcheck_start ((const char *[]) { "--router", router, NULL });
    ck_assert_str_eq (testbroker_router (broker), router);
    s_ctl_text (router, (const char *[]) { "health", NULL }, 0, "healthy", NULL);
    json_t *lines = s_ctl_doc (router, (const char *[]) { "--json", "health", NULL }, 0);
    ck_assert (json_is_true (json_object_get (lines, "healthy")));
    json_decref (lines);
    testcheck_stop (&broker);
    //  The broker gone: 3, with the reason, within the bounded timeout.
    lines = s_ctl_doc (router, (const char *[]) { "--timeout-ms", "400", "--json", "health",
                                                   NULL }, 3);
    const json_t *down = lines;
    ck_assert (json_is_false (json_object_get (down, "healthy")));
    ck_assert_int_eq (json_integer_value (json_object_get (down, "exit")), 3);
    json_decref (lines);
    s_ctl_text (router, (const char *[]) { "--timeout-ms", "400", "health", NULL }, 3,
                "unhealthy", NULL);
    lines = s_ctl_doc (router, (const char *[]) { "--timeout-ms", "400", "--json", "status",
                                                   NULL }, 3);
    ck_assert (json_is_false (json_object_get (lines, "up")));
    json_decref (lines);
    s_ctl_text (router, (const char *[]) { "--timeout-ms", "400", "agents", NULL }, 3, NULL,
                "cannot connect");
    free (router);
    tproc_dir_destroy (&dir);
}
END_TEST

//  A broker that journals reports its journal in STATS: status shows it,
//  stats lists each figure with its unit.
START_TEST (test_journal)
{
    s_dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (s_dir, "router");
    char *data = tproc_dir_path (s_dir, "data");
    testbroker_t *broker = testcheck_start ((const char *[]) { "--router", router,
                                                               "--data-dir", data, NULL });
    parley_client_t *writer = s_agent (router, "Writer", "writer");
    parley_ops_t *op = parley_ops_new ();
    parley_ops_set (op, "plan", "\xa2go", 3);
    ck_assert_int_eq (parley_client_write (writer, op, NULL), PARLEY_OK);
    parley_ops_destroy (&op);
    json_t *status = s_ctl_doc (router, (const char *[]) { "--json", "status", NULL }, 0);
    const json_t *journal = json_object_get (status, "journal");
    ck_assert_msg (json_integer_value (json_object_get (journal, "journal_log_bytes")) > 0,
                   "no journal in status: %s", json_dumps (status, 0));
    ck_assert (json_is_integer (json_object_get (journal, "journal_written_bytes")));
    json_decref (status);
    s_ctl_text (router, (const char *[]) { "status", NULL }, 0, "journal     log ", NULL);
    json_t *stats = s_ctl_doc (router, (const char *[]) { "--json", "stats", NULL }, 0);
    const pschema_t *schema = pmsg_schema (PMSG_STATS_REPLY);
    for (size_t i = 0; i < schema->count; i++)
        ck_assert_msg (json_object_get (stats, schema->fields [i].name), "stats --json lacks %s",
                       schema->fields [i].name);
    ck_assert_str_eq (s_unit (stats, "journal_snapshot_bytes"), "bytes");
    ck_assert_str_eq (s_unit (stats, "journal_compactions"), "count");
    json_decref (stats);
    parley_client_destroy (&writer);
    free (router);
    free (data);
    s_stop (&broker);
}
END_TEST

START_TEST (test_tail)
{
    testbroker_t *broker = s_start ();
    const char *router = testbroker_router (broker);
    const char *argv [] = { "parley-ctl", "--broker", router, "--json", "--count", "3",
                            "tail", "state.tail.", "agent.Tailed", NULL };
    tproc_t *tail = tproc_start (argv, true, NULL);
    //  "tailing" on stderr once the subscriptions are in place.
    ck_assert_msg (tproc_wait_for_err (tail, "tailing", 20000), "%s", tproc_err (tail));
    parley_client_t *agent = s_agent (router, "Tailed", "scout");      //  agent.Tailed joined
    parley_ops_t *ops = parley_ops_new ();
    parley_ops_set (ops, "other.key", "\x01", 1);
    parley_ops_set (ops, "tail.a", "\x02", 1);
    parley_ops_set (ops, "tail.b", "\xa2hi", 3);
    ck_assert_int_eq (parley_client_write (agent, ops, NULL), PARLEY_OK);
    parley_ops_destroy (&ops);
    ck_assert_int_eq (tproc_wait (tail, 20000), 0);
    json_t *lines = tproc_json_lines (tproc_out (tail));
    ck_assert_msg (lines && json_array_size (lines) == 3, "%s", tproc_out (tail));
    const json_t *joined = json_array_get (lines, 0);
    ck_assert_str_eq (json_string_value (json_object_get (joined, "type")), "AGENT_EVENT");
    ck_assert_str_eq (json_string_value (json_object_get (json_object_get (joined, "event"),
                                                          "event")), "joined");
    const json_t *b = json_array_get (lines, 2);
    ck_assert_str_eq (json_string_value (json_object_get (b, "topic")), "state.tail.b");
    ck_assert_str_eq (json_string_value (json_object_get (json_object_get (b, "event"),
                                                          "value")), "hi");
    ck_assert_int_gt (json_integer_value (json_object_get (b, "ts_us")), 0);
    json_decref (lines);
    tproc_destroy (&tail);
    parley_client_destroy (&agent);
    s_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("ctl_ops");
    TCase *tc = tcase_create ("ctl_ops");
    tcase_add_test (tc, test_status_agents_stats);
    tcase_add_test (tc, test_state);
    tcase_add_test (tc, test_health);
    tcase_add_test (tc, test_journal);
    tcase_add_test (tc, test_tail);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
