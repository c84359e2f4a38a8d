// SPDX-License-Identifier: MIT
/*  check_client_observe - libparley's operator side against the real
    broker: STATS as a generic field list (every field of the protocol's
    table, its unit by the naming rule, the broker's version), AGENTS'
    step / unacked / inbox figures, and the generic event subscription:
    events by topic prefix, its limits, and its bounded queue dropping
    the oldest and counting them.
*/
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "parley/client.h"
#include "pclock.h"
#include "pconfig.h"
#include "pmsg.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 15000

static parley_client_t *
s_connected (const char *router, const char *id)
{
    parley_client_t *client = parley_client_new (router, id);
    parley_client_set_timeout (client, DEADLINE_MS, 200);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

//  A broker on an ipc endpoint of its own: on a shared machine an agent
//  of some other run retrying a tcp port could otherwise join it and be
//  counted here.
static tproc_dir_t *s_dir;

//  It journals, so its STATS carries every field the protocol lists.
static testbroker_t *
s_start (void)
{
    s_dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (s_dir, "router");
    char *data = tproc_dir_path (s_dir, "data");
    testbroker_t *broker = testbroker_start ((const char *[]) { "--router", router,
                                                                "--data-dir", data, NULL });
    free (router);
    free (data);
    ck_assert_ptr_nonnull (broker);
    return broker;
}

static void
s_stop (testbroker_t **broker_p)
{
    testbroker_stop (broker_p);
    tproc_dir_destroy (&s_dir);
}

static const parley_stat_field_t *
s_find (const parley_stat_list_t *list, const char *name)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp (list->fields [i].name, name) == 0)
            return &list->fields [i];
    return NULL;
}

START_TEST (test_stats_fields)
{
    testbroker_t *broker = s_start ();
    parley_client_t *client = s_connected (testbroker_router (broker), "Ops");
    parley_stat_list_t list;
    ck_assert_int_eq (parley_client_stats_fields (client, &list), PARLEY_OK);
    //  Every field the protocol lists, none of the envelope.
    const pschema_t *schema = pmsg_schema (PMSG_STATS_REPLY);
    ck_assert_uint_eq (list.count, schema->count);
    for (size_t i = 0; i < schema->count; i++) {
        const parley_stat_field_t *f = s_find (&list, schema->fields [i].name);
        ck_assert_msg (f, "no %s", schema->fields [i].name);
        ck_assert_str_eq (f->help, schema->fields [i].doc);
        ck_assert_uint_gt (f->value_size, 0);
    }
    ck_assert_ptr_null (s_find (&list, "id"));
    const parley_stat_field_t *uptime = s_find (&list, "uptime_ms");
    ck_assert_int_eq (uptime->kind, PARLEY_STAT_UINT);
    ck_assert_str_eq (uptime->unit, "ms");
    ck_assert_int_eq (s_find (&list, "online")->uint_value, 1);
    ck_assert_str_eq (s_find (&list, "online")->unit, "count");
    const parley_stat_field_t *rate = s_find (&list, "rate_in");
    ck_assert_str_eq (rate->unit, "messages/s");
    ck_assert_str_eq (s_find (&list, "queued_bytes")->unit, "bytes");
    ck_assert_str_eq (s_find (&list, "state_seq")->unit, "seq");
    const parley_stat_field_t *version = s_find (&list, "version");
    ck_assert_int_eq (version->kind, PARLEY_STAT_TEXT);
    ck_assert_str_eq (version->text, PARLEY_VERSION);
    ck_assert_str_eq (version->unit, "");
    //  The typed STATS says the same.
    parley_stats_t stats;
    ck_assert_int_eq (parley_client_stats (client, &stats), PARLEY_OK);
    ck_assert_uint_eq (stats.online, 1);
    //  The naming rule for fields this library does not know.
    ck_assert_str_eq (parley_stat_unit ("journal_fsync_ms", PARLEY_STAT_UINT), "ms");
    ck_assert_str_eq (parley_stat_unit ("journal_bytes", PARLEY_STAT_UINT), "bytes");
    ck_assert_str_eq (parley_stat_unit ("wait_us", PARLEY_STAT_NUM), "us");
    ck_assert_str_eq (parley_stat_unit ("journal_seq", PARLEY_STAT_UINT), "seq");
    ck_assert_str_eq (parley_stat_unit ("widgets", PARLEY_STAT_UINT), "count");
    ck_assert_str_eq (parley_stat_unit ("journal_state", PARLEY_STAT_TEXT), "");
    parley_client_destroy (&client);
    s_stop (&broker);
}
END_TEST

START_TEST (test_agent_figures)
{
    testbroker_t *broker = s_start ();
    parley_client_t *mover = s_connected (testbroker_router (broker), "Mover");
    parley_client_t *reader = s_connected (testbroker_router (broker), "Reader");
    parley_observation_t obs;
    ck_assert_int_eq (parley_client_act (mover, "forward", 3, &obs), PARLEY_OK);
    ck_assert_int_eq (parley_client_act (mover, "forward", 3, &obs), PARLEY_OK);   //  a replay
    ck_assert_int_eq (parley_client_act (mover, "forward", 4, &obs), PARLEY_OK);
    parley_outgoing_t mail [] = { { .to = "Reader", .body = "abc", .body_len = 3 },
                                  { .to = "Reader", .body = "de", .body_len = 2 },
                                  { .to = "Reader", .body = "f", .body_len = 1 } };
    ck_assert_int_eq (parley_client_send (mover, mail, 3, NULL), PARLEY_OK);
    parley_mail_batch_t batch;
    ck_assert_int_eq (parley_client_fetch (reader, 0, 2, false, &batch), PARLEY_OK);
    ck_assert_uint_eq (batch.count, 2);
    parley_agent_list_t list;
    ck_assert_int_eq (parley_client_agents (mover, &list), PARLEY_OK);
    ck_assert_uint_eq (list.count, 2);
    for (size_t i = 0; i < list.count; i++) {
        const parley_agent_info_t *a = &list.agents [i];
        if (strcmp (a->agent, "Mover") == 0) {
            ck_assert_uint_eq (a->step, 4);
            ck_assert_uint_eq (a->acts, 2);
            ck_assert_uint_eq (a->pending, 0);
        }
        else {
            ck_assert_uint_eq (a->step, 0);
            ck_assert_uint_eq (a->pending, 3);
            ck_assert_uint_eq (a->unacked, 2);
            ck_assert_uint_eq (a->inbox_bytes, 6);
        }
    }
    //  Acknowledged: nothing unacked, one left to fetch.
    ck_assert_int_eq (parley_client_ack (reader, batch.messages [1].seq), PARLEY_OK);
    ck_assert_int_eq (parley_client_agents (mover, &list), PARLEY_OK);
    for (size_t i = 0; i < list.count; i++)
        if (strcmp (list.agents [i].agent, "Reader") == 0) {
            ck_assert_uint_eq (list.agents [i].pending, 1);
            ck_assert_uint_eq (list.agents [i].unacked, 0);
            ck_assert_uint_eq (list.agents [i].inbox_bytes, 1);
        }
    parley_client_destroy (&mover);
    parley_client_destroy (&reader);
    s_stop (&broker);
}
END_TEST

//  Waits for the next queued event, up to DEADLINE_MS, skipping the
//  updates of the probe that found the subscription live: on a loaded
//  machine the update of a later probe can arrive after the first.
static bool
s_next (parley_client_t *client, parley_event_t *event)
{
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (pclock_mono_ms () < until) {
        while (parley_client_event (client, event))
            if (strcmp (event->topic, "state.obs.probe") != 0)
                return true;
        parley_client_wait (client, 100);
    }
    return false;
}

START_TEST (test_events)
{
    testbroker_t *broker = s_start ();
    const char *router = testbroker_router (broker);
    parley_client_t *watcher = s_connected (router, "Watcher");
    ck_assert_int_eq (parley_client_subscribe (watcher, "agent."), PARLEY_OK);
    ck_assert_int_eq (parley_client_subscribe (watcher, "agent."), PARLEY_OK);     //  once
    ck_assert_int_eq (parley_client_subscribe (watcher, "state.obs."), PARLEY_OK);
    //  The SUB joins asynchronously: write until the first update shows.
    parley_event_t event;
    uint8_t one = 1;
    parley_op_t probe = { .op = PARLEY_OP_SET, .key = "obs.probe", .value = &one, .value_size = 1 };
    bool joined = false;
    int64_t joined_by = pclock_mono_ms () + DEADLINE_MS;
    while (!joined && pclock_mono_ms () < joined_by) {
        ck_assert_int_eq (parley_client_write (watcher, &probe, 1, NULL), PARLEY_OK);
        parley_client_wait (watcher, 100);
        while (parley_client_event (watcher, &event))
            joined = true;
    }
    ck_assert (joined);
    parley_client_t *other = s_connected (router, "Other");
    ck_assert (s_next (watcher, &event));
    ck_assert_str_eq (event.topic, "agent.Other");
    ck_assert_str_eq (event.type, "AGENT_EVENT");
    ck_assert_uint_gt (event.body_size, 0);
    ck_assert_uint_gt (event.received_us, 0);
    //  Not subscribed: other state keys; subscribed: obs.*.
    parley_op_t ops [] = {
        { .op = PARLEY_OP_SET, .key = "elsewhere", .value = &one, .value_size = 1 },
        { .op = PARLEY_OP_SET, .key = "obs.x", .value = &one, .value_size = 1 },
    };
    ck_assert_int_eq (parley_client_write (other, ops, 2, NULL), PARLEY_OK);
    ck_assert (s_next (watcher, &event));
    ck_assert_str_eq (event.topic, "state.obs.x");
    ck_assert_str_eq (event.type, "STATE_UPDATE");
    //  Limits: a topic too long, too many topics.
    char long_topic [400];
    memset (long_topic, 'x', sizeof long_topic - 1);
    long_topic [sizeof long_topic - 1] = 0;
    ck_assert_int_eq (parley_client_subscribe (watcher, long_topic), PARLEY_ERR_INVALID);
    char topic [32];
    for (int i = 0; i < PARLEY_MAX_EVENT_TOPICS - 2; i++) {
        snprintf (topic, sizeof topic, "world.t%d", i);
        ck_assert_int_eq (parley_client_subscribe (watcher, topic), PARLEY_OK);
    }
    ck_assert_int_eq (parley_client_subscribe (watcher, "workflow."), PARLEY_ERR_INVALID);
    parley_client_unsubscribe (watcher, "world.t0");
    ck_assert_int_eq (parley_client_subscribe (watcher, "workflow."), PARLEY_OK);

    //  The queue is bounded: a burst larger than it keeps the newest and
    //  counts the rest as dropped.
    enum { BURST = PARLEY_EVENT_QUEUE + 44 };
    static parley_op_t burst [BURST];
    static char keys [BURST][16];
    for (int i = 0; i < BURST; i++) {
        snprintf (keys [i], sizeof keys [i], "obs.b%03d", i);
        burst [i] = (parley_op_t) { .op = PARLEY_OP_SET, .key = keys [i], .value = &one,
                                    .value_size = 1 };
    }
    parley_client_stats_t before, after;
    parley_client_counters (watcher, &before);
    ck_assert_int_eq (parley_client_write (other, burst, BURST, NULL), PARLEY_OK);
    //  A deadline by the clock: parley_client_wait returns at once while
    //  events are queued (they are, here), so counting calls would give up
    //  long before a loaded broker has published the whole burst.
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    do {
        parley_client_wait (watcher, 100);
        parley_client_counters (watcher, &after);
    } while (after.events - before.events < BURST && pclock_mono_ms () < until);
    ck_assert_uint_eq (after.events - before.events, BURST);
    ck_assert_uint_eq (after.events_dropped - before.events_dropped, BURST - PARLEY_EVENT_QUEUE);
    size_t taken = 0;
    char first [64] = "";
    while (parley_client_event (watcher, &event)) {
        if (!taken)
            snprintf (first, sizeof first, "%s", event.topic);
        taken++;
    }
    ck_assert_uint_eq (taken, PARLEY_EVENT_QUEUE);
    ck_assert_str_eq (first, "state.obs.b044");         //  the oldest were dropped
    parley_client_destroy (&other);
    parley_client_destroy (&watcher);
    s_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("client_observe");
    TCase *tc = tcase_create ("client_observe");
    tcase_add_test (tc, test_stats_fields);
    tcase_add_test (tc, test_agent_figures);
    tcase_add_test (tc, test_events);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
