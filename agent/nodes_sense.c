/*  nodes_sense - the nodes that look: Perception and Communication.

    Perception captures the world (PERCEIVE) and the shared-state keys
    (GET); Communication fetches the mail (FETCH, acknowledging what the
    previous step processed) and refreshes the team list (AGENTS). Both
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

//  AGENTS -> the team list (every registered agent but us).
static void
s_refresh_team (agent_shared_t *a)
{
    parley_agent_list_t list;
    if (parley_client_agents (a->link, &list) != PARLEY_OK) {
        plog_debug ("AGENTS failed: %s", parley_client_error_text (a->link));
        return;
    }
    a->team_count = 0;
    for (size_t i = 0; i < list.count && a->team_count < AGENT_MAX_TEAM; i++) {
        const char *name = list.agents [i].agent;
        if (*name && !streq (name, a->id)) {
            snprintf (a->team[a->team_count], PROTO_MAX_NAME + 1, "%s", name);
            a->team_ptrs[a->team_count] = a->team[a->team_count];
            a->team_count++;
        }
    }
}

static bool
s_unknown_sender (agent_shared_t *a)
{
    for (size_t i = 0; i < conn_mailbox_count (a->mailbox); i++)
        if (!agent_shared_is_teammate (a, conn_mailbox_at (a->mailbox, i)->from))
            return true;
    return false;
}

static int
s_communication_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    char err[256];
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
    a->msgs_received += conn_mailbox_count (a->mailbox);
    connector_observe (a->mailbox, a->step_obs);
    s_mail_text (a);
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
