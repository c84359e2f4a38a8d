// SPDX-License-Identifier: MIT
/*  core - building the core and applying operations. See core.h.

    core_apply is a table from operation kind to one function each; every
    change of the core's state passes through it. An operation that needs
    an agent names it (op->agent): an unknown agent is refused (a replay
    that meets one has diverged). Seqs the operation recorded are checked
    before it applies: the live broker wrote what it saw, so a difference
    means the journal and the core no longer describe the same history.
*/
#include <stdarg.h>
#include <string.h>

#include "core_int.h"

core_t *
core_new (const core_config_t *config, char *why, size_t why_size)
{
    assert (config);
    core_t *self = calloc (1, sizeof (core_t));
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    self->limits = config->limits;
    self->scenario = config->scenario;
    self->agents = agents_new (config->limits.max_agents ? config->limits.max_agents : 1);
    if (self->agents)
        self->mailroom = mailroom_new (self->agents, &config->limits.mail);
    self->state = state_new (&config->limits.state);
    if (!self->agents || !self->mailroom || !self->state) {
        snprintf (why, why_size, "out of memory");
        goto err;
    }
    if (!config->no_world) {
        if (config->world_file && *config->world_file)
            self->world = world_load (self->state, config->world_file, why, why_size);
        else
            self->world = world_new (self->state, &config->world, why, why_size);
        if (!self->world)
            goto err;
        world_set_start (self->world, (world_start_t) config->world_start, config->world.seed);
    }
    const scenario_t *scenario = config->scenario;
    if (scenario) {
        if (workflow_write_initial (self->state, scenario, why, why_size))
            goto err;
        if (scenario->workflow.enabled) {
            size_t retain = config->limits.checkpoints ? config->limits.checkpoints
                          : WORKFLOW_DEFAULT_RETAIN;
            self->workflow = workflow_new (scenario, retain);
            if (!self->workflow) {
                snprintf (why, why_size, "out of memory");
                goto err;
            }
            if (config->limits.max_turns || config->limits.max_revisions)
                workflow_set_limits (self->workflow, config->limits.max_turns,
                                     config->limits.max_revisions, retain);
            if (workflow_start (self->workflow, self->state, why, why_size))
                goto err;
        }
    }
    //  What was written while building is not news to anyone.
    state_changes_reset (self->state);
    return self;
err:
    core_destroy (&self);
    return NULL;
}

void
core_destroy (core_t **self_p)
{
    assert (self_p);
    core_t *self = *self_p;
    if (self) {
        mailroom_destroy (&self->mailroom);
        agents_destroy (&self->agents);
        world_destroy (&self->world);
        workflow_destroy (&self->workflow);
        state_destroy (&self->state);
        free (self);
        *self_p = NULL;
    }
}

agents_t *core_agents (core_t *self) { return self->agents; }
mailroom_t *core_mailroom (core_t *self) { return self->mailroom; }
state_t *core_state (core_t *self) { return self->state; }
world_t *core_world (core_t *self) { return self->world; }
workflow_t *core_workflow (core_t *self) { return self->workflow; }
const scenario_t *core_scenario (core_t *self) { return self->scenario; }
const core_limits_t *core_limits (core_t *self) { return &self->limits; }
uint64_t core_origin (core_t *self) { return self->origin; }
uint64_t core_ops (core_t *self) { return self->ops; }

//  ---------------------------------------------------------------------
//  The operations

static perr_t
s_fail (core_outcome_t *out, perr_t err, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static perr_t
s_fail (core_outcome_t *out, perr_t err, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (out->why, sizeof out->why, format, args);
    va_end (args);
    out->err = err;
    return err;
}

static perr_t
s_limits (core_t *self, const op_t *op, core_outcome_t *out)
{
    self->limits = *op->limits;
    agents_set_max (self->agents, self->limits.max_agents);
    mailroom_set_limits (self->mailroom, &self->limits.mail);
    state_set_limits (self->state, &self->limits.state);
    if (self->workflow)
        workflow_set_limits (self->workflow, self->limits.max_turns, self->limits.max_revisions,
                             self->limits.checkpoints ? self->limits.checkpoints
                             : WORKFLOW_DEFAULT_RETAIN);
    return PERR_NONE;
}

static perr_t
s_origin (core_t *self, const op_t *op, core_outcome_t *out)
{
    self->origin = op->u;
    return PERR_NONE;
}

static void
s_set_caps (agent_t *agent, const msgpack_object *caps)
{
    const char *texts [64];
    size_t lens [64], count = 0;
    for (uint32_t i = 0; caps && caps->type == MSGPACK_OBJECT_ARRAY && i < caps->via.array.size
                         && count < 64; i++) {
        const msgpack_object *cap = &caps->via.array.ptr [i];
        if (cap->type == MSGPACK_OBJECT_STR) {
            texts [count] = cap->via.str.ptr;
            lens [count++] = cap->via.str.size;
        }
    }
    agents_set_caps (agent, texts, lens, count);
}

static perr_t
s_hello (core_t *self, const op_t *op, core_outcome_t *out)
{
    //  The edge never registers "" (the broker's own operations carry it):
    //  a record that does is damaged, and its agent could not be written
    //  to a snapshot and read back.
    if (!op->agent || !op->agent [0])
        return s_fail (out, PERR_BAD_NAME, "HELLO without an agent id");
    agent_t *agent = agents_lookup (self->agents, op->agent);
    out->created = false;
    if (!agent) {
        agent = agents_create (self->agents, op->agent);
        if (!agent)
            return s_fail (out, PERR_TOO_MANY_AGENTS, "the broker's limit of %zu agents is "
                           "reached", agents_max (self->agents));
        out->created = true;
    }
    size_t len = op->text_len < sizeof agent->token - 1 ? op->text_len : sizeof agent->token - 1;
    memcpy (agent->token, op->text ? op->text : "", len);
    agent->token [len] = 0;
    //  A HELLO without caps keeps the ones it had.
    if (op->list && op->list->type == MSGPACK_OBJECT_ARRAY && op->list->via.array.size)
        s_set_caps (agent, op->list);
    out->agent = agent;
    return PERR_NONE;
}

static perr_t
s_bye (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    agent->token [0] = 0;
    return PERR_NONE;
}

static perr_t
s_forget (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    char why [256];
    out->state_seq_before = state_seq (self->state);
    if (self->world)
        world_leave (self->world, agent->id, why, sizeof why);
    mailroom_forget (self->mailroom, &agent);
    return PERR_NONE;
}

static perr_t
s_ack (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    mailroom_ack (self->mailroom, agent, op->u);
    return PERR_NONE;
}

static perr_t
s_deliver (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    mailroom_deliver (self->mailroom, agent, op->u);
    return PERR_NONE;
}

static perr_t
s_listen (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    char name [PROTO_MAX_NAME + 1];
    snprintf (name, sizeof name, "%.*s", (int) op->text_len, op->text);
    perr_t err = op->kind == OP_LISTEN ? mailroom_listen (self->mailroom, agent, name)
                                       : mailroom_unlisten (self->mailroom, agent, name);
    if (err == PERR_TOO_MANY_CHANNELS)
        return s_fail (out, err, "the broker's limit of %zu channels is reached",
                       self->limits.mail.max_channels);
    if (err == PERR_NOT_LISTENING)
        return s_fail (out, err, "%s does not listen to channel %s", agent->id, name);
    return err;
}

static perr_t
s_write (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    const msgpack_object *ops = op->frame ? pmsg_field (op->frame, "ops") : NULL;
    if (!ops)
        return s_fail (out, PERR_BAD_FIELD, "WRITE without ops");
    out->state_seq_before = state_seq (self->state);
    perr_t err = state_apply (self->state, ops, &out->written, out->why, sizeof out->why);
    if (err && !out->why [0])
        snprintf (out->why, sizeof out->why, "the write was rejected");
    return out->err = err;
}

static perr_t
s_move (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    if (!self->world)
        return s_fail (out, PERR_BAD_ACTION, "scenario %s has no world",
                       self->scenario ? self->scenario->name : "(none)");
    out->state_seq_before = state_seq (self->state);
    perr_t err = op->text
               ? world_act (self->world, agent->id, op->text, op->text_len, &out->obs,
                            out->why, sizeof out->why)
               : world_perceive (self->world, agent->id, &out->obs, out->why, sizeof out->why);
    if (err) {
        if (!out->why [0])
            snprintf (out->why, sizeof out->why, "the world refused");
        return out->err = err;
    }
    if (op->text) {
        agent->acts++;
        if (op->has_u2)
            agent->step = op->u2;
    }
    return PERR_NONE;
}

static perr_t
s_world_reset (core_t *self, const op_t *op, core_outcome_t *out)
{
    if (!self->world)
        return s_fail (out, PERR_BAD_ACTION, "scenario %s has no world",
                       self->scenario ? self->scenario->name : "(none)");
    out->state_seq_before = state_seq (self->state);
    perr_t err = world_reset (self->world, op->has_u2 ? &op->u2 : NULL, out->why, sizeof out->why);
    if (err)
        return out->err = err;
    //  A retried ACT from before the reset must not get an old answer.
    for (size_t i = 0; i < agents_size (self->agents); i++)
        replay_forget (&agents_at (self->agents, i)->slots [SLOT_ACT]);
    return PERR_NONE;
}

static perr_t
s_workflow (core_t *self, const op_t *op, core_outcome_t *out)
{
    if (!self->workflow)
        return s_fail (out, PERR_NO_WORKFLOW, "the broker runs no workflow (start it with "
                       "--scenario DIR whose scenario.yaml has a workflow section)");
    out->state_seq_before = state_seq (self->state);
    perr_t err = PERR_NONE;
    char reason [1100];
    switch (op->kind) {
        case OP_HANDOVER:
            if (!op->frame)
                return s_fail (out, PERR_BAD_FIELD, "HANDOVER without its request");
            err = workflow_handover (self->workflow, self->state, op->frame, &out->written,
                                     out->why, sizeof out->why);
            break;
        case OP_WF_BEGIN:
            err = workflow_begin (self->workflow, self->state, out->why, sizeof out->why);
            break;
        case OP_WF_FAIL:
            snprintf (reason, sizeof reason, "%.*s", (int) op->text_len, op->text);
            err = workflow_fail (self->workflow, self->state, reason, out->why, sizeof out->why);
            break;
        case OP_RESUME:
            err = workflow_resume (self->workflow, self->state, op->u, out->why, sizeof out->why);
            break;
        default:
            break;
    }
    out->workflow_moved = err == PERR_NONE;
    return out->err = err;
}

static perr_t
s_remember (core_t *self, agent_t *agent, const op_t *op, core_outcome_t *out)
{
    replay_t *slot = &agent->slots [op->slot];
    if (!op->bytes)
        replay_forget (slot);
    else
    if (!replay_set (slot, op->u, (size_t) op->u2, op->bytes, op->size))
        mailroom_oom ("remembering an answer");
    return PERR_NONE;
}

//  The seq an operation recorded is the one it meets (see the doc block).
//  A difference is reported in the outcome (`diverged`, with the sentence
//  in `divergence`); the operation applies all the same: it is still what
//  happened, only the numbers around it moved.
static void
s_check_step (core_t *self, const op_t *op, core_outcome_t *out)
{
    uint64_t now = 0;
    if (op->kind == OP_SEND)
        now = mailroom_counters (self->mailroom)->mail_seq + 1;
    else
    if (op->kind == OP_WRITE || op->kind == OP_HANDOVER)
        now = state_seq (self->state);
    else
        return;
    if (op->u == now)
        return;
    out->diverged = true;
    snprintf (out->divergence, sizeof out->divergence, "%s of %s recorded %s seq %llu where "
              "this core is at %llu", op_kind_name (op->kind), op->agent [0] ? op->agent
              : "the broker", op->kind == OP_SEND ? "mail" : "state",
              (unsigned long long) op->u, (unsigned long long) now);
}

static perr_t
s_dispatch (core_t *self, const op_t *op, core_outcome_t *out)
{
    //  Operations of the broker's own and of the registration itself.
    switch (op->kind) {
        case OP_LIMITS:      return s_limits (self, op, out);
        case OP_ORIGIN:      return s_origin (self, op, out);
        case OP_HELLO:       return s_hello (self, op, out);
        case OP_WORLD_RESET: return s_world_reset (self, op, out);
        case OP_HANDOVER: case OP_WF_BEGIN: case OP_WF_FAIL: case OP_RESUME:
            return s_workflow (self, op, out);
        default:
            break;
    }
    agent_t *agent = op->agent ? agents_lookup (self->agents, op->agent) : NULL;
    if (!agent)
        return s_fail (out, PERR_NOT_HELLO, "%s for %s, who is not registered",
                       op_kind_name (op->kind), op->agent ? op->agent : "nobody");
    switch (op->kind) {
        case OP_BYE:         return s_bye (self, agent, op, out);
        case OP_FORGET:      return s_forget (self, agent, op, out);
        case OP_SEND:        return core_send (self, agent, op, out);
        case OP_ACK:         return s_ack (self, agent, op, out);
        case OP_DELIVER:     return s_deliver (self, agent, op, out);
        case OP_LISTEN: case OP_UNLISTEN:
            return s_listen (self, agent, op, out);
        case OP_WRITE:       return s_write (self, agent, op, out);
        case OP_MOVE:        return s_move (self, agent, op, out);
        case OP_REMEMBER:    return s_remember (self, agent, op, out);
        default:
            return s_fail (out, PERR_NOT_REQUEST, "unknown operation %d", (int) op->kind);
    }
}

perr_t
core_apply (core_t *self, const op_t *op, core_outcome_t *outcome)
{
    assert (self && op);
    core_outcome_t scratch;
    core_outcome_t *out = outcome ? outcome : &scratch;
    uint64_t *seqs = out->seqs;
    size_t seq_room = out->seq_room;
    memset (out, 0, sizeof *out);
    out->seqs = seqs;
    out->seq_room = seq_room;
    out->state_seq_before = state_seq (self->state);
    self->ops++;
    mailroom_set_time (self->mailroom, op->ts);
    s_check_step (self, op, out);

    perr_t err = s_dispatch (self, op, out);
    //  Out of memory inside a module: the live run and its replay must not
    //  differ (core.h).
    if (err == PERR_INTERNAL)
        mailroom_oom (out->why [0] ? out->why : "applying an operation");
    return err;
}
