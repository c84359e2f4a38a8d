// SPDX-License-Identifier: MIT
/*  check_rights - rights across features, against the real broker.

    Under CURVE a HANDOVER's ops obey WRITE's rule (deleting state needs
    the admin right, whoever holds the turn), and so does a STEP's. A key
    removed from the allowlist is cut from the events, the tap and the
    ROUTER within a tick; a certificate edited in place takes effect at
    the key's next request. Observers (HELLO observe, parley-tap) work on
    a scenario without a world. A 100 MB subscription frame on the event
    socket is refused, and the broker goes on.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pclock.h"
#include "pcurve.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testcurve.h"
#include "lib/testflow.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

static tproc_dir_t *s_scenario_dir;

//  A scenario folder: a loop of two roles, with no world.
static const char *
s_scenario (void)
{
    s_scenario_dir = tproc_dir_new ();
    const char *files [][2] = {
        { "scenario.yaml", "name: loop\nworld: none\nstate:\n"
                           "  report: { reducer: replace, value: \"draft\" }\n"
                           "workflow:\n  entry: worker\n" },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  handover: [checker]\n" },
        { "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  handover: [worker]\n" },
    };
    testflow_write (s_scenario_dir, NULL, files, 3);
    return tproc_dir_name (s_scenario_dir);
}

static void
s_hello_as (testclient_t *client, const char *id, const char *role)
{
    testflow_hello (client, id, role, NULL);
}

static void
s_pack_delete (penc_t *enc, const char *key)
{
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "op", "delete");
    penc_kv_cstr (enc, "key", key);
}

static bool
s_has_report (testclient_t *client)
{
    penc_t *enc = testclient_begin (client, PMSG_SNAPSHOT, 1);
    penc_kv_cstr (enc, "prefix", "report");
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_STATE);
    bool found = testclient_array_size (reply, "entries") > 0;
    pmsg_destroy (&reply);
    return found;
}

START_TEST (test_handover_ops_obey_write_rights)
{
    const char *args [] = { "--scenario", s_scenario (), NULL };
    testcurve_start (args);
    char worker_key [1100];
    snprintf (worker_key, sizeof worker_key, "%s",
              testcurve_key ("worker", "W", PCURVE_RIGHT_AGENT, true));
    testclient_t *worker = testcurve_client (worker_key);
    s_hello_as (worker, "W", "worker");
    //  The turn holder, with only the agent right: its hand-over may not
    //  delete what its WRITE may not.
    penc_t *enc = testclient_begin (worker, PMSG_HANDOVER, 2);
    penc_kv_cstr (enc, "next", "checker");
    s_pack_delete (enc, "report");
    pmsg_t *reply = testclient_call (worker);
    ck_assert_int_eq (testclient_error_code (reply), PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    //  Nor may a STEP's ops part.
    enc = testclient_begin (worker, PMSG_STEP, 1);
    s_pack_delete (enc, "report");
    reply = testclient_call (worker);
    EXPECT (reply, PMSG_STEPPED);
    const msgpack_object *error = pmsg_field (reply, "ops_error");
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    ck_assert (s_has_report (worker));
    //  The turn did not move.
    reply = testclient_call0 (worker, PMSG_WORKFLOW);
    ck_assert_uint_eq (pmsg_uint (reply, "turn", 0), 1);
    pmsg_destroy (&reply);
    testclient_destroy (&worker);
    testcurve_stop ();
    tproc_dir_destroy (&s_scenario_dir);
}
END_TEST

//  True when `sub` gets an event within `ms`.
static bool
s_hears (testsub_t *sub, int ms)
{
    char topic [256];
    pmsg_t *event = testsub_recv (sub, topic, sizeof topic, ms);
    bool heard = event != NULL;
    pmsg_destroy (&event);
    return heard;
}

static void
s_write_report (testclient_t *client, int n)
{
    penc_t *enc = testclient_begin_set (client, "probe");
    penc_key (enc, "value");
    msgpack_pack_int64 (penc_packer (enc), n);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
}

START_TEST (test_revoked_key_is_cut_everywhere)
{
    testcurve_start (NULL);
    char spy_key [1100], owner_key [1100], spy_pub [1200];
    snprintf (spy_key, sizeof spy_key, "%s",
              testcurve_key ("spy", "Spy", PCURVE_RIGHT_AGENT | PCURVE_RIGHT_TAP, true));
    snprintf (owner_key, sizeof owner_key, "%s",
              testcurve_key ("owner", "Owner", PCURVE_RIGHT_AGENT | PCURVE_RIGHT_ADMIN, true));
    snprintf (spy_pub, sizeof spy_pub, "%s/spy", testcurve_allow ());
    testclient_t *spy = testcurve_client (spy_key);
    s_hello_as (spy, "Spy", NULL);
    testsub_t *events = testsub_new_curve (testbroker_pub (testcurve_broker ()), "state.", spy_key,
                                           testcurve_server ());
    testsub_t *tap = testsub_new_curve (testbroker_tap (testcurve_broker ()), "tap.", spy_key,
                                        testcurve_server ());
    testclient_t *owner = testcurve_client (owner_key);
    s_hello_as (owner, "Owner", NULL);
    //  Both subscriptions work (writes until they are heard: a
    //  subscription takes a moment to reach the broker).
    int n = 0;
    int64_t deadline = pclock_mono_ms () + 10000;
    bool heard = false;
    while (!heard && pclock_mono_ms () < deadline) {
        s_write_report (owner, ++n);
        heard = s_hears (events, 200);
    }
    ck_assert (heard);
    heard = false;
    while (!heard && pclock_mono_ms () < deadline) {
        s_write_report (owner, ++n);
        heard = s_hears (tap, 200);
    }
    ck_assert (heard);
    //  Revoked: within the broker's one-second check its connections go.
    ck_assert_int_eq (unlink (spy_pub), 0);
    pclock_sleep_ms (2500);
    for (int i = 0; i < 10000 && (s_hears (events, 0) || s_hears (tap, 0)); i++)
        ;
    for (int i = 0; i < 5; i++)
        s_write_report (owner, ++n);
    ck_assert_msg (!s_hears (events, 1000), "a revoked key still hears events");
    ck_assert_msg (!s_hears (tap, 200), "a revoked key still watches the tap");
    //  Its request connection was cut too: the broker ended its session
    //  (and refuses its new handshakes, so nothing more is sent on it).
    bool offline = false;
    deadline = pclock_mono_ms () + 10000;
    while (!offline && pclock_mono_ms () < deadline) {
        pmsg_t *list = testclient_call0 (owner, PMSG_AGENTS);
        EXPECT (list, PMSG_AGENT_LIST);
        const msgpack_object *info = testcheck_find_agent (list, "Spy");
        offline = info && !pobj_bool (info, "online", true);
        pmsg_destroy (&list);
        if (!offline)
            pclock_sleep_ms (100);
    }
    ck_assert_msg (offline, "a revoked key's session goes on");
    testsub_destroy (&events);
    testsub_destroy (&tap);
    testclient_destroy (&spy);
    testclient_destroy (&owner);
    testcurve_stop ();
}
END_TEST

START_TEST (test_rights_edited_in_place)
{
    testcurve_start (NULL);
    char admin_key [1100], admin_pub [1200];
    snprintf (admin_key, sizeof admin_key, "%s",
              testcurve_key ("ops", "Ops", PCURVE_RIGHT_AGENT | PCURVE_RIGHT_ADMIN, true));
    snprintf (admin_pub, sizeof admin_pub, "%s/ops", testcurve_allow ());
    testclient_t *ops = testcurve_client (admin_key);
    s_hello_as (ops, "Ops", NULL);
    pmsg_t *reply = testclient_call0 (ops, PMSG_WORLD_RESET);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    //  The same public key, its rights cut to agent, written over the
    //  same file (same inode): the directory itself does not change.
    FILE *file = fopen (admin_pub, "r+");
    ck_assert_ptr_nonnull (file);
    char text [4096];
    size_t len = fread (text, 1, sizeof text - 1, file);
    text [len] = 0;
    char *rights = strstr (text, "rights = \"agent,admin\"");
    ck_assert_ptr_nonnull (rights);
    memmove (rights + strlen ("rights = \"agent\""), rights + strlen ("rights = \"agent,admin\""),
             strlen (rights + strlen ("rights = \"agent,admin\"")) + 1);
    memcpy (rights, "rights = \"agent\"", strlen ("rights = \"agent\""));
    rewind (file);
    ck_assert (fputs (text, file) >= 0);
    ck_assert_int_eq (ftruncate (fileno (file), (off_t) strlen (text)), 0);
    fclose (file);
    int64_t deadline = pclock_mono_ms () + 10000;
    int code = 0;
    while (code != PERR_UNAUTHORIZED && pclock_mono_ms () < deadline) {
        pclock_sleep_ms (200);
        reply = testclient_call0 (ops, PMSG_WORLD_RESET);
        ck_assert_ptr_nonnull (reply);
        code = testclient_error_code (reply);
        pmsg_destroy (&reply);
    }
    ck_assert_int_eq (code, PERR_UNAUTHORIZED);
    //  The key is still allowed: its agent requests go on.
    reply = testclient_call0 (ops, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&ops);
    testcurve_stop ();
}
END_TEST

START_TEST (test_observers_without_a_world)
{
    const char *args [] = { "--scenario", s_scenario (), NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *watcher = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (watcher, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "watcher");
    penc_kv_bool (enc, "observe", true);
    pmsg_t *reply = testclient_call (watcher);
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_ptr_null (pmsg_field (reply, "world"));
    pmsg_destroy (&reply);
    //  parley-tap, as a user runs it: it says HELLO observe and follows.
    char broker_arg [600];
    snprintf (broker_arg, sizeof broker_arg, "--broker=%s", testbroker_router (broker));
    const char *tap_args [] = { broker_arg, "--timeout-ms", "1500", NULL };
    tproc_t *tap = tproc_tap (tap_args);
    tproc_wait (tap, 10000);
    ck_assert_msg (!strstr (tproc_err (tap), "broker down") && !strstr (tproc_err (tap), "cannot"),
                   "%s", tproc_err (tap));
    tproc_destroy (&tap);
    //  The broker is still there and serves.
    testclient_t *agent = testcheck_agent (broker, "After");
    reply = testclient_call0 (agent, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&agent);
    testclient_destroy (&watcher);
    testcheck_stop (&broker);
    tproc_dir_destroy (&s_scenario_dir);
}
END_TEST

START_TEST (test_huge_subscription_refused)
{
    testbroker_t *broker = testcheck_start (NULL);
    //  A 100 MB subscription: libzmq closes the connection at the limit,
    //  before keeping it. The subscriber is a child process of its own
    //  (libzmq's SUB itself crashes tearing such a subscription down).
    pid_t child = fork ();
    ck_assert (child >= 0);
    if (child == 0) {
        void *context = zmq_ctx_new ();
        void *sub = zmq_socket (context, ZMQ_SUB);
        zmq_connect (sub, testbroker_pub (broker));
        size_t size = 100u * 1024 * 1024;
        char *topic = malloc (size);
        memset (topic, 'x', size);
        zmq_setsockopt (sub, ZMQ_SUBSCRIBE, topic, size);
        pause ();
        _exit (0);
    }
    pclock_sleep_ms (2000);
    testclient_t *agent = testcheck_agent (broker, "After");
    pmsg_t *reply = testclient_call0 (agent, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    //  The broker did not keep it: its memory stays small.
    char path [64], line [256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) testbroker_pid (broker));
    FILE *status = fopen (path, "r");
    ck_assert_ptr_nonnull (status);
    long rss_kb = 0;
    while (fgets (line, sizeof line, status))
        if (sscanf (line, "VmRSS: %ld", &rss_kb) == 1)
            break;
    fclose (status);
    ck_assert_msg (rss_kb < 60 * 1024, "broker RSS %ld KiB after a 100 MB subscription", rss_kb);
    kill (child, SIGKILL);
    waitpid (child, NULL, 0);
    testclient_destroy (&agent);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("rights");
    TCase *tc = tcase_create ("rights");
    tcase_set_timeout (tc, 180);
    tcase_add_test (tc, test_handover_ops_obey_write_rights);
    tcase_add_test (tc, test_revoked_key_is_cut_everywhere);
    tcase_add_test (tc, test_rights_edited_in_place);
    tcase_add_test (tc, test_observers_without_a_world);
    tcase_add_test (tc, test_huge_subscription_refused);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
