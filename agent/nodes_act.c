/*  nodes_act - the nodes that choose and do: Decision and Execution.

    Decision builds the AgentMemory context, asks the primary policy, parses
    the answer (answer.h) and validates it against the allowed actions. An
    unusable answer is a failed exec: the flow retries it, and the retry
    tells the model what was wrong (previous_answer / previous_error). A
    call that got no answer at all (server down, not JSON) is not the
    model's mistake: the retry resends the original request, and is skipped
    when it cannot help (request refused, deadline passed, circuit open).
    Every try of one decision shares one deadline (--llm-deadline-ms). When
    the retries are spent the fallback lets the heuristic decide this step.
    The agent never stops because of a bad answer.

    Execution sends ACT (and feeds the OBSERVATION back to the world
    connector; a failed ACT does not hold back the messages), sends
    message_to_others to "all" and every MessageTo to its target in one
    SEND, and applies ListenTo. A MessageTo target is a bare name: the
    broker resolves it (`resolve`, PROTOCOL.md SEND) to an agent, else a
    channel someone listens to, and refuses a name that is neither, so a
    message to a teammate the team list does not know yet is not lost as a
    post to a channel nobody reads. Every refused item becomes a
    "mail.undelivered" observation, so the model reads in its next prompt
    that the target does not exist. Names the protocol would refuse are
    skipped with a warning (and observed the same way), so one bad
    directive cannot sink the whole batch. With --no-messages nothing is
    sent and no channel joined (what the policy asked for is counted).
    Every few steps Execution also writes the agent's new visits and its
    claim to the team's shared state (agent_team_sync), with one WRITE.
*/
#include <assert.h>
#include "agent_shared.h"
#include "conn_state.h"
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
    a->decision_tries = 0;
    a->step_note[0] = 0;
    a->decision_deadline = a->llm_deadline_ms > 0? pclock_mono_ms () + a->llm_deadline_ms: 0;
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
    in->facts = a->facts;
    //  Only an answer the model gave is told back to it.
    if (retry && a->refused_answer) {
        in->previous_answer = a->refused_answer;
        in->previous_error = a->answer_error;
    }
    in->deadline_ms = a->decision_deadline;
    in->stop = a->stop;
    in->steps = a->steps;
    in->map = a->map;
    in->channels = a->channel_ptrs;
    in->channel_count = a->channel_count;
    in->context_tokens = a->context_tokens;
    in->visible_caption = a->visible_caption;
    in->vision = a->llm_vision;
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
    if (a->decision_tries++ > 0 && a->policy != a->heuristic && !a->refused_answer
    &&  !policy_llm_retry_useful (a->policy))
        return -1;
    return s_ask (a, a->policy, true);
}

static int
s_decision_fallback (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    a->fallbacks++;
    a->by_fallback = true;
    if (a->heuristic != a->policy) {
        //  An open circuit was logged once when it opened: not every step.
        policy_llm_report_t r;
        policy_llm_report (a->policy, &r);
        if (r.breaker_open)
            plog_debug ("step %" PRIu64 ": circuit open; the heuristic decides", a->step);
        else
            plog_warn ("step %" PRIu64 ": %s policy gave no usable answer (%s); "
                       "the heuristic decides", a->step, policy_name (a->policy), a->answer_error);
    }
    a->answer_error[0] = 0;
    if (s_ask (a, a->heuristic, false) == 0)
        return 0;
    //  Cannot happen with a correct heuristic; stay put rather than die.
    char *text = answer_format (NULL, "stay", "no usable decision this step", NULL, NULL, 0);
    a->answer = answer_parse (text, strlen (text));
    free (text);
    return a->answer? 0: -1;
}

//  The model's totals to the broker (HEARTBEAT's model_* fields), so a
//  run's cost is visible per agent in AGENTS and on the tap while it runs.
void
agent_shared_report_model (agent_shared_t *a)
{
    if (!a->link || a->policy == a->heuristic || parley_client_stopped (a->link))
        return;
    policy_llm_report_t r;
    policy_llm_report (a->policy, &r);
    const llm_totals_t *t = &r.totals;
    parley_model_report_t report = {
        .calls = t->calls, .ok = t->ok, .failed = t->failed, .skipped = r.skipped,
        .retries = t->retries, .prompt_tokens = t->prompt_tokens,
        .completion_tokens = t->completion_tokens,
        .latency_ms = (uint64_t) (t->latency_us / 1000),
        .latency_max_ms = (uint64_t) (t->latency_max_us / 1000)
    };
    //  Every later HEARTBEAT (keepalives too) carries it, so a restarted
    //  broker learns it again; this one delivers it now.
    parley_client_set_report (a->link, &report);
    if (parley_client_heartbeat (a->link) != PARLEY_OK)
        plog_debug ("model report not sent: %s", parley_client_error_text (a->link));
}

static const char *
s_decision_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    agent_shared_report_model (a);
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

//  Tells the model, in the next turn, that a message did not go out.
static void
s_undelivered (agent_shared_t *a, const char *target, const char *why)
{
    if (!a->step_obs)
        a->step_obs = connector_observation_list ();
    char *text = zsys_sprintf ("Your message to %.64s was not delivered: %s.", target, why);
    if (text)
        zlistx_add_end (a->step_obs, observation_new_text ("mail", "mail.undelivered", text));
    free (text);
    size_t used = strlen (a->step_note);
    if (used + 1 < sizeof (a->step_note))
        snprintf (a->step_note + used, sizeof (a->step_note) - used, "%smessage to %.64s "
                  "not delivered (%s)", used? "; ": "", target, why);
}

static bool
s_item (agent_shared_t *a, parley_outgoing_t *item, const char *target, const char *body)
{
    if (!pmsg_name_valid (target, strlen (target)) && !streq (target, "all")) {
        plog_warn ("not sending to '%.64s': not a valid agent or channel name", target);
        s_undelivered (a, target, "that is not a valid agent or channel name");
        a->send_errors++;
        return false;
    }
    bool all = streq (target, "all");
    //  A bare name goes out with `resolve`: the broker, which knows every
    //  agent and channel, decides, and refuses a name that is neither.
    item->to = all? target: NULL;
    item->channel = all? NULL: target;
    item->resolve = !all;
    item->body = body;
    item->body_len = strlen (body);
    return true;
}

//  SENT's item errors -> observations (and a log line each).
static void
s_sent_errors (agent_shared_t *a, const parley_sent_t *sent, const parley_outgoing_t *items,
               size_t count)
{
    for (size_t i = 0; i < sent->error_count; i++) {
        const parley_item_error_t *error = &sent->errors [i];
        if (error->index >= count)
            continue;
        const parley_outgoing_t *item = &items [error->index];
        const char *target = item->to? item->to: item->channel;
        plog_warn ("message to %s refused: %s %s", target, parley_strerror (error->code),
                   error->message);
        if (error->code == PARLEY_ERR_NO_SUCH_TARGET || error->code == PARLEY_ERR_UNKNOWN_RECIPIENT)
            s_undelivered (a, target, "no agent or channel of that name");
        else
            s_undelivered (a, target, *error->message? error->message: parley_strerror (error->code));
    }
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
            s_sent_errors (a, &sent, items, count);
    }
    else {
        plog_warn ("SEND failed: %s", parley_client_error_text (a->link));
        a->send_errors += count;
    }
}

//  Remembers a channel we listen to, for the prompt's message targets.
static void
s_listened (agent_shared_t *a, const char *channel)
{
    for (size_t i = 0; i < a->channel_count; i++)
        if (streq (a->channels[i], channel))
            return;
    if (a->channel_count == AGENT_MAX_CHANNELS)
        return;
    snprintf (a->channels[a->channel_count], PROTO_MAX_NAME + 1, "%s", channel);
    a->channel_ptrs[a->channel_count] = a->channels[a->channel_count];
    a->channel_count++;
}

//  --no-messages: nothing is sent and no channel is joined, whatever the
//  policy asked for; what it asked for is counted.
static bool
s_suppressed (agent_shared_t *a)
{
    if (!a->no_messages)
        return false;
    const char *message = answer_message (a->answer);
    a->msgs_suppressed += message && *message;
    for (size_t i = 0; i < answer_directive_count (a->answer); i++)
        a->msgs_suppressed += answer_directive (a->answer, i)->kind == ANSWER_MESSAGE_TO;
    return true;
}

static void
s_communicate (agent_shared_t *a)
{
    if (s_suppressed (a))
        return;
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
            else
                s_listened (a, d->target);
        }
        else
        if (d->text && *d->text && s_item (a, &items[count], d->target, d->text))
            count++;
    }
    if (count > 0)
        s_send (a, items, count);
}

//  The two values of the team's WRITE, msgpack: the new visits (an
//  array of positions, for the union) and our claim ({id: position or
//  nil}, for the merge).
static void
s_team_values (agent_shared_t *a, const uint64_t *visited, size_t count,
               msgpack_sbuffer *visits, msgpack_sbuffer *claims)
{
    msgpack_packer pk;
    msgpack_packer_init (&pk, visits, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, (uint32_t) count);
    for (size_t i = 0; i < count; i++)
        msgpack_pack_uint64 (&pk, visited[i]);
    msgpack_packer_init (&pk, claims, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 1);
    size_t len = strlen (a->id);
    msgpack_pack_str (&pk, len);
    msgpack_pack_str_body (&pk, a->id, len);
    uint64_t claim = team_facts_own_claim (a->facts);
    if (claim == TEAM_NO_CELL)
        msgpack_pack_nil (&pk);
    else
        msgpack_pack_uint64 (&pk, claim);
}

void
agent_team_sync (agent_shared_t *a, bool force)
{
    if (!a->facts)
        return;
    const uint64_t *visited;
    size_t count = team_facts_unsynced (a->facts, &visited);
    if (a->no_messages || !a->link || parley_client_stopped (a->link)
    ||  (count == 0 && !team_facts_claim_changed (a->facts))
    ||  (!force && a->step % TEAM_SYNC_EVERY != 0))
        return;
    msgpack_sbuffer visits, claims;
    msgpack_sbuffer_init (&visits);
    msgpack_sbuffer_init (&claims);
    s_team_values (a, visited, count, &visits, &claims);
    parley_op_t ops[] = {
        { .op = PARLEY_OP_DECLARE, .key = STATE_KEY_TEAM_VISITED, .reducer = "union" },
        { .op = PARLEY_OP_UPDATE, .key = STATE_KEY_TEAM_VISITED,
          .value = visits.data, .value_size = visits.size },
        { .op = PARLEY_OP_DECLARE, .key = STATE_KEY_TEAM_CLAIMS, .reducer = "merge" },
        { .op = PARLEY_OP_UPDATE, .key = STATE_KEY_TEAM_CLAIMS,
          .value = claims.data, .value_size = claims.size },
    };
    if (parley_client_write (a->link, ops, sizeof (ops) / sizeof (ops[0]), NULL) == PARLEY_OK)
        team_facts_unsynced_clear (a->facts);
    else
        plog_warn ("writing the team state failed: %s", parley_client_error_text (a->link));
    msgpack_sbuffer_destroy (&visits);
    msgpack_sbuffer_destroy (&claims);
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
    agent_team_sync (a, streq (a->action, "end"));
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
