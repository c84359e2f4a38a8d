// SPDX-License-Identifier: MIT
/*  check_broker_session - sessions against the real broker over loopback:
    HELLO/WELCOME, NOT_HELLO, duplicate ids, takeover after BYE and after
    liveness expiry, BYE (with and without forget), AGENTS, stamping of the
    sender, the agent limit, REQ sockets, and a clean exit on SIGTERM and
    SIGINT. Each test runs its own broker on ephemeral ports.
*/
#include <check.h>
#include <czmq.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

static testbroker_t *s_broker;

START_TEST (test_hello_welcome)
{
    s_broker = testcheck_start (NULL);
    testclient_t *client = testclient_new (testbroker_router (s_broker));
    const char *caps [] = { "explore", "llm" };
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Agent1");
    penc_key (enc, "caps");
    msgpack_pack_array (penc_packer (enc), 2);
    penc_cstr (enc, caps [0]);
    penc_cstr (enc, caps [1]);
    pmsg_t *welcome = testclient_call (client);
    EXPECT (welcome, PMSG_WELCOME);
    ck_assert_uint_eq (pmsg_uint (welcome, "version", 0), PROTO_VERSION);
    char text [256];
    ck_assert (pmsg_strcpy (welcome, "agent", text, sizeof text));
    ck_assert_str_eq (text, "Agent1");
    ck_assert (pmsg_strcpy (welcome, "pub", text, sizeof text));
    ck_assert_str_eq (text, testbroker_pub (s_broker));
    ck_assert (pmsg_strcpy (welcome, "tap", text, sizeof text));
    ck_assert_str_eq (text, testbroker_tap (s_broker));
    ck_assert_uint_eq (pmsg_uint (welcome, "heartbeat_ms", 0), 1000);
    ck_assert_uint_eq (pmsg_uint (welcome, "liveness_ms", 0), 5000);
    ck_assert_uint_eq (pmsg_uint (welcome, "max_body", 0), PROTO_MAX_BODY);
    ck_assert_uint_eq (pmsg_uint (welcome, "max_batch", 0), PROTO_MAX_BATCH);
    ck_assert_uint_eq (pmsg_uint (welcome, "acked", 99), 0);
    const msgpack_object *world = pmsg_field (welcome, "world");
    ck_assert_ptr_nonnull (world);
    ck_assert (pobj_streq (pobj_get (world, "kind"), "line"));
    ck_assert_uint_eq (pobj_uint (world, "width", 0), 10);
    ck_assert_uint_eq (testclient_array_size (welcome, "channels"), 0);
    pmsg_destroy (&welcome);

    //  The caps show in AGENTS.
    pmsg_t *list = testclient_call0 (client, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    const msgpack_object *info = testcheck_find_agent (list, "Agent1");
    ck_assert_ptr_nonnull (info);
    ck_assert (pobj_bool (info, "online", false));
    const msgpack_object *got = pobj_get (info, "caps");
    ck_assert_int_eq (got->via.array.size, 2);
    ck_assert (pobj_streq (&got->via.array.ptr [1], "llm"));
    pmsg_destroy (&list);
    testclient_destroy (&client);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_not_hello)
{
    s_broker = testcheck_start (NULL);
    testclient_t *client = testclient_new (testbroker_router (s_broker));
    //  The reads too: only a connection that said HELLO observe may make
    //  them without an id (check_web.c, test_observer_reads), so a client
    //  whose broker restarted learns it from any request.
    pmsg_type_t types [] = { PMSG_FETCH, PMSG_HEARTBEAT, PMSG_AGENTS, PMSG_STATS,
                             PMSG_PERCEIVE, PMSG_SNAPSHOT, PMSG_BYE };
    for (size_t i = 0; i < sizeof types / sizeof types [0]; i++) {
        pmsg_t *reply = testclient_call0 (client, types [i]);
        EXPECT_ERROR (reply, PERR_NOT_HELLO);
        //  testclient_call checked that the id was echoed.
        pmsg_destroy (&reply);
    }
    pmsg_t *reply = testclient_send_one (client, "all", false, "hi");
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    //  After HELLO the same connection is served.
    reply = testclient_hello (client, "Late");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    reply = testclient_call0 (client, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&client);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_duplicate_id)
{
    s_broker = testcheck_start (NULL);
    testclient_t *first = testcheck_agent (s_broker, "Agent1");
    testclient_t *second = testclient_new (testbroker_router (s_broker));
    pmsg_t *reply = testclient_hello (second, "Agent1");
    EXPECT_ERROR (reply, PERR_ID_IN_USE);
    pmsg_destroy (&reply);
    //  The second connection is still nobody; the first is unaffected.
    reply = testclient_call0 (second, PMSG_HEARTBEAT);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    reply = testclient_call0 (first, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    //  HELLO again on the same connection with the same id is fine...
    reply = testclient_hello (first, "Agent1");
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    //  ...with another id it is not.
    reply = testclient_hello (first, "Agent2");
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    testclient_destroy (&first);
    testclient_destroy (&second);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_reserved_and_bad_names)
{
    s_broker = testcheck_start (NULL);
    testclient_t *client = testclient_new (testbroker_router (s_broker));
    pmsg_t *reply = testclient_hello (client, "all");
    EXPECT_ERROR (reply, PERR_RESERVED_NAME);
    pmsg_destroy (&reply);
    const char *bad [] = { "-dash", ".dot", "has space", "", "x/y",
        "a123456789012345678901234567890123456789012345678901234567890123456789" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        reply = testclient_hello (client, bad [i]);
        int code = testclient_error_code (reply);
        ck_assert_msg (code == PERR_BAD_FIELD || code == PERR_BAD_NAME || code == PERR_TOO_LARGE,
                       "HELLO \"%s\" -> %s", bad [i], testclient_describe (reply));
        pmsg_destroy (&reply);
    }
    testclient_destroy (&client);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_takeover_after_bye)
{
    s_broker = testcheck_start (NULL);
    testclient_t *first = testcheck_agent (s_broker, "Rover");
    testclient_t *sender = testcheck_agent (s_broker, "Base");
    pmsg_t *reply = testclient_call0 (first, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    //  After BYE the connection is nobody again.
    reply = testclient_call0 (first, PMSG_FETCH);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    //  Rover is offline but registered: mail is queued for it.
    reply = testclient_send_one (sender, "Rover", false, "while you were out");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 1);
    pmsg_destroy (&reply);
    //  A new connection takes the id over, mail included.
    testclient_t *second = testcheck_agent (s_broker, "Rover");
    reply = testclient_fetch (second, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 1);
    const msgpack_object *item = testclient_array_at (reply, "messages", 0);
    ck_assert (pobj_streq (pobj_get (item, "body"), "while you were out"));
    ck_assert (pobj_streq (pobj_get (item, "from"), "Base"));
    pmsg_destroy (&reply);
    testclient_destroy (&first);
    testclient_destroy (&second);
    testclient_destroy (&sender);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_bye_forget)
{
    s_broker = testcheck_start (NULL);
    testclient_t *gone = testcheck_agent (s_broker, "Gone");
    testclient_t *other = testcheck_agent (s_broker, "Other");
    pmsg_t *reply = testclient_send_one (other, "Gone", false, "lost");
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    penc_t *enc = testclient_begin (gone, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    reply = testclient_call (gone);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    reply = testclient_call0 (other, PMSG_AGENTS);
    EXPECT (reply, PMSG_AGENT_LIST);
    ck_assert_ptr_null (testcheck_find_agent (reply, "Gone"));
    ck_assert_ptr_nonnull (testcheck_find_agent (reply, "Other"));
    pmsg_destroy (&reply);
    reply = testclient_send_one (other, "Gone", false, "anyone?");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 9), 0);
    const msgpack_object *error = testclient_array_at (reply, "errors", 0);
    ck_assert_uint_eq (pobj_uint (error, "code", 0), PERR_UNKNOWN_RECIPIENT);
    pmsg_destroy (&reply);
    //  The id is free again, with an empty inbox.
    testclient_t *again = testcheck_agent (s_broker, "Gone");
    reply = testclient_fetch (again, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 0);
    pmsg_destroy (&reply);
    reply = testclient_call0 (other, PMSG_STATS);
    EXPECT (reply, PMSG_STATS_REPLY);
    ck_assert_uint_eq (pmsg_uint (reply, "queued", 99), 0);
    pmsg_destroy (&reply);
    testclient_destroy (&gone);
    testclient_destroy (&again);
    testclient_destroy (&other);
    testcheck_stop (&s_broker);
}
END_TEST

//  AGENTS from the watcher. The watcher is an agent too, kept alive by its
//  own requests (the dispatcher refreshes liveness before every handler, so
//  in its own list it is always online). If this process stalls longer
//  than --liveness-ms (a loaded machine), the sweep expires the watcher as
//  well: that is the broker being right, not what the test is about, so
//  the watcher says HELLO again and the wait goes on. *rehellos counts it.
static pmsg_t *
s_watch (testclient_t *watcher, int *rehellos)
{
    pmsg_t *list = testclient_call0 (watcher, PMSG_AGENTS);
    if (testclient_error_code (list) == PERR_NOT_HELLO) {
        pmsg_destroy (&list);
        pmsg_t *welcome = testclient_hello (watcher, "Watcher");
        EXPECT (welcome, PMSG_WELCOME);
        pmsg_destroy (&welcome);
        (*rehellos)++;
        list = testclient_call0 (watcher, PMSG_AGENTS);
    }
    EXPECT (list, PMSG_AGENT_LIST);
    ck_assert (pobj_bool (testcheck_find_agent (list, "Watcher"), "online", false));
    return list;
}

//  True once an AGENT_EVENT `name` arrives on `events` (each wait 5 s).
static bool
s_announced (testsub_t *events, const char *name)
{
    bool announced = false;
    char topic [128];
    pmsg_t *event;
    while (!announced && (event = testsub_recv (events, topic, sizeof topic, 5000))) {
        size_t len;
        const char *what = pmsg_str (event, "event", &len);
        announced = what && len == strlen (name) && memcmp (what, name, len) == 0;
        pmsg_destroy (&event);
    }
    return announced;
}

START_TEST (test_liveness_expiry)
{
    //  Sleepy says nothing after HELLO and must expire. 1 s rather than
    //  less: the watcher rarely needs s_watch's second HELLO. The event
    //  subscription is proven live before Sleepy comes.
    const char *args [] = { "--heartbeat-ms", "50", "--liveness-ms", "1000", NULL };
    s_broker = testcheck_start (args);
    testsub_t *events = testsub_new (testbroker_pub (s_broker), "agent.Sleepy");
    testclient_t *watcher = testcheck_agent (s_broker, "Watcher");
    testcheck_sub_join (events, watcher);
    testclient_t *sleepy = testclient_new (testbroker_router (s_broker));
    pmsg_t *welcome = testclient_hello (sleepy, "Sleepy");
    EXPECT (welcome, PMSG_WELCOME);
    char token [PROTO_MAX_NAME + 1] = "";
    ck_assert (pmsg_strcpy (welcome, "token", token, sizeof token));
    pmsg_destroy (&welcome);
    //  Wait (generously) until the broker marks Sleepy offline.
    bool offline = false;
    int rehellos = 0;
    int64_t deadline = pclock_mono_ms () + 30000;
    while (!offline && pclock_mono_ms () < deadline) {
        pmsg_t *list = s_watch (watcher, &rehellos);
        const msgpack_object *info = testcheck_find_agent (list, "Sleepy");
        ck_assert_ptr_nonnull (info);
        offline = !pobj_bool (info, "online", true);
        pmsg_destroy (&list);
        if (!offline)
            pclock_sleep_ms (50);
    }
    if (rehellos)
        fprintf (stderr, "test_liveness_expiry: the watcher stalled and said HELLO %d more times\n",
                 rehellos);
    ck_assert_msg (offline, "Sleepy was never marked offline");
    //  The expiry was announced.
    bool announced = s_announced (events, "expired");
    ck_assert_msg (announced, "no AGENT_EVENT expired for Sleepy");
    //  The old connection is no longer Sleepy...
    pmsg_t *reply = testclient_call0 (sleepy, PMSG_HEARTBEAT);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    //  ...and a new one may not take the id over without its resume token
    //  (a stranger cannot take a recently dead agent's id)...
    testclient_t *again = testclient_new (testbroker_router (s_broker));
    reply = testclient_hello (again, "Sleepy");
    EXPECT_ERROR (reply, PERR_ID_IN_USE);
    pmsg_destroy (&reply);
    //  ...but with it, at once.
    penc_t *enc = testclient_begin (again, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Sleepy");
    penc_kv_cstr (enc, "token", token);
    reply = testclient_call (again);
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    testclient_destroy (&again);
    testclient_destroy (&sleepy);
    testclient_destroy (&watcher);
    testsub_destroy (&events);
    testcheck_stop (&s_broker);
}
END_TEST

//  --forget-after-ms: an agent offline that long is forgotten, its mail
//  released, counted in STATS and announced; a live one stays.
START_TEST (test_forget_after)
{
    //  Sleepy goes offline by BYE, so --liveness-ms only concerns the
    //  watcher: a long one keeps it online (and unforgotten) however slowly
    //  this process runs, so the counts below are exact. The sweep runs at
    //  least once a second whatever the liveness.
    const char *args [] = { "--heartbeat-ms", "50", "--liveness-ms", "600000",
                            "--forget-after-ms", "400", NULL };
    s_broker = testcheck_start (args);
    testsub_t *events = testsub_new (testbroker_pub (s_broker), "agent.Sleepy");
    testclient_t *watcher = testcheck_agent (s_broker, "Watcher");
    testcheck_sub_join (events, watcher);
    testclient_t *sleepy = testcheck_agent (s_broker, "Sleepy");
    pmsg_t *reply = testclient_send_one (watcher, "Sleepy", false, "queued for you");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 0), 1);
    pmsg_destroy (&reply);
    reply = testclient_call0 (sleepy, PMSG_BYE);         //  offline, mail kept
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    bool gone = false;
    int64_t deadline = pclock_mono_ms () + 20000;
    while (!gone && pclock_mono_ms () < deadline) {
        pmsg_t *list = testclient_call0 (watcher, PMSG_AGENTS);
        EXPECT (list, PMSG_AGENT_LIST);
        gone = testcheck_find_agent (list, "Sleepy") == NULL;
        ck_assert_ptr_nonnull (testcheck_find_agent (list, "Watcher"));
        pmsg_destroy (&list);
        if (!gone)
            pclock_sleep_ms (50);
    }
    ck_assert_msg (gone, "Sleepy was never forgotten");
    reply = testclient_call0 (watcher, PMSG_STATS);
    EXPECT (reply, PMSG_STATS_REPLY);
    ck_assert_uint_eq (pmsg_uint (reply, "forgotten", 0), 1);
    ck_assert_uint_eq (pmsg_uint (reply, "queued", 99), 0);
    ck_assert_uint_eq (pmsg_uint (reply, "agents", 0), 1);
    pmsg_destroy (&reply);
    reply = testclient_send_one (watcher, "Sleepy", false, "anyone?");
    EXPECT (reply, PMSG_SENT);
    ck_assert_uint_eq (pmsg_uint (reply, "accepted", 9), 0);
    pmsg_destroy (&reply);
    bool announced = s_announced (events, "forgotten");
    ck_assert_msg (announced, "no AGENT_EVENT forgotten for Sleepy");
    //  The id is free, with an empty inbox.
    testclient_t *again = testcheck_agent (s_broker, "Sleepy");
    reply = testclient_fetch (again, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    ck_assert_uint_eq (testclient_array_size (reply, "messages"), 0);
    pmsg_destroy (&reply);
    testclient_destroy (&again);
    testclient_destroy (&sleepy);
    testclient_destroy (&watcher);
    testsub_destroy (&events);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_agents_list_pending)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testclient_t *c = testcheck_agent (s_broker, "C");
    pmsg_t *reply = testclient_send_one (a, "B", false, "one");
    pmsg_destroy (&reply);
    reply = testclient_send_one (a, "all", false, "two");
    pmsg_destroy (&reply);
    reply = testclient_call0 (c, PMSG_AGENTS);
    EXPECT (reply, PMSG_AGENT_LIST);
    ck_assert_uint_eq (testclient_array_size (reply, "agents"), 3);
    ck_assert_uint_eq (pobj_uint (testcheck_find_agent (reply, "A"), "pending", 9), 0);
    ck_assert_uint_eq (pobj_uint (testcheck_find_agent (reply, "B"), "pending", 9), 2);
    ck_assert_uint_eq (pobj_uint (testcheck_find_agent (reply, "C"), "pending", 9), 1);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_model_report)
{
    //  A HEARTBEAT's model_* fields are kept per agent and listed by
    //  AGENTS; a plain HEARTBEAT keeps the last report; other agents have
    //  none.
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "Modeller");
    testclient_t *b = testcheck_agent (s_broker, "Plain");
    penc_t *enc = testclient_begin (a, PMSG_HEARTBEAT, 3);
    penc_kv_uint (enc, "model_calls", 7);
    penc_kv_uint (enc, "model_prompt_tokens", 840);
    penc_kv_uint (enc, "model_latency_max_ms", 1500);
    pmsg_t *reply = testclient_call (a);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    reply = testclient_call0 (a, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    pmsg_t *list = testclient_call0 (b, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    const msgpack_object *info = testcheck_find_agent (list, "Modeller");
    ck_assert_uint_eq (pobj_uint (info, "model_calls", 0), 7);
    ck_assert_uint_eq (pobj_uint (info, "model_prompt_tokens", 0), 840);
    ck_assert_uint_eq (pobj_uint (info, "model_latency_max_ms", 0), 1500);
    ck_assert_ptr_null (pobj_get (info, "model_ok"));
    ck_assert_ptr_null (pobj_get (testcheck_find_agent (list, "Plain"), "model_calls"));
    pmsg_destroy (&list);
    //  A wrong type is refused by the schema, and the report stays.
    enc = testclient_begin (a, PMSG_HEARTBEAT, 1);
    penc_kv_cstr (enc, "model_calls", "many");
    reply = testclient_call (a);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    list = testclient_call0 (b, PMSG_AGENTS);
    ck_assert_uint_eq (pobj_uint (testcheck_find_agent (list, "Modeller"), "model_calls", 0), 7);
    pmsg_destroy (&list);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_sender_is_stamped)
{
    s_broker = testcheck_start (NULL);
    testclient_t *alice = testcheck_agent (s_broker, "Alice");
    testclient_t *bob = testcheck_agent (s_broker, "Bob");
    //  A forged "from" in the item is an unknown field: ignored.
    penc_t *enc = testclient_begin (alice, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "to", "Bob");
    penc_kv_cstr (enc, "from", "Mallory");
    penc_kv_cstr (enc, "body", "trust me");
    pmsg_t *reply = testclient_call (alice);
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    reply = testclient_fetch (bob, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    const msgpack_object *item = testclient_array_at (reply, "messages", 0);
    ck_assert_ptr_nonnull (item);
    ck_assert (pobj_streq (pobj_get (item, "from"), "Alice"));
    ck_assert (pobj_streq (pobj_get (item, "to"), "Bob"));
    pmsg_destroy (&reply);
    testclient_destroy (&alice);
    testclient_destroy (&bob);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_agent_limit)
{
    const char *args [] = { "--max-agents", "2", NULL };
    s_broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    testclient_t *c = testclient_new (testbroker_router (s_broker));
    pmsg_t *reply = testclient_hello (c, "C");
    EXPECT_ERROR (reply, PERR_TOO_MANY_AGENTS);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_req_socket)
{
    s_broker = testcheck_start (NULL);
    zsock_t *req = zsock_new (ZMQ_REQ);
    zsock_set_linger (req, 0);
    zsock_set_rcvtimeo (req, TESTCLIENT_TIMEOUT_MS);
    ck_assert_int_eq (zsock_connect (req, "%s", testbroker_router (s_broker)), 0);
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_HELLO, 7, 1);
    penc_kv_cstr (&enc, "agent", "Classic");
    ck_assert_int_eq (zmq_send (zsock_resolve (req), penc_data (&enc), penc_size (&enc), 0),
                      (int) penc_size (&enc));
    char buf [4096];
    int size = zmq_recv (zsock_resolve (req), buf, sizeof buf, 0);
    ck_assert_int_gt (size, 0);
    perr_t err;
    uint64_t id;
    pmsg_t *reply = pmsg_decode (buf, (size_t) size, pwire_default_limits (), &err, &id, NULL, 0);
    EXPECT (reply, PMSG_WELCOME);
    ck_assert_uint_eq (pmsg_id (reply), 7);
    pmsg_destroy (&reply);
    penc_fini (&enc);
    zsock_destroy (&req);
    testcheck_stop (&s_broker);
}
END_TEST

static void
s_signal_exit (int signum)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "A");
    testclient_t *b = testcheck_agent (s_broker, "B");
    pmsg_t *reply = testclient_send_one (a, "B", false, "left in the queue");
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    testbroker_signal (s_broker, signum);
    int status = testbroker_wait (s_broker, 30000);
    ck_assert_int_eq (status, 0);
    ck_assert (testbroker_log_contains (s_broker, "stopping"));
    ck_assert_int_eq (testbroker_stop (&s_broker), 0);
    testclient_destroy (&a);
    testclient_destroy (&b);
}

START_TEST (test_sigterm_clean_exit)
{
    s_signal_exit (SIGTERM);
}
END_TEST

START_TEST (test_sigint_clean_exit)
{
    s_signal_exit (SIGINT);
}
END_TEST

START_TEST (test_tap_mirrors_frames)
{
    s_broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (s_broker, "Tapped");
    testsub_t *tap = testsub_new (testbroker_tap (s_broker), "tap.");
    //  The tap only works while someone subscribes (XPUB): poke until the
    //  subscription has reached the broker.
    pmsg_t *frame = NULL;
    char topic [64];
    for (int tries = 0; tries < 100 && !frame; tries++) {
        pmsg_t *reply = testclient_call0 (a, PMSG_HEARTBEAT);
        pmsg_destroy (&reply);
        frame = testsub_recv (tap, topic, sizeof topic, 200);
    }
    ck_assert_ptr_nonnull (frame);
    pmsg_destroy (&frame);
    //  Now one request: its tap.in, then its tap.out, tseq consecutive.
    pmsg_t *reply = testclient_call0 (a, PMSG_AGENTS);
    EXPECT (reply, PMSG_AGENT_LIST);
    pmsg_destroy (&reply);
    bool seen_in = false, seen_out = false;
    uint64_t last_tseq = 0;
    while ((!seen_in || !seen_out) && (frame = testsub_recv (tap, topic, sizeof topic, 5000))) {
        ck_assert_int_eq (pmsg_type (frame), PMSG_TAP);
        uint64_t tseq = pmsg_uint (frame, "tseq", 0);
        ck_assert_uint_gt (tseq, last_tseq);
        last_tseq = tseq;
        ck_assert (pobj_streq (pmsg_field (frame, "peer"), "Tapped"));
        size_t len;
        const char *body = pmsg_str (frame, "body", &len);
        perr_t err;
        uint64_t id;
        pmsg_t *inner = pmsg_decode (body, len, pwire_default_limits (), &err, &id, NULL, 0);
        ck_assert_ptr_nonnull (inner);
        if (strcmp (topic, "tap.in") == 0 && pmsg_type (inner) == PMSG_AGENTS)
            seen_in = true;
        if (strcmp (topic, "tap.out") == 0 && pmsg_type (inner) == PMSG_AGENT_LIST)
            seen_out = true;
        pmsg_destroy (&inner);
        pmsg_destroy (&frame);
    }
    ck_assert (seen_in && seen_out);
    testsub_destroy (&tap);
    testclient_destroy (&a);
    testcheck_stop (&s_broker);
}
END_TEST

START_TEST (test_help_and_usage)
{
    //  --help exits 0 and documents the flags and exit codes; a bad value
    //  is a usage error (exit 2); an endpoint that cannot bind exits 3.
    const char *bindir = getenv ("PARLEY_BIN_DIR");
    char command [1024];
    snprintf (command, sizeof command, "%s/parley-broker --help", bindir ? bindir : "bin");
    FILE *out = popen (command, "r");
    ck_assert_ptr_nonnull (out);
    char text [65536];
    size_t size = fread (text, 1, sizeof text - 1, out);
    text [size] = 0;
    ck_assert_int_eq (WEXITSTATUS (pclose (out)), 0);
    const char *flags [] = { "--router", "--pub", "--tap", "--overflow", "--max-inbox",
                             "--max-channel", "--max-body", "--seed", "--grid",
                             "--world-file", "--liveness-ms", "--ready-file",
                             "--advertise-host", "PARLEY_ROUTER", "--forget-after-ms" };
    for (size_t i = 0; i < sizeof flags / sizeof flags [0]; i++)
        ck_assert_msg (strstr (text, flags [i]), "--help does not mention %s", flags [i]);
    snprintf (command, sizeof command,
              "%s/parley-broker --overflow sometimes >/dev/null 2>&1", bindir ? bindir : "bin");
    ck_assert_int_eq (WEXITSTATUS (system (command)), 2);
    snprintf (command, sizeof command, "%s/parley-broker --router tcp://256.1.1.1:1 "
              "--pub tcp://127.0.0.1:* --tap off --insecure --data-dir none >/dev/null 2>&1",
              bindir ? bindir : "bin");
    ck_assert_int_eq (WEXITSTATUS (system (command)), 3);
    //  Without CURVE, an endpoint beyond loopback needs --insecure.
    snprintf (command, sizeof command, "%s/parley-broker --router tcp://0.0.0.0:0 "
              "--pub tcp://127.0.0.1:* --tap off --data-dir none >/dev/null 2>&1",
              bindir ? bindir : "bin");
    ck_assert_int_eq (WEXITSTATUS (system (command)), 2);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_session");
    TCase *tc = tcase_create ("session");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_hello_welcome);
    tcase_add_test (tc, test_not_hello);
    tcase_add_test (tc, test_duplicate_id);
    tcase_add_test (tc, test_reserved_and_bad_names);
    tcase_add_test (tc, test_takeover_after_bye);
    tcase_add_test (tc, test_bye_forget);
    tcase_add_test (tc, test_liveness_expiry);
    tcase_add_test (tc, test_forget_after);
    tcase_add_test (tc, test_agents_list_pending);
    tcase_add_test (tc, test_sender_is_stamped);
    tcase_add_test (tc, test_model_report);
    tcase_add_test (tc, test_agent_limit);
    tcase_add_test (tc, test_req_socket);
    tcase_add_test (tc, test_sigterm_clean_exit);
    tcase_add_test (tc, test_sigint_clean_exit);
    tcase_add_test (tc, test_help_and_usage);
    tcase_add_test (tc, test_tap_mirrors_frames);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
