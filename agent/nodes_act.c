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

static int
s_act (agent_shared_t *a)
{
    //  `step` makes the move idempotent (PROTOCOL.md, ACT): brokerlink
    //  resends this same frame after a lost reply or a reconnect, and the
    //  broker answers a repeated (agent, step) with the OBSERVATION it gave
    //  the first copy instead of moving again. A broker that predates the
    //  field ignores it (unknown fields are ignored). Known edge: steps
    //  restart at 1 in a new process, so a restarted agent whose previous
    //  run's last ACT had the same step gets that run's OBSERVATION once
    //  and does not move that step (its position is still right).
    penc_t *enc = brokerlink_begin (a->link, PMSG_ACT, 2);
    penc_kv_cstr (enc, "action", a->action);
    penc_kv_uint (enc, "step", a->step);
    char err[256];
    pmsg_t *reply = brokerlink_call (a->link, err, sizeof (err));
    if (!reply) {
        plog_warn ("ACT %s failed: %s", a->action, err);
        return -1;
    }
    if (conn_world_feed_msg (a->world, reply) != 0) {
        brokerlink_error_text (reply, err, sizeof (err));
        plog_warn ("ACT %s refused: %s", a->action, err);
        a->act_errors++;
    }
    pmsg_destroy (&reply);
    return 0;
}

typedef struct {
    const char *to;             //  agent or "all", or NULL
    const char *channel;        //  or NULL
    const char *body;
} send_item_t;

static bool
s_item (agent_shared_t *a, send_item_t *item, const char *target, const char *body)
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
    return true;
}

//  The body's length cut to the broker's max_body (0: no cut) at a UTF-8
//  character boundary: a cut inside a character would send a str that is
//  not UTF-8 to every reader (and their JSON renderings).
static size_t
s_body_len (const char *body, size_t max_body)
{
    size_t len = strlen (body);
    if (max_body == 0 || len <= max_body)
        return len;
    len = max_body;
    while (len > 0 && ((unsigned char) body[len] & 0xC0) == 0x80)
        len--;
    return len;
}

static void
s_send (agent_shared_t *a, send_item_t *items, size_t count)
{
    size_t max_body = brokerlink_welcome (a->link)->max_body;
    //  `batch` makes the SEND idempotent like `step` makes ACT: brokerlink
    //  resends this very frame after a lost reply, and the broker answers
    //  a repeated batch id with the first SENT instead of posting again.
    penc_t *enc = brokerlink_begin (a->link, PMSG_SEND, 2);
    penc_kv_uint (enc, "batch", brokerlink_next_batch (a->link));
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, items[i].to? "to": "channel", items[i].to? items[i].to: items[i].channel);
        penc_kv_str (enc, "body", items[i].body, s_body_len (items[i].body, max_body));
    }
    char err[256];
    pmsg_t *reply = brokerlink_call (a->link, err, sizeof (err));
    if (reply && pmsg_type (reply) == PMSG_SENT) {
        uint64_t accepted = pmsg_uint (reply, "accepted", 0);
        a->msgs_sent += accepted;
        a->send_errors += count - accepted;
        if (accepted < count)
            plog_warn ("%" PRIu64 " of %zu messages refused by the broker", count - accepted, count);
    }
    else {
        if (reply)
            brokerlink_error_text (reply, err, sizeof (err));
        plog_warn ("SEND failed: %s", err);
        a->send_errors += count;
    }
    pmsg_destroy (&reply);
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
    send_item_t items[ANSWER_MAX_DIRECTIVES + 1];
    size_t count = 0;
    const char *message = answer_message (a->answer);
    if (message && *message && s_item (a, &items[count], "all", message))
        count++;
    for (size_t i = 0; i < answer_directive_count (a->answer); i++) {
        const answer_directive_t *d = answer_directive (a->answer, i);
        char err[256];
        if (d->kind == ANSWER_LISTEN_TO) {
            if (brokerlink_listen (a->link, d->target, err, sizeof (err)) != 0)
                plog_warn ("ListenTo(%.64s) failed: %s", d->target, err);
        }
        else
        if (d->text && *d->text && s_item (a, &items[count], d->target, d->text))
            count++;
    }
    if (count > 0)
        s_send (a, items, count);
}

//  One op of a WRITE: {op, key, reducer} or {op, key, value...} (the
//  caller packs the value after).
static void
s_op (penc_t *enc, const char *op, const char *key, const char *reducer)
{
    msgpack_pack_map (penc_packer (enc), 3);
    penc_kv_cstr (enc, "op", op);
    penc_kv_cstr (enc, "key", key);
    if (reducer)
        penc_kv_cstr (enc, "reducer", reducer);
    else
        penc_key (enc, "value");
}

void
agent_team_sync (agent_shared_t *a, bool force)
{
    const uint64_t *visited;
    size_t count = team_facts_unsynced (a->facts, &visited);
    if (a->no_messages || !a->link || brokerlink_lost (a->link)
    ||  (count == 0 && !team_facts_claim_changed (a->facts))
    ||  (!force && a->step % TEAM_SYNC_EVERY != 0))
        return;
    penc_t *enc = brokerlink_begin (a->link, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_packer *pk = penc_packer (enc);
    msgpack_pack_array (pk, 4);
    s_op (enc, "declare", STATE_KEY_TEAM_VISITED, "union");
    s_op (enc, "update", STATE_KEY_TEAM_VISITED, NULL);
    msgpack_pack_array (pk, count);
    for (size_t i = 0; i < count; i++)
        msgpack_pack_uint64 (pk, visited[i]);
    s_op (enc, "declare", STATE_KEY_TEAM_CLAIMS, "merge");
    s_op (enc, "update", STATE_KEY_TEAM_CLAIMS, NULL);
    msgpack_pack_map (pk, 1);
    penc_cstr (enc, a->id);
    uint64_t claim = team_facts_own_claim (a->facts);
    if (claim == TEAM_NO_CELL)
        msgpack_pack_nil (pk);
    else
        msgpack_pack_uint64 (pk, claim);
    char err[256];
    pmsg_t *reply = brokerlink_call (a->link, err, sizeof (err));
    if (reply && pmsg_type (reply) == PMSG_WRITTEN)
        team_facts_unsynced_clear (a->facts);
    else {
        if (reply)
            brokerlink_error_text (reply, err, sizeof (err));
        plog_warn ("writing the team state failed: %s", err);
    }
    pmsg_destroy (&reply);
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
    if (!streq (a->action, "end") && s_act (a) != 0) {
        if (!brokerlink_lost (a->link))
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
