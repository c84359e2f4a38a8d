// SPDX-License-Identifier: MIT
/*  testcheck - shared Check-asserting setup of the broker suites. See
    testcheck.h. */
#include "testcheck.h"

#include <czmq.h>
#include "pclock.h"

testbroker_t *
testcheck_start (const char *const *args)
{
    testbroker_t *broker = testbroker_start (args);
    ck_assert_msg (broker, "broker did not start");
    return broker;
}

void
testcheck_stop (testbroker_t **broker_p)
{
    ck_assert_int_eq (testbroker_stop (broker_p), 0);
}

testclient_t *
testcheck_agent (testbroker_t *broker, const char *id)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    ck_assert_ptr_nonnull (client);
    pmsg_t *welcome = testclient_hello (client, id);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    return client;
}

const msgpack_object *
testcheck_find_agent (const pmsg_t *list, const char *id)
{
    for (size_t i = 0; i < testclient_array_size (list, "agents"); i++) {
        const msgpack_object *info = testclient_array_at (list, "agents", i);
        if (pobj_streq (pobj_get (info, "agent"), id))
            return info;
    }
    return NULL;
}

uint64_t
testcheck_pending (testclient_t *client, const char *id)
{
    testclient_begin (client, PMSG_AGENTS, 0);
    pmsg_t *list = testclient_call (client);
    EXPECT (list, PMSG_AGENT_LIST);
    const msgpack_object *info = testcheck_find_agent (list, id);
    ck_assert_msg (info, "AGENTS does not list %s", id);
    uint64_t pending = pobj_uint (info, "pending", UINT64_MAX);
    pmsg_destroy (&list);
    return pending;
}

void
testcheck_tap_joined (testbroker_t *broker, testsub_t *tap, int deadline_ms)
{
    testclient_t *client = testcheck_agent (broker, "warmup");
    pmsg_t *event = NULL;
    for (int tries = 0; !event; tries++) {
        ck_assert_msg (tries < deadline_ms / 100, "the tap never received a frame");
        pmsg_t *reply = testclient_call0 (client, PMSG_HEARTBEAT);
        pmsg_destroy (&reply);
        event = testsub_recv (tap, NULL, 0, 100);
    }
    pmsg_destroy (&event);
    testclient_destroy (&client);
    while ((event = testsub_recv (tap, NULL, 0, 200)))
        pmsg_destroy (&event);
}

//  True once an event of `topic` arrives within 100 ms of the last one;
//  the events before it are dropped.
static bool
s_saw (testsub_t *sub, const char *topic)
{
    char got [64];
    pmsg_t *event;
    while ((event = testsub_recv (sub, got, sizeof got, 100))) {
        pmsg_destroy (&event);
        if (streq (got, topic))
            return true;
    }
    return false;
}

testsub_t *
testcheck_sub (testbroker_t *broker, const char *prefix)
{
    testsub_t *sub = testsub_new (testbroker_pub (broker), prefix);
    ck_assert_ptr_nonnull (sub);
    testclient_t *probe = testcheck_agent (broker, "SubProbe");
    testsub_subscribe (sub, "mail.SubProbe");
    int64_t deadline = pclock_mono_ms () + TESTCLIENT_TIMEOUT_MS;
    do {
        ck_assert_msg (pclock_mono_ms () < deadline, "the SUB on %s never joined", prefix);
        pmsg_t *sent = testclient_send_one (probe, "SubProbe", false, "probe");
        EXPECT (sent, PMSG_SENT);
        pmsg_destroy (&sent);
    } while (!s_saw (sub, "mail.SubProbe"));
    //  The SUB filters what it receives too: no MAIL_READY still on its way
    //  comes out of testsub_recv once the topic is dropped.
    testsub_unsubscribe (sub, "mail.SubProbe");
    //  Gone without a trace: no registration, no mail left queued.
    penc_t *enc = testclient_begin (probe, PMSG_BYE, 1);
    penc_kv_bool (enc, "forget", true);
    pmsg_t *bye = testclient_call (probe);
    EXPECT (bye, PMSG_OK);
    pmsg_destroy (&bye);
    testclient_destroy (&probe);
    return sub;
}

void
testcheck_sub_join (testsub_t *sub, testclient_t *agent)
{
    testsub_subscribe (sub, "state.subprobe");
    int64_t deadline = pclock_mono_ms () + TESTCLIENT_TIMEOUT_MS;
    uint64_t n = 0;
    do {
        ck_assert_msg (pclock_mono_ms () < deadline, "the SUB never joined");
        penc_t *enc = testclient_begin_set (agent, "subprobe");
        penc_kv_uint (enc, "value", n++);
        pmsg_t *reply = testclient_call (agent);
        EXPECT (reply, PMSG_WRITTEN);
        pmsg_destroy (&reply);
    } while (!s_saw (sub, "state.subprobe"));
    testsub_unsubscribe (sub, "state.subprobe");
}

void
testcheck_leave (testclient_t **client_p)
{
    pmsg_t *reply = testclient_call0 (*client_p, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (client_p);
}
