// SPDX-License-Identifier: MIT
/*  check_signals - SIGTERM and SIGINT stop the real parley-broker and
    parley-tap within 2 s with exit code 0: the broker while a client keeps
    its ROUTER busy with thousands of pipelined requests, the tap while it
    is tapping and while it still waits for a broker that never answers its
    HELLO (czmq installs its own handler; these binaries must honour it in
    every loop, not only the main one).
*/
#include <check.h>
#include <czmq.h>
#include <signal.h>
#include <string.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define STOP_MS 2000

static const int s_signals [] = { SIGTERM, SIGINT };

//  Fires `count` SENDs to `to` without reading the replies.
static void
s_flood (testclient_t *client, const char *to, int count)
{
    for (int i = 0; i < count; i++) {
        penc_t *enc = testclient_begin (client, PMSG_SEND, 1);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        penc_kv_cstr (enc, "body", "load");
        ck_assert_int_eq (testclient_send (client), 0);
    }
}

START_TEST (test_broker_stops_under_load)
{
    int signum = s_signals [_i];
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    s_flood (a, "B", 20000);
    int64_t start = pclock_mono_ms ();
    testbroker_signal (broker, signum);
    int rc = testbroker_wait (broker, STOP_MS + 500);
    int64_t took = pclock_mono_ms () - start;
    if (rc != 0)
        testbroker_log (broker);
    ck_assert_msg (rc == 0, "broker exit %d after %s", rc, strsignal (signum));
    ck_assert_msg (took <= STOP_MS, "broker took %lld ms to stop", (long long) took);
    testclient_destroy (&a);
    testclient_destroy (&b);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

static void
s_stop_tap (tproc_t *tap, int signum)
{
    int64_t start = pclock_mono_ms ();
    tproc_signal (tap, signum);
    int rc = tproc_wait (tap, STOP_MS + 500);
    int64_t took = pclock_mono_ms () - start;
    ck_assert_msg (rc == 0, "tap exit %d after %s: %s", rc, strsignal (signum), tproc_err (tap));
    ck_assert_msg (took <= STOP_MS, "tap took %lld ms to stop", (long long) took);
}

START_TEST (test_tap_stops_while_tapping)
{
    int signum = s_signals [_i];
    testbroker_t *broker = testcheck_start (NULL);
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "--broker",
        testbroker_router (broker), NULL }, true, NULL);
    ck_assert_ptr_nonnull (tap);
    //  Up and tapping: it logs the endpoint it subscribed to.
    int64_t deadline = pclock_mono_ms () + 10000;
    while (!strstr (tproc_err (tap), "tapping") && pclock_mono_ms () < deadline)
        tproc_read (tap, 100);
    ck_assert_msg (strstr (tproc_err (tap), "tapping"), "tap not tapping: %s", tproc_err (tap));
    s_stop_tap (tap, signum);
    tproc_destroy (&tap);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_tap_stops_while_discovering)
{
    int signum = s_signals [_i];
    //  A ROUTER that never answers: the tap waits for WELCOME.
    zsock_t *silent = zsock_new (ZMQ_ROUTER);
    int port = zsock_bind (silent, "tcp://127.0.0.1:*");
    ck_assert_int_gt (port, 0);
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "--broker", endpoint,
        "--connect-timeout-ms", "60000", NULL }, true, NULL);
    ck_assert_ptr_nonnull (tap);
    //  Its HELLO arrived: it is inside the discovery wait now.
    zpoller_t *poller = zpoller_new (silent, NULL);
    ck_assert_ptr_nonnull (zpoller_wait (poller, 10000));
    zmsg_t *hello = zmsg_recv (silent);
    zmsg_destroy (&hello);
    zpoller_destroy (&poller);
    s_stop_tap (tap, signum);
    tproc_destroy (&tap);
    zsock_destroy (&silent);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("signals");
    TCase *tc = tcase_create ("signals");
    tcase_set_timeout (tc, 60);
    int n = (int) (sizeof s_signals / sizeof s_signals [0]);
    tcase_add_loop_test (tc, test_broker_stops_under_load, 0, n);
    tcase_add_loop_test (tc, test_tap_stops_while_tapping, 0, n);
    tcase_add_loop_test (tc, test_tap_stops_while_discovering, 0, n);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
