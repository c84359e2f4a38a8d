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
            parley_event_t *event = NULL;
            while (parley_client_event (players [i], &event))
                if (!seen [i]) {
                    seen [i] = true;
                    left--;
                }
            parley_event_destroy (&event);
        }
    }
    for (size_t i = 0; i < count; i++) {
        parley_client_unsubscribe (players [i], "agent.EvProbe");
        parley_event_t *event = NULL;
        while (parley_client_event (players [i], &event))
            ;
        parley_event_destroy (&event);
    }
}

//  Waits for an event of `kind` naming `agent` (NULL: any); earlier ones
//  are skipped.
static void
s_expect_event (parley_client_t *client, parley_wf_event_kind_t kind, const char *agent)
{
    int64_t until = zclock_mono () + DEADLINE_MS;
    parley_wf_event_t *event = NULL;
    while (zclock_mono () < until) {
        while (parley_client_workflow_event (client, &event))
            if (parley_wf_event_kind (event) == kind
            &&  (!agent || streq (parley_wf_event_agent (event), agent))) {
                parley_wf_event_destroy (&event);
                return;
            }
        parley_client_wait (client, 200);
    }
    parley_wf_event_destroy (&event);
    ck_abort_msg ("no %d event for %s", kind, agent ? agent : "anyone");
}

//  HANDOVER to `next` appending `value` to `key` (each role writes its own),
//  into *info_p.
static void
s_handover (parley_client_t *client, const char *key, const char *next, const char *value,
            parley_workflow_t **info_p)
{
    char packed [64];
    size_t size = parley_pack_str (packed + 1, sizeof packed - 1, value);
    packed [0] = (char) 0x91;                       //  an array of one str
    parley_handover_t *handover = parley_handover_new ();
    parley_ops_update (parley_handover_ops (handover), key, packed, size + 1);
    parley_handover_set_next (handover, next);
    ck_assert_int_eq (parley_client_handover (client, handover, info_p), PARLEY_OK);
    parley_handover_destroy (&handover);
}

//  A HANDOVER with only a next role and a status.
static parley_err_t
s_hand (parley_client_t *client, const char *next, parley_wf_status_t status)
{
    parley_handover_t *handover = parley_handover_new ();
    parley_handover_set_next (handover, next);
    parley_handover_set_status (handover, status);
    parley_err_t rc = parley_client_handover (client, handover, NULL);
    parley_handover_destroy (&handover);
    return rc;
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

    parley_workflow_t *info = NULL;
    ck_assert_int_eq (parley_client_workflow (checker, &info), PARLEY_OK);
    ck_assert_int_eq (parley_workflow_status (info), PARLEY_WF_IN_PROGRESS);
    ck_assert_str_eq (parley_workflow_status_name (info), "in_progress");
    ck_assert_str_eq (parley_workflow_holder (info), "worker");
    ck_assert_str_eq (parley_workflow_agent (info), "W1");
    ck_assert_uint_eq (parley_workflow_turn (info), 1);
    ck_assert_uint_eq (parley_workflow_max_revisions (info), 3);
    ck_assert_uint_eq (parley_workflow_max_turns (info), 100);
    ck_assert_str_eq (parley_workflow_reason (info), "");

    //  Typed refusals: not the holder; bad arguments never leave the client.
    ck_assert_int_eq (s_hand (checker, "worker", PARLEY_WF_UNSET), PARLEY_ERR_NOT_TURN_HOLDER);
    ck_assert_int_eq (s_hand (worker, "checker", (parley_wf_status_t) 99), PARLEY_ERR_INVALID);
    parley_handover_t *bad_op = parley_handover_new ();
    parley_ops_update (parley_handover_ops (bad_op), "work", NULL, 0);
    parley_handover_set_next (bad_op, "checker");
    ck_assert_int_eq (parley_client_handover (worker, bad_op, NULL), PARLEY_ERR_INVALID);
    parley_handover_destroy (&bad_op);
    ck_assert_int_eq (s_hand (worker, "no such role!", PARLEY_WF_UNSET), PARLEY_ERR_INVALID);
    //  The broker's check: an unknown role.
    ck_assert_int_eq (s_hand (worker, "nobody", PARLEY_WF_UNSET), PARLEY_ERR_BAD_FIELD);

    s_handover (worker, "work", "checker", "draft", &info);
    ck_assert_str_eq (parley_workflow_holder (info), "checker");
    ck_assert_str_eq (parley_workflow_agent (info), "C1");
    ck_assert_uint_eq (parley_workflow_turn (info), 2);
    uint64_t handed = parley_workflow_checkpoint (info);
    s_expect_event (checker, PARLEY_WF_EVENT_TURN, "C1");

    parley_checkpoint_list_t *list = NULL;
    ck_assert_int_eq (parley_client_checkpoints (checker, &list), PARLEY_OK);
    size_t count = parley_checkpoint_list_count (list);
    ck_assert_uint_ge (count, 2);
    const parley_checkpoint_t *last = parley_checkpoint_list_at (list, count - 1);
    ck_assert_uint_eq (parley_checkpoint_number (last), handed);
    ck_assert_str_eq (parley_checkpoint_holder (last), "checker");
    ck_assert_int_eq (parley_checkpoint_status (last), PARLEY_WF_IN_PROGRESS);
    ck_assert_uint_eq (parley_checkpoint_number (parley_checkpoint_list_at (list, 0)), 0);
    ck_assert_uint_eq (parley_checkpoint_list_dropped (list), 0);
    parley_checkpoint_list_destroy (&list);

    //  What the hand-over changed: work, and the turn's keys.
    parley_checkpoint_state_t *diff = NULL;
    ck_assert_int_eq (parley_client_checkpoint_diff (checker, handed, handed - 1, &diff),
                      PARLEY_OK);
    ck_assert (parley_checkpoint_state_has_since (diff));
    ck_assert_uint_eq (parley_checkpoint_state_since (diff), handed - 1);
    ck_assert_uint_eq (parley_checkpoint_number (parley_checkpoint_state_info (diff)), handed);
    bool saw_work = false, saw_holder = false;
    for (size_t i = 0; i < parley_checkpoint_state_count (diff); i++) {
        const parley_entry_t *entry = parley_checkpoint_state_at (diff, i);
        if (streq (parley_entry_key (entry), "work")) {
            saw_work = true;
            ck_assert_str_eq (parley_entry_reducer (entry), "append");
            const unsigned char want [] = { 0x91, 0xa5, 'd', 'r', 'a', 'f', 't' };
            ck_assert_uint_eq (parley_entry_value_size (entry), sizeof want);
            ck_assert (memcmp (parley_entry_value (entry), want, sizeof want) == 0);
        }
        saw_holder |= streq (parley_entry_key (entry), "current_agent");
    }
    ck_assert (saw_work && saw_holder);
    parley_checkpoint_state_t *whole = NULL;
    ck_assert_int_eq (parley_client_checkpoint (checker, 0, &whole), PARLEY_OK);
    ck_assert (!parley_checkpoint_state_has_since (whole));
    ck_assert_uint_gt (parley_checkpoint_state_count (whole), 0);
    ck_assert_int_eq (parley_client_checkpoint (checker, 999, &whole),
                      PARLEY_ERR_NO_SUCH_CHECKPOINT);
    ck_assert_int_eq (parley_client_resume (checker, 999, NULL), PARLEY_ERR_NO_SUCH_CHECKPOINT);
    parley_checkpoint_state_destroy (&whole);
    parley_checkpoint_state_destroy (&diff);

    //  Back to before the hand-over: the worker's turn again, work empty.
    ck_assert_int_eq (parley_client_resume (checker, handed - 1, &info), PARLEY_OK);
    ck_assert_str_eq (parley_workflow_holder (info), "worker");
    s_expect_event (worker, PARLEY_WF_EVENT_TURN, "W1");
    const char *keys [] = { "work" };
    parley_state_t *state = NULL;
    ck_assert_int_eq (parley_client_get (worker, keys, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (parley_state_count (state), 1);
    const parley_entry_t *work = parley_state_at (state, 0);
    ck_assert_uint_eq (parley_entry_value_size (work), 1);
    ck_assert_uint_eq (((const unsigned char *) parley_entry_value (work)) [0], 0x90);
    parley_state_destroy (&state);

    //  Done ends it for everyone, with the reason.
    parley_handover_t *done = parley_handover_new ();
    parley_handover_set_status (done, PARLEY_WF_DONE);
    parley_handover_set_reason (done, "finished");
    ck_assert_int_eq (parley_client_handover (worker, done, &info), PARLEY_OK);
    ck_assert_int_eq (parley_workflow_status (info), PARLEY_WF_DONE);
    ck_assert_str_eq (parley_workflow_reason (info), "finished");
    s_expect_event (checker, PARLEY_WF_EVENT_DONE, NULL);
    ck_assert_int_eq (parley_client_handover (worker, done, NULL), PARLEY_ERR_WORKFLOW_ENDED);
    parley_handover_destroy (&done);
    parley_workflow_destroy (&info);

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
    parley_workflow_t *info = NULL;
    for (int i = 0; i < handovers; i++)
        s_handover (i % 2 ? checker : worker, i % 2 ? "issues" : "work",
                    i % 2 ? "worker" : "checker", "x", &info);
    parley_workflow_destroy (&info);
    int64_t until = zclock_mono () + DEADLINE_MS;
    while (parley_client_counter (watcher, PARLEY_COUNTER_WORKFLOW_EVENTS) < (uint64_t) handovers
           && zclock_mono () < until) {
        parley_client_process (watcher);
        zclock_sleep (20);
    }
    uint64_t events = parley_client_counter (watcher, PARLEY_COUNTER_WORKFLOW_EVENTS);
    ck_assert_uint_ge (events, (uint64_t) handovers);
    ck_assert_uint_eq (parley_client_counter (watcher, PARLEY_COUNTER_WORKFLOW_DROPPED),
                       events - PARLEY_WF_EVENT_QUEUE);
    parley_wf_event_t *event = NULL;
    uint64_t taken = 0, last_turn = 0;
    while (parley_client_workflow_event (watcher, &event)) {
        ck_assert_uint_gt (parley_wf_event_turn (event), last_turn);     //  oldest first
        last_turn = parley_wf_event_turn (event);
        taken++;
    }
    parley_wf_event_destroy (&event);
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
    parley_workflow_t *info = NULL;
    ck_assert_int_eq (parley_client_workflow (client, &info), PARLEY_ERR_NO_WORKFLOW);
    parley_workflow_destroy (&info);
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NO_WORKFLOW), "NO_WORKFLOW");
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NOT_TURN_HOLDER), "NOT_TURN_HOLDER");
    ck_assert_str_eq (parley_wf_status_name (PARLEY_WF_REVISION), "revision");
    ck_assert_int_eq (parley_wf_status_parse ("failed"), PARLEY_WF_FAILED);
    ck_assert_int_eq (parley_wf_status_parse ("bogus"), PARLEY_WF_UNSET);
    parley_checkpoint_list_t *list = NULL;
    ck_assert_int_eq (parley_client_checkpoints (client, &list), PARLEY_ERR_NO_WORKFLOW);
    parley_checkpoint_list_destroy (&list);
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
