// SPDX-License-Identifier: MIT
/*  testflow - shared steps of the workflow suites (check_workflow,
    check_checkpoints). See testflow.c.
*/
#ifndef PARLEY_TESTFLOW_H
#define PARLEY_TESTFLOW_H

#include <check.h>
#include "pmsg.h"
#include "testbroker.h"
#include "testclient.h"
#include "tproc.h"

typedef struct {
    int max_revisions;
    int max_turns;
    int timeout_ms;
    const char *on_timeout;         //  NULL: fail
} testflow_limits_t;

//  max_revisions 3, max_turns 100, no turn timeout.
extern const testflow_limits_t testflow_default;

//  A scenario's files into `dir` (under its folder `under`, NULL: at its
//  top), with a roles/ folder: `files` are (path, text) pairs.
void testflow_write (tproc_dir_t *dir, const char *under, const char *const (*files) [2],
                     size_t count);
//  HELLO as `id`, with the capability role:<role> when `role` is given and
//  the resume token `token` when it holds one; the WELCOME's token is kept
//  there (TESTFLOW_TOKEN bytes). Returns `client`.
#define TESTFLOW_TOKEN 33
testclient_t *testflow_hello (testclient_t *client, const char *id, const char *role,
                              char *token);
//  Writes the loop scenario into a fresh temporary folder and returns it.
const char *testflow_scenario (const testflow_limits_t *limits);
//  A broker on a fresh loop scenario (plus one more flag and its value).
testbroker_t *testflow_start (const testflow_limits_t *limits);
testbroker_t *testflow_start_with (const testflow_limits_t *limits, const char *flag,
                                   const char *value);
//  Stops the broker (it must exit 0) and removes the scenario folder.
void testflow_stop (testbroker_t **broker_p);
//  A client that said HELLO as `id` with the capability role:<role>.
testclient_t *testflow_agent (testbroker_t *broker, const char *id, const char *role);
//  HANDOVER with ops as JSON (NULL: none), next and status (NULL: absent).
pmsg_t *testflow_handover (testclient_t *client, const char *ops, const char *next,
                           const char *status);
void testflow_handover_ok (testclient_t *client, const char *ops, const char *next,
                           const char *status);
//  A key's value as compact JSON (caller frees); "absent" when missing.
char *testflow_get (testclient_t *client, const char *key);
void testflow_expect_key (testclient_t *client, const char *key, const char *json);
pmsg_t *testflow_info (testclient_t *client);
void testflow_expect_status (testclient_t *client, const char *status);
//  Waits for a WORKFLOW_EVENT `event` (for `agent` when not NULL).
pmsg_t *testflow_event (testsub_t *sub, const char *event, const char *agent);
//  A str field as a C string (static buffer: one per expression).
const char *testflow_str (const pmsg_t *msg, const char *field);

#endif
