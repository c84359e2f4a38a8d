// SPDX-License-Identifier: MIT
/*  workflow_resume - going back to a checkpoint, and showing checkpoints.

    RESUME rebuilds the state at checkpoint N (checkpoints_state_at) and
    turns the live state into it with one raw batch: keys that did not
    exist then are deleted, keys whose reducer differs are deleted and
    declared again, values that differ are set. The broker's world.* keys
    are left alone (the world is not part of a checkpoint). Then the
    workflow fields come back from the checkpoint, later checkpoints are
    dropped (the run forks there), and the holder's agent is woken.
*/
#include "broker_internal.h"
#include "workflow_int.h"
#include "plog.h"

#define S_WORLD_PREFIX "world."

typedef struct {
    zhashx_t *target;
    state_raw_op_t *ops;
    size_t count;
    size_t room;
    bool failed;
} s_plan_t;

//  Keys are copied: a delete early in the batch must not free the name a
//  later op of the same batch points to.
static void
s_push (s_plan_t *plan, state_raw_op_t op)
{
    char *key = strdup (op.key);
    if (!key) {
        plan->failed = true;
        return;
    }
    op.key = key;
    if (plan->count == plan->room) {
        size_t room = plan->room ? plan->room * 2 : 64;
        state_raw_op_t *ops = realloc (plan->ops, room * sizeof (state_raw_op_t));
        if (!ops) {
            free (key);
            plan->failed = true;
            return;
        }
        plan->ops = ops;
        plan->room = room;
    }
    plan->ops [plan->count++] = op;
}

//  Live keys the checkpoint does not have, or has with another reducer.
static void
s_visit_live (const state_entry_t *entry, void *arg)
{
    s_plan_t *plan = arg;
    if (strncmp (entry->key, S_WORLD_PREFIX, strlen (S_WORLD_PREFIX)) == 0)
        return;
    checkpoint_value_t *then = zhashx_lookup (plan->target, entry->key);
    if (!then || then->reducer != entry->reducer)
        s_push (plan, (state_raw_op_t) { .op = STATE_OP_DELETE, .key = entry->key });
}

//  The checkpoint's keys: declared when missing (or just deleted), set
//  when their value differs.
static void
s_plan_target (broker_t *broker, s_plan_t *plan)
{
    for (checkpoint_value_t *then = zhashx_first (plan->target); then;
         then = zhashx_next (plan->target)) {
        const char *key = zhashx_cursor (plan->target);
        state_entry_t now;
        bool live = state_get (broker->state, key, &now) && now.reducer == then->reducer;
        if (live && now.size == then->size && memcmp (now.value, then->value, then->size) == 0)
            continue;
        if (!live)
            s_push (plan, (state_raw_op_t) { .op = STATE_OP_DECLARE, .key = key,
                                             .reducer = then->reducer });
        s_push (plan, (state_raw_op_t) { .op = STATE_OP_SET, .key = key,
                                         .value = then->value, .size = then->size });
    }
}

//  The workflow fields of a checkpoint back into the record.
static void
s_restore_fields (workflow_t *self, const checkpoint_info_t *info)
{
    self->status = info->meta.status;
    self->turn = info->meta.turn;
    self->revisions = info->meta.revisions;
    self->holder = scenario_role (self->scenario, info->meta.holder);
    snprintf (self->reason, sizeof self->reason, "%s", info->meta.reason);
    self->agent [0] = 0;
    self->checkpoint = info->number;
}

void
workflow_resume (broker_t *broker, uint64_t number, uint64_t id)
{
    workflow_t *self = broker->workflow;
    const checkpoint_info_t *info = checkpoints_find (self->checkpoints, number);
    s_plan_t plan = { .target = info ? checkpoints_state_at (self->checkpoints, number) : NULL };
    if (!plan.target) {
        dispatch_error (broker, id, PERR_NO_SUCH_CHECKPOINT, "checkpoint %llu is not kept "
                        "(see CHECKPOINTS)", (unsigned long long) number);
        return;
    }
    //  The live keys are visited before any op runs, so their names stay
    //  valid while the batch is planned.
    state_foreach_prefix (broker->state, NULL, 0, s_visit_live, &plan);
    s_plan_target (broker, &plan);
    char why [512] = "";
    perr_t err = plan.failed ? PERR_INTERNAL : PERR_NONE;
    if (!err && plan.count > PROTO_MAX_BATCH) {
        //  One batch, so all or nothing: a bigger change is refused whole.
        err = PERR_TOO_LARGE;
        snprintf (why, sizeof why, "going back needs %zu key changes, more than one batch "
                  "of %d", plan.count, PROTO_MAX_BATCH);
    }
    uint64_t before = state_seq (broker->state);
    if (!err && plan.count)
        err = state_apply_raw (broker->state, plan.ops, plan.count, NULL, why, sizeof why);
    for (size_t i = 0; i < plan.count; i++)
        free ((char *) plan.ops [i].key);
    free (plan.ops);
    if (err) {
        zhashx_destroy (&plan.target);
        dispatch_error (broker, id, err, "resume from checkpoint %llu failed, nothing changed: %s",
                        (unsigned long long) number, why [0] ? why : "out of memory");
        return;
    }
    publish_state_changes (broker, before);
    zhashx_destroy (&plan.target);
    checkpoint_info_t kept = *info;
    checkpoints_fork (self->checkpoints, number);
    s_restore_fields (self, &kept);
    plog_info ("workflow resumed from checkpoint %llu: turn %llu, %s, holder %s",
               (unsigned long long) number, (unsigned long long) self->turn,
               wf_status_name (self->status), self->holder ? self->holder->name : "(none)");
    workflow_publish (broker, "resumed");
    if (self->status == WF_PENDING) {
        //  Back to the start: the entry role's agent, if online, begins again.
        agent_t *const *all = agents_array (broker->agents);
        for (size_t i = 0; i < agents_size (broker->agents); i++)
            if (all [i]->online) {
                workflow_on_hello (broker, all [i]);
                if (self->status != WF_PENDING)
                    break;
            }
    }
    else
        workflow_assign (broker, NULL);
    workflow_encode_info (broker, id);
}
