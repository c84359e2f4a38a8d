// SPDX-License-Identifier: MIT
/*  check_curve - security against the real broker over loopback sockets:
    CURVE refusals (a plaintext client, an unknown key, a key asking for an
    id it does not name, a tap without the tap right, an agent key asking
    for operator requests), takeover by key and by resume token, a reused
    routing id that must not inherit a session, and a real parley-agent
    restarted after SIGKILL getting its id back at once.

    Keys and the broker come from tests/lib/testcurve.
*/
#include <check.h>
#include <czmq.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pcurve.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testcurve.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  A short wait for a reply that must NOT come (the connection is refused
//  at the handshake, so there is nothing else to wait for).
#define REFUSED_WAIT_MS 1500

//  Brokers of the plain-mode tests, and a scratch folder.
static testbroker_t *s_plain;
static tproc_dir_t *s_dir;

static uint64_t
s_stat (testclient_t *client, const char *field)
{
    pmsg_t *stats = testclient_call0 (client, PMSG_STATS);
    EXPECT (stats, PMSG_STATS_REPLY);
    uint64_t value = pmsg_uint (stats, field, 999999);
    pmsg_destroy (&stats);
    return value;
}

//  Sends HELLO as `id` and checks that no reply comes.
static void
s_expect_silence (testclient_t *client, const char *id)
{
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 1);
    penc_kv_cstr (enc, "agent", id);
    ck_assert_int_eq (testclient_send (client), 0);
    pmsg_t *reply = testclient_recv (client, REFUSED_WAIT_MS);
    ck_assert_msg (reply == NULL, "a refused connection got %s", testclient_describe (reply));
}

START_TEST (test_plaintext_and_unknown_key_refused)
{
    testcurve_start (NULL);
    char scout [1100];
    snprintf (scout, sizeof scout, "%s", testcurve_key ("scout1", "Scout1", PCURVE_RIGHT_AGENT, true));
    const char *stranger = testcurve_key ("stranger", "Scout1", PCURVE_RIGHT_AGENT, false);
    char stranger_key [1100];
    snprintf (stranger_key, sizeof stranger_key, "%s", stranger);

    testclient_t *plain = testclient_new (testbroker_router (testcurve_broker ()));
    s_expect_silence (plain, "Scout1");
    testclient_t *unknown = testcurve_client (stranger_key);
    s_expect_silence (unknown, "Scout1");

    //  The allowed key gets in; the broker never saw a request from the
    //  other two (HELLO and this STATS are the only ones), and counted the
    //  unknown key's handshake.
    testclient_t *good = testcurve_client (scout);
    pmsg_t *reply = testclient_hello (good, "Scout1");
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_msg (!pmsg_field (reply, "token"), "CURVE mode issues no resume token");
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_stat (good, "requests"), 2);
    ck_assert_uint_ge (s_stat (good, "auth_denied"), 1);
    testclient_destroy (&plain);
    testclient_destroy (&unknown);
    testclient_destroy (&good);
    testcurve_stop ();
}
END_TEST

START_TEST (test_key_bound_to_ids)
{
    testcurve_start (NULL);
    char scout [1100];
    snprintf (scout, sizeof scout, "%s", testcurve_key ("scout1", "Scout1,Helper", PCURVE_RIGHT_AGENT, true));
    testclient_t *client = testcurve_client (scout);
    pmsg_t *reply = testclient_hello (client, "Scout2");
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    reply = testclient_hello (client, "Helper");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_stat (client, "unauthorized"), 1);

    //  The same key on a new connection takes its id over at once, even
    //  from a live connection, mail included; the old one is nobody now.
    reply = testclient_send_one (client, "Helper", false, "note to self");
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    testclient_t *restarted = testcurve_client (scout);
    reply = testclient_hello (restarted, "Helper");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    reply = testclient_fetch (restarted, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 1);
    pmsg_destroy (&reply);
    reply = testclient_call0 (client, PMSG_HEARTBEAT);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    testclient_destroy (&client);
    testclient_destroy (&restarted);
    testcurve_stop ();
}
END_TEST

START_TEST (test_admin_requests_need_admin_key)
{
    testcurve_start (NULL);
    char agent_key [1100], admin_key [1100];
    snprintf (agent_key, sizeof agent_key, "%s", testcurve_key ("scout1", "Scout1", PCURVE_RIGHT_AGENT, true));
    snprintf (admin_key, sizeof admin_key, "%s",
              testcurve_key ("ops", "*", PCURVE_RIGHT_AGENT | PCURVE_RIGHT_ADMIN, true));
    testclient_t *agent = testcurve_client (agent_key);
    pmsg_t *reply = testclient_hello (agent, "Scout1");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    reply = testclient_call0 (agent, PMSG_WORLD_RESET);
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    //  Setting a key is an agent's business; deleting one is not.
    penc_t *enc = testclient_begin_set (agent, "notes.a");
    penc_kv_cstr (enc, "value", "x");
    reply = testclient_call (agent);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
    const char *destroys [] = { "delete", "clear" };
    for (size_t i = 0; i < 2; i++) {
        enc = testclient_begin (agent, PMSG_WRITE, 1);
        penc_key (enc, "ops");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "op", destroys [i]);
        penc_kv_cstr (enc, "key", "notes.a");
        reply = testclient_call (agent);
        EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
        pmsg_destroy (&reply);
    }
    ck_assert_uint_eq (s_stat (agent, "unauthorized"), 3);
    //  The operator's key may do both.
    testclient_t *ops = testcurve_client (admin_key);
    reply = testclient_hello (ops, "Operator");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    reply = testclient_call0 (ops, PMSG_WORLD_RESET);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    enc = testclient_begin (ops, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "op", "delete");
    penc_kv_cstr (enc, "key", "notes.a");
    reply = testclient_call (ops);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
    testclient_destroy (&agent);
    testclient_destroy (&ops);
    testcurve_stop ();
}
END_TEST

//  A refused parley-tap says why instead of only timing out.
START_TEST (test_refused_tap_says_why)
{
    testcurve_start (NULL);
    char stranger [1100], router [600];
    snprintf (stranger, sizeof stranger, "%s", testcurve_key ("stranger", NULL, PCURVE_RIGHT_TAP, false));
    snprintf (router, sizeof router, "--broker=%s", testbroker_router (testcurve_broker ()));
    tproc_t *tap = tproc_tap ((const char *[]) { router, "--connect-timeout-ms", "1500", NULL });
    ck_assert_int_eq (tproc_status (tap), 3);
    ck_assert_msg (strstr (tproc_err (tap), "security mismatch"), "%s", tproc_err (tap));
    tproc_destroy (&tap);
    tap = tproc_tap ((const char *[]) { router, "--connect-timeout-ms", "1500", "--curve-key",
                                        stranger, "--curve-server-key", testcurve_server (), NULL });
    ck_assert_int_eq (tproc_status (tap), 3);
    ck_assert_msg (strstr (tproc_err (tap), "refused this key"), "%s", tproc_err (tap));
    tproc_destroy (&tap);
    testcurve_stop ();
}
END_TEST

//  True once `sub` receives a tap frame; `poker` sends HEARTBEATs so there
//  are frames to mirror (the subscription joins asynchronously).
static bool
s_tap_sees (testsub_t *sub, testclient_t *poker, int deadline_ms)
{
    for (int waited = 0; waited < deadline_ms; waited += 200) {
        pmsg_t *reply = testclient_call0 (poker, PMSG_HEARTBEAT);
        pmsg_destroy (&reply);
        pmsg_t *frame = testsub_recv (sub, NULL, 0, 200);
        if (frame) {
            pmsg_destroy (&frame);
            return true;
        }
    }
    return false;
}

START_TEST (test_tap_needs_tap_key)
{
    testcurve_start (NULL);
    char agent_key [1100], tap_key [1100];
    snprintf (agent_key, sizeof agent_key, "%s", testcurve_key ("scout1", "Scout1", PCURVE_RIGHT_AGENT, true));
    snprintf (tap_key, sizeof tap_key, "%s", testcurve_key ("tap", NULL, PCURVE_RIGHT_TAP, true));
    testclient_t *agent = testcurve_client (agent_key);
    pmsg_t *reply = testclient_hello (agent, "Scout1");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    uint64_t denied = s_stat (agent, "auth_denied");

    testsub_t *wrong = testsub_new_curve (testbroker_tap (testcurve_broker ()), "tap.", agent_key, testcurve_server ());
    testsub_t *plain = testsub_new (testbroker_tap (testcurve_broker ()), "tap.");
    testsub_t *right = testsub_new_curve (testbroker_tap (testcurve_broker ()), "tap.", tap_key, testcurve_server ());
    ck_assert (wrong && plain && right);
    ck_assert_msg (s_tap_sees (right, agent, 15000), "the tap key saw no frame");
    //  By now the frames went to every subscriber the broker accepted.
    pmsg_t *leaked = testsub_recv (wrong, NULL, 0, 300);
    ck_assert_msg (!leaked, "an agent key read the tap");
    leaked = testsub_recv (plain, NULL, 0, 300);
    ck_assert_msg (!leaked, "a plaintext subscriber read the tap");
    ck_assert_uint_gt (s_stat (agent, "auth_denied"), denied);

    //  Learning the endpoints (HELLO observe) also takes the tap right, and
    //  registers nothing.
    testclient_t *observer = testcurve_client (agent_key);
    penc_t *enc = testclient_begin (observer, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "tap-x");
    penc_kv_bool (enc, "observe", true);
    reply = testclient_call (observer);
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    testclient_t *tap = testcurve_client (tap_key);
    enc = testclient_begin (tap, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "tap-x");
    penc_kv_bool (enc, "observe", true);
    reply = testclient_call (tap);
    EXPECT (reply, PMSG_WELCOME);
    char endpoint [256];
    ck_assert (pmsg_strcpy (reply, "tap", endpoint, sizeof endpoint));
    ck_assert_str_eq (endpoint, testbroker_tap (testcurve_broker ()));
    pmsg_destroy (&reply);
    reply = testclient_call0 (agent, PMSG_AGENTS);
    EXPECT (reply, PMSG_AGENT_LIST);
    ck_assert_ptr_null (testcheck_find_agent (reply, "tap-x"));
    pmsg_destroy (&reply);
    //  A tap key is not an agent key.
    reply = testclient_hello (tap, "tap-x");
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    testsub_destroy (&wrong);
    testsub_destroy (&plain);
    testsub_destroy (&right);
    testclient_destroy (&observer);
    testclient_destroy (&tap);
    testclient_destroy (&agent);
    testcurve_stop ();
}
END_TEST

START_TEST (test_resume_token)
{
    //  Plain mode, a long liveness: without the token a restarted agent
    //  would wait a minute for its old session to expire.
    const char *args [] = { "--liveness-ms", "60000", NULL };
    s_plain = testcheck_start (args);
    testclient_t *first = testclient_new (testbroker_router (s_plain));
    pmsg_t *reply = testclient_hello (first, "Rover");
    EXPECT (reply, PMSG_WELCOME);
    char token [PROTO_MAX_NAME + 1];
    ck_assert (pmsg_strcpy (reply, "token", token, sizeof token));
    ck_assert_uint_eq (strlen (token), 32);
    pmsg_destroy (&reply);
    //  A stranger: no token, a wrong token.
    testclient_t *stranger = testclient_new (testbroker_router (s_plain));
    reply = testclient_hello (stranger, "Rover");
    EXPECT_ERROR (reply, PERR_ID_IN_USE);
    pmsg_destroy (&reply);
    penc_t *enc = testclient_begin (stranger, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Rover");
    penc_kv_cstr (enc, "token", "0123456789abcdef0123456789abcdef");
    reply = testclient_call (stranger);
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    //  The agent again, on a new connection, with its token: at once.
    testclient_t *again = testclient_new (testbroker_router (s_plain));
    enc = testclient_begin (again, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Rover");
    penc_kv_cstr (enc, "token", token);
    reply = testclient_call (again);
    EXPECT (reply, PMSG_WELCOME);
    char second [PROTO_MAX_NAME + 1];
    ck_assert (pmsg_strcpy (reply, "token", second, sizeof second));
    ck_assert_str_eq (second, token);
    pmsg_destroy (&reply);
    reply = testclient_call0 (first, PMSG_HEARTBEAT);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    //  The dead session stays out of reach of the stranger too.
    reply = testclient_hello (stranger, "Rover");
    EXPECT_ERROR (reply, PERR_ID_IN_USE);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_stat (again, "unauthorized"), 1);
    testclient_destroy (&first);
    testclient_destroy (&stranger);
    testclient_destroy (&again);
    testcheck_stop (&s_plain);
}
END_TEST

//  parley-tap learns the tap endpoint without registering: it never shows
//  in AGENTS or as an AGENT_EVENT, and no mail can be sent to it.
START_TEST (test_tap_is_not_an_agent)
{
    s_plain = testcheck_start (NULL);
    testsub_t *events = testsub_new (testbroker_pub (s_plain), "agent.");
    testclient_t *watcher = testcheck_agent (s_plain, "Watcher");
    char broker_arg [600];
    snprintf (broker_arg, sizeof broker_arg, "--broker=%s", testbroker_router (s_plain));
    tproc_t *tap = tproc_tap ((const char *[]) { broker_arg, "--timeout-ms", "500", NULL });
    ck_assert_ptr_nonnull (tap);
    ck_assert_msg (strstr (tproc_err (tap), "tapping"), "the tap did not start:\n%s",
                   tproc_err (tap));
    tproc_destroy (&tap);
    pmsg_t *list = testclient_call0 (watcher, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    ck_assert_uint_eq (testclient_array_size (list, "agents"), 1);
    pmsg_destroy (&list);
    ck_assert_uint_eq (s_stat (watcher, "agents"), 1);
    //  Watcher's own join may or may not have been seen (the subscription
    //  races it); no other agent ever joined.
    char topic [128];
    pmsg_t *event;
    while ((event = testsub_recv (events, topic, sizeof topic, 300))) {
        ck_assert_str_eq (topic, "agent.Watcher");
        pmsg_destroy (&event);
    }
    testsub_destroy (&events);
    testclient_destroy (&watcher);
    testcheck_stop (&s_plain);
}
END_TEST

//  A DEALER with a routing id of its own choosing.
static zsock_t *
s_dealer_as (const char *routing_id)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 0);
    zsock_set_identity (sock, routing_id);
    ck_assert_int_eq (zsock_connect (sock, "%s", testbroker_router (s_plain)), 0);
    return sock;
}

//  One request on a raw socket; the reply, or NULL after timeout_ms.
static pmsg_t *
s_raw_call (zsock_t *sock, pmsg_type_t type, const char *agent, int timeout_ms)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, type, 7, agent? 1: 0);
    if (agent)
        penc_kv_cstr (&enc, "agent", agent);
    zmq_send (zsock_resolve (sock), penc_data (&enc), penc_size (&enc), 0);
    penc_fini (&enc);
    zpoller_t *poller = zpoller_new (sock, NULL);
    pmsg_t *reply = NULL;
    if (zpoller_wait (poller, timeout_ms)) {
        zframe_t *frame = zframe_recv (sock);
        perr_t err;
        uint64_t id;
        char why [128];
        reply = pmsg_decode (zframe_data (frame), zframe_size (frame), pwire_default_limits (),
                             &err, &id, why, sizeof why);
        zframe_destroy (&frame);
    }
    zpoller_destroy (&poller);
    return reply;
}

START_TEST (test_reused_routing_id)
{
    s_plain = testcheck_start (NULL);
    zsock_t *first = s_dealer_as ("same-routing-id");
    pmsg_t *reply = s_raw_call (first, PMSG_HELLO, "Victim", 15000);
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    zsock_destroy (&first);
    //  libzmq's ROUTER leaves a connection presenting a routing id still in
    //  use unserved (until it closes), so until the broker's I/O thread has
    //  seen the first connection close, a second one goes unanswered: try
    //  again on a fresh connection each time. Once served, the new
    //  connection must not speak for Victim.
    reply = NULL;
    for (int i = 0; i < 60 && !reply; i++) {
        zsock_t *second = s_dealer_as ("same-routing-id");
        reply = s_raw_call (second, PMSG_HEARTBEAT, NULL, 500);
        zsock_destroy (&second);
    }
    ck_assert_msg (reply, "no connection with the reused routing id was ever served");
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    testcheck_stop (&s_plain);
}
END_TEST

//  A real agent killed with SIGKILL and started again with the same memory
//  directory (where it keeps its resume token) is in at once, although the
//  broker still believes its old connection alive for a minute.
START_TEST (test_agent_restart_at_once)
{
    const char *args [] = { "--liveness-ms", "60000", "--world-size", "4096", NULL };
    s_plain = testcheck_start (args);
    s_dir = tproc_dir_new ();
    char *memory = tproc_dir_path (s_dir, "memory");
    const char *argv [] = { "parley-agent", "--broker", testbroker_router (s_plain),
                            "--id", "Phoenix", "--memory-dir", memory, "--max-steps", "100000",
                            "--step-delay-ms", "20", "--request-timeout-ms", "3000", NULL };
    tproc_t *agent = tproc_start (argv, true, NULL);
    ck_assert_msg (tproc_wait_for (agent, "step 2 ", 30000), "agent made no progress:\n%s",
                   tproc_err (agent));
    tproc_signal (agent, SIGKILL);
    tproc_wait (agent, 10000);
    tproc_destroy (&agent);
    agent = tproc_start (argv, true, NULL);
    //  Well under the 60 s the old session would take to expire.
    ck_assert_msg (tproc_wait_for (agent, "step 2 ", 20000), "restarted agent locked out:\n%s",
                   tproc_err (agent));
    ck_assert_msg (!strstr (tproc_err (agent), "ID_IN_USE"), "%s", tproc_err (agent));
    tproc_signal (agent, SIGTERM);
    tproc_wait (agent, 10000);
    tproc_destroy (&agent);
    free (memory);
    tproc_dir_destroy (&s_dir);
    testcheck_stop (&s_plain);
}
END_TEST

static mode_t
s_mode (const char *dir, const char *name)
{
    char path [2048];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    ck_assert_msg (stat (path, &st) == 0, "%s missing", path);
    return st.st_mode & 0777;
}

//  parley-keygen: modes, metadata, no overwriting, --if-missing, bad input.
START_TEST (test_keygen)
{
    s_dir = tproc_dir_new ();
    char keys [1024], allow [1024], text [1200];
    snprintf (keys, sizeof keys, "%s/a/b/keys", tproc_dir_name (s_dir));
    snprintf (allow, sizeof allow, "%s/allow", tproc_dir_name (s_dir));
    const char *make [] = { "parley-keygen", "--dir", keys, "--name", "scout", "--agents",
                            "Scout1,Scout2", "--rights", "agent,admin", "--copy-public", allow, NULL };
    tproc_t *run = tproc_run (make, true);
    ck_assert_msg (tproc_status (run) == 0, "%s", tproc_err (run));
    tproc_destroy (&run);
    ck_assert_uint_eq (s_mode (keys, "."), 0700);
    ck_assert_uint_eq (s_mode (keys, ".."), 0755);
    ck_assert_uint_eq (s_mode (keys, "scout_secret"), 0600);
    ck_assert_uint_eq (s_mode (keys, "scout"), 0644);
    ck_assert_uint_eq (s_mode (allow, "scout"), 0644);
    char why [256];
    snprintf (text, sizeof text, "%s/scout", allow);
    zcert_t *cert = pcurve_load (text, false, why, sizeof why);
    ck_assert_msg (cert, "%s", why);
    ck_assert_str_eq (zcert_meta (cert, "agents"), "Scout1,Scout2");
    ck_assert_str_eq (zcert_meta (cert, "rights"), "agent,admin");
    zcert_destroy (&cert);
    //  The allowlist copy has no secret; the pair loads with it.
    ck_assert_ptr_null (pcurve_load (text, true, why, sizeof why));
    snprintf (text, sizeof text, "%s/scout", keys);
    cert = pcurve_load (text, true, why, sizeof why);
    ck_assert_msg (cert, "%s", why);
    zcert_destroy (&cert);
    //  Never overwritten; --if-missing leaves it and succeeds.
    run = tproc_run (make, true);
    ck_assert_int_eq (tproc_status (run), 1);
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "already exists"));
    tproc_destroy (&run);
    const char *again [] = { "parley-keygen", "--dir", keys, "--name", "scout", "--if-missing", NULL };
    run = tproc_run (again, true);
    ck_assert_int_eq (tproc_status (run), 0);
    tproc_destroy (&run);
    //  A secret others may read is refused by every loader.
    snprintf (text, sizeof text, "%s/scout_secret", keys);
    ck_assert_int_eq (chmod (text, 0644), 0);
    snprintf (text, sizeof text, "%s/scout", keys);
    ck_assert_ptr_null (pcurve_load (text, true, why, sizeof why));
    ck_assert_ptr_nonnull (strstr (why, "chmod 600"));
    const char *bad [] = { "parley-keygen", "--dir", keys, "--name", "x", "--rights", "root", NULL };
    run = tproc_run (bad, true);
    ck_assert_int_eq (tproc_status (run), 2);
    tproc_destroy (&run);
    const char *noname [] = { "parley-keygen", "--dir", keys, NULL };
    run = tproc_run (noname, true);
    ck_assert_int_eq (tproc_status (run), 2);
    tproc_destroy (&run);
    tproc_dir_destroy (&s_dir);
}
END_TEST

//  The broker refuses a secret key in the allowlist and a half CURVE setup.
START_TEST (test_broker_key_setup_errors)
{
    s_dir = tproc_dir_new ();
    char keys [1024], allow [1024];
    snprintf (keys, sizeof keys, "%s/keys", tproc_dir_name (s_dir));
    snprintf (allow, sizeof allow, "%s/allow", tproc_dir_name (s_dir));
    char why [256];
    ck_assert (pcurve_keygen (keys, "broker", NULL, PCURVE_RIGHT_AGENT, why, sizeof why) == 0);
    ck_assert (pcurve_keygen (allow, "oops", "*", PCURVE_RIGHT_AGENT, why, sizeof why) == 0);
    const char *secret_in_allow [] = { "parley-broker", "--router", "tcp://127.0.0.1:*", "--pub",
                                       "tcp://127.0.0.1:*", "--tap", "off", "--curve-keys", keys,
                                       "--curve-allow", allow, "--data-dir", "none", NULL };
    tproc_t *run = tproc_run (secret_in_allow, true);
    ck_assert_int_ne (tproc_status (run), 0);
    ck_assert_msg (strstr (tproc_err (run), "is a secret key"), "%s", tproc_err (run));
    tproc_destroy (&run);
    const char *half [] = { "parley-broker", "--router", "tcp://127.0.0.1:*", "--pub",
                            "tcp://127.0.0.1:*", "--tap", "off", "--curve-keys", keys,
                            "--data-dir", "none", NULL };
    run = tproc_run (half, true);
    ck_assert_int_ne (tproc_status (run), 0);
    ck_assert_msg (strstr (tproc_err (run), "needs both"), "%s", tproc_err (run));
    tproc_destroy (&run);
    tproc_dir_destroy (&s_dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("curve");
    TCase *tc = tcase_create ("security");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_plaintext_and_unknown_key_refused);
    tcase_add_test (tc, test_key_bound_to_ids);
    tcase_add_test (tc, test_admin_requests_need_admin_key);
    tcase_add_test (tc, test_tap_needs_tap_key);
    tcase_add_test (tc, test_resume_token);
    tcase_add_test (tc, test_reused_routing_id);
    tcase_add_test (tc, test_tap_is_not_an_agent);
    tcase_add_test (tc, test_keygen);
    tcase_add_test (tc, test_refused_tap_says_why);
    tcase_add_test (tc, test_broker_key_setup_errors);
    tcase_add_test (tc, test_agent_restart_at_once);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
