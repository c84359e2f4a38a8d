// SPDX-License-Identifier: MIT
/*  check_broker_channel_limits - the broker's channels at their edges,
    over real sockets:
    - SEND to a "$..." channel is a RESERVED_NAME item error, like LISTEN
      gives ("$" names are the broker's), and creates no channel.
    - --max-channels cannot be locked out by posting once to many new
      names: an idle channel (no listeners, nothing pending) is reclaimed
      at the limit; channels in use still count.
    - MAIL.pending does not count posts a channel dropped (drop-oldest)
      that no FETCH will hand out.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

//  The code of item error 0 of a SENT, or -1 when there is none.
static int
s_item_error (const pmsg_t *reply)
{
    const msgpack_object *error = testclient_array_at (reply, "errors", 0);
    return error ? (int) pobj_uint (error, "code", 0) : -1;
}

START_TEST (test_send_to_reserved_channel)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    pmsg_t *reply = testclient_send_one (a, "$broker", true, "hi");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 99), 0);
    ck_assert_int_eq (s_item_error (reply), PERR_RESERVED_NAME);
    pmsg_destroy (&reply);
    //  Nothing was created by the refused post.
    ck_assert_uint_eq (testmail_stat (a, "channels"), 0);
    testclient_destroy (&a);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_idle_channels_reclaimed)
{
    const char *args [] = { "--max-channels", "2", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    //  Posts nobody listens to leave idle channels behind; they must not
    //  keep a new channel out.
    char name [32];
    for (int i = 0; i < 5; i++) {
        snprintf (name, sizeof name, "idle%d", i);
        testmail_send (a, name, true, "x");
    }
    ck_assert_uint_le (testmail_stat (a, "channels"), 2);

    //  Two channels in use (a listener each) fill the limit for real.
    testmail_listen (b, "ops");
    testmail_listen (b, "dev");
    pmsg_t *reply = testclient_send_one (a, "third", true, "x");
    EXPECT (reply, PMSG_SENT);
    ck_assert_int_eq (s_item_error (reply), PERR_TOO_MANY_CHANNELS);
    pmsg_destroy (&reply);
    reply = testmail_channel_call (a, PMSG_LISTEN, "third");
    EXPECT_ERROR (reply, PERR_TOO_MANY_CHANNELS);
    pmsg_destroy (&reply);

    //  The channels in use still work and kept their listener.
    ck_assert_uint_gt (testmail_send (a, "ops", true, "p1"), 0);
    char bodies [64];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "p1");

    //  A channel with mail pending is in use even without listeners: after
    //  B unlistens, "ops" still holds p1 in B's inbox and is not reclaimed;
    //  "dev" is idle and makes room.
    testmail_unlisten (b, "ops");
    testmail_unlisten (b, "dev");
    ck_assert_uint_gt (testmail_send (a, "third", true, "x"), 0);
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 1);
    ck_assert_str_eq (bodies, "p1");
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_pending_skips_dropped_posts)
{
    //  MAIL.pending counted posts a channel had already dropped
    //  (drop-oldest): they stay in the inbox as tombstones until
    //  acknowledged, but no FETCH will ever hand them out.
    const char *args [] = { "--overflow", "drop-oldest", "--max-channel", "2", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testmail_listen (b, "one");
    testmail_listen (b, "two");
    ck_assert_uint_gt (testmail_send (a, "one", true, "x1"), 0);
    ck_assert_uint_gt (testmail_send (a, "two", true, "y1"), 0);
    ck_assert_uint_gt (testmail_send (a, "two", true, "y2"), 0);
    ck_assert_uint_gt (testmail_send (a, "two", true, "y3"), 0);      //  drops y1
    pmsg_t *mail = testclient_fetch (b, 0, 1);
    EXPECT (mail, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (mail, "messages"), 1);
    ck_assert_uint_eq (pmsg_uint (mail, "pending", 99), 2);              //  y2, y3
    pmsg_destroy (&mail);
    char bodies [64];
    ck_assert_uint_eq (testmail_fetch (b, 0, 0, bodies, sizeof bodies, NULL), 3);
    ck_assert_str_eq (bodies, "x1,y2,y3");
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_channel_limits");
    TCase *tc = tcase_create ("channels");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_send_to_reserved_channel);
    tcase_add_test (tc, test_idle_channels_reclaimed);
    tcase_add_test (tc, test_pending_skips_dropped_posts);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
