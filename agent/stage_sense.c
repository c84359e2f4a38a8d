// SPDX-License-Identifier: MIT
/*  stage_sense - the stages that look: Perception and Communication.

    Perception captures the world (PERCEIVE) and the shared-state keys
    (GET); Communication fetches the mail (FETCH, acknowledging what the
    previous step processed; not with --no-messages), refreshes the team
    list (AGENTS) and updates the team facts (team_facts.h) that every
    policy is given. With --team-size N the first Perception waits until N
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

#define TEAM_REFRESH_STEPS 5
#define TEAM_WAIT_MS 20             //  poll interval while waiting for the team

static size_t s_team_present (agent_parts_t *p, int64_t window_ms);

// ---------------------------------------------------------------------------
//  Perception

typedef struct {
    agent_parts_t *parts;
    perceived_t *out;
} perception_t;

static stage_outcome_t
s_perception_try (void *arg)
{
    perception_t *self = (perception_t *) arg;
    char err[256];
    if (connector_capture (self->parts->world, err, sizeof (err)) != 0) {
        plog_warn ("perceive failed: %s", err);
        return STAGE_RETRY;
    }
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
    while (out->step == 1 && p->team_size > 1 && p->link && !(p->stop && *p->stop)
    &&     s_team_present (p, pclock_mono_ms () - p->connected_ms) + 1 < p->team_size)
        parley_client_wait (p->link, TEAM_WAIT_MS);
    perception_t self = { p, out };
    stage_outcome_t outcome = stage_attempt (STAGE_PERCEPTION, p->stats, s_perception_try,
                                             s_perception_fallback, &self);
    if (outcome == STAGE_FAILED)
        return outcome;
    connector_observe (p->world, out->obs);
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
    for (size_t i = 0; i < team->count; i++)
        if (streq (team->names[i], name))
            return true;
    return false;
}

//  AGENTS -> the team list (every registered agent but us); the online
//  ones go to the team facts, which releases the claims of the others.
//  Returns how many others are online.
static size_t
s_refresh_team (agent_parts_t *p, agent_team_t *team)
{
    const char *online[AGENT_MAX_TEAM];
    size_t online_count = 0;
    parley_agent_list_t list;
    if (parley_client_agents (p->link, &list) != PARLEY_OK) {
        plog_debug ("AGENTS failed: %s", parley_client_error_text (p->link));
        return 0;
    }
    team->count = 0;
    for (size_t i = 0; i < list.count && team->count < AGENT_MAX_TEAM; i++) {
        const char *name = list.agents [i].agent;
        if (*name && !streq (name, p->id)) {
            snprintf (team->names[team->count], PROTO_MAX_NAME + 1, "%s", name);
            team->ptrs[team->count] = team->names[team->count];
            if (list.agents [i].online)
                online[online_count++] = team->names[team->count];
            team->count++;
        }
    }
    if (p->facts)
        team_facts_set_online (p->facts, online, online_count);
    return online_count;
}

//  Teammates online, or heard from since we said HELLO (`window_ms` ago,
//  plus two polls of slack): a teammate that saw the team complete (us
//  included) may have done all its steps and left before we looked, and
//  must not keep us waiting forever. A registration left over from an
//  earlier run was last heard from before our HELLO.
static size_t
s_team_present (agent_parts_t *p, int64_t window_ms)
{
    parley_agent_list_t list;
    if (parley_client_agents (p->link, &list) != PARLEY_OK)
        return 0;
    size_t count = 0;
    for (size_t i = 0; i < list.count; i++) {
        const parley_agent_info_t *info = &list.agents [i];
        if (!*info->agent || streq (info->agent, p->id))
            continue;
        count += info->online
              || info->idle_ms <= (uint64_t) (window_ms + 2 * TEAM_WAIT_MS);
    }
    return count;
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
    if (p->link && (self->step == 1 || self->step % TEAM_REFRESH_STEPS == 0
                    || s_unknown_sender (p, self->team)))
        s_refresh_team (p, self->team);
    return STAGE_OK;
}

static stage_outcome_t
s_communication_fallback (void *arg)
{
    conn_mailbox_begin (((communication_t *) arg)->parts->mailbox);
    return STAGE_FALLBACK;
}

//  The step's mail as one line for the memory text (NULL when none).
static void
s_mail_text (agent_parts_t *p, heard_t *out)
{
    zstr_free (&out->mail_text);
    size_t count = conn_mailbox_count (p->mailbox);
    if (count == 0)
        return;
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < count; i++) {
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
    connector_observe (p->mailbox, step->obs);
    s_mail_text (p, out);
    if (p->facts) {
        team_facts_visit (p->facts, step->seen.position);
        team_facts_learn (p->facts, p->mailbox, p->state);
    }
    agentmem_record_turn (p->mem, previous->last_action? previous->last_action: "start", step->obs);
    return outcome;
}
