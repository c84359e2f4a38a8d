// SPDX-License-Identifier: MIT
/*  check_libparley_nomem - libparley when memory runs out.

    A script that goes over the whole public API against a real broker
    runs once as the reference, then again with the Nth allocation
    libparley makes failing (client/mem.h's test hook), for N = 1, 2, ...
    until a run makes fewer than N. Every request must return what the
    reference got or PARLEY_ERR_NOMEM, nothing may crash or abort, and
    nothing may leak (LSan under SANITIZE=1, valgrind under make
    valgrind). Twice: with only the Nth failing, and with every allocation
    from the Nth on failing (as SQLite's malloc tests do it, transient and
    persistent). And a builder that ran out keeps its refusal.
*/
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "parley/client.h"
#include "client/mem.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testflow.h"
#include "lib/testsuite.h"

//  ---------------------------------------------------------------------
//  What each request returned, by the line it is on: the reference run
//  fills s_ref, the runs with a failing allocation compare with it.

#define MAX_LINE 1024

static int s_ref [MAX_LINE];
static bool s_known [MAX_LINE];
static bool s_recording;
static size_t s_nomem;              //  requests that returned NOMEM
static size_t s_mismatches;         //  requests that returned something else

static int
s_rc (int line, int rc, const char *call)
{
    ck_assert_int_lt (line, MAX_LINE);
    if (s_recording) {
        s_ref [line] = rc;
        s_known [line] = true;
    }
    else
    if (rc == PARLEY_ERR_NOMEM)
        s_nomem++;
    else
    if (!s_known [line] || rc != s_ref [line]) {
        fprintf (stderr, "line %d: %s returned %s, the reference %s\n", line, call,
                 parley_strerror (rc), s_known [line] ? parley_strerror (s_ref [line]) : "-");
        s_mismatches++;
    }
    return rc;
}

#define RC(call) s_rc (__LINE__, (call), #call)
#define OK(call) (RC (call) == PARLEY_OK)

//  Reads every accessor of a mail batch (the values do not matter: a
//  sanitizer or valgrind sees a bad read).
static size_t
s_read_mail (const parley_mail_t *mail)
{
    size_t bytes = 0;
    if (!mail)
        return 0;
    bytes += (size_t) (parley_mail_pending (mail) + parley_mail_acked (mail)
                       + parley_mail_last_seq (mail));
    for (size_t i = 0; i < parley_mail_count (mail); i++) {
        const parley_message_t *m = parley_mail_at (mail, i);
        bytes += strlen (parley_message_from (m)) + strlen (parley_message_to (m))
               + strlen (parley_message_channel (m)) + parley_message_body_size (m)
               + (size_t) (parley_message_seq (m) + parley_message_ts (m));
        if (parley_message_body_size (m))
            bytes += ((const uint8_t *) parley_message_body (m)) [0];
    }
    return bytes;
}

static size_t
s_read_failure (const parley_failure_t *f)
{
    return (size_t) parley_failure_ticket (f) + parley_failure_whole (f)
         + parley_failure_index (f) + (size_t) parley_failure_code (f)
         + strlen (parley_failure_agent (f)) + strlen (parley_failure_message (f));
}

static size_t
s_read_sent (const parley_sent_t *sent)
{
    if (!sent)
        return 0;
    size_t sum = (size_t) parley_sent_batch (sent) + parley_sent_accepted (sent);
    for (size_t i = 0; i < parley_sent_count (sent); i++)
        sum += (size_t) parley_sent_seq (sent, i);
    for (size_t i = 0; i < parley_sent_error_count (sent); i++)
        sum += s_read_failure (parley_sent_error_at (sent, i));
    return sum;
}

static size_t
s_read_observation (const parley_observation_t *o)
{
    if (!o)
        return 0;
    size_t sum = (size_t) (parley_observation_position (o) + parley_observation_x (o)
                           + parley_observation_y (o) + parley_observation_explored (o)
                           + parley_observation_objects_total (o))
               + strlen (parley_observation_outcome (o)) + parley_observation_done (o)
               + (size_t) parley_observation_coverage (o) + parley_observation_image_size (o)
               + strlen (parley_observation_image_type (o));
    for (size_t i = 0; i < parley_observation_object_count (o); i++)
        sum += strlen (parley_observation_object (o, i));
    for (size_t i = 0; i < parley_observation_new_count (o); i++)
        sum += strlen (parley_observation_new_object (o, i));
    return sum;
}

static size_t
s_read_entry (const parley_entry_t *e)
{
    return strlen (parley_entry_key (e)) + strlen (parley_entry_reducer (e))
         + (size_t) parley_entry_seq (e) + parley_entry_value_size (e) + parley_entry_removed (e);
}

static size_t
s_read_workflow (const parley_workflow_t *w)
{
    if (!w)
        return 0;
    return (size_t) parley_workflow_status (w) + strlen (parley_workflow_status_name (w))
         + strlen (parley_workflow_holder (w)) + strlen (parley_workflow_agent (w))
         + (size_t) (parley_workflow_turn (w) + parley_workflow_revisions (w)
                     + parley_workflow_max_revisions (w) + parley_workflow_max_turns (w)
                     + parley_workflow_seq (w) + parley_workflow_checkpoint (w))
         + strlen (parley_workflow_reason (w)) + parley_workflow_paused (w);
}

static size_t
s_read_checkpoint (const parley_checkpoint_t *c)
{
    return (size_t) (parley_checkpoint_number (c) + parley_checkpoint_turn (c)
                     + parley_checkpoint_revisions (c) + parley_checkpoint_bytes (c)
                     + parley_checkpoint_changed (c))
         + strlen (parley_checkpoint_holder (c)) + (size_t) parley_checkpoint_status (c)
         + strlen (parley_checkpoint_status_name (c));
}

//  ---------------------------------------------------------------------
//  The script: two agents, A<run> and B<run> (fresh names each run, so
//  every run finds the broker the same), over every request.

typedef struct {
    parley_outbox_t *out;
    parley_ops_t *ops;
    parley_step_t *step;
    parley_handover_t *handover;
    parley_sent_t *sent;
    parley_mail_t *mail;
    parley_failure_t *failure;
    parley_written_t *written;
    parley_state_t *state;
    parley_observation_t *obs;
    parley_stepped_t *stepped;
    parley_agent_list_t *agents;
    parley_stats_t *stats;
    parley_event_t *event;
    parley_workflow_t *workflow;
    parley_checkpoint_list_t *checkpoints;
    parley_checkpoint_state_t *checkpoint;
    parley_wf_event_t *wf_event;
    char a_id [32], b_id [32], prefix [32], count_key [48], text_key [48];
    size_t sum;                         //  what the readers read
} script_t;

static void
s_builders (script_t *s)
{
    if ((s->out = parley_outbox_new ())) {
        RC (parley_outbox_to (s->out, s->b_id, "one", 3));
        RC (parley_outbox_channel (s->out, "sweep", "two", 3));
        RC (parley_outbox_resolve (s->out, s->b_id, "three", 5));
        s->sum += parley_outbox_count (s->out);
    }
    if ((s->ops = parley_ops_new ())) {
        uint8_t one [9], text [16];
        size_t one_size = parley_pack_int (one, sizeof one, 1);
        size_t text_size = parley_pack_str (text, sizeof text, "swept");
        RC (parley_ops_declare (s->ops, s->count_key, "add"));
        RC (parley_ops_update (s->ops, s->count_key, one, one_size));
        RC (parley_ops_set (s->ops, s->text_key, text, text_size));
        RC (parley_ops_clear (s->ops, s->count_key));
        RC (parley_ops_update (s->ops, s->count_key, one, one_size));
        RC (parley_ops_delete (s->ops, "sweep.none"));
        s->sum += parley_ops_count (s->ops);
    }
    if ((s->step = parley_step_new ())) {
        parley_step_set_number (s->step, 1);
        parley_step_set_ack (s->step, 0);
        RC (parley_outbox_to (parley_step_messages (s->step), s->b_id, "step", 4));
        uint8_t two [9];
        size_t two_size = parley_pack_int (two, sizeof two, 2);
        RC (parley_ops_update (parley_step_ops (s->step), s->count_key, two, two_size));
        RC (parley_step_set_action (s->step, "right"));
        parley_step_set_perceive (s->step, true);
        parley_step_set_fetch (s->step, 4, false);
    }
    if ((s->handover = parley_handover_new ())) {
        uint8_t text [16];
        size_t text_size = parley_pack_str (text, sizeof text, "handed");
        RC (parley_ops_set (parley_handover_ops (s->handover), s->text_key, text, text_size));
        RC (parley_handover_set_next (s->handover, "checker"));
        RC (parley_handover_set_status (s->handover, PARLEY_WF_IN_PROGRESS));
        RC (parley_handover_set_reason (s->handover, "sweep"));
    }
}

static void
s_mail (script_t *s, parley_client_t *a, parley_client_t *b)
{
    if (!s->out)
        return;
    if (OK (parley_client_send (a, s->out, &s->sent)))
        s->sum += s_read_sent (s->sent);
    uint64_t seq = 0;
    if (OK (parley_client_fetch (b, 0, 10, false, &s->mail))) {
        s->sum += s_read_mail (s->mail);
        seq = parley_mail_last_seq (s->mail);
    }
    if (seq) {
        RC (parley_client_ack_nowait (b, seq));
        RC (parley_client_ack (b, seq));
    }
    //  Pushed mail: taken within the credit, each take acknowledging the
    //  one before it.
    if (OK (parley_client_consume (b, 8, 0))
    &&  OK (parley_client_send (a, s->out, NULL))) {
        int64_t until = pclock_mono_ms () + 2000;
        size_t taken = 0;
        while (taken < 3 && pclock_mono_ms () < until) {
            if (parley_client_take_pushed (b, &s->mail))
                taken += parley_mail_count (s->mail);
            else
                parley_client_wait (b, 20);
        }
        s->sum += s_read_mail (s->mail);
    }
    RC (parley_client_consume (b, 0, 0));
    //  Pipelined SENDs, their failures (the resolve to B is one).
    parley_ticket_t ticket = 0;
    RC (parley_client_send_pipelined (a, s->out, &ticket));
    RC (parley_client_send_flush (a));
    while (parley_client_send_failure (a, &s->failure))
        s->sum += s_read_failure (s->failure);
    //  Posted requests, collected by ticket.
    parley_ticket_t post_send = 0, post_fetch = 0, post_write = 0;
    RC (parley_client_post_send (a, s->out, &post_send));
    RC (parley_client_post_fetch (b, 0, 10, false, &post_fetch));
    if (s->ops)
        RC (parley_client_post_write (a, s->ops, &post_write));
    s->sum += parley_client_in_flight (a) + parley_client_in_flight (b);
    if (post_send && OK (parley_client_collect_sent (a, post_send, &s->sent)))
        s->sum += s_read_sent (s->sent);
    if (post_fetch && OK (parley_client_collect_mail (b, post_fetch, &s->mail)))
        s->sum += s_read_mail (s->mail);
    if (post_write && OK (parley_client_collect_written (a, post_write, &s->written)))
        s->sum += (size_t) parley_written_seq (s->written);
}

static void
s_state (script_t *s, parley_client_t *a)
{
    if (s->ops && OK (parley_client_write (a, s->ops, &s->written)))
        s->sum += (size_t) (parley_written_seq (s->written) + parley_written_changed (s->written));
    const char *keys [] = { s->count_key, s->text_key, "sweep.none" };
    if (OK (parley_client_get (a, keys, 3, &s->state))) {
        for (size_t i = 0; i < parley_state_count (s->state); i++)
            s->sum += s_read_entry (parley_state_at (s->state, i));
        if (parley_state_find (s->state, s->text_key))
            s->sum++;
    }
    if (OK (parley_client_snapshot (a, s->prefix, NULL, 1, &s->state)))
        s->sum += (size_t) parley_state_seq (s->state) + parley_state_more (s->state);
    RC (parley_client_replica (a, s->prefix));
    RC (parley_client_replica_add (a, "sweep.none."));
    const void *value = NULL;
    size_t value_size = 0;
    uint64_t seq = 0;
    if (parley_client_replica_get (a, s->text_key, &value, &value_size, &seq))
        s->sum += value_size;
    s->sum += parley_client_replica_size (a);
}

static void
s_world (script_t *s, parley_client_t *a)
{
    if (OK (parley_client_perceive (a, &s->obs)))
        s->sum += s_read_observation (s->obs);
    if (OK (parley_client_act (a, "left", 0, &s->obs)))
        s->sum += s_read_observation (s->obs);
    if (s->step && OK (parley_client_step (a, s->step, &s->stepped))) {
        s->sum += (size_t) (parley_stepped_step (s->stepped) + parley_stepped_acked (s->stepped))
                + parley_stepped_replayed (s->stepped)
                + s_read_sent (parley_stepped_sent (s->stepped))
                + s_read_observation (parley_stepped_observation (s->stepped))
                + s_read_mail (parley_stepped_mail (s->stepped))
                + (size_t) parley_stepped_ops_code (s->stepped)
                + strlen (parley_stepped_ops_message (s->stepped))
                + (size_t) parley_stepped_action_code (s->stepped)
                + strlen (parley_stepped_action_message (s->stepped));
        if (parley_stepped_written (s->stepped))
            s->sum += (size_t) parley_written_changed (parley_stepped_written (s->stepped));
    }
}

static void
s_broker (script_t *s, parley_client_t *a)
{
    uint64_t report [PARLEY_MODEL_FIELDS] = { [PARLEY_MODEL_CALLS] = 3, [PARLEY_MODEL_OK] = 2 };
    parley_client_set_report (a, report, PARLEY_MODEL_FIELDS);
    RC (parley_client_heartbeat (a));
    if (OK (parley_client_agents (a, &s->agents))) {
        for (size_t i = 0; i < parley_agent_list_count (s->agents); i++) {
            const parley_agent_t *agent = parley_agent_list_at (s->agents, i);
            s->sum += strlen (parley_agent_name (agent)) + parley_agent_online (agent)
                    + (size_t) (parley_agent_idle_ms (agent) + parley_agent_pending (agent)
                                + parley_agent_unacked (agent) + parley_agent_inbox_bytes (agent)
                                + parley_agent_step (agent) + parley_agent_acts (agent)
                                + parley_agent_model (agent, PARLEY_MODEL_CALLS))
                    + parley_agent_model_reported (agent);
            for (size_t c = 0; c < parley_agent_cap_count (agent); c++)
                s->sum += strlen (parley_agent_cap (agent, c));
        }
        if (parley_agent_list_find (s->agents, s->a_id))
            s->sum++;
    }
    if (OK (parley_client_stats (a, &s->stats))) {
        for (size_t i = 0; i < parley_stats_count (s->stats); i++) {
            const parley_stat_t *stat = parley_stats_at (s->stats, i);
            s->sum += strlen (parley_stat_name (stat)) + (size_t) parley_stat_kind (stat)
                    + (size_t) parley_stat_uint (stat) + (size_t) parley_stat_int (stat)
                    + (size_t) parley_stat_num (stat) + strlen (parley_stat_text (stat))
                    + parley_stat_value_size (stat) + strlen (parley_stat_unit (stat))
                    + strlen (parley_stat_help (stat));
        }
        s->sum += (size_t) parley_stats_uint (s->stats, "uptime_ms")
                + (size_t) parley_stats_num (s->stats, "uptime_ms")
                + (parley_stats_find (s->stats, "sends_parked") != NULL);
    }
    //  Events: whatever came (subscriptions go live asynchronously).
    parley_client_process (a);
    parley_client_keepalive (a);
    parley_client_wait (a, 0);
    s->sum += (size_t) parley_client_take_mail (a) + (size_t) parley_client_fd (a);
    while (parley_client_event (a, &s->event))
        s->sum += strlen (parley_event_topic (s->event)) + strlen (parley_event_type (s->event))
                + parley_event_body_size (s->event)
                + (size_t) parley_event_received_us (s->event);
    parley_client_unsubscribe (a, "agent.");
    for (int counter = 0; counter < PARLEY_COUNTERS; counter++)
        s->sum += (size_t) parley_client_counter (a, (parley_counter_t) counter);
    s->sum += strlen (parley_client_error_text (a)) + (size_t) parley_client_epoch (a)
            + parley_client_stopped (a);
}

static void
s_workflow (script_t *s, parley_client_t *a)
{
    if (OK (parley_client_workflow (a, &s->workflow)))
        s->sum += s_read_workflow (s->workflow);
    //  Not the turn holder (W1 is): refused, after the whole round trip.
    if (s->handover)
        RC (parley_client_handover (a, s->handover, &s->workflow));
    if (OK (parley_client_checkpoints (a, &s->checkpoints))) {
        for (size_t i = 0; i < parley_checkpoint_list_count (s->checkpoints); i++)
            s->sum += s_read_checkpoint (parley_checkpoint_list_at (s->checkpoints, i));
        s->sum += (size_t) parley_checkpoint_list_dropped (s->checkpoints);
    }
    if (OK (parley_client_checkpoint (a, 1, &s->checkpoint))) {
        s->sum += (size_t) parley_checkpoint_state_number (s->checkpoint)
                + parley_checkpoint_state_has_since (s->checkpoint)
                + (size_t) parley_checkpoint_state_since (s->checkpoint)
                + s_read_checkpoint (parley_checkpoint_state_info (s->checkpoint));
        for (size_t i = 0; i < parley_checkpoint_state_count (s->checkpoint); i++)
            s->sum += s_read_entry (parley_checkpoint_state_at (s->checkpoint, i));
    }
    RC (parley_client_checkpoint_diff (a, 1, 1, &s->checkpoint));
    RC (parley_client_resume (a, 999, &s->workflow));
    while (parley_client_workflow_event (a, &s->wf_event))
        s->sum += (size_t) parley_wf_event_kind (s->wf_event)
                + strlen (parley_wf_event_agent (s->wf_event))
                + strlen (parley_wf_event_holder (s->wf_event))
                + strlen (parley_wf_event_name (s->wf_event))
                + strlen (parley_wf_event_reason (s->wf_event))
                + (size_t) (parley_wf_event_turn (s->wf_event)
                            + parley_wf_event_revisions (s->wf_event))
                + strlen (parley_wf_event_status_name (s->wf_event))
                + (size_t) parley_wf_event_status (s->wf_event)
                + parley_wf_event_has_checkpoint (s->wf_event)
                + (size_t) parley_wf_event_checkpoint (s->wf_event);
}

static void
s_script_destroy (script_t *s)
{
    parley_outbox_destroy (&s->out);
    parley_ops_destroy (&s->ops);
    parley_step_destroy (&s->step);
    parley_handover_destroy (&s->handover);
    parley_sent_destroy (&s->sent);
    parley_mail_destroy (&s->mail);
    parley_failure_destroy (&s->failure);
    parley_written_destroy (&s->written);
    parley_state_destroy (&s->state);
    parley_observation_destroy (&s->obs);
    parley_stepped_destroy (&s->stepped);
    parley_agent_list_destroy (&s->agents);
    parley_stats_destroy (&s->stats);
    parley_event_destroy (&s->event);
    parley_workflow_destroy (&s->workflow);
    parley_checkpoint_list_destroy (&s->checkpoints);
    parley_checkpoint_state_destroy (&s->checkpoint);
    parley_wf_event_destroy (&s->wf_event);
}

//  A client with every option set; NULL when it could not be made.
static parley_client_t *
s_client (const char *router, const char *id)
{
    parley_client_t *client = parley_client_new (router, id);
    if (!client)
        return NULL;
    RC (parley_client_add_cap (client, "role:checker"));
    parley_client_set_timeout (client, 5000, 100);
    parley_client_set_attempts (client, 2);
    parley_client_set_connect_attempts (client, 2);
    parley_client_dedup (client, true);
    parley_client_ack_policy (client, PARLEY_ACK_ON_TAKE);
    parley_client_set_send_window (client, 8, 1 << 16);
    parley_client_set_send_wait (client, 0);
    parley_client_workflow_events (client, true);
    RC (parley_client_subscribe (client, "agent."));
    return client;
}

static size_t
s_script (const char *router, uint64_t run)
{
    script_t s = { 0 };
    snprintf (s.a_id, sizeof s.a_id, "A%llu", (unsigned long long) run);
    snprintf (s.b_id, sizeof s.b_id, "B%llu", (unsigned long long) run);
    snprintf (s.prefix, sizeof s.prefix, "sweep.%llu.", (unsigned long long) run);
    snprintf (s.count_key, sizeof s.count_key, "%scount", s.prefix);
    snprintf (s.text_key, sizeof s.text_key, "%stext", s.prefix);
    int major, minor, patch;
    parley_version (&major, &minor, &patch);
    s.sum += strlen (parley_strerror (PARLEY_ERR_NOMEM)) + (size_t) major;

    parley_client_t *a = s_client (router, s.a_id);
    parley_client_t *b = s_client (router, s.b_id);
    if (a && b && OK (parley_client_connect (b)) && OK (parley_client_connect (a))) {
        const parley_welcome_t *w = parley_client_welcome (a);
        s.sum += strlen (parley_welcome_pub (w)) + strlen (parley_welcome_tap (w))
               + (size_t) (parley_welcome_heartbeat_ms (w) + parley_welcome_liveness_ms (w)
                           + parley_welcome_max_body (w) + parley_welcome_max_batch (w)
                           + parley_welcome_acked (w) + parley_welcome_mail_seq (w)
                           + parley_welcome_state_seq (w) + parley_welcome_origin (w)
                           + parley_welcome_world_width (w) + parley_welcome_world_height (w)
                           + parley_welcome_objects_total (w) + parley_welcome_explored (w))
               + strlen (parley_welcome_world_kind (w)) + (size_t) parley_welcome_coverage (w)
               + parley_welcome_done (w);
        bool listening = OK (parley_client_listen (b, "sweep"));
        s_builders (&s);
        s_mail (&s, a, b);
        s_state (&s, a);
        s_world (&s, a);
        s_broker (&s, a);
        s_workflow (&s, a);
        if (listening)
            RC (parley_client_unlisten (b, "sweep"));
        RC (parley_client_bye (a, true));
        RC (parley_client_bye (b, true));
    }
    s_script_destroy (&s);
    parley_client_destroy (&a);
    parley_client_destroy (&b);
    return s.sum;
}

//  The reference run, then one run per N. Returns how many runs failed
//  an allocation.
static uint64_t
s_sweep (bool sticky)
{
    //  W1 holds the turn: the script's HANDOVER is refused, every run
    //  alike. It says nothing after its HELLO, so its liveness is made to
    //  outlast the sweep (a holder gone silent ends the workflow).
    testbroker_t *broker = testflow_start_with (&testflow_default, "--liveness-ms", "3600000");
    const char *router = testbroker_router (broker);
    testclient_t *holder = testflow_agent (broker, "W1", "worker");
    memset (s_known, 0, sizeof s_known);
    s_recording = true;
    client_mem_fail_at (0, 0);
    s_script (router, 0);
    uint64_t allocations = client_mem_count ();
    ck_assert_uint_gt (allocations, 100);
    s_recording = false;
    s_nomem = s_mismatches = 0;
    uint64_t runs = 0;
    int64_t started = pclock_mono_ms ();
    for (uint64_t n = 1; ; n++) {
        client_mem_fail_at (n, sticky);
        s_script (router, n);
        uint64_t failed = client_mem_failed ();
        client_mem_fail_at (0, 0);
        if (!failed)
            break;
        ck_assert (sticky || failed == 1);
        runs++;
    }
    fprintf (stderr, "%s sweep: %llu allocations in the reference run, %llu runs with one "
             "failing, %zu requests answered NOMEM, %lld ms\n",
             sticky ? "persistent" : "transient", (unsigned long long) allocations,
             (unsigned long long) runs, s_nomem, (long long) (pclock_mono_ms () - started));
    if (s_mismatches)
        testbroker_log (broker);
    ck_assert_msg (s_mismatches == 0, "%zu requests returned neither the reference's code "
                   "nor NOMEM (above)", s_mismatches);
    ck_assert_uint_gt (s_nomem, 0);
    testclient_destroy (&holder);
    testflow_stop (&broker);
    return runs;
}

START_TEST (test_nomem_transient)
{
    ck_assert_uint_gt (s_sweep (false), 100);
}
END_TEST

START_TEST (test_nomem_persistent)
{
    ck_assert_uint_gt (s_sweep (true), 100);
}
END_TEST

//  A builder that runs out keeps NOMEM, and the request returns it
//  without sending anything.
START_TEST (test_nomem_sticks)
{
    parley_outbox_t *out = parley_outbox_new ();
    ck_assert_ptr_nonnull (out);
    client_mem_fail_at (1, 1);
    char body [4096] = "";
    parley_err_t rc = PARLEY_OK;
    for (int i = 0; i < 1000 && rc == PARLEY_OK; i++)
        rc = parley_outbox_to (out, "Someone", body, sizeof body);
    client_mem_fail_at (0, 0);
    ck_assert_int_eq (rc, PARLEY_ERR_NOMEM);
    //  The refusal is kept: with memory again, a message can be added, but
    //  the outbox still is not sent (one of its messages is missing).
    ck_assert_int_eq (parley_outbox_to (out, "Someone", "x", 1), PARLEY_OK);
    parley_client_t *client = parley_client_new ("ipc:///nonexistent/parley", "Nobody");
    ck_assert_ptr_nonnull (client);
    //  A request that fails makes no result: nothing to free on the error path.
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (client, out, &sent), PARLEY_ERR_NOMEM);
    ck_assert_ptr_null (sent);
    parley_outbox_reset (out);
    ck_assert_int_eq (parley_outbox_to (out, "Someone", "x", 1), PARLEY_OK);
    //  No memory for the client itself: NULL, nothing left behind.
    client_mem_fail_at (1, 1);
    parley_client_t *none = parley_client_new ("ipc:///nonexistent/parley", "Nobody");
    client_mem_fail_at (0, 0);
    ck_assert_ptr_null (none);
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NOMEM), "NOMEM");
    parley_client_destroy (&client);
    parley_outbox_destroy (&out);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("libparley_nomem");
    TCase *tc = tcase_create ("nomem");
    tcase_set_timeout (tc, 600);
    tcase_add_test (tc, test_nomem_sticks);
    tcase_add_test (tc, test_nomem_transient);
    tcase_add_test (tc, test_nomem_persistent);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
