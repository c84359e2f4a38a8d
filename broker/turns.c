// SPDX-License-Identifier: MIT
/*  turns - who acts for the role holding the turn, timeouts, departures,
    WORKFLOW_EVENTs. See turns.h.

    Idempotent HANDOVER: a HANDOVER with `turn` (the turn it ends) that
    comes again after the turn moved on, because its WORKFLOW_INFO was
    lost or the broker restarted, gets that WORKFLOW_INFO again and hands
    nothing over twice: the answer is remembered (OP_REMEMBER, slot
    SLOT_HANDOVER) under the turn, in the journal with the hand-over.
*/
#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

struct _turns_t {
    char agent [PROTO_MAX_NAME + 1];    //  the agent acting for the holder; "" for none
    int64_t started_ms;                 //  monotonic, for the turn timeout
    //  Why the turn changed agents within the role (a holder left, a
    //  timeout): shown as the reason until the turn moves on. Not durable:
    //  the turn's agent is not either.
    char note [256];
};

//  The reason WORKFLOW_INFO and the events show.
static const char *
s_reason (broker_t *broker)
{
    turns_t *self = broker->turns;
    return self->note [0] ? self->note : workflow_reason (broker->workflow);
}

turns_t *
turns_new (void)
{
    return calloc (1, sizeof (turns_t));
}

void
turns_destroy (turns_t **self_p)
{
    assert (self_p);
    free (*self_p);
    *self_p = NULL;
}

const char *
turns_agent (broker_t *broker)
{
    return broker->turns->agent;
}

//  A workflow operation within the request's call, or in a call of its
//  own when none is running (a timer, a connection that closed).
static perr_t
s_apply (broker_t *broker, op_t *op, core_outcome_t *out)
{
    if (call_active (broker))
        return call_apply (broker, op, out);
    return call_one (broker, "", op, out);
}

//  A workflow operation a request asked for, within its call; false
//  when it failed and the request was answered with the error.
static bool
s_apply_or_answer (broker_t *broker, op_t *op, uint64_t id)
{
    core_outcome_t out;
    perr_t err = call_apply (broker, op, &out);
    if (err) {
        dispatch_error (broker, id, err, "%s", out.why);
        return false;
    }
    return true;
}

//  No agent acts for the holder any more, and its note is gone.
static void
s_unassign (turns_t *self)
{
    self->agent [0] = 0;
    self->note [0] = 0;
}

static void
s_publish (broker_t *broker, const char *event)
{
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    const char *reason = s_reason (broker);
    const role_t *holder = workflow_holder (flow);
    penc_t *enc = &broker->event;
    size_t fields = 5 + (holder != NULL) + (self->agent [0] != 0) + (reason [0] != 0);
    penc_begin (enc, PMSG_WORKFLOW_EVENT, 0, fields);
    penc_kv_cstr (enc, "event", event);
    penc_kv_cstr (enc, "status", wf_status_name (workflow_status (flow)));
    penc_kv_uint (enc, "turn", workflow_turn (flow));
    penc_kv_uint (enc, "revisions", workflow_revisions (flow));
    penc_kv_uint (enc, "checkpoint", workflow_checkpoint_number (flow));
    if (holder)
        penc_kv_cstr (enc, "holder", holder->name);
    if (self->agent [0])
        penc_kv_cstr (enc, "agent", self->agent);
    if (reason [0])
        penc_kv_cstr (enc, "reason", reason);
    char topic [64];
    int len = snprintf (topic, sizeof topic, "workflow.%s", event);
    publish_encoded (broker, topic, (size_t) len);
}

//  An online agent of `role` other than `except`, in registry order.
static agent_t *
s_find_agent (broker_t *broker, const char *role, const char *except)
{
    agent_t *const *all = agents_array (broker->agents);
    for (size_t i = 0; i < agents_size (broker->agents); i++) {
        agent_t *agent = all [i];
        const char *plays = workflow_role_of_caps (agent->caps);
        if (agent->online && plays && strcmp (plays, role) == 0
        &&  (!except || strcmp (agent->id, except) != 0))
            return agent;
    }
    return NULL;
}

//  Gives the turn to an online agent of the holding role when nobody acts
//  for it yet; publishes `turn` (or `paused` for a person) either way.
static void
s_assign (broker_t *broker, const char *except)
{
    turns_t *self = broker->turns;
    const role_t *holder = workflow_holder (broker->workflow);
    if (workflow_ended (broker->workflow) || !holder)
        return;
    agent_t *agent = self->agent [0] ? NULL : s_find_agent (broker, holder->name, except);
    if (agent)
        snprintf (self->agent, sizeof self->agent, "%s", agent->id);
    self->started_ms = broker->now_ms;
    s_publish (broker, holder->human ? "paused" : "turn");
}

//  The workflow failed by an operation of the broker's (a holder gone,
//  a timeout): the event and the log.
static void
s_fail (broker_t *broker, const char *reason)
{
    turns_t *self = broker->turns;
    op_t op = { .kind = OP_WF_FAIL, .text = reason, .text_len = strlen (reason) };
    core_outcome_t out;
    perr_t err = s_apply (broker, &op, &out);
    s_unassign (self);
    if (err) {
        plog_error ("workflow failure not recorded (%s): %s", perr_name (err),
                    err == PERR_STORAGE ? "the journal cannot take it" : out.why);
        return;
    }
    plog_warn ("workflow failed at turn %llu: %s",
               (unsigned long long) workflow_turn (broker->workflow), reason);
    s_publish (broker, "failed");
}

void
turns_on_hello (broker_t *broker, agent_t *agent)
{
    workflow_t *flow = broker->workflow;
    const char *role = flow ? workflow_role_of_caps (agent->caps) : NULL;
    const role_t *holder = flow ? workflow_holder (flow) : NULL;
    if (!role || workflow_ended (flow) || !holder || strcmp (role, holder->name) != 0)
        return;
    if (workflow_status (flow) == WF_PENDING) {
        op_t op = { .kind = OP_WF_BEGIN };
        core_outcome_t out;
        if (s_apply (broker, &op, &out) != PERR_NONE) {
            plog_error ("workflow not begun: %s", out.why);
            return;
        }
        plog_info ("workflow started: %s holds turn 1", holder->name);
        s_assign (broker, NULL);
    }
    else
    if (!broker->turns->agent [0])
        s_assign (broker, NULL);
}

//  The holder is gone or silent: a replacement of the same role, else fail.
static void
s_replace_or_fail (broker_t *broker, const char *what, bool may_replace)
{
    turns_t *self = broker->turns;
    const role_t *holder = workflow_holder (broker->workflow);
    char gone [PROTO_MAX_NAME + 1];
    snprintf (gone, sizeof gone, "%s", self->agent);
    self->agent [0] = 0;
    agent_t *replacement = may_replace ? s_find_agent (broker, holder->name, gone) : NULL;
    if (replacement) {
        snprintf (self->note, sizeof self->note, "%s %s; %s takes the turn of %s", gone, what,
                  replacement->id, holder->name);
        plog_warn ("workflow: %s", self->note);
        s_assign (broker, gone);
        return;
    }
    char reason [256];
    snprintf (reason, sizeof reason, "the turn holder %s (role %s) %s and no other agent of "
              "the role is online", gone [0] ? gone : "(none)", holder->name, what);
    s_fail (broker, reason);
}

void
turns_on_detach (broker_t *broker, agent_t *agent, const char *event)
{
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    if (!flow || workflow_ended (flow) || !workflow_holder (flow)
    ||  strcmp (self->agent, agent->id) != 0)
        return;
    if (workflow_holder (flow)->human) {
        //  A person's tool comes and goes: the turn waits for the next one.
        self->agent [0] = 0;
        return;
    }
    s_replace_or_fail (broker, event, true);
}

int
turns_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *broker = arg;
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    const role_t *holder = workflow_holder (flow);
    uint64_t timeout = workflow_scenario (flow)->workflow.turn_timeout_ms;
    if (!timeout || workflow_ended (flow) || workflow_status (flow) == WF_PENDING || !holder
    ||  holder->human)
        return 0;
    broker->now_ms = pclock_mono_ms ();
    if (broker->now_ms - self->started_ms <= (int64_t) timeout)
        return 0;
    char what [256];
    if (!self->agent [0]) {
        //  Nobody of the role ever came (one online would have been given the turn).
        snprintf (what, sizeof what, "no agent of role %s came to take turn %llu within the "
                  "%llu ms turn timeout", holder->name,
                  (unsigned long long) workflow_turn (flow), (unsigned long long) timeout);
        s_fail (broker, what);
    }
    else {
        snprintf (what, sizeof what, "held the turn past the %llu ms turn timeout",
                  (unsigned long long) timeout);
        s_replace_or_fail (broker, what, workflow_scenario (flow)->workflow.on_timeout
                                         == SCENARIO_TIMEOUT_REPLACE);
    }
    //  A timer's call ends its own turn: its events go now.
    return dispatch_release (broker) ? 0 : -1;
}

bool
turns_rejects_write (broker_t *broker, uint64_t id, const msgpack_object *ops)
{
    workflow_t *flow = broker->workflow;
    if (!flow || !ops || ops->type != MSGPACK_OBJECT_ARRAY)
        return false;
    for (uint32_t i = 0; i < ops->via.array.size; i++) {
        size_t len = 0;
        const char *key = pobj_str (&ops->via.array.ptr [i], "key", &len);
        if (key && workflow_is_key (flow, key, len)) {
            dispatch_error (broker, id, PERR_BAD_FIELD,
                            "op %u: '%.*s' is a workflow key; only HANDOVER moves the workflow",
                            i, (int) (len > 64 ? 64 : len), key);
            return true;
        }
    }
    return false;
}

//  WORKFLOW_INFO into the reply; *head is where its fields start.
static void
s_encode_info (broker_t *broker, uint64_t id, size_t *head, size_t *count)
{
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    const role_t *holder = workflow_holder (flow);
    const char *reason = s_reason (broker);
    penc_t *enc = &broker->reply;
    bool paused = holder && holder->human && !workflow_ended (flow);
    size_t fields = 7 + (holder != NULL) + (self->agent [0] != 0) + paused + (reason [0] != 0);
    penc_begin (enc, PMSG_WORKFLOW_INFO, id, fields);
    *head = penc_size (enc);
    *count = fields;
    penc_kv_cstr (enc, "status", wf_status_name (workflow_status (flow)));
    penc_kv_uint (enc, "turn", workflow_turn (flow));
    penc_kv_uint (enc, "revisions", workflow_revisions (flow));
    penc_kv_uint (enc, "max_revisions", workflow_max_revisions (flow));
    penc_kv_uint (enc, "max_turns", workflow_max_turns (flow));
    penc_kv_uint (enc, "checkpoint", workflow_checkpoint_number (flow));
    penc_kv_uint (enc, "seq", state_seq (broker->state));
    if (holder)
        penc_kv_cstr (enc, "holder", holder->name);
    if (self->agent [0])
        penc_kv_cstr (enc, "agent", self->agent);
    if (paused)
        penc_kv_bool (enc, "paused", true);
    if (reason [0])
        penc_kv_cstr (enc, "reason", reason);
}

void
turns_encode_info (broker_t *broker, uint64_t id)
{
    size_t head, fields;
    s_encode_info (broker, id, &head, &fields);
}

void
turns_handover (broker_t *broker, const pmsg_t *msg, agent_t *agent, uint64_t id)
{
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    const msgpack_object *turn_field = pmsg_field (msg, "turn");
    uint64_t turn = pmsg_uint (msg, "turn", 0);
    //  A resend of a hand-over that was taken: the same answer again.
    if (turn_field
    &&  replay_answer (&agent->slots [SLOT_HANDOVER], turn, PMSG_WORKFLOW_INFO, id, &broker->reply))
        return;
    if (workflow_ended (flow)) {
        dispatch_error (broker, id, PERR_WORKFLOW_ENDED, "the workflow is %s: %s",
                        wf_status_name (workflow_status (flow)), workflow_reason (flow));
        return;
    }
    if (!self->agent [0] || strcmp (self->agent, agent->id) != 0) {
        dispatch_error (broker, id, PERR_NOT_TURN_HOLDER,
                        "%s does not hold the turn: %s holds it for role %s", agent->id,
                        self->agent [0] ? self->agent : "nobody", workflow_holder (flow)->name);
        return;
    }
    if (turn_field && turn != workflow_turn (flow)) {
        dispatch_error (broker, id, PERR_NOT_TURN_HOLDER, "HANDOVER ends turn %llu, but the "
                        "workflow is at turn %llu", (unsigned long long) turn,
                        (unsigned long long) workflow_turn (flow));
        return;
    }
    const char *from = workflow_holder (flow)->name;
    uint64_t ended = workflow_turn (flow);
    op_t op = { .kind = OP_HANDOVER, .u = state_seq (broker->state) };
    if (!s_apply_or_answer (broker, &op, id))
        return;
    const role_t *holder = workflow_holder (flow);
    plog_info ("workflow turn %llu: %s (%s) -> %s, status %s%s%s", (unsigned long long) ended,
               from, agent->id, holder ? holder->name : "(end)",
               wf_status_name (workflow_status (flow)), workflow_reason (flow) [0] ? ": " : "",
               workflow_reason (flow));
    s_unassign (self);
    if (workflow_ended (flow))
        s_publish (broker, wf_status_name (workflow_status (flow)));
    else
        s_assign (broker, NULL);
    size_t head, fields;
    s_encode_info (broker, id, &head, &fields);
    if (turn_field)
        remember (broker, agent, SLOT_HANDOVER, true, turn, head, fields);
}

void
turns_resume (broker_t *broker, uint64_t number, uint64_t id)
{
    workflow_t *flow = broker->workflow;
    turns_t *self = broker->turns;
    op_t op = { .kind = OP_RESUME, .u = number };
    if (!s_apply_or_answer (broker, &op, id))
        return;
    const role_t *holder = workflow_holder (flow);
    plog_info ("workflow resumed from checkpoint %llu: turn %llu, %s, holder %s",
               (unsigned long long) number, (unsigned long long) workflow_turn (flow),
               wf_status_name (workflow_status (flow)), holder ? holder->name : "(none)");
    s_unassign (self);
    s_publish (broker, "resumed");
    if (workflow_status (flow) == WF_PENDING) {
        //  Back to the start: the entry role's agent, if online, begins again.
        agent_t *const *all = agents_array (broker->agents);
        for (size_t i = 0; i < agents_size (broker->agents); i++)
            if (all [i]->online) {
                turns_on_hello (broker, all [i]);
                if (workflow_status (flow) != WF_PENDING)
                    break;
            }
    }
    else
        s_assign (broker, NULL);
    turns_encode_info (broker, id);
}
