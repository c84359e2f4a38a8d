/*  nodes_sense - the nodes that look: Perception and Communication.

    Perception captures the world (PERCEIVE) and the shared-state keys
    (GET); Communication fetches the mail (FETCH, acknowledging what the
    previous step processed; not with --no-messages), refreshes the team
    list (AGENTS) and updates the team facts (team_facts.h) that every
    policy is given. With --team-size N the first Perception waits until N
    agents are online, so a team starts together. Both
    diff their connectors into the step's observations; Communication, the
    last of the looking nodes, then closes the previous action's turn in
    AgentMemory: only now has every connector reported what it caused.

    A failed capture is retried; if it still fails the node goes on with the
    previous state (the fallback), because an agent that stops whenever the
    broker hiccups is worse than one that acts on a step-old view.
*/
#include <assert.h>
#include "agent_shared.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "pclock.h"
#include "plog.h"
#include "textbuf.h"

#define TEAM_REFRESH_STEPS 5
#define TEAM_WAIT_MS 20             //  poll interval while waiting for the team

static size_t s_team_present (agent_shared_t *a, int64_t window_ms);

// ---------------------------------------------------------------------------
//  Perception

static int
s_perception_prep (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    a->step++;
    a->step_start_us = pclock_mono_us ();
    a->model_us = 0;
    if (!a->step_obs)
        a->step_obs = connector_observation_list ();
    //  A team that starts together: steps are only comparable between
    //  agents (and runs) when nobody had a head start.
    while (a->step == 1 && a->team_size > 1 && a->link && !(a->stop && *a->stop)
    &&     s_team_present (a, pclock_mono_ms () - a->connected_ms) + 1 < a->team_size)
        parley_client_wait (a->link, TEAM_WAIT_MS);
    return 0;
}

static int
s_perception_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    char err[256];
    if (connector_capture (a->world, err, sizeof (err)) != 0) {
        plog_warn ("perceive failed: %s", err);
        return -1;
    }
    if (connector_capture (a->state, err, sizeof (err)) != 0)
        plog_warn ("reading shared state failed: %s", err);
    return 0;
}

static int
s_perception_fallback (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    if (!conn_world_view (a->world)->valid)
        return -1;
    plog_warn ("step %" PRIu64 ": acting on the previous view of the world", a->step);
    return 0;
}

//  Where we and our teammates stand now: visited by the team.
static void
s_mark_visited (agent_shared_t *a)
{
    if (!a->map)
        return;
    teammap_set_shape (a->map, conn_world_width (a->world), conn_world_height (a->world));
    if (a->seen.valid)
        teammap_visit (a->map, a->seen.position);
    const char *agent;
    uint64_t position;
    for (size_t i = 0; conn_state_agent_at (a->state, i, &agent, &position); i++)
        teammap_visit (a->map, position);
}

//  visible_caption: the caption model's sentence for the view's image
//  (cached by image, so a view seen before costs nothing). A failure is
//  logged and the step goes on without a caption.
static void
s_caption (agent_shared_t *a)
{
    zstr_free (&a->visible_caption);
    const world_image_view_t *image = conn_world_image (a->world);
    if (!a->captioner || !image)
        return;
    char err[256];
    const char *caption = captioner_caption (a->captioner, image, err, sizeof (err));
    if (caption)
        a->visible_caption = strdup (caption);
    else
        plog_debug ("step %" PRIu64 ": no caption for the view: %s", a->step, err);
}

static const char *
s_perception_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    connector_observe (a->world, a->step_obs);
    connector_observe (a->state, a->step_obs);
    a->seen = *conn_world_view (a->world);
    s_mark_visited (a);
    s_caption (a);
    a->coverage = a->seen.coverage;
    return "default";
}

static const flow_node_ops_t s_perception = {
    .prep = s_perception_prep, .exec = s_perception_exec,
    .fallback = s_perception_fallback, .post = s_perception_post, .max_retries = 2
};

const flow_node_ops_t *
node_perception (void)
{
    return &s_perception;
}

// ---------------------------------------------------------------------------
//  Communication

bool
agent_shared_is_teammate (agent_shared_t *shared, const char *name)
{
    for (size_t i = 0; i < shared->team_count; i++)
        if (streq (shared->team[i], name))
            return true;
    return false;
}

//  AGENTS -> the team list (every registered agent but us); the online
//  ones go to the team facts, which releases the claims of the others.
//  Returns how many others are online.
static size_t
s_refresh_team (agent_shared_t *a)
{
    const char *online[AGENT_MAX_TEAM];
    size_t online_count = 0;
    parley_agent_list_t list;
    if (parley_client_agents (a->link, &list) != PARLEY_OK) {
        plog_debug ("AGENTS failed: %s", parley_client_error_text (a->link));
        return 0;
    }
    a->team_count = 0;
    for (size_t i = 0; i < list.count && a->team_count < AGENT_MAX_TEAM; i++) {
        const char *name = list.agents [i].agent;
        if (*name && !streq (name, a->id)) {
            snprintf (a->team[a->team_count], PROTO_MAX_NAME + 1, "%s", name);
            a->team_ptrs[a->team_count] = a->team[a->team_count];
            if (list.agents [i].online)
                online[online_count++] = a->team[a->team_count];
            a->team_count++;
        }
    }
    if (a->facts)
        team_facts_set_online (a->facts, online, online_count);
    return online_count;
}

//  Teammates online, or heard from since we said HELLO (`window_ms` ago,
//  plus two polls of slack): a teammate that saw the team complete (us
//  included) may have done all its steps and left before we looked, and
//  must not keep us waiting forever. A registration left over from an
//  earlier run was last heard from before our HELLO.
static size_t
s_team_present (agent_shared_t *a, int64_t window_ms)
{
    parley_agent_list_t list;
    if (parley_client_agents (a->link, &list) != PARLEY_OK)
        return 0;
    size_t count = 0;
    for (size_t i = 0; i < list.count; i++) {
        const parley_agent_info_t *info = &list.agents [i];
        if (!*info->agent || streq (info->agent, a->id))
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
s_unknown_sender (agent_shared_t *a)
{
    for (size_t i = 0; i < conn_mailbox_count (a->mailbox); i++) {
        const char *from = conn_mailbox_at (a->mailbox, i)->from;
        if (!streq (from, a->id) && !agent_shared_is_teammate (a, from))
            return true;
    }
    return false;
}

static int
s_communication_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    char err[256];
    if (a->no_messages)         //  reads none: the mailbox stays empty
        conn_mailbox_begin (a->mailbox);
    else
    if (connector_capture (a->mailbox, err, sizeof (err)) != 0) {
        plog_warn ("fetching mail failed: %s", err);
        return -1;
    }
    if (a->link && (a->step == 1 || a->step % TEAM_REFRESH_STEPS == 0 || s_unknown_sender (a)))
        s_refresh_team (a);
    return 0;
}

static int
s_communication_fallback (void *shared, void *ctx)
{
    conn_mailbox_begin (((agent_shared_t *) shared)->mailbox);
    return 0;
}

//  The step's mail as one line for the memory text (NULL when none).
static void
s_mail_text (agent_shared_t *a)
{
    zstr_free (&a->mail_text);
    size_t count = conn_mailbox_count (a->mailbox);
    if (count == 0)
        return;
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < count; i++) {
        const mail_view_t *m = conn_mailbox_at (a->mailbox, i);
        if (i)
            textbuf_add (buf, " | ");
        if (*m->channel)
            textbuf_addf (buf, "In %s, from %s: %s", m->channel, m->from, m->text);
        else
            textbuf_addf (buf, "From %s: %s", m->from, m->text);
    }
    a->mail_text = textbuf_detach (&buf);
}

static const char *
s_communication_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    for (size_t i = 0; i < conn_mailbox_count (a->mailbox); i++)
        a->msgs_received += !streq (conn_mailbox_at (a->mailbox, i)->from, a->id);
    connector_observe (a->mailbox, a->step_obs);
    s_mail_text (a);
    if (a->facts) {
        team_facts_visit (a->facts, a->seen.position);
        team_facts_learn (a->facts, a->mailbox, a->state);
    }
    agentmem_record_turn (a->mem, a->last_action? a->last_action: "start", a->step_obs);
    return "default";
}

static const flow_node_ops_t s_communication = {
    .exec = s_communication_exec, .fallback = s_communication_fallback,
    .post = s_communication_post, .max_retries = 1
};

const flow_node_ops_t *
node_communication (void)
{
    return &s_communication;
}
