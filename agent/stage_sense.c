// SPDX-License-Identifier: MIT
/*  stage_sense - the stages that look: Perception and Communication.

    They send nothing in a running step: the previous step's STEP
    (stage_act.c) brought the observation after its move and the mail,
    the shared-state keys come from the client's replica (kept by
    STATE_UPDATE events), and the team list from AGENT_EVENTs. Only what
    the last STEP did not bring is asked for: on the first step (or after
    a STEP that failed) Perception sends a STEP of its own that perceives
    and fetches (acknowledging what the previous run committed), and
    Communication reads the team list with AGENTS on the first step, after
    a reconnect or lost events, or when mail comes from a sender the list
    does not know. Communication then updates the team facts
    (team_facts.h) that every policy is given. With --team-size N the first Perception waits until N
    agents are online, so a team starts together. Both
    diff their connectors into the step's observations; Communication, the
    last of the looking stages, then closes the previous action's turn in
    AgentMemory: only now has every connector reported what it caused.

    A failed capture is retried (stage.h); if it still fails the stage goes
    on with the previous state (the fallback), because an agent that stops
    whenever the broker hiccups is worse than one that acts on a step-old
    view.
*/
#include <assert.h>
#include "agent_state.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "pclock.h"
#include "plog.h"
#include "textbuf.h"

//  While waiting for the team the AGENT_EVENTs say who joins; AGENTS is
//  asked once at the start and again this often, in case an event was
//  missed (the subscription reaches the broker a moment after HELLO).
#define TEAM_RECHECK_MS 2000

static void s_team_present (agent_parts_t *p, int64_t window_ms, zhashx_t *present);

// ---------------------------------------------------------------------------
//  Perception

typedef struct {
    agent_parts_t *parts;
    perceived_t *out;
} perception_t;

size_t
agent_fetch_size (const agent_parts_t *p)
{
    return p->no_messages || !p->mailbox? 0: MAILBOX_MAX_BATCH;
}

uint64_t
agent_ack (const agent_parts_t *p)
{
    return p->mailbox? conn_mailbox_committed (p->mailbox): 0;
}

//  The view and the mail when the last STEP did not bring them: one STEP
//  without a step number (so a number the previous run used is not taken
//  for a resend), which acknowledges what was committed, perceives and
//  reads the mail from the acknowledged position (a plain read: what a
//  failed STEP handed out comes again, the duplicates are left out).
static int
s_look (agent_parts_t *p, char *err, size_t err_size)
{
    if (!p->link)
        return connector_capture (p->world, err, err_size);
    parley_step_t *look = parley_step_new ();
    parley_stepped_t *got = NULL;
    if (!look) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    parley_step_set_ack (look, agent_ack (p));
    parley_step_set_perceive (look, true);
    parley_step_set_fetch (look, agent_fetch_size (p), false);
    parley_err_t rc = parley_client_step (p->link, look, &got);
    parley_step_destroy (&look);
    if (rc != PARLEY_OK) {
        snprintf (err, err_size, "%s: %s", parley_strerror (rc),
                  parley_client_error_text (p->link));
        parley_stepped_destroy (&got);
        return -1;
    }
    if (parley_stepped_mail (got) && p->mailbox)
        conn_mailbox_stage (p->mailbox, parley_stepped_mail (got));
    const parley_observation_t *observation = parley_stepped_observation (got);
    if (!observation) {
        snprintf (err, err_size, "%s", parley_stepped_action_message (got));
        parley_stepped_destroy (&got);
        return -1;
    }
    conn_world_feed_observation (p->world, observation);
    parley_stepped_destroy (&got);
    return 0;
}

static stage_outcome_t
s_perception_try (void *arg)
{
    perception_t *self = (perception_t *) arg;
    char err[256];
    if (!self->out->viewed && s_look (self->parts, err, sizeof (err)) != 0) {
        plog_warn ("perceive failed: %s", err);
        return STAGE_RETRY;
    }
    self->out->viewed = false;
    if (connector_capture (self->parts->state, err, sizeof (err)) != 0)
        plog_warn ("reading shared state failed: %s", err);
    return STAGE_OK;
}

static stage_outcome_t
s_perception_fallback (void *arg)
{
    perception_t *self = (perception_t *) arg;
    if (!conn_world_view (self->parts->world)->valid)
        return STAGE_FAILED;
    plog_warn ("step %" PRIu64 ": acting on the previous view of the world", self->out->step);
    return STAGE_FALLBACK;
}

//  Where we and our teammates stand now: visited by the team.
static void
s_mark_visited (agent_parts_t *p, const world_view_t *seen)
{
    if (!p->map)
        return;
    teammap_set_shape (p->map, conn_world_width (p->world), conn_world_height (p->world));
    if (seen->valid)
        teammap_visit (p->map, seen->position);
    const char *agent;
    uint64_t position;
    for (size_t i = 0; conn_state_agent_at (p->state, i, &agent, &position); i++)
        teammap_visit (p->map, position);
}

//  visible_caption: the caption model's sentence for the view's image
//  (cached by image, so a view seen before costs nothing). A failure is
//  logged and the step goes on without a caption.
static void
s_caption (agent_parts_t *p, perceived_t *out)
{
    zstr_free (&out->visible_caption);
    const world_image_view_t *image = conn_world_image (p->world);
    if (!p->captioner || !image)
        return;
    char err[256];
    const char *caption = captioner_caption (p->captioner, image, err, sizeof (err));
    if (caption)
        out->visible_caption = strdup (caption);
    else
        plog_debug ("step %" PRIu64 ": no caption for the view: %s", out->step, err);
}

//  A teammate's AGENT_EVENT while waiting: one that joins is present;
//  one that leaves after it was seen stays counted (it may have done its
//  steps already), one forgotten is gone, as from the AGENTS list.
static void
s_team_wait_event (const agent_parts_t *p, zhashx_t *present, const parley_event_t *event)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    char name[PROTO_MAX_NAME + 1], what[32];
    if (msgpack_unpack_next (&unpacked, (const char *) parley_event_body (event),
                             parley_event_body_size (event), NULL)
        == MSGPACK_UNPACK_SUCCESS
    &&  pobj_strcpy (&unpacked.data, "agent", name, sizeof (name))
    &&  pobj_strcpy (&unpacked.data, "event", what, sizeof (what)) && !streq (name, p->id)) {
        if (streq (what, "joined"))
            zhashx_update (present, name, (void *) 1);
        else
        if (streq (what, "forgotten"))
            zhashx_delete (present, name);
    }
    msgpack_unpacked_destroy (&unpacked);
}

//  "Agent2, Agent3" (at most a line's worth) for the log.
static void
s_team_names (zhashx_t *present, char *buf, size_t size)
{
    buf[0] = 0;
    size_t used = 0;
    for (void *item = zhashx_first (present); item && used + 1 < size;
         item = zhashx_next (present)) {
        const char *name = (const char *) zhashx_cursor (present);
        used += (size_t) snprintf (buf + used, size - used, "%s%s", used? ", ": "", name);
    }
}

//  Until the team is online, a signal, or --team-wait-ms: a teammate that
//  never comes (or an id that is not an agent, counted by mistake, that
//  left) must not keep us waiting for ever without a word. Who is there
//  comes from one AGENTS, then from the AGENT_EVENTs this client already
//  subscribed to: the wait sleeps until one comes (parley_client_wait
//  wakes for it), and asks AGENTS again only every TEAM_RECHECK_MS.
static void
s_wait_for_team (agent_parts_t *p)
{
    int64_t started = pclock_mono_ms ();
    zhashx_t *present = zhashx_new ();
    s_team_present (p, pclock_mono_ms () - p->connected_ms, present);
    int64_t recheck = pclock_mono_ms () + TEAM_RECHECK_MS;
    while (!(p->stop && *p->stop)) {
        parley_event_t *event = NULL;
        while (parley_client_event (p->link, &event))
            if (streq (parley_event_type (event), "AGENT_EVENT"))
                s_team_wait_event (p, present, event);
        parley_event_destroy (&event);
        int64_t now = pclock_mono_ms ();
        if (now >= recheck) {
            s_team_present (p, now - p->connected_ms, present);
            recheck = now + TEAM_RECHECK_MS;
        }
        if (zhashx_size (present) + 1 >= p->team_size)
            break;
        int64_t wait = recheck - now;
        if (p->team_wait_ms > 0) {
            int64_t left = started + p->team_wait_ms - now;
            if (left <= 0) {
                char names[256];
                s_team_names (present, names, sizeof (names));
                plog_warn ("starting with %zu of the %" PRIu64 " agents of --team-size after "
                           "waiting %" PRId64 " ms (--team-wait-ms)%s%s", zhashx_size (present) + 1,
                           p->team_size, p->team_wait_ms, *names? "; here: ": "", names);
                break;
            }
            wait = left < wait? left: wait;
        }
        parley_client_wait (p->link, wait);
    }
    zhashx_destroy (&present);
}

stage_outcome_t
stage_perception (agent_parts_t *p, perceived_t *out, agent_counters_t *counts)
{
    assert (p && out && counts);
    out->step++;
    out->start_us = pclock_mono_us ();
    if (!out->obs)
        out->obs = connector_observation_list ();
    //  A team that starts together: steps are only comparable between
    //  agents (and runs) when nobody had a head start.
    if (out->step == 1 && p->team_size > 1 && p->link)
        s_wait_for_team (p);
    perception_t self = { p, out };
    stage_outcome_t outcome = stage_attempt (STAGE_PERCEPTION, p->stats, s_perception_try,
                                             s_perception_fallback, &self);
    if (outcome == STAGE_FAILED)
        return outcome;
    connector_observe (p->world, out->obs);
    //  The state's and the mail's observations only ever go to AgentMemory:
    //  for a policy that does not read it they are not made (the state's
    //  values are then never rendered as text at all).
    if (policy_reads_context (p->policy))
        connector_observe (p->state, out->obs);
    out->seen = *conn_world_view (p->world);
    s_mark_visited (p, &out->seen);
    s_caption (p, out);
    counts->coverage = out->seen.coverage;
    return outcome;
}

// ---------------------------------------------------------------------------
//  Communication

bool
agent_team_has (const agent_team_t *team, const char *name)
{
    if (team->index)
        return zhashx_lookup (team->index, name) != NULL;
    for (size_t i = 0; i < team->count; i++)
        if (streq (team->names[i], name))
            return true;
    return false;
}

//  The list's names into its index (every message's sender is looked up).
static void
s_team_index (agent_team_t *team)
{
    if (!team->index)
        team->index = zhashx_new ();
    zhashx_purge (team->index);
    for (size_t i = 0; i < team->count; i++)
        zhashx_update (team->index, team->names[i], (void *) 1);
}

//  The online teammates go to the team facts, which releases the claims
//  of the others.
static void
s_team_online (agent_parts_t *p, const agent_team_t *team)
{
    const char *online[AGENT_MAX_TEAM];
    size_t online_count = 0;
    for (size_t i = 0; i < team->count; i++)
        if (team->online[i])
            online[online_count++] = team->names[i];
    if (p->facts)
        team_facts_set_online (p->facts, online, online_count);
}

static void
s_team_mark (const agent_parts_t *p, parley_client_t *link, agent_team_t *team)
{
    team->listed = true;
    team->listed_epoch = parley_client_epoch (link);
    team->listed_dropped = parley_client_counter (link, PARLEY_COUNTER_EVENTS_DROPPED);
}

//  AGENTS -> the team list (every registered agent but us). The agent.
//  events (subscribed at connect) keep it from then on.
static void
s_refresh_team (agent_parts_t *p, agent_team_t *team)
{
    parley_client_t *link = p->link;
    //  Events queued before the list are older than it.
    parley_event_t *event = NULL;
    while (parley_client_event (link, &event))
        ;
    parley_event_destroy (&event);
    parley_agent_list_t *list = NULL;
    if (parley_client_agents (link, &list) != PARLEY_OK) {
        plog_debug ("AGENTS failed: %s", parley_client_error_text (link));
        parley_agent_list_destroy (&list);
        return;
    }
    team->count = 0;
    for (size_t i = 0; i < parley_agent_list_count (list) && team->count < AGENT_MAX_TEAM; i++) {
        const parley_agent_t *agent = parley_agent_list_at (list, i);
        const char *name = parley_agent_name (agent);
        if (*name && !streq (name, p->id)) {
            snprintf (team->names[team->count], PROTO_MAX_NAME + 1, "%s", name);
            team->ptrs[team->count] = team->names[team->count];
            team->online[team->count] = parley_agent_online (agent);
            team->count++;
        }
    }
    parley_agent_list_destroy (&list);
    s_team_index (team);
    s_team_mark (p, link, team);
    s_team_online (p, team);
}

//  One AGENT_EVENT applied to the list: joined (online, added if new),
//  left, expired, disconnected (offline), forgotten (removed).
static void
s_team_event (const agent_parts_t *p, agent_team_t *team, const parley_event_t *event)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    char name[PROTO_MAX_NAME + 1], what[32];
    if (msgpack_unpack_next (&unpacked, (const char *) parley_event_body (event),
                             parley_event_body_size (event), NULL)
        == MSGPACK_UNPACK_SUCCESS
    &&  pobj_strcpy (&unpacked.data, "agent", name, sizeof (name))
    &&  pobj_strcpy (&unpacked.data, "event", what, sizeof (what)) && !streq (name, p->id)) {
        size_t at = 0;
        while (at < team->count && !streq (team->names[at], name))
            at++;
        if (streq (what, "forgotten")) {
            if (at < team->count) {
                for (size_t i = at; i + 1 < team->count; i++) {
                    memcpy (team->names[i], team->names[i + 1], sizeof (team->names[i]));
                    team->online[i] = team->online[i + 1];
                }
                team->count--;
                for (size_t i = 0; i < team->count; i++)
                    team->ptrs[i] = team->names[i];
                s_team_index (team);
            }
        }
        else {
            if (at == team->count && team->count < AGENT_MAX_TEAM) {
                snprintf (team->names[at], PROTO_MAX_NAME + 1, "%s", name);
                team->ptrs[at] = team->names[at];
                team->count++;
                if (team->index)
                    zhashx_update (team->index, team->names[at], (void *) 1);
            }
            if (at < team->count)
                team->online[at] = streq (what, "joined");
        }
    }
    msgpack_unpacked_destroy (&unpacked);
}

//  The AGENT_EVENTs since the last step; false when some may be lost (a
//  new session, the client's event queue overflowed): then the list must
//  be read again.
static bool
s_team_events (agent_parts_t *p, agent_team_t *team)
{
    parley_client_t *link = p->link;
    if (!team->listed || team->listed_epoch != parley_client_epoch (link)
    ||  team->listed_dropped != parley_client_counter (link, PARLEY_COUNTER_EVENTS_DROPPED))
        return false;
    size_t applied = 0;
    parley_event_t *event = NULL;
    while (parley_client_event (link, &event))
        if (streq (parley_event_type (event), "AGENT_EVENT")) {
            s_team_event (p, team, event);
            applied++;
        }
    parley_event_destroy (&event);
    if (team->listed_dropped != parley_client_counter (link, PARLEY_COUNTER_EVENTS_DROPPED))
        return false;
    if (applied)
        s_team_online (p, team);
    return true;
}

//  Adds to `present` the teammates AGENTS lists online, or heard from
//  since we said HELLO (`window_ms` ago, plus a second of slack): a
//  teammate that saw the team complete (us included) may have done all
//  its steps and left before we looked, and must not keep us waiting
//  forever. A registration left over from an earlier run was last heard
//  from before our HELLO.
static void
s_team_present (agent_parts_t *p, int64_t window_ms, zhashx_t *present)
{
    parley_agent_list_t *list = NULL;
    if (parley_client_agents (p->link, &list) != PARLEY_OK) {
        parley_agent_list_destroy (&list);
        return;
    }
    for (size_t i = 0; i < parley_agent_list_count (list); i++) {
        const parley_agent_t *info = parley_agent_list_at (list, i);
        const char *name = parley_agent_name (info);
        if (!*name || streq (name, p->id))
            continue;
        if (parley_agent_online (info)
        ||  parley_agent_idle_ms (info) <= (uint64_t) (window_ms + 1000))
            zhashx_update (present, name, (void *) 1);
    }
    parley_agent_list_destroy (&list);
}

//  Our own posts come back on the channels we listen to (the heuristic
//  reports on one every step): they name no new teammate and are not
//  counted as received.
static bool
s_unknown_sender (agent_parts_t *p, const agent_team_t *team)
{
    for (size_t i = 0; i < conn_mailbox_count (p->mailbox); i++) {
        const char *from = conn_mailbox_at (p->mailbox, i)->from;
        if (!streq (from, p->id) && !agent_team_has (team, from))
            return true;
    }
    return false;
}

typedef struct {
    agent_parts_t *parts;
    uint64_t step;
    agent_team_t *team;
} communication_t;

static stage_outcome_t
s_communication_try (void *arg)
{
    communication_t *self = (communication_t *) arg;
    agent_parts_t *p = self->parts;
    char err[256];
    if (p->no_messages)         //  reads none: the mailbox stays empty
        conn_mailbox_begin (p->mailbox);
    else
    if (connector_capture (p->mailbox, err, sizeof (err)) != 0) {
        plog_warn ("fetching mail failed: %s", err);
        return STAGE_RETRY;
    }
    if (p->link && (!s_team_events (p, self->team) || s_unknown_sender (p, self->team)))
        s_refresh_team (p, self->team);
    return STAGE_OK;
}

static stage_outcome_t
s_communication_fallback (void *arg)
{
    conn_mailbox_begin (((communication_t *) arg)->parts->mailbox);
    return STAGE_FALLBACK;
}

//  The step's mail as one line for the memory text (NULL when none). The
//  memory keeps at most vmemory_max_text bytes of a step: the line stops
//  at the message that reaches that length, and the rest of a big team's
//  mail is not rendered for bytes that would be cut.
static void
s_mail_text (agent_parts_t *p, heard_t *out)
{
    zstr_free (&out->mail_text);
    size_t count = conn_mailbox_count (p->mailbox);
    if (count == 0 || !p->vmem)
        return;
    size_t room = vmemory_max_text (p->vmem);
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < count && textbuf_len (buf) < room; i++) {
        const mail_view_t *m = conn_mailbox_at (p->mailbox, i);
        if (i)
            textbuf_add (buf, " | ");
        if (*m->channel)
            textbuf_addf (buf, "In %s, from %s: %s", m->channel, m->from, m->text);
        else
            textbuf_addf (buf, "From %s: %s", m->from, m->text);
    }
    out->mail_text = textbuf_detach (&buf);
}

stage_outcome_t
stage_communication (agent_parts_t *p, perceived_t *step, const decided_t *previous,
                     agent_team_t *team, heard_t *out, agent_counters_t *counts)
{
    assert (p && step && previous && team && out && counts);
    communication_t self = { p, step->step, team };
    stage_outcome_t outcome = stage_attempt (STAGE_COMMUNICATION, p->stats,
                                             s_communication_try, s_communication_fallback,
                                             &self);
    if (outcome == STAGE_FAILED)
        return outcome;
    for (size_t i = 0; i < conn_mailbox_count (p->mailbox); i++)
        counts->msgs_received += !streq (conn_mailbox_at (p->mailbox, i)->from, p->id);
    if (!step->obs)
        step->obs = connector_observation_list ();
    if (policy_reads_context (p->policy))
        connector_observe (p->mailbox, step->obs);
    s_mail_text (p, out);
    if (p->facts) {
        team_facts_visit (p->facts, step->seen.position);
        team_facts_learn (p->facts, p->mailbox, p->state);
    }
    //  AgentMemory is kept for a policy that reads its context; for one
    //  that does not, the step's observations end here.
    if (policy_reads_context (p->policy))
        agentmem_record_turn (p->mem, previous->last_action? previous->last_action: "start",
                              step->obs);
    else
        zlistx_purge (step->obs);
    return outcome;
}
