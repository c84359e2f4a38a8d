// SPDX-License-Identifier: MIT
/*  check_stall - a reply is never dropped, and a client that never reads
    is cut rather than grown.

    A client keeps 10,000 requests in flight against a ROUTER high-water
    mark of 100 and reads its replies slowly: every reply arrives, in
    order, none dropped (the broker kept what the pipe refused and held
    the client's next requests meanwhile). A client that never reads grows
    what the broker keeps for it up to --max-client-backlog and is cut
    there, while another client is answered as usual; so is one whose
    replies overflow its bound in the very turn that made them (it sent
    them all in one go, and nothing after): its connection really ends.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

#define S_IN_FLIGHT 10000

START_TEST (test_slow_reader_gets_every_reply)
{
    const char *args [] = { "--router-hwm", "100", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *slow = testclient_new_hwm (testbroker_router (broker), NULL, NULL, 10);
    pmsg_t *reply = testclient_hello (slow, "Slow");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    uint64_t first = 0;
    for (int i = 0; i < S_IN_FLIGHT; i++) {
        testclient_begin (slow, PMSG_HEARTBEAT, 0);
        if (i == 0)
            first = testclient_last_id (slow);
        ck_assert_int_eq (testclient_send (slow), 0);
    }
    //  Read slowly: a pause every 500 replies. Each reply in order.
    int64_t deadline = pclock_mono_ms () + 120000;
    uint64_t expect = first;
    int got = 0;
    while (got < S_IN_FLIGHT && pclock_mono_ms () < deadline) {
        reply = testclient_recv (slow, 2000);
        if (!reply)
            continue;
        ck_assert_msg (pmsg_type (reply) == PMSG_OK, "%s", testclient_describe (reply));
        ck_assert_uint_eq (pmsg_id (reply), expect);
        pmsg_destroy (&reply);
        expect++;
        if (++got % 500 == 0)
            pclock_sleep_ms (50);
    }
    ck_assert_int_eq (got, S_IN_FLIGHT);
    testclient_t *probe = testcheck_agent (broker, "Probe");
    ck_assert_uint_gt (testmail_stat (probe, "replies_stalled"), 0);
    ck_assert_uint_eq (testmail_stat (probe, "replies_dropped"), 0);
    ck_assert_uint_eq (testmail_stat (probe, "connections_cut"), 0);
    testclient_destroy (&probe);
    testclient_destroy (&slow);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_client_that_never_reads_is_cut)
{
    const char *args [] = { "--router-hwm", "10", "--max-client-backlog", "262144", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *deaf = testclient_new_hwm (testbroker_router (broker), NULL, NULL, 1);
    pmsg_t *reply = testclient_hello (deaf, "Deaf");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    testclient_t *probe = testcheck_agent (broker, "Probe");
    //  Requests of 100 bytes that it never reads the answers to: the
    //  broker keeps at most 256 KiB for it, then cuts it.
    int64_t deadline = pclock_mono_ms () + 60000;
    uint64_t cut = 0;
    char pad [100];
    memset (pad, 'x', sizeof pad - 1);
    pad [sizeof pad - 1] = 0;
    //  (A request the schema refuses is answered all the same: ERROR.)
    //  Sends stop at the cut: the client's socket would reconnect and fill
    //  again, and its sends would block.
    while (!cut && pclock_mono_ms () < deadline) {
        for (int i = 0; i < 100; i++) {
            penc_t *enc = testclient_begin (deaf, PMSG_HEARTBEAT, 1);
            penc_kv_cstr (enc, "status", pad);
            testclient_send (deaf);
        }
        cut = testmail_stat (probe, "connections_cut");
    }
    ck_assert_uint_ge (cut, 1);
    //  Everyone else is served as before.
    int64_t started = pclock_mono_ms ();
    reply = testclient_call0 (probe, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    ck_assert_int_lt (pclock_mono_ms () - started, 5000);
    testclient_destroy (&deaf);
    testclient_destroy (&probe);
    testcheck_stop (&broker);
}
END_TEST

//  True while `id` is registered and online, as AGENTS says.
static bool
s_online (testclient_t *probe, const char *id)
{
    pmsg_t *list = testclient_call0 (probe, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    const msgpack_object *info = testcheck_find_agent (list, id);
    bool online = info && pobj_bool (info, "online", false);
    pmsg_destroy (&list);
    return online;
}

START_TEST (test_client_cut_in_one_turn_is_disconnected)
{
    //  Silence alone does not end its session here (liveness of ten
    //  minutes): only the cut does.
    const char *args [] = { "--router-hwm", "10", "--max-client-backlog", "65536",
                            "--liveness-ms", "600000", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *deaf = testclient_new_hwm (testbroker_router (broker), NULL, NULL, 1);
    pmsg_t *reply = testclient_hello (deaf, "Deaf");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    //  A value whose GET reply alone is over the bound.
    char *big = malloc (200001);
    memset (big, 'v', 200000);
    big [200000] = 0;
    penc_t *enc = testclient_begin_set (deaf, "big");
    penc_kv_cstr (enc, "value", big);
    reply = testclient_call (deaf);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
    free (big);
    testclient_t *probe = testcheck_agent (broker, "Probe");
    ck_assert (s_online (probe, "Deaf"));
    //  100 GETs of it in one go (one turn), never read, nothing after:
    //  the replies the kernel does not take overflow the bound at once.
    for (int i = 0; i < 100; i++) {
        enc = testclient_begin (deaf, PMSG_GET, 1);
        penc_key (enc, "keys");
        msgpack_pack_array (penc_packer (enc), 1);
        penc_cstr (enc, "big");
        ck_assert_int_eq (testclient_send (deaf), 0);
    }
    int64_t deadline = pclock_mono_ms () + 20000;
    while (testmail_stat (probe, "connections_cut") == 0 && pclock_mono_ms () < deadline)
        pclock_sleep_ms (20);
    ck_assert_uint_ge (testmail_stat (probe, "connections_cut"), 1);
    //  Cut: its session ends as for any closed connection.
    while (s_online (probe, "Deaf") && pclock_mono_ms () < deadline)
        pclock_sleep_ms (20);
    ck_assert_msg (!s_online (probe, "Deaf"), "counted as cut, but its connection stayed");
    testclient_destroy (&deaf);
    testclient_destroy (&probe);
    testcheck_stop (&broker);
}
END_TEST

//  --router-hwm 1 is a value the flag takes: the broker still hears its
//  clients (libzmq delivers nothing with a receive mark of 1 and ZAP).
START_TEST (test_router_hwm_of_one)
{
    const char *args [] = { "--router-hwm", "1", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *client = testclient_new (testbroker_router (broker));
    pmsg_t *reply = testclient_hello (client, "One");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    for (int i = 0; i < 3; i++) {
        reply = testclient_call0 (client, PMSG_HEARTBEAT);
        EXPECT (reply, PMSG_OK);
        pmsg_destroy (&reply);
    }
    testclient_destroy (&client);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("stall");
    TCase *tc = tcase_create ("stall");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_slow_reader_gets_every_reply);
    tcase_add_test (tc, test_client_that_never_reads_is_cut);
    tcase_add_test (tc, test_client_cut_in_one_turn_is_disconnected);
    tcase_add_test (tc, test_router_hwm_of_one);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
