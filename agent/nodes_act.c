/*  nodes_act - the nodes that choose and do: Decision and Execution.

    Decision builds the AgentMemory context, asks the primary policy, parses
    the answer (answer.h) and validates it against the allowed actions. An
    unusable answer is a failed exec: the flow retries it, and the retry
    tells the model what was wrong (previous_answer / previous_error). When
    the retries are spent the fallback lets the heuristic decide this step.
    The agent never stops because of a bad answer.

    Execution sends ACT (and feeds the OBSERVATION back to the world
    connector; a failed ACT does not hold back the messages), sends message_to_others to "all" and every MessageTo to its
    target -- an agent when the name is a teammate (AGENTS) or "all", else a
    channel -- in one SEND, and applies ListenTo. Names the protocol would
    refuse are skipped with a warning, so one bad directive cannot sink the
    whole batch.
*/
#include <assert.h>
#include "agent_shared.h"
#include "conn_world.h"
#include "pclock.h"
#include "plog.h"

// ---------------------------------------------------------------------------
//  Decision

static int
s_decision_prep (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    zstr_free (&a->context);
    a->context = agentmem_build_context (a->mem, a->connectors, AGENT_CONNECTORS);
    answer_destroy (&a->answer);
    zstr_free (&a->refused_answer);
    a->answer_error[0] = 0;
    a->by_fallback = false;
    return 0;
}

static void
s_input (agent_shared_t *a, policy_input_t *in, bool retry)
{
    memset (in, 0, sizeof (*in));
    in->agent_id = a->id;
    in->step = a->step;
    in->max_steps = a->max_steps;
    in->context = a->context;
    in->memories = a->memories;
    in->memory_count = a->memory_count;
    in->actions = a->actions;
    in->action_count = a->action_count;
    in->teammates = a->team_ptrs;
    in->teammate_count = a->team_count;
    in->world = a->world;
    in->mailbox = a->mailbox;
    in->state = a->state;
    if (retry && a->answer_error[0]) {
        in->previous_answer = a->refused_answer? a->refused_answer: "";
        in->previous_error = a->answer_error;
    }
}

//  Asks `policy`; on success a->answer holds a valid answer.
static int
s_ask (agent_shared_t *a, policy_t *policy, bool retry)
{
    policy_input_t in;
    s_input (a, &in, retry);
    char err[512];
    int64_t start = pclock_mono_us ();
    char *text = policy_decide (policy, &in, err, sizeof (err));
    if (policy != a->heuristic)
        a->model_us += pclock_mono_us () - start;
    if (!text) {
        snprintf (a->answer_error, sizeof (a->answer_error), "%s", err);
        return -1;
    }
    answer_t *answer = answer_parse (text, strlen (text));
    if (answer && answer_validate (answer, a->actions, a->action_count, err, sizeof (err))) {
        a->answer = answer;
        free (text);
        return 0;
    }
    a->invalid_answers++;
    plog_info ("step %" PRIu64 ": %s answer refused: %s", a->step, policy_name (policy),
               answer? err: "out of memory");
    snprintf (a->answer_error, sizeof (a->answer_error), "%s", answer? err: "out of memory");
    zstr_free (&a->refused_answer);
    a->refused_answer = text;
    answer_destroy (&answer);
    return -1;
}

static int
s_decision_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    return s_ask (a, a->policy, true);
}

static int
s_decision_fallback (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    a->fallbacks++;
    a->by_fallback = true;
    if (a->heuristic != a->policy)
        plog_warn ("step %" PRIu64 ": %s policy gave no usable answer (%s); the heuristic decides",
                   a->step, policy_name (a->policy), a->answer_error);
    a->answer_error[0] = 0;
    if (s_ask (a, a->heuristic, false) == 0)
        return 0;
    //  Cannot happen with a correct heuristic; stay put rather than die.
    char *text = answer_format (NULL, "stay", "no usable decision this step", NULL, NULL, 0);
    a->answer = answer_parse (text, strlen (text));
    free (text);
    return a->answer? 0: -1;
}

static const char *
s_decision_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    const char *thinking = answer_thinking (a->answer);
    if (thinking && *thinking)
        agentmem_record_thought (a->mem, thinking);
    snprintf (a->action, sizeof (a->action), "%s", answer_action (a->answer));
    zstr_free (&a->last_action);
    a->last_action = zsys_sprintf ("%s (reason: %s)", a->action, answer_reason (a->answer));
    return "default";
}

static const flow_node_ops_t s_decision = {
    .prep = s_decision_prep, .exec = s_decision_exec, .fallback = s_decision_fallback,
    .post = s_decision_post, .max_retries = 1
};

const flow_node_ops_t *
node_decision (void)
{
    return &s_decision;
}

// ---------------------------------------------------------------------------
//  Execution

//  PARLEY_OK when the broker answered (a refusal is counted), else the
//  client's error.
static parley_err_t
s_act (agent_shared_t *a)
{
    //  `step` makes the move idempotent (PROTOCOL.md, ACT): the client
    //  resends this same frame after a lost reply or a reconnect, and the
    //  broker answers a repeated (agent, step) with the OBSERVATION it gave
    //  the first copy instead of moving again. Known edge: steps restart at
    //  1 in a new process, so a restarted agent whose previous run's last
    //  ACT had the same step gets that run's OBSERVATION once and does not
    //  move that step (its position is still right).
    parley_observation_t obs;
    parley_err_t rc = parley_client_act (a->link, a->action, a->step, &obs);
    if (rc == PARLEY_OK) {
        conn_world_feed_observation (a->world, &obs);
        return 0;
    }
    if (rc >= PARLEY_ERR_TIMEOUT) {
        plog_warn ("ACT %s failed: %s", a->action, parley_client_error_text (a->link));
        return rc;
    }
    plog_warn ("ACT %s refused: %s", a->action, parley_client_error_text (a->link));
    a->act_errors++;
    return PARLEY_OK;
}

static bool
s_item (agent_shared_t *a, parley_outgoing_t *item, const char *target, const char *body)
{
    if (!pmsg_name_valid (target, strlen (target)) && !streq (target, "all")) {
        plog_warn ("not sending to '%.64s': not a valid agent or channel name", target);
        a->send_errors++;
        return false;
    }
    bool agent = streq (target, "all") || agent_shared_is_teammate (a, target);
    item->to = agent? target: NULL;
    item->channel = agent? NULL: target;
    item->body = body;
    item->body_len = strlen (body);
    return true;
}

//  The client makes the SEND idempotent (a batch id, resent unchanged
//  after a lost reply) and cuts bodies to the broker's max_body at a
//  UTF-8 character boundary.
static void
s_send (agent_shared_t *a, parley_outgoing_t *items, size_t count)
{
    parley_sent_t sent;
    if (parley_client_send (a->link, items, count, &sent) == PARLEY_OK) {
        a->msgs_sent += sent.accepted;
        a->send_errors += count - sent.accepted;
        if (sent.accepted < count)
            plog_warn ("%zu of %zu messages refused by the broker", count - sent.accepted, count);
    }
    else {
        plog_warn ("SEND failed: %s", parley_client_error_text (a->link));
        a->send_errors += count;
    }
}

static void
s_communicate (agent_shared_t *a)
{
    parley_outgoing_t items[ANSWER_MAX_DIRECTIVES + 1];
    size_t count = 0;
    const char *message = answer_message (a->answer);
    if (message && *message && s_item (a, &items[count], "all", message))
        count++;
    for (size_t i = 0; i < answer_directive_count (a->answer); i++) {
        const answer_directive_t *d = answer_directive (a->answer, i);
        if (d->kind == ANSWER_LISTEN_TO) {
            if (parley_client_listen (a->link, d->target) != PARLEY_OK)
                plog_warn ("ListenTo(%.64s) failed: %s", d->target,
                           parley_client_error_text (a->link));
        }
        else
        if (d->text && *d->text && s_item (a, &items[count], d->target, d->text))
            count++;
    }
    if (count > 0)
        s_send (a, items, count);
}

static int
s_execution_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    if (!a->link)
        return 0;
    //  The messages do not depend on the move: a failed ACT still sends
    //  them, unless there is no broker to send them to (then SEND would
    //  fail the same way, or block until the link is back).
    parley_err_t rc = streq (a->action, "end")? PARLEY_OK: s_act (a);
    if (rc != PARLEY_OK) {
        if (rc != PARLEY_ERR_STOPPED && rc != PARLEY_ERR_LOST)
            s_communicate (a);
        return -1;
    }
    s_communicate (a);
    return 0;
}

//  The ACT could not be delivered (stopped, or the broker kept failing):
//  the step goes on; the next Perception sees where we really are.
static int
s_execution_fallback (void *shared, void *ctx)
{
    ((agent_shared_t *) shared)->act_errors++;
    return 0;
}

static const flow_node_ops_t s_execution = {
    .exec = s_execution_exec, .fallback = s_execution_fallback, .max_retries = 0
};

const flow_node_ops_t *
node_execution (void)
{
    return &s_execution;
}
