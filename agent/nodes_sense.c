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
        brokerlink_wait (a->link, TEAM_WAIT_MS);
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

static const char *
s_perception_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    connector_observe (a->world, a->step_obs);
    connector_observe (a->state, a->step_obs);
    a->seen = *conn_world_view (a->world);
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
    char err[256];
    pmsg_t *reply = brokerlink_simple (a->link, PMSG_AGENTS, err, sizeof (err));
    if (!reply || pmsg_type (reply) != PMSG_AGENT_LIST) {
        plog_debug ("AGENTS failed: %s", reply? "unexpected reply": err);
        pmsg_destroy (&reply);
        return 0;
    }
    const msgpack_object *list = pmsg_field (reply, "agents");
    a->team_count = 0;
    for (uint32_t i = 0; list && list->type == MSGPACK_OBJECT_ARRAY && i < list->via.array.size
                         && a->team_count < AGENT_MAX_TEAM; i++) {
        char name[PROTO_MAX_NAME + 1];
        if (pobj_strcpy (&list->via.array.ptr[i], "agent", name, sizeof (name))
        &&  !streq (name, a->id)) {
            snprintf (a->team[a->team_count], PROTO_MAX_NAME + 1, "%s", name);
            a->team_ptrs[a->team_count] = a->team[a->team_count];
            if (pobj_bool (&list->via.array.ptr[i], "online", false))
                online[online_count++] = a->team[a->team_count];
            a->team_count++;
        }
    }
    pmsg_destroy (&reply);
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
    char err[256];
    pmsg_t *reply = brokerlink_simple (a->link, PMSG_AGENTS, err, sizeof (err));
    size_t count = 0;
    const msgpack_object *list = reply && pmsg_type (reply) == PMSG_AGENT_LIST
                               ? pmsg_field (reply, "agents"): NULL;
    for (uint32_t i = 0; list && list->type == MSGPACK_OBJECT_ARRAY && i < list->via.array.size; i++) {
        const msgpack_object *info = &list->via.array.ptr[i];
        char name[PROTO_MAX_NAME + 1];
        if (!pobj_strcpy (info, "agent", name, sizeof (name)) || streq (name, a->id))
            continue;
        count += pobj_bool (info, "online", false)
              || pobj_uint (info, "idle_ms", UINT64_MAX) <= (uint64_t) (window_ms + 2 * TEAM_WAIT_MS);
    }
    pmsg_destroy (&reply);
    return count;
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
    a->msgs_received += conn_mailbox_count (a->mailbox);
    connector_observe (a->mailbox, a->step_obs);
    s_mail_text (a);
    team_facts_visit (a->facts, a->seen.position);
    team_facts_learn (a->facts, a->mailbox, a->state);
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
