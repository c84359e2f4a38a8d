// SPDX-License-Identifier: MIT
/*  check_broker_send - SEND's idempotence and its reply budget, over real
    sockets against the real broker (and a real parley-agent):
    - a SEND resent after a lost reply is not posted twice: a SEND
      repeating the agent's last `batch` id gets the same SENT (with its
      own request id) and posts nothing, also after a re-HELLO; another id
      posts; a SEND without `batch` forgets.
    - the agent's messages go out in its STEPs, each with its step number,
      increasing (seen on the tap): the key that makes a resend harmless.
    - 4096 failing items with long names stay under the frame limit: the
      errors list has a byte budget, the rest is counted in
      `errors_omitted`, and `seqs` still has every item.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 90000

//  SEND of `count` messages to `to` (bodies "<prefix>0", "<prefix>1", ...),
//  with `batch` when has_batch. Returns the reply.
static pmsg_t *
s_send_batch (testclient_t *client, const char *to, const char *prefix, size_t count,
              bool has_batch, uint64_t batch)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, has_batch ? 2 : 1);
    if (has_batch)
        penc_kv_uint (enc, "batch", batch);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    for (size_t i = 0; i < count; i++) {
        char body [64];
        snprintf (body, sizeof body, "%s%zu", prefix, i);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        penc_kv_cstr (enc, "body", body);
    }
    return testclient_call (client);
}

//  The two SENTs say the same thing: accepted, seqs, no errors.
static void
s_same_sent (const pmsg_t *a, const pmsg_t *b)
{
    EXPECT (a, PMSG_SENT);
    EXPECT (b, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (a, "accepted", 0), pmsg_uint (b, "accepted", 1));
    size_t count = testclient_array_size (a, "seqs");
    ck_assert_uint_eq (count, testclient_array_size (b, "seqs"));
    for (size_t i = 0; i < count; i++)
        ck_assert_uint_eq (testclient_array_at (a, "seqs", i)->via.u64,
                           testclient_array_at (b, "seqs", i)->via.u64);
    ck_assert_uint_eq (testclient_array_size (a, "errors"), testclient_array_size (b, "errors"));
}

START_TEST (test_resent_batch_posted_once)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    char bodies [256];

    pmsg_t *first = s_send_batch (a, "B", "x", 2, true, 7);
    uint64_t first_id = testclient_last_id (a);
    pmsg_t *again = s_send_batch (a, "B", "x", 2, true, 7);
    s_same_sent (first, again);
    ck_assert_uint_eq (pmsg_uint (first, "accepted", 0), 2);
    //  The resend's reply carries the resend's own request id.
    ck_assert_uint_eq (pmsg_id (again), testclient_last_id (a));
    ck_assert_uint_ne (pmsg_id (again), first_id);
    pmsg_destroy (&again);
    //  Even different messages under the same batch id post nothing: the
    //  batch id names the batch.
    again = s_send_batch (a, "B", "other", 3, true, 7);
    s_same_sent (first, again);
    pmsg_destroy (&again);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "x0,x1");

    //  Another batch id posts.
    pmsg_t *second = s_send_batch (a, "B", "y", 1, true, 8);
    EXPECT (second, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (second, "accepted", 0), 1);
    ck_assert_uint_gt (testclient_array_at (second, "seqs", 0)->via.u64,
                       testclient_array_at (first, "seqs", 1)->via.u64);
    pmsg_destroy (&first);

    //  The memory survives a re-HELLO on a new connection (BYE keeps the
    //  registration): the resend of batch 8 still posts nothing.
    pmsg_t *reply = testclient_call0 (a, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    a = testcheck_agent (broker, "A");
    again = s_send_batch (a, "B", "y", 1, true, 8);
    s_same_sent (second, again);
    pmsg_destroy (&again);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 3);
    ck_assert_str_eq (bodies, "x0,x1,y0");

    //  A SEND without batch posts and forgets: batch 8 is new again.
    reply = s_send_batch (a, "B", "z", 1, false, 0);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 1);
    pmsg_destroy (&reply);
    again = s_send_batch (a, "B", "w", 1, true, 8);
    EXPECT (again, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (again, "accepted", 0), 1);
    ck_assert_uint_gt (testclient_array_at (again, "seqs", 0)->via.u64,
                       testclient_array_at (second, "seqs", 0)->via.u64);
    pmsg_destroy (&again);
    pmsg_destroy (&second);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 5);
    ck_assert_str_eq (bodies, "x0,x1,y0,z0,w0");
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_resent_batch_with_errors)
{
    //  A remembered SENT with item errors comes back whole, and an ERROR
    //  (whole SEND refused) is not remembered: it leaves the batch before.
    const char *args [] = { "--max-batch", "4", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    pmsg_t *first = s_send_batch (a, "nobody", "x", 2, true, 1);
    ck_assert_uint_eq (pmsg_uint (first, "accepted", 9), 0);
    ck_assert_uint_eq (testclient_array_size (first, "errors"), 2);
    pmsg_t *refused = s_send_batch (a, "B", "y", 5, true, 2);
    EXPECT_ERROR (refused, PERR_TOO_LARGE);
    pmsg_destroy (&refused);
    pmsg_t *again = s_send_batch (a, "nobody", "x", 2, true, 1);
    s_same_sent (first, again);
    const msgpack_object *error = testclient_array_at (again, "errors", 1);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNKNOWN_RECIPIENT);
    ck_assert_uint_eq (pobj_uint (error, "index", 0), 1);
    pmsg_destroy (&again);
    pmsg_destroy (&first);
    char bodies [64];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_sent_errors_budget)
{
    //  4096 items to 4096 different unknown 64-byte names: every item
    //  fails. SENT must decode (it did before, at ~1 MiB, but only just),
    //  list some errors and count the rest.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), PROTO_MAX_BATCH);
    for (size_t i = 0; i < PROTO_MAX_BATCH; i++) {
        char name [PROTO_MAX_NAME + 1];
        snprintf (name, sizeof name, "%064zu", i);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", name);
        penc_kv_cstr (enc, "body", "b");
    }
    pmsg_t *sent = testclient_call (a);
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (sent, "accepted", 9), 0);
    ck_assert_uint_eq (testclient_array_size (sent, "seqs"), PROTO_MAX_BATCH);
    for (size_t i = 0; i < PROTO_MAX_BATCH; i++)
        ck_assert_uint_eq (testclient_array_at (sent, "seqs", i)->via.u64, 0);
    size_t listed = testclient_array_size (sent, "errors");
    uint64_t omitted = pmsg_uint (sent, "errors_omitted", 0);
    ck_assert_uint_gt (listed, 0);
    ck_assert_uint_lt (listed, 1024);
    ck_assert_uint_eq (listed + omitted, PROTO_MAX_BATCH);
    //  The listed ones are the first items, in order, with their sentence.
    for (size_t i = 0; i < listed; i++) {
        const msgpack_object *error = testclient_array_at (sent, "errors", i);
        ck_assert_uint_eq (pobj_uint (error, "index", 99999), i);
        ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNKNOWN_RECIPIENT);
    }
    pmsg_destroy (&sent);
    //  A SEND with few errors has no errors_omitted.
    sent = testclient_send_one (a, "nobody", false, "x");
    EXPECT (sent, PMSG_SENT);
    ck_assert_uint_eq (testclient_array_size (sent, "errors"), 1);
    ck_assert_ptr_null (pmsg_field (sent, "errors_omitted"));
    pmsg_destroy (&sent);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_agent_send_carries_key)
{
    //  The heuristic agent reports to "all" every step, in the step's STEP:
    //  each STEP with messages, seen on the tap, carries its step number
    //  (the key that makes a resend post nothing), each larger than the
    //  last. A SEND of its own, were there one, would carry a batch id.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_msg (broker, "broker did not start");
    testsub_t *tap = testsub_new (testbroker_tap (broker), "");
    ck_assert_ptr_nonnull (tap);
    testcheck_tap_joined (broker, tap, DEADLINE_MS);
    const char *argv [] = { "parley-agent", "--broker", testbroker_router (broker),
                            "--id", "Sender", "--memory-dir", "none", "--max-steps", "6",
                            "--no-stop-when-explored", "--step-delay-ms", "50", NULL };
    tproc_t *agent = tproc_start (argv, true, NULL);
    ck_assert_ptr_nonnull (agent);
    int status = tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "exit %d\n%s", status, tproc_err (agent));
    uint64_t sends = 0, last = 0;
    //  Up to the agent's BYE, its last frame: the tap keeps the broker's
    //  order, so every SEND came before it (a pause in the stream proves
    //  nothing on a loaded machine).
    bool bye = false;
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (!bye) {
        int64_t left = until - pclock_mono_ms ();
        pmsg_t *event = left > 0? testsub_recv (tap, NULL, 0, (int) left): NULL;
        ck_assert_msg (event, "the agent's BYE never showed on the tap");
        const msgpack_object *body = pmsg_field (event, "body");
        char dir [8] = "";
        pmsg_strcpy (event, "dir", dir, sizeof dir);
        if (body && body->type == MSGPACK_OBJECT_BIN && streq (dir, "in")) {
            perr_t code;
            uint64_t id;
            char why [128];
            pmsg_t *frame = pmsg_decode (body->via.bin.ptr, body->via.bin.size,
                                         pwire_default_limits (), &code, &id, why, sizeof why);
            bye |= frame && pmsg_type (frame) == PMSG_BYE;
            if (frame && pmsg_type (frame) == PMSG_SEND)
                ck_assert_msg (pmsg_field (frame, "batch"), "SEND without batch");
            if (frame && pmsg_type (frame) == PMSG_STEP && pmsg_field (frame, "messages")) {
                ck_assert_msg (pmsg_field (frame, "step"), "STEP with messages without step");
                uint64_t step = pmsg_uint (frame, "step", 0);
                if (sends > 0)
                    ck_assert_uint_gt (step, last);
                last = step;
                sends++;
            }
            pmsg_destroy (&frame);
        }
        pmsg_destroy (&event);
    }
    ck_assert_uint_ge (sends, 2);
    testsub_destroy (&tap);
    tproc_destroy (&agent);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_send");
    TCase *tc = tcase_create ("send");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_resent_batch_posted_once);
    tcase_add_test (tc, test_resent_batch_with_errors);
    tcase_add_test (tc, test_sent_errors_budget);
    tcase_add_test (tc, test_agent_send_carries_key);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
