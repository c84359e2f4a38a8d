// SPDX-License-Identifier: MIT
/*  testflow - the workflow suites' shared steps: a small scenario written
    per test ("loop": a worker, a checker and a reviewer played by a
    person) with the test's own limits, agents that say HELLO with a role,
    HANDOVER, reading keys and waiting for WORKFLOW_EVENTs. Each helper
    fails the running Check test when the broker answers otherwise.
*/
#include "testflow.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjson.h"
#include "testcheck.h"
#include "tproc.h"

const testflow_limits_t testflow_default = { 3, 100, 0, NULL };

static tproc_dir_t *s_dir;

void
testflow_write (tproc_dir_t *dir, const char *under, const char *const (*files) [2], size_t count)
{
    char roles [512];
    snprintf (roles, sizeof roles, "%s%sroles", under ? under : "", under ? "/" : "");
    char *path = tproc_dir_path (dir, roles);
    ck_assert_int_eq (zsys_dir_create ("%s", path), 0);
    free (path);
    for (size_t i = 0; i < count; i++) {
        char name [512];
        snprintf (name, sizeof name, "%s%s%s", under ? under : "", under ? "/" : "",
                  files [i][0]);
        char *file = tproc_dir_path (dir, name);
        ck_assert (tproc_write_file (file, files [i][1]));
        free (file);
    }
}

testclient_t *
testflow_hello (testclient_t *client, const char *id, const char *role, char *token)
{
    bool has_token = token && token [0];
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 1 + (role != NULL) + has_token);
    penc_kv_cstr (enc, "agent", id);
    if (has_token)
        penc_kv_cstr (enc, "token", token);
    if (role) {
        penc_key (enc, "caps");
        msgpack_pack_array (penc_packer (enc), 1);
        char cap [80];
        snprintf (cap, sizeof cap, "role:%s", role);
        penc_cstr (enc, cap);
    }
    pmsg_t *welcome = testclient_call (client);
    EXPECT (welcome, PMSG_WELCOME);
    if (token && !pmsg_strcpy (welcome, "token", token, TESTFLOW_TOKEN))
        token [0] = 0;
    pmsg_destroy (&welcome);
    return client;
}

//  Writes the loop scenario and returns its folder (owned by s_dir).
const char *
testflow_scenario (const testflow_limits_t *limits)
{
    s_dir = tproc_dir_new ();
    char text [2048];
    snprintf (text, sizeof text,
              "name: loop\n"
              "world: none\n"
              "state:\n"
              "  work: { reducer: append, value: [] }\n"
              "  issues: { reducer: append, value: [] }\n"
              "  report: { reducer: replace }\n"
              "workflow:\n"
              "  entry: worker\n"
              "  max_revisions: %d\n"
              "  max_turns: %d\n"
              "  turn_timeout_ms: %d\n"
              "  on_timeout: %s\n"
              "  clear_on_revision: [issues]\n",
              limits->max_revisions, limits->max_turns, limits->timeout_ms,
              limits->on_timeout ? limits->on_timeout : "fail");
    const char *files [][2] = {
        { "scenario.yaml", text },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  writes:\n"
                               "    - { key: work, reducer: append }\n"
                               "  handover: [checker, reviewer]\n" },
        { "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  writes:\n"
                                "    - { key: issues, reducer: append }\n"
                                "    - { key: report }\n  handover: [worker]\n" },
        { "roles/reviewer.yaml", "role: reviewer\ngoal: review\nhuman: true\n"
                                 "actions:\n  handover: [checker]\n" },
    };
    testflow_write (s_dir, NULL, files, 4);
    return tproc_dir_name (s_dir);
}

testbroker_t *
testflow_start (const testflow_limits_t *limits)
{
    const char *args [] = { "--scenario", testflow_scenario (limits), NULL };
    return testcheck_start (args);
}

testbroker_t *
testflow_start_with (const testflow_limits_t *limits, const char *flag, const char *value)
{
    const char *args [] = { "--scenario", testflow_scenario (limits), flag, value, NULL };
    return testcheck_start (args);
}

void
testflow_stop (testbroker_t **broker_p)
{
    testcheck_stop (broker_p);
    tproc_dir_destroy (&s_dir);
}

testclient_t *
testflow_agent (testbroker_t *broker, const char *id, const char *role)
{
    return testflow_hello (testclient_new (testbroker_router (broker)), id, role, NULL);
}

//  HANDOVER with ops as JSON (NULL: none), next and status (NULL: absent).
pmsg_t *
testflow_handover (testclient_t *client, const char *ops, const char *next, const char *status)
{
    msgpack_unpacked result;
    const msgpack_object *object = ops ? mpjson_object (&result, ops) : NULL;
    ck_assert (!ops || object);
    penc_t *enc = testclient_begin (client, PMSG_HANDOVER, !!ops + !!next + !!status);
    if (ops) {
        penc_key (enc, "ops");
        penc_object (enc, object);
        msgpack_unpacked_destroy (&result);
    }
    if (next)
        penc_kv_cstr (enc, "next", next);
    if (status)
        penc_kv_cstr (enc, "status", status);
    return testclient_call (client);
}

void
testflow_handover_ok (testclient_t *client, const char *ops, const char *next, const char *status)
{
    pmsg_t *reply = testflow_handover (client, ops, next, status);
    EXPECT (reply, PMSG_WORKFLOW_INFO);
    pmsg_destroy (&reply);
}

//  A key's value as compact JSON (caller frees); "absent" when missing.
char *
testflow_get (testclient_t *client, const char *key)
{
    penc_t *enc = testclient_begin (client, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, key);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    char *json = strdup ("absent");
    if (testclient_array_size (reply, "entries") == 1) {
        free (json);
        static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
        const msgpack_object *value = pobj_get (testclient_array_at (reply, "entries", 0), "value");
        json = mpjson_dump_object (value ? value : &nil);
    }
    pmsg_destroy (&reply);
    return json;
}

void
testflow_expect_key (testclient_t *client, const char *key, const char *json)
{
    char *got = testflow_get (client, key);
    ck_assert_msg (strcmp (got, json) == 0, "%s is %s, expected %s", key, got, json);
    free (got);
}

pmsg_t *
testflow_info (testclient_t *client)
{
    pmsg_t *info = testclient_call0 (client, PMSG_WORKFLOW);
    EXPECT (info, PMSG_WORKFLOW_INFO);
    return info;
}

void
testflow_expect_status (testclient_t *client, const char *status)
{
    pmsg_t *info = testflow_info (client);
    char got [64] = "";
    pmsg_strcpy (info, "status", got, sizeof got);
    ck_assert_msg (strcmp (got, status) == 0, "status %s, expected %s", got, status);
    pmsg_destroy (&info);
}

//  Waits for a WORKFLOW_EVENT `event` (for `agent` when not NULL).
pmsg_t *
testflow_event (testsub_t *sub, const char *event, const char *agent)
{
    for (int i = 0; i < 50; i++) {
        pmsg_t *got = testsub_recv (sub, NULL, 0, 15000);
        ck_assert_msg (got, "no WORKFLOW_EVENT %s", event);
        char name [64] = "", who [80] = "";
        pmsg_strcpy (got, "event", name, sizeof name);
        pmsg_strcpy (got, "agent", who, sizeof who);
        if (strcmp (name, event) == 0 && (!agent || strcmp (who, agent) == 0))
            return got;
        pmsg_destroy (&got);
    }
    ck_abort_msg ("no WORKFLOW_EVENT %s", event);
    return NULL;
}

//  A str field as a C string (static buffer: one per expression).
const char *
testflow_str (const pmsg_t *msg, const char *field)
{
    static char text [PROTO_MAX_TEXT + 1];
    if (!pmsg_strcpy (msg, field, text, sizeof text))
        snprintf (text, sizeof text, "(no %s)", field);
    return text;
}

