// SPDX-License-Identifier: MIT
/*  check_client_workflow - libparley's workflow API against a real broker
    running the loop scenario (tests/lib/testflow.c): WORKFLOW, HANDOVER,
    CHECKPOINTS, CHECKPOINT (whole and diff), RESUME, their typed errors,
    arguments refused before sending, and the bounded WORKFLOW_EVENT queue.
*/
#include <check.h>
#include <czmq.h>
#include "parley/client.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testflow.h"
#include "lib/testsuite.h"

#define DEADLINE_MS 15000

static parley_client_t *
s_player (testbroker_t *broker, const char *id, const char *role)
{
    parley_client_t *client = parley_client_new (testbroker_router (broker), id);
    if (role) {
        char cap [80];
        snprintf (cap, sizeof cap, "role:%s", role);
        parley_client_add_cap (client, cap);
    }
    parley_client_set_timeout (client, DEADLINE_MS, 200);
    parley_client_workflow_events (client, true);
    //  Its last subscription: s_events_live proves them all live with it.
    ck_assert_int_eq (parley_client_subscribe (client, "agent.EvProbe"), PARLEY_OK);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

//  Returns once the players' event subscriptions are live, instead of a
//  sleep that a loaded machine outlasts (PROTOCOL.md, "Knowing that a
//  subscription is live"): probe agents EvProbe<n> say HELLO, one every
//  100 ms, until each player has seen an agent.EvProbe event, the topic its
//  SUB subscribed to last; subscriptions reach the broker in order, so
//  workflow. is live too. Then the players drop that topic and its events.
static void
s_events_live (testbroker_t *broker, parley_client_t *const *players, size_t count)
{
    bool seen [8] = { false };
    ck_assert_uint_le (count, 8);
    size_t left = count;
    int64_t until = zclock_mono () + DEADLINE_MS;
    for (int n = 0; left; n++) {
        ck_assert_msg (zclock_mono () < until, "the players' events never became live");
        char id [32];
        snprintf (id, sizeof id, "EvProbe%d", n);
        parley_client_t *probe = parley_client_new (testbroker_router (broker), id);
        ck_assert_int_eq (parley_client_connect (probe), PARLEY_OK);
        parley_client_destroy (&probe);
        zclock_sleep (100);
        for (size_t i = 0; i < count; i++) {
            parley_client_process (players [i]);
            parley_event_t event;
            while (parley_client_event (players [i], &event))
                if (!seen [i]) {
                    seen [i] = true;
                    left--;
                }
        }
    }
    for (size_t i = 0; i < count; i++) {
        parley_client_unsubscribe (players [i], "agent.EvProbe");
        parley_event_t event;
        while (parley_client_event (players [i], &event))
            ;
    }
}

//  Waits for an event of `kind` naming `agent` (NULL: any); earlier ones
//  are skipped.
static void
s_expect_event (parley_client_t *client, parley_wf_event_kind_t kind, const char *agent)
{
    int64_t until = zclock_mono () + DEADLINE_MS;
    while (zclock_mono () < until) {
        parley_workflow_event_t event;
        while (parley_client_workflow_event (client, &event))
            if (event.kind == kind && (!agent || streq (event.agent, agent)))
                return;
        parley_client_wait (client, 200);
    }
    ck_abort_msg ("no %d event for %s", kind, agent ? agent : "anyone");
}

//  HANDOVER to `next` appending `value` to `key` (each role writes its own).
static parley_workflow_t
s_handover (parley_client_t *client, const char *key, const char *next, const char *value)
{
    char packed [64];
    size_t size = parley_pack_str (packed + 1, sizeof packed - 1, value);
    packed [0] = (char) 0x91;                       //  an array of one str
    parley_op_t op = { PARLEY_OP_UPDATE, key, packed, size + 1, NULL };
    parley_handover_t handover = { .ops = &op, .op_count = 1, .next = next };
    parley_workflow_t info;
    ck_assert_int_eq (parley_client_handover (client, &handover, &info), PARLEY_OK);
    return info;
}

START_TEST (test_turns_and_checkpoints)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    parley_client_t *worker = s_player (broker, "W1", "worker");
    parley_client_t *checker = s_player (broker, "C1", "checker");
    //  W1's turn began at its HELLO, before its subscription: asked, not
    //  waited for (as parley-agent does). The events that follow are
    //  waited for, so the subscriptions must be live first.
    s_events_live (broker, (parley_client_t *[]) { worker, checker }, 2);

    parley_workflow_t info;
    ck_assert_int_eq (parley_client_workflow (checker, &info), PARLEY_OK);
    ck_assert_int_eq (info.status, PARLEY_WF_IN_PROGRESS);
    ck_assert_str_eq (info.status_name, "in_progress");
    ck_assert_str_eq (info.holder, "worker");
    ck_assert_str_eq (info.agent, "W1");
    ck_assert_uint_eq (info.turn, 1);
    ck_assert_uint_eq (info.max_revisions, 3);
    ck_assert_uint_eq (info.max_turns, 100);
    ck_assert_str_eq (info.reason, "");

    //  Typed refusals: not the holder; bad arguments never leave the client.
    parley_handover_t not_mine = { .next = "worker" };
    ck_assert_int_eq (parley_client_handover (checker, &not_mine, NULL),
                      PARLEY_ERR_NOT_TURN_HOLDER);
    parley_handover_t bad_status = { .next = "checker", .status = (parley_wf_status_t) 99 };
    ck_assert_int_eq (parley_client_handover (worker, &bad_status, NULL), PARLEY_ERR_INVALID);
    parley_op_t no_value = { PARLEY_OP_UPDATE, "work", NULL, 0, NULL };
    parley_handover_t bad_op = { .ops = &no_value, .op_count = 1, .next = "checker" };
    ck_assert_int_eq (parley_client_handover (worker, &bad_op, NULL), PARLEY_ERR_INVALID);
    parley_handover_t bad_name = { .next = "no such role!" };
    ck_assert_int_eq (parley_client_handover (worker, &bad_name, NULL), PARLEY_ERR_INVALID);
    //  The broker's check: an unknown role.
    parley_handover_t unknown = { .next = "nobody" };
    ck_assert_int_eq (parley_client_handover (worker, &unknown, NULL), PARLEY_ERR_BAD_FIELD);

    info = s_handover (worker, "work", "checker", "draft");
    ck_assert_str_eq (info.holder, "checker");
    ck_assert_str_eq (info.agent, "C1");
    ck_assert_uint_eq (info.turn, 2);
    uint64_t handed = info.checkpoint;
    s_expect_event (checker, PARLEY_WF_EVENT_TURN, "C1");

    parley_checkpoint_list_t list;
    ck_assert_int_eq (parley_client_checkpoints (checker, &list), PARLEY_OK);
    ck_assert_uint_ge (list.count, 2);
    ck_assert_uint_eq (list.checkpoints [list.count - 1].number, handed);
    ck_assert_str_eq (list.checkpoints [list.count - 1].holder, "checker");
    ck_assert_int_eq (list.checkpoints [list.count - 1].status, PARLEY_WF_IN_PROGRESS);
    ck_assert_uint_eq (list.checkpoints [0].number, 0);
    ck_assert_uint_eq (list.dropped, 0);

    //  What the hand-over changed: work, and the turn's keys.
    parley_checkpoint_state_t diff;
    ck_assert_int_eq (parley_client_checkpoint_diff (checker, handed, handed - 1, &diff),
                      PARLEY_OK);
    ck_assert (diff.has_since);
    ck_assert_uint_eq (diff.since, handed - 1);
    ck_assert_uint_eq (diff.info.number, handed);
    bool saw_work = false, saw_holder = false;
    for (size_t i = 0; i < diff.count; i++) {
        if (streq (diff.entries [i].key, "work")) {
            saw_work = true;
            ck_assert_str_eq (diff.entries [i].reducer, "append");
            const unsigned char want [] = { 0x91, 0xa5, 'd', 'r', 'a', 'f', 't' };
            ck_assert_uint_eq (diff.entries [i].value_size, sizeof want);
            ck_assert (memcmp (diff.entries [i].value, want, sizeof want) == 0);
        }
        saw_holder |= streq (diff.entries [i].key, "current_agent");
    }
    ck_assert (saw_work && saw_holder);
    parley_checkpoint_state_t whole;
    ck_assert_int_eq (parley_client_checkpoint (checker, 0, &whole), PARLEY_OK);
    ck_assert (!whole.has_since);
    ck_assert_uint_gt (whole.count, 0);
    ck_assert_int_eq (parley_client_checkpoint (checker, 999, &whole),
                      PARLEY_ERR_NO_SUCH_CHECKPOINT);
    ck_assert_int_eq (parley_client_resume (checker, 999, NULL), PARLEY_ERR_NO_SUCH_CHECKPOINT);

    //  Back to before the hand-over: the worker's turn again, work empty.
    ck_assert_int_eq (parley_client_resume (checker, handed - 1, &info), PARLEY_OK);
    ck_assert_str_eq (info.holder, "worker");
    s_expect_event (worker, PARLEY_WF_EVENT_TURN, "W1");
    const char *keys [] = { "work" };
    parley_state_t state;
    ck_assert_int_eq (parley_client_get (worker, keys, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (state.count, 1);
    ck_assert_uint_eq (state.entries [0].value_size, 1);
    ck_assert_uint_eq (((const unsigned char *) state.entries [0].value) [0], 0x90);

    //  Done ends it for everyone, with the reason.
    parley_handover_t done = { .status = PARLEY_WF_DONE, .reason = "finished" };
    ck_assert_int_eq (parley_client_handover (worker, &done, &info), PARLEY_OK);
    ck_assert_int_eq (info.status, PARLEY_WF_DONE);
    ck_assert_str_eq (info.reason, "finished");
    s_expect_event (checker, PARLEY_WF_EVENT_DONE, NULL);
    ck_assert_int_eq (parley_client_handover (worker, &done, NULL), PARLEY_ERR_WORKFLOW_ENDED);

    parley_client_destroy (&worker);
    parley_client_destroy (&checker);
    testflow_stop (&broker);
}
END_TEST

//  A client that does not take its events keeps the newest
//  PARLEY_WF_EVENT_QUEUE and counts the rest as dropped.
START_TEST (test_event_queue_bound)
{
    testbroker_t *broker = testflow_start (&testflow_default);
    parley_client_t *worker = s_player (broker, "W1", "worker");
    parley_client_t *checker = s_player (broker, "C1", "checker");
    parley_client_t *watcher = s_player (broker, "Watcher", NULL);
    s_events_live (broker, (parley_client_t *[]) { watcher }, 1);
    int handovers = PARLEY_WF_EVENT_QUEUE + 6;
    for (int i = 0; i < handovers; i++)
        s_handover (i % 2 ? checker : worker, i % 2 ? "issues" : "work",
                    i % 2 ? "worker" : "checker", "x");
    parley_client_stats_t stats = { 0 };
    int64_t until = zclock_mono () + DEADLINE_MS;
    while (stats.workflow_events < (uint64_t) handovers && zclock_mono () < until) {
        parley_client_process (watcher);
        parley_client_counters (watcher, &stats);
        zclock_sleep (20);
    }
    ck_assert_uint_ge (stats.workflow_events, (uint64_t) handovers);
    ck_assert_uint_eq (stats.workflow_dropped, stats.workflow_events - PARLEY_WF_EVENT_QUEUE);
    parley_workflow_event_t event;
    uint64_t taken = 0, last_turn = 0;
    while (parley_client_workflow_event (watcher, &event)) {
        ck_assert_uint_gt (event.turn, last_turn);     //  oldest first
        last_turn = event.turn;
        taken++;
    }
    ck_assert_uint_eq (taken, PARLEY_WF_EVENT_QUEUE);
    ck_assert_uint_eq (last_turn, (uint64_t) handovers + 1);
    parley_client_destroy (&watcher);
    parley_client_destroy (&worker);
    parley_client_destroy (&checker);
    testflow_stop (&broker);
}
END_TEST

START_TEST (test_no_workflow)
{
    testbroker_t *broker = testcheck_start (NULL);
    parley_client_t *client = s_player (broker, "A1", "worker");
    parley_workflow_t info;
    ck_assert_int_eq (parley_client_workflow (client, &info), PARLEY_ERR_NO_WORKFLOW);
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NO_WORKFLOW), "NO_WORKFLOW");
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NOT_TURN_HOLDER), "NOT_TURN_HOLDER");
    ck_assert_str_eq (parley_wf_status_name (PARLEY_WF_REVISION), "revision");
    ck_assert_int_eq (parley_wf_status_parse ("failed"), PARLEY_WF_FAILED);
    ck_assert_int_eq (parley_wf_status_parse ("bogus"), PARLEY_WF_UNSET);
    parley_checkpoint_list_t list;
    ck_assert_int_eq (parley_client_checkpoints (client, &list), PARLEY_ERR_NO_WORKFLOW);
    parley_client_destroy (&client);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("client_workflow");
    TCase *tc = tcase_create ("client_workflow");
    tcase_add_test (tc, test_turns_and_checkpoints);
    tcase_add_test (tc, test_event_queue_bound);
    tcase_add_test (tc, test_no_workflow);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
