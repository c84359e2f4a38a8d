// SPDX-License-Identifier: MIT
/*  workflow - turns, hand-over, limits and the turn holder's liveness.
    See workflow.h; the HANDOVER batch is built in workflow_batch.c and
    RESUME in workflow_resume.c.
*/
#include "broker_internal.h"
#include "workflow_int.h"
#include "pclock.h"
#include "plog.h"

workflow_t *
workflow_new (const scenario_t *scenario, size_t retain)
{
    assert (scenario && scenario->workflow.enabled);
    workflow_t *self = calloc (1, sizeof (workflow_t));
    if (!self)
        return NULL;
    self->scenario = scenario;
    self->flow = &scenario->workflow;
    self->checkpoints = checkpoints_new (retain ? retain : 1);
    if (!self->checkpoints)
        workflow_destroy (&self);
    return self;
}

void
workflow_destroy (workflow_t **self_p)
{
    assert (self_p);
    workflow_t *self = *self_p;
    if (self) {
        checkpoints_destroy (&self->checkpoints);
        free (self);
        *self_p = NULL;
    }
}

checkpoints_t *
workflow_checkpoints (workflow_t *self)
{
    assert (self);
    return self->checkpoints;
}

const char *
workflow_agent_role (const agent_t *agent)
{
    for (const char *cap = zlistx_first (agent->caps); cap; cap = zlistx_next (agent->caps))
        if (strncmp (cap, WORKFLOW_ROLE_CAP, strlen (WORKFLOW_ROLE_CAP)) == 0)
            return cap + strlen (WORKFLOW_ROLE_CAP);
    return NULL;
}

bool
workflow_ended (const workflow_t *self)
{
    return self->status == WF_DONE || self->status == WF_FAILED;
}

bool
workflow_is_key (const workflow_t *self, const char *key, size_t len)
{
    const char *keys [] = { self->flow->holder_key, self->flow->status_key,
                            self->flow->revisions_key, self->flow->turn_key };
    for (size_t i = 0; i < 4; i++)
        if (strlen (keys [i]) == len && memcmp (keys [i], key, len) == 0)
            return true;
    return false;
}

//  The workflow keys' values, as set ops for a batch.
void
workflow_pack_keys (const workflow_t *self, msgpack_packer *packer)
{
    const char *keys [] = { self->flow->holder_key, self->flow->status_key,
                            self->flow->revisions_key, self->flow->turn_key };
    for (size_t i = 0; i < 4; i++) {
        msgpack_pack_map (packer, 3);
        msgpack_pack_str_with_body (packer, "op", 2);
        msgpack_pack_str_with_body (packer, "set", 3);
        msgpack_pack_str_with_body (packer, "key", 3);
        msgpack_pack_str_with_body (packer, keys [i], strlen (keys [i]));
        msgpack_pack_str_with_body (packer, "value", 5);
        if (i == 0 && self->holder)
            msgpack_pack_str_with_body (packer, self->holder->name, strlen (self->holder->name));
        else
        if (i == 0)
            msgpack_pack_nil (packer);
        else
        if (i == 1)
            msgpack_pack_str_with_body (packer, wf_status_name (self->status),
                                        strlen (wf_status_name (self->status)));
        else
            msgpack_pack_uint64 (packer, i == 2 ? self->revisions : self->turn);
    }
}

//  Writes the workflow keys on their own (a start, a failure by timeout).
static int
s_write_keys (broker_t *broker, char *why, size_t why_size)
{
    workflow_t *self = broker->workflow;
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer packer;
    msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array (&packer, 4);
    workflow_pack_keys (self, &packer);
    perr_t err = workflow_apply_packed (broker, buffer.data, buffer.size, NULL, why, why_size);
    msgpack_sbuffer_destroy (&buffer);
    return err ? -1 : 0;
}

void
workflow_checkpoint (broker_t *broker)
{
    workflow_t *self = broker->workflow;
    checkpoint_meta_t meta = {
        .turn = self->turn, .revisions = self->revisions, .status = self->status
    };
    snprintf (meta.holder, sizeof meta.holder, "%s", self->holder ? self->holder->name : "");
    snprintf (meta.reason, sizeof meta.reason, "%s", self->reason);
    int64_t number = checkpoint_record (self->checkpoints, broker->state, &meta);
    if (number < 0)
        plog_error ("checkpoint at turn %llu not recorded: out of memory",
                    (unsigned long long) self->turn);
    else
        self->checkpoint = (uint64_t) number;
}

void
workflow_publish (broker_t *broker, const char *event)
{
    workflow_t *self = broker->workflow;
    penc_t *enc = &broker->event;
    size_t fields = 5 + (self->holder != NULL) + (self->agent [0] != 0) + (self->reason [0] != 0);
    penc_begin (enc, PMSG_WORKFLOW_EVENT, 0, fields);
    penc_kv_cstr (enc, "event", event);
    penc_kv_cstr (enc, "status", wf_status_name (self->status));
    penc_kv_uint (enc, "turn", self->turn);
    penc_kv_uint (enc, "revisions", self->revisions);
    penc_kv_uint (enc, "checkpoint", self->checkpoint);
    if (self->holder)
        penc_kv_cstr (enc, "holder", self->holder->name);
    if (self->agent [0])
        penc_kv_cstr (enc, "agent", self->agent);
    if (self->reason [0])
        penc_kv_cstr (enc, "reason", self->reason);
    char topic [64];
    int len = snprintf (topic, sizeof topic, "workflow.%s", event);
    publish_encoded (broker, topic, (size_t) len);
}

//  Ends the workflow failed with `reason`: keys written, checkpoint, event.
void
workflow_fail (broker_t *broker, const char *reason)
{
    workflow_t *self = broker->workflow;
    self->status = WF_FAILED;
    self->holder = NULL;
    self->agent [0] = 0;
    snprintf (self->reason, sizeof self->reason, "%s", reason);
    plog_warn ("workflow failed at turn %llu: %s", (unsigned long long) self->turn, reason);
    char why [256];
    uint64_t before = state_seq (broker->state);
    if (s_write_keys (broker, why, sizeof why))
        plog_error ("workflow keys not written: %s", why);
    publish_state_changes (broker, before);
    workflow_checkpoint (broker);
    workflow_publish (broker, "failed");
}

//  An online agent of `role` other than `except`, in registry order.
static agent_t *
s_find_agent (broker_t *broker, const char *role, const char *except)
{
    agent_t *const *all = agents_array (broker->agents);
    for (size_t i = 0; i < agents_size (broker->agents); i++) {
        agent_t *agent = all [i];
        const char *plays = workflow_agent_role (agent);
        if (agent->online && plays && strcmp (plays, role) == 0
        &&  (!except || strcmp (agent->id, except) != 0))
            return agent;
    }
    return NULL;
}

//  Gives the turn to an online agent of the holding role when nobody acts
//  for it yet; publishes `turn` (or `paused` for a person) either way.
void
workflow_assign (broker_t *broker, const char *except)
{
    workflow_t *self = broker->workflow;
    if (workflow_ended (self) || !self->holder)
        return;
    agent_t *agent = self->agent [0] ? NULL : s_find_agent (broker, self->holder->name, except);
    if (agent)
        snprintf (self->agent, sizeof self->agent, "%s", agent->id);
    self->turn_started_ms = broker->now_ms;
    workflow_publish (broker, self->holder->human ? "paused" : "turn");
}

//  The entry role's first agent starts turn 1.
static void
s_begin (broker_t *broker)
{
    workflow_t *self = broker->workflow;
    self->status = WF_IN_PROGRESS;
    self->turn = 1;
    char why [256];
    uint64_t before = state_seq (broker->state);
    if (s_write_keys (broker, why, sizeof why))
        plog_error ("workflow keys not written: %s", why);
    publish_state_changes (broker, before);
    workflow_checkpoint (broker);
    plog_info ("workflow started: %s holds turn 1", self->holder->name);
    workflow_assign (broker, NULL);
}

int
workflow_start (broker_t *broker, char *why, size_t why_size)
{
    workflow_t *self = broker->workflow;
    self->status = WF_PENDING;
    self->holder = scenario_role (self->scenario, self->flow->entry);
    if (s_write_keys (broker, why, why_size))
        return -1;
    state_changes_reset (broker->state);
    workflow_checkpoint (broker);
    return 0;
}

void
workflow_on_hello (broker_t *broker, agent_t *agent)
{
    workflow_t *self = broker->workflow;
    const char *role = self ? workflow_agent_role (agent) : NULL;
    if (!role || workflow_ended (self) || !self->holder || strcmp (role, self->holder->name) != 0)
        return;
    if (self->status == WF_PENDING)
        s_begin (broker);
    else
    if (!self->agent [0])
        workflow_assign (broker, NULL);
}

//  The holder is gone or silent: a replacement of the same role, else fail.
static void
s_replace_or_fail (broker_t *broker, const char *what, bool may_replace)
{
    workflow_t *self = broker->workflow;
    char gone [PROTO_MAX_NAME + 1];
    snprintf (gone, sizeof gone, "%s", self->agent);
    self->agent [0] = 0;
    agent_t *replacement = may_replace ? s_find_agent (broker, self->holder->name, gone) : NULL;
    if (replacement) {
        snprintf (self->reason, sizeof self->reason, "%s %s; %s takes the turn of %s",
                  gone, what, replacement->id, self->holder->name);
        plog_warn ("workflow: %s", self->reason);
        workflow_assign (broker, gone);
        return;
    }
    char reason [256];
    snprintf (reason, sizeof reason, "the turn holder %s (role %s) %s and no other agent of "
              "the role is online", gone [0] ? gone : "(none)", self->holder->name, what);
    workflow_fail (broker, reason);
}

void
workflow_on_detach (broker_t *broker, agent_t *agent, const char *event)
{
    workflow_t *self = broker->workflow;
    if (!self || workflow_ended (self) || !self->holder || strcmp (self->agent, agent->id) != 0)
        return;
    if (self->holder->human) {
        //  A person's tool comes and goes: the turn waits for the next one.
        self->agent [0] = 0;
        return;
    }
    s_replace_or_fail (broker, event, true);
}

int
workflow_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *broker = arg;
    workflow_t *self = broker->workflow;
    uint64_t timeout = self->flow->turn_timeout_ms;
    if (!timeout || workflow_ended (self) || self->status == WF_PENDING || !self->holder
    ||  self->holder->human)
        return 0;
    broker->now_ms = pclock_mono_ms ();
    if (broker->now_ms - self->turn_started_ms <= (int64_t) timeout)
        return 0;
    char what [256];
    if (!self->agent [0]) {
        //  Nobody of the role ever came (one online would have been given the turn).
        snprintf (what, sizeof what, "no agent of role %s came to take turn %llu within the "
                  "%llu ms turn timeout", self->holder->name, (unsigned long long) self->turn,
                  (unsigned long long) timeout);
        workflow_fail (broker, what);
        return 0;
    }
    snprintf (what, sizeof what, "held the turn past the %llu ms turn timeout",
              (unsigned long long) timeout);
    s_replace_or_fail (broker, what, self->flow->on_timeout == SCENARIO_TIMEOUT_REPLACE);
    return 0;
}

bool
workflow_rejects_write (broker_t *broker, uint64_t id, const msgpack_object *ops)
{
    workflow_t *self = broker->workflow;
    if (!self || !ops || ops->type != MSGPACK_OBJECT_ARRAY)
        return false;
    for (uint32_t i = 0; i < ops->via.array.size; i++) {
        size_t len = 0;
        const char *key = pobj_str (&ops->via.array.ptr [i], "key", &len);
        if (key && workflow_is_key (self, key, len)) {
            dispatch_error (broker, id, PERR_BAD_FIELD,
                            "op %u: '%.*s' is a workflow key; only HANDOVER moves the workflow",
                            i, (int) (len > 64 ? 64 : len), key);
            return true;
        }
    }
    return false;
}

void
workflow_encode_info (broker_t *broker, uint64_t id)
{
    workflow_t *self = broker->workflow;
    penc_t *enc = &broker->reply;
    bool paused = self->holder && self->holder->human && !workflow_ended (self);
    size_t fields = 7 + (self->holder != NULL) + (self->agent [0] != 0) + paused
                  + (self->reason [0] != 0);
    penc_begin (enc, PMSG_WORKFLOW_INFO, id, fields);
    penc_kv_cstr (enc, "status", wf_status_name (self->status));
    penc_kv_uint (enc, "turn", self->turn);
    penc_kv_uint (enc, "revisions", self->revisions);
    penc_kv_uint (enc, "max_revisions", self->flow->max_revisions);
    penc_kv_uint (enc, "max_turns", self->flow->max_turns);
    penc_kv_uint (enc, "checkpoint", self->checkpoint);
    penc_kv_uint (enc, "seq", state_seq (broker->state));
    if (self->holder)
        penc_kv_cstr (enc, "holder", self->holder->name);
    if (self->agent [0])
        penc_kv_cstr (enc, "agent", self->agent);
    if (paused)
        penc_kv_bool (enc, "paused", true);
    if (self->reason [0])
        penc_kv_cstr (enc, "reason", self->reason);
}
