// SPDX-License-Identifier: MIT
/*  testcheck - Check-asserting shortcuts every broker suite shares: the
    EXPECT / EXPECT_ERROR reply checks, a broker that must come up and must
    exit 0 on SIGTERM, an agent that has said HELLO, an agent's entry in an
    AGENT_LIST, and a wait until a tap SUB carries frames. Each helper
    fails the running Check test when the broker does something other than
    what it must, so the suites read as the scenario they check instead of
    repeating this setup.
*/
#ifndef PARLEY_TESTCHECK_H
#define PARLEY_TESTCHECK_H

#include <check.h>
#include "pmsg.h"
#include "testbroker.h"
#include "testclient.h"

#define EXPECT(reply, t) \
    ck_assert_msg ((reply) && pmsg_type (reply) == (t), "expected %s, got %s", \
                   pmsg_type_name (t), testclient_describe (reply))
#define EXPECT_ERROR(reply, code) \
    ck_assert_msg (testclient_error_code (reply) == (code), "expected ERROR %s, got %s", \
                   perr_name (code), testclient_describe (reply))

//  testbroker_start that fails the test if the broker does not come up.
testbroker_t *testcheck_start (const char *const *args);
//  testbroker_stop that fails the test unless the broker exits 0.
void testcheck_stop (testbroker_t **broker_p);
//  A client that said HELLO as `id` (WELCOME checked).
testclient_t *testcheck_agent (testbroker_t *broker, const char *id);
//  BYE, answered with OK, then the client destroyed.
void testcheck_leave (testclient_t **client_p);
//  The agent_info of `id` in an AGENT_LIST, or NULL.
const msgpack_object *testcheck_find_agent (const pmsg_t *list, const char *id);
//  What `id` has queued and not acknowledged, from AGENTS asked by
//  `client` (an agent that said HELLO); fails the test if it is not listed.
uint64_t testcheck_pending (testclient_t *client, const char *id);
//  Returns once `tap` receives frames: a warm-up client sends HEARTBEATs
//  until one shows up (PUB/SUB joins asynchronously), failing the test
//  after about deadline_ms. The frames seen are dropped, so a process
//  started afterwards is seen from its first frame.
void testcheck_tap_joined (testbroker_t *broker, testsub_t *tap, int deadline_ms);
//  A SUB on the broker's events under `prefix`, live when it returns (not
//  after a sleep that a loaded machine outlasts): PROTOCOL.md's proof. It
//  subscribes to mail.SubProbe last on the same socket, and an agent
//  SubProbe mails itself every 100 ms until that MAIL_READY arrives, then
//  says BYE with forget (no trace left in AGENTS or the mail counts).
//  Subscriptions reach the broker in order, so `prefix` is live
//  too. Events of `prefix` that arrive meanwhile are dropped: call it
//  before causing any. Fails the test after TESTCLIENT_TIMEOUT_MS.
testsub_t *testcheck_sub (testbroker_t *broker, const char *prefix);
//  The same proof for a SUB of the caller's, with no agent of its own:
//  `agent` (one that said HELLO) writes the state key "subprobe" until its
//  STATE_UPDATE arrives on `sub`, subscribed to it last. For suites whose
//  counts a probe agent would change; the key stays in the state.
void testcheck_sub_join (testsub_t *sub, testclient_t *agent);

#endif
