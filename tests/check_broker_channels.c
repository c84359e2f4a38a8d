// SPDX-License-Identifier: MIT
/*  check_broker_channels - channels over real sockets: listen, unlisten,
    late fetch, posts reaching only the listeners of the moment, WELCOME
    listing an agent's channels, and a full channel under both overflow
    policies with their counters. Helpers shared with check_broker_mail
    are in tests/lib/testmail.c.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

static testbroker_t *s_broker;

START_TEST (test_channels)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testclient_t *c = testcheck_agent (s_broker, "C");
    testmail_listen (b, "ops");
    //  Idempotent.
    testmail_listen (b, "ops");

    testmail_send (a, "ops", true, "p1");
    //  C starts listening after p1: it must not see p1.
    testmail_listen (c, "ops");
    testmail_send (a, "ops", true, "p2");
    testmail_send (a, "B", false, "direct");
    //  B stops listening; p3 reaches only C. B's queued posts stay.
    testmail_unlisten (b, "ops");
    testmail_send (a, "ops", true, "p3");
    pmsg_t *reply = testmail_channel_call (b, PMSG_UNLISTEN, "ops");
    EXPECT_ERROR (reply, PERR_NOT_LISTENING);
    pmsg_destroy (&reply);

    //  Late fetches, after everything: each sees its posts exactly once, in
    //  seq order, interleaved with direct mail.
    char bodies [256];
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, &last), 3);
    ck_assert_str_eq (bodies, "p1,p2,direct");
    last = 0;
    ck_assert_uint_eq (testmail_fetch (c, 0, 0, bodies, sizeof bodies, &last), 2);
    ck_assert_str_eq (bodies, "p2,p3");
    ck_assert_uint_eq (testmail_fetch (a, 0, 0, bodies, sizeof bodies, NULL), 0);
    reply = testclient_fetch (c, 0, 1);
    const msgpack_object *item = testclient_array_at (reply, "messages", 0);
    ck_assert (pobj_streq (pobj_get (item, "channel"), "ops"));
    ck_assert_ptr_null (pobj_get (item, "to"));
    pmsg_destroy (&reply);

    //  A listener that posts gets its own post.
    reply = testmail_channel_call (a, PMSG_LISTEN, "self");
    pmsg_destroy (&reply);
    testmail_send (a, "self", true, "echo");
    ck_assert_uint_eq (testmail_fetch (a, 0, 0, bodies, sizeof bodies, NULL), 1);
    testclient_destroy (&c);
    testclient_t *c2 = testclient_new (testbroker_router (s_broker));
    testclient_destroy (&a);
    a = testcheck_agent (s_broker, "A2");
    reply = testclient_call0 (c2, PMSG_HEARTBEAT);      //  c2 is nobody yet
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    //  Reserved and invalid channel names.
    reply = testmail_channel_call (b, PMSG_LISTEN, "all");
    EXPECT_ERROR (reply, PERR_RESERVED_NAME);
    pmsg_destroy (&reply);
    reply = testclient_send_one (b, "all", true, "x");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (reply, "errors", 0), "code", 0),
                       PERR_RESERVED_NAME);
    pmsg_destroy (&reply);
    reply = testmail_channel_call (b, PMSG_LISTEN, "bad name");
    ck_assert_msg (testclient_error_code (reply) > 0, "bad channel name accepted");
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c2);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_welcome_lists_channels)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    const char *channels [] = { "red", "green" };
    for (int i = 0; i < 2; i++) {
        testmail_listen (a, channels [i]);
    }
    pmsg_t *reply = testclient_call0 (a, PMSG_BYE);
    pmsg_destroy (&reply);
    testclient_t *again = testclient_new (testbroker_router (s_broker));
    reply = testclient_hello (again, "A");
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_uint_eq (testclient_array_size (reply, "channels"), 2);
    ck_assert (pobj_streq (testclient_array_at (reply, "channels", 1), "green"));
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&again);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_channel_full_reject)
{
    const char *args [] = { "--max-channel", "2", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testmail_listen (b, "news");
    ck_assert_uint_gt (testmail_send (a, "news", true, "n1"), 0);
    ck_assert_uint_gt (testmail_send (a, "news", true, "n2"), 0);
    pmsg_t *reply = testclient_send_one (a, "news", true, "n3");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 9), 0);
    ck_assert_uint_eq (pobj_uint (testclient_array_at (reply, "errors", 0), "code", 0),
                       PERR_CHANNEL_FULL);
    pmsg_destroy (&reply);
    //  Once B acknowledges, the channel has room again.
    char bodies [256];
    uint64_t last = 0;
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, &last), 2);
    ck_assert_uint_eq (testmail_fetch (b, last, 0, bodies, sizeof bodies, NULL), 0);
    ck_assert_uint_gt (testmail_send (a, "news", true, "n4"), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_channel_full_drop_oldest)
{
    const char *args [] = { "--max-channel", "2", "--overflow", "drop-oldest", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testclient_t *c = testcheck_agent (s_broker, "C");
    testmail_listen (b, "news");
    testmail_listen (c, "news");
    for (int i = 1; i <= 3; i++) {
        char body [8];
        snprintf (body, sizeof body, "n%d", i);
        ck_assert_uint_gt (testmail_send (a, "news", true, body), 0);
    }
    //  n1 was dropped for both listeners (two deliveries).
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 2);
    ck_assert_str_eq (bodies, "n2,n3");
    ck_assert_uint_eq (testmail_fetch (c, 0, 0, bodies, sizeof bodies, NULL), 2);
    ck_assert_uint_eq (testmail_stat (a, "dropped"), 2);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&s_broker);
}
END_TEST

//  One SEND item addressed by a bare name with `resolve`.
static void
s_resolve_item (penc_t *enc, const char *name, const char *body)
{
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "channel", name);
    penc_kv_bool (enc, "resolve", true);
    penc_kv_cstr (enc, "body", body);
}

START_TEST (test_resolve_names)
{
    //  A bare name with `resolve` goes to the registered agent of that name
    //  (as direct mail), else to a channel someone listens to; a name that
    //  is neither (misspelt, or an agent that has not said HELLO yet) is
    //  refused with NO_SUCH_TARGET instead of becoming a post to a channel
    //  nobody reads, and nothing is queued for it.
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "Bob");
    testclient_t *c = testcheck_agent (s_broker, "C");
    testmail_listen (c, "news");
    penc_t *enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 4);
    s_resolve_item (enc, "Bob", "to bob");
    s_resolve_item (enc, "news", "to news");
    s_resolve_item (enc, "Bbo", "misspelt");
    s_resolve_item (enc, "Dave", "not joined yet");
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 2);
    ck_assert_uint_gt (testclient_array_at (reply, "seqs", 0)->via.u64, 0);
    ck_assert_uint_gt (testclient_array_at (reply, "seqs", 1)->via.u64, 0);
    ck_assert_uint_eq (testclient_array_at (reply, "seqs", 2)->via.u64, 0);
    ck_assert_uint_eq (testclient_array_at (reply, "seqs", 3)->via.u64, 0);
    ck_assert_uint_eq (testclient_array_size (reply, "errors"), 2);
    for (size_t i = 0; i < 2; i++) {
        const msgpack_object *error = testclient_array_at (reply, "errors", i);
        ck_assert_uint_eq (pobj_uint (error, "index", 9), 2 + i);
        ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_NO_SUCH_TARGET);
        size_t len;
        const char *message = pobj_str (error, "message", &len);
        ck_assert_ptr_nonnull (memmem (message, len, i? "Dave": "Bbo", i? 4: 3));
    }
    pmsg_destroy (&reply);
    //  Bob got direct mail (to, not channel); C got the channel post.
    reply = testclient_fetch (b, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 1);
    const msgpack_object *mail = testclient_array_at (reply, "messages", 0);
    ck_assert (pobj_streq (pobj_get (mail, "to"), "Bob"));
    ck_assert_ptr_null (pobj_get (mail, "channel"));
    pmsg_destroy (&reply);
    char bodies [256];
    ck_assert_uint_eq (testmail_fetch (c, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "to news");
    //  No channel was created for the refused names.
    ck_assert_uint_eq (testmail_stat (a, "channels"), 1);
    //  A channel nobody listens to any more does not count as a target.
    testmail_unlisten (c, "news");
    enc = testclient_begin (a, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    s_resolve_item (enc, "news", "nobody reads this");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 1), 0);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&s_broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_channels");
    TCase *tc = tcase_create ("channels");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_channels);
    tcase_add_test (tc, test_welcome_lists_channels);
    tcase_add_test (tc, test_channel_full_reject);
    tcase_add_test (tc, test_channel_full_drop_oldest);
    tcase_add_test (tc, test_resolve_names);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
