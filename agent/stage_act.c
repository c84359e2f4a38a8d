// SPDX-License-Identifier: MIT
/*  stage_act - the stages that choose and do: Decision and Execution.

    Decision builds the AgentMemory context (for a policy that reads it,
    policy.h), asks the primary policy, parses
    the answer (answer.h) and validates it against the allowed actions. An
    unusable answer is a failed try: stage_attempt retries it, and the retry
    tells the model what was wrong (previous_answer / previous_error). A
    call that got no answer at all (server down, not JSON) is not the
    model's mistake: the retry resends the original request, and is skipped
    when it cannot help (request refused, deadline passed, circuit open).
    Every try of one decision shares one deadline (--llm-deadline-ms). When
    the retries are spent the fallback lets the heuristic decide this step.
    The agent never stops because of a bad answer.

    Execution makes the step's one request, a STEP (PROTOCOL.md, STEP):
    it acknowledges the mail committed so far, sends message_to_others to
    "all" and every MessageTo to its target, writes the team's state when
    it is due, moves, and fetches the next step's mail. The STEPPED reply
    feeds the world connector (the observation after the move) and the
    mailbox (the mail), so the next Perception and Communication need no
    request; a refused move does not hold back the messages, nor the
    reverse (each part reports its own outcome). ListenTo is a LISTEN of
    its own (rare). A MessageTo target is a bare name: the
    broker resolves it (`resolve`, PROTOCOL.md SEND) to an agent, else a
    channel someone listens to, and refuses a name that is neither, so a
    message to a teammate the team list does not know yet is not lost as a
    post to a channel nobody reads. Every refused item becomes a
    "mail.undelivered" observation, so the model reads in its next prompt
    that the target does not exist. Names the protocol would refuse are
    skipped with a warning (and observed the same way), so one bad
    directive cannot sink the whole batch. With --no-messages nothing is
    sent and no channel joined (what the policy asked for is counted).
    Every few steps the STEP also carries the agent's new visits and its
    claim for the team's shared state (agent_team_ops).
*/
#include <assert.h>
#include "agent_state.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "pclock.h"
#include "plog.h"

// ---------------------------------------------------------------------------
//  Decision

typedef struct {
    agent_parts_t *parts;
    const perceived_t *in;
    const recalled_t *recalled;
    const agent_team_t *team;
    decided_t *out;
    agent_counters_t *counts;
    const char *moves[AGENT_MAX_ACTIONS];      //  the actions but end
    size_t move_count;
} decision_t;

//  The heuristic is not offered "end" when it stands in for the model
//  (the model has the last word on ending a run: an outage must not end
//  it) nor with --no-stop-when-explored (the run goes on to --max-steps).
static bool
s_may_end (const decision_t *self, const policy_t *policy)
{
    agent_parts_t *p = self->parts;
    if (policy != p->heuristic)
        return true;
    return p->policy == p->heuristic && p->stop_when_explored;
}

static void
s_input (const decision_t *self, policy_input_t *in, bool retry, const policy_t *policy)
{
    agent_parts_t *p = self->parts;
    decided_t *d = self->out;
    memset (in, 0, sizeof (*in));
    in->agent_id = p->id;
    in->step = self->in->step;
    in->max_steps = p->max_steps;
    in->context = d->context;
    in->memories = self->recalled->memories;
    in->memory_count = self->recalled->count;
    bool may_end = s_may_end (self, policy);
    in->actions = may_end? p->actions: self->moves;
    in->action_count = may_end? p->action_count: self->move_count;
    in->teammates = self->team->ptrs;
    in->teammate_count = self->team->count;
    in->world = p->world;
    in->mailbox = p->mailbox;
    in->state = p->state;
    in->facts = p->facts;
    //  Only an answer the model gave is told back to it.
    if (retry && d->refused_answer) {
        in->previous_answer = d->refused_answer;
        in->previous_error = d->answer_error;
    }
    in->deadline_ms = d->deadline;
    in->stop = p->stop;
    in->steps = p->steps;
    in->map = p->map;
    in->channels = self->team->channel_ptrs;
    in->channel_count = self->team->channel_count;
    in->context_tokens = p->context_tokens;
    in->visible_caption = self->in->visible_caption;
    in->vision = p->llm_vision;
}

//  Asks `policy`; STAGE_OK when out->answer holds a valid answer.
static stage_outcome_t
s_ask (const decision_t *self, policy_t *policy, bool retry)
{
    agent_parts_t *p = self->parts;
    decided_t *d = self->out;
    policy_input_t in;
    s_input (self, &in, retry, policy);
    char err[512];
    int64_t start = pclock_mono_us ();
    char *text = policy_decide (policy, &in, err, sizeof (err));
    if (policy != p->heuristic)
        d->model_us += pclock_mono_us () - start;
    if (!text) {
        snprintf (d->answer_error, sizeof (d->answer_error), "%s", err);
        return STAGE_RETRY;
    }
    answer_t *answer = answer_parse (text, strlen (text));
    if (answer && answer_validate (answer, in.actions, in.action_count, err, sizeof (err))) {
        d->answer = answer;
        free (text);
        return STAGE_OK;
    }
    self->counts->invalid_answers++;
    plog_info ("step %" PRIu64 ": %s answer refused: %s", self->in->step, policy_name (policy),
               answer? err: "out of memory");
    snprintf (d->answer_error, sizeof (d->answer_error), "%s", answer? err: "out of memory");
    zstr_free (&d->refused_answer);
    d->refused_answer = text;
    answer_destroy (&answer);
    return STAGE_RETRY;
}

static stage_outcome_t
s_decision_try (void *arg)
{
    decision_t *self = (decision_t *) arg;
    agent_parts_t *p = self->parts;
    if (self->out->tries++ > 0 && p->policy != p->heuristic && !self->out->refused_answer
    &&  !policy_llm_retry_useful (p->policy))
        return STAGE_RETRY;
    return s_ask (self, p->policy, true);
}

static stage_outcome_t
s_decision_fallback (void *arg)
{
    decision_t *self = (decision_t *) arg;
    agent_parts_t *p = self->parts;
    decided_t *d = self->out;
    self->counts->fallbacks++;
    d->by_fallback = true;
    if (p->heuristic != p->policy) {
        //  An open circuit was logged once when it opened: not every step.
        policy_llm_report_t r;
        policy_llm_report (p->policy, &r);
        if (self->counts->fallbacks == 1)
            plog_warn ("the heuristic decides the steps the model does not: it may move or "
                       "wait, never end the run (only the model, --max-steps or an explored "
                       "world with --stop-when-explored end it)");
        if (r.breaker_open)
            plog_debug ("step %" PRIu64 ": circuit open; the heuristic decides", self->in->step);
        else
            plog_warn ("step %" PRIu64 ": %s policy gave no usable answer (%s); "
                       "the heuristic decides", self->in->step, policy_name (p->policy),
                       d->answer_error);
    }
    d->answer_error[0] = 0;
    if (s_ask (self, p->heuristic, false) == STAGE_OK)
        return STAGE_FALLBACK;
    //  Cannot happen with a correct heuristic; stay put rather than die.
    char *text = answer_format (NULL, "stay", "no usable decision this step", NULL, NULL, 0);
    d->answer = answer_parse (text, strlen (text));
    free (text);
    return d->answer? STAGE_FALLBACK: STAGE_FAILED;
}

//  The model's totals to the broker (HEARTBEAT's model_* fields), so a
//  run's cost is visible per agent in AGENTS and on the tap while it runs.
void
agent_report_model (agent_parts_t *p)
{
    if (!p->link || p->policy == p->heuristic || parley_client_stopped (p->link))
        return;
    policy_llm_report_t r;
    policy_llm_report (p->policy, &r);
    const llm_totals_t *t = &r.totals;
    uint64_t report [PARLEY_MODEL_FIELDS] = {
        [PARLEY_MODEL_CALLS] = t->calls, [PARLEY_MODEL_OK] = t->ok,
        [PARLEY_MODEL_FAILED] = t->failed, [PARLEY_MODEL_SKIPPED] = r.skipped,
        [PARLEY_MODEL_RETRIES] = t->retries, [PARLEY_MODEL_PROMPT_TOKENS] = t->prompt_tokens,
        [PARLEY_MODEL_COMPLETION_TOKENS] = t->completion_tokens,
        [PARLEY_MODEL_LATENCY_MS] = (uint64_t) (t->latency_us / 1000),
        [PARLEY_MODEL_LATENCY_MAX_MS] = (uint64_t) (t->latency_max_us / 1000)
    };
    //  Every later HEARTBEAT (keepalives too) carries it, so a restarted
    //  broker learns it again; this one delivers it now.
    parley_client_set_report (p->link, report, PARLEY_MODEL_FIELDS);
    if (parley_client_heartbeat (p->link) != PARLEY_OK)
        plog_debug ("model report not sent: %s", parley_client_error_text (p->link));
}

stage_outcome_t
stage_decision (agent_parts_t *p, const perceived_t *in, const recalled_t *recalled,
                const agent_team_t *team, decided_t *out, agent_counters_t *counts)
{
    assert (p && in && recalled && team && out && counts);
    zstr_free (&out->context);
    if (policy_reads_context (p->policy))
        out->context = agentmem_build_context (p->mem, p->connectors, AGENT_CONNECTORS);
    answer_destroy (&out->answer);
    zstr_free (&out->refused_answer);
    out->answer_error[0] = 0;
    out->by_fallback = false;
    out->tries = 0;
    out->model_us = 0;
    out->note[0] = 0;
    out->deadline = p->llm_deadline_ms > 0? pclock_mono_ms () + p->llm_deadline_ms: 0;
    decision_t self = { p, in, recalled, team, out, counts, { 0 }, 0 };
    for (size_t i = 0; i < p->action_count; i++)
        if (!streq (p->actions[i], "end"))
            self.moves[self.move_count++] = p->actions[i];
    stage_outcome_t outcome = stage_attempt (STAGE_DECISION, p->stats, s_decision_try,
                                             s_decision_fallback, &self);
    if (outcome == STAGE_FAILED)
        return outcome;
    agent_report_model (p);
    const char *thinking = answer_thinking (out->answer);
    if (thinking && *thinking && policy_reads_context (p->policy))
        agentmem_record_thought (p->mem, thinking);
    snprintf (out->action, sizeof (out->action), "%s", answer_action (out->answer));
    zstr_free (&out->last_action);
    out->last_action = zsys_sprintf ("%s (reason: %s)", out->action, answer_reason (out->answer));
    return outcome;
}

// ---------------------------------------------------------------------------
//  Execution

typedef struct {
    agent_parts_t *parts;
    perceived_t *step;
    decided_t *decided;
    agent_team_t *team;
    agent_counters_t *counts;
} execution_t;

//  Adds to the step's note, which the next prompts show in its history line.
static void
s_note (execution_t *self, const char *text)
{
    char *note = self->decided->note;
    size_t size = sizeof (self->decided->note);
    size_t used = strlen (note);
    if (used + 1 < size)
        snprintf (note + used, size - used, "%s%s", used? "; ": "", text);
}

//  Tells the model, in the next turn, that a message did not go out.
static void
s_undelivered (execution_t *self, const char *target, const char *why)
{
    perceived_t *step = self->step;
    if (!step->obs)
        step->obs = connector_observation_list ();
    char *text = zsys_sprintf ("Your message to %.64s was not delivered: %s.", target, why);
    if (text)
        zlistx_add_end (step->obs, observation_new_text ("mail", "mail.undelivered", text));
    free (text);
    char *line = zsys_sprintf ("message to %.64s not delivered (%s)", target, why);
    if (line)
        s_note (self, line);
    free (line);
}

//  One message into the step's outbox, its target kept in targets[count]
//  for the failures SENT may name.
static bool
s_item (execution_t *self, parley_outbox_t *out, const char **targets, size_t count,
        const char *target, const char *body)
{
    if (!pmsg_name_valid (target, strlen (target)) && !streq (target, "all")) {
        plog_warn ("not sending to '%.64s': not a valid agent or channel name", target);
        s_undelivered (self, target, "that is not a valid agent or channel name");
        self->counts->send_errors++;
        return false;
    }
    //  A bare name goes out with `resolve`: the broker, which knows every
    //  agent and channel, decides, and refuses a name that is neither.
    parley_err_t rc = streq (target, "all")
                    ? parley_outbox_to (out, target, body, strlen (body))
                    : parley_outbox_resolve (out, target, body, strlen (body));
    if (rc != PARLEY_OK)
        return false;           //  the STEP reports the outbox's refusal
    targets [count] = target;
    return true;
}

//  SENT's item errors -> observations (and a log line each).
static void
s_sent_errors (execution_t *self, const parley_sent_t *sent, const char *const *targets,
               size_t count)
{
    for (size_t i = 0; i < parley_sent_error_count (sent); i++) {
        const parley_failure_t *error = parley_sent_error_at (sent, i);
        if (parley_failure_index (error) >= count)
            continue;
        const char *target = targets [parley_failure_index (error)];
        int code = parley_failure_code (error);
        const char *message = parley_failure_message (error);
        plog_warn ("message to %s refused: %s %s", target, parley_strerror (code), message);
        if (code == PARLEY_ERR_NO_SUCH_TARGET || code == PARLEY_ERR_UNKNOWN_RECIPIENT)
            s_undelivered (self, target, "no agent or channel of that name");
        else
            s_undelivered (self, target, *message? message: parley_strerror (code));
    }
}

//  Remembers a channel we listen to, for the prompt's message targets.
static void
s_listened (agent_team_t *team, const char *channel)
{
    for (size_t i = 0; i < team->channel_count; i++)
        if (streq (team->channels[i], channel))
            return;
    if (team->channel_count == AGENT_MAX_CHANNELS)
        return;
    snprintf (team->channels[team->channel_count], PROTO_MAX_NAME + 1, "%s", channel);
    team->channel_ptrs[team->channel_count] = team->channels[team->channel_count];
    team->channel_count++;
}

int
agent_team_listen (agent_parts_t *p, agent_team_t *team, const char *channel)
{
    assert (p && team && channel);
    parley_err_t rc = parley_client_listen (p->link, channel);
    if (rc != PARLEY_OK) {
        plog_warn ("ListenTo(%.64s) failed: %s: %s", channel, parley_strerror (rc),
                   parley_client_error_text (p->link));
        return -1;
    }
    s_listened (team, channel);
    return 0;
}

//  --no-messages: nothing is sent and no channel is joined, whatever the
//  policy asked for; what it asked for is counted.
static bool
s_suppressed (execution_t *self)
{
    if (!self->parts->no_messages)
        return false;
    const answer_t *answer = self->decided->answer;
    const char *message = answer_message (answer);
    self->counts->msgs_suppressed += message && *message;
    for (size_t i = 0; i < answer_directive_count (answer); i++)
        self->counts->msgs_suppressed += answer_directive (answer, i)->kind == ANSWER_MESSAGE_TO;
    return true;
}

//  The step's messages into `out`, their targets into `targets` (ListenTo
//  is applied at once); returns how many.
static size_t
s_messages (execution_t *self, parley_outbox_t *out, const char **targets)
{
    if (s_suppressed (self))
        return 0;
    const answer_t *answer = self->decided->answer;
    size_t count = 0;
    const char *message = answer_message (answer);
    if (message && *message && s_item (self, out, targets, count, "all", message))
        count++;
    for (size_t i = 0; i < answer_directive_count (answer); i++) {
        const answer_directive_t *d = answer_directive (answer, i);
        if (d->kind == ANSWER_LISTEN_TO)
            agent_team_listen (self->parts, self->team, d->target);
        else
        if (d->text && *d->text && s_item (self, out, targets, count, d->target, d->text))
            count++;
    }
    return count;
}

//  The two values of the team's WRITE, msgpack: the new visits (an
//  array of positions, for the union) and our claim ({id: position or
//  nil}, for the merge).
static void
s_team_values (agent_parts_t *p, const uint64_t *visited, size_t count,
               msgpack_sbuffer *visits, msgpack_sbuffer *claims)
{
    msgpack_packer pk;
    msgpack_packer_init (&pk, visits, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, (uint32_t) count);
    for (size_t i = 0; i < count; i++)
        msgpack_pack_uint64 (&pk, visited[i]);
    msgpack_packer_init (&pk, claims, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 1);
    size_t len = strlen (p->id);
    msgpack_pack_str (&pk, len);
    msgpack_pack_str_body (&pk, p->id, len);
    uint64_t claim = team_facts_own_claim (p->facts);
    if (claim == TEAM_NO_CELL)
        msgpack_pack_nil (&pk);
    else
        msgpack_pack_uint64 (&pk, claim);
}

size_t
agent_team_ops (agent_parts_t *p, uint64_t step, bool force, parley_ops_t *ops)
{
    if (!p->facts)
        return 0;
    const uint64_t *visited;
    size_t count = team_facts_unsynced (p->facts, &visited);
    if (p->no_messages || !p->link || parley_client_stopped (p->link)
    ||  (count == 0 && !team_facts_claim_changed (p->facts))
    ||  (!force && step % TEAM_SYNC_EVERY != 0))
        return 0;
    msgpack_sbuffer visits, claims;
    msgpack_sbuffer_init (&visits);
    msgpack_sbuffer_init (&claims);
    s_team_values (p, visited, count, &visits, &claims);
    //  The builder copies the values: the buffers go at once. A refusal
    //  (memory) is kept by it and reported by the request.
    parley_ops_declare (ops, STATE_KEY_TEAM_VISITED, "union");
    parley_ops_update (ops, STATE_KEY_TEAM_VISITED, visits.data, visits.size);
    parley_ops_declare (ops, STATE_KEY_TEAM_CLAIMS, "merge");
    parley_ops_update (ops, STATE_KEY_TEAM_CLAIMS, claims.data, claims.size);
    msgpack_sbuffer_destroy (&visits);
    msgpack_sbuffer_destroy (&claims);
    return TEAM_SYNC_OPS;
}

void
agent_team_sync (agent_parts_t *p, uint64_t step, bool force)
{
    parley_ops_t *ops = parley_ops_new ();
    size_t count = ops ? agent_team_ops (p, step, force, ops) : 0;
    parley_err_t rc = !ops ? PARLEY_ERR_NOMEM
                    : count ? parley_client_write (p->link, ops, NULL) : PARLEY_OK;
    if (count && rc == PARLEY_OK)
        team_facts_unsynced_clear (p->facts);
    else
    if (count || !ops)
        plog_warn ("writing the team state failed: %s: %s", parley_strerror (rc),
                   ops ? parley_client_error_text (p->link) : "out of memory");
    parley_ops_destroy (&ops);
}

//  STEPPED's parts back into the agent: the messages' errors and counts,
//  the team's write, the move, and the next step's view and mail.
static void
s_stepped (execution_t *self, const parley_stepped_t *done, const char *const *targets,
           size_t count, size_t ops)
{
    agent_parts_t *p = self->parts;
    agent_counters_t *counts = self->counts;
    const parley_sent_t *sent = parley_stepped_sent (done);
    if (count && sent) {
        size_t accepted = parley_sent_accepted (sent);
        counts->msgs_sent += accepted;
        counts->send_errors += count - accepted;
        if (accepted < count)
            s_sent_errors (self, sent, targets, count);
    }
    if (ops && parley_stepped_written (done))
        team_facts_unsynced_clear (p->facts);
    else
    if (ops)
        plog_warn ("writing the team state failed: %s %s",
                   parley_strerror (parley_stepped_ops_code (done)),
                   parley_stepped_ops_message (done));
    if (parley_stepped_action_code (done)) {
        plog_warn ("ACT %s refused: %s", self->decided->action,
                   parley_stepped_action_message (done));
        counts->act_errors++;
        //  The broker's own sentence, so the model reads why in its next prompt.
        char *line = zsys_sprintf ("%s refused by the broker (%s: %.200s)", self->decided->action,
                                   parley_strerror (parley_stepped_action_code (done)),
                                   parley_stepped_action_message (done));
        if (line)
            s_note (self, line);
        free (line);
    }
    const parley_observation_t *observation = parley_stepped_observation (done);
    const parley_mail_t *mail = parley_stepped_mail (done);
    if (observation)
        conn_world_feed_observation (p->world, observation);
    if (mail && p->mailbox)
        conn_mailbox_stage (p->mailbox, mail);
    //  The next Perception starts from this view (and Communication from
    //  this mail) without a request.
    self->step->viewed = observation && (mail || !agent_fetch_size (p));
}

//  The step's STEP: its `step` makes it idempotent (PROTOCOL.md, STEP):
//  the client resends this same frame after a lost reply or a reconnect,
//  and the broker answers a repeated (agent, step) from memory instead of
//  moving and sending again. Steps restart at 1 in a new process, but the
//  run's first request (Perception's look) is a STEP without a number,
//  which makes the broker forget the previous run's: a step number is
//  never taken for the last run's. "end" does not move; it still sends
//  the messages and the team's last write.
static stage_outcome_t
s_execution_try (void *arg)
{
    execution_t *self = (execution_t *) arg;
    agent_parts_t *p = self->parts;
    if (!p->link)
        return STAGE_OK;
    bool end = streq (self->decided->action, "end");
    parley_step_t *step = parley_step_new ();
    if (!step) {
        plog_warn ("STEP %" PRIu64 ": out of memory", self->step->step);
        return STAGE_RETRY;
    }
    const char *targets[ANSWER_MAX_DIRECTIVES + 1];
    size_t count = s_messages (self, parley_step_messages (step), targets);
    size_t op_count = agent_team_ops (p, self->step->step, end, parley_step_ops (step));
    stage_outcome_t outcome = STAGE_OK;
    if (!end || count || op_count) {
        parley_step_set_number (step, self->step->step);
        parley_step_set_ack (step, agent_ack (p));
        parley_step_set_action (step, end? NULL: self->decided->action);
        parley_step_set_fetch (step, end? 0: agent_fetch_size (p), true);
        parley_stepped_t *done = NULL;
        parley_err_t rc = parley_client_step (p->link, step, &done);
        if (rc == PARLEY_OK)
            s_stepped (self, done, targets, count, op_count);
        else {
            //  Nothing of it applied (refused whole), or the broker did not
            //  answer: the next Perception looks again.
            plog_warn ("STEP %" PRIu64 " failed: %s: %s", self->step->step,
                       parley_strerror (rc), parley_client_error_text (p->link));
            self->counts->send_errors += count;
            if (rc < PARLEY_ERR_TIMEOUT)
                self->counts->act_errors += !end;
            else
                outcome = STAGE_RETRY;
        }
        parley_stepped_destroy (&done);
    }
    parley_step_destroy (&step);
    return outcome;
}

//  The ACT could not be delivered (stopped, or the broker kept failing):
//  the step goes on; the next Perception sees where we really are.
static stage_outcome_t
s_execution_fallback (void *arg)
{
    ((execution_t *) arg)->counts->act_errors++;
    return STAGE_FALLBACK;
}

stage_outcome_t
stage_execution (agent_parts_t *p, perceived_t *step, decided_t *decided, agent_team_t *team,
                 agent_counters_t *counts)
{
    assert (p && step && decided && team && counts);
    execution_t self = { p, step, decided, team, counts };
    return stage_attempt (STAGE_EXECUTION, p->stats, s_execution_try, s_execution_fallback,
                          &self);
}
