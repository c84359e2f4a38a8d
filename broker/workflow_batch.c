// SPDX-License-Identifier: MIT
/*  workflow_batch - the one-batch writes of the workflow: the scenario's
    initial state, and HANDOVER.

    A HANDOVER becomes ONE state batch, in this order:
        clear  each clear_on_revision key (status revision only)
        ...    the holder's own ops, as sent
        set    holder, status, revisions, turn
    and goes through state_apply like a WRITE, so it is all or nothing and
    every WRITE rule (reducers, limits, the broker's world.* keys) holds.
    The clears come first so the list holds this validation's issues only:
    an append reducer alone can never empty it.
*/
#include "broker_internal.h"
#include "workflow_int.h"
#include "plog.h"

perr_t
workflow_apply_packed (broker_t *broker, const void *data, size_t size,
                       state_result_t *result, char *why, size_t why_size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    perr_t err = PERR_INTERNAL;
    if (msgpack_unpack_next (&unpacked, data, size, NULL) == MSGPACK_UNPACK_SUCCESS)
        err = state_apply (broker->state, &unpacked.data, result, why, why_size);
    else
        snprintf (why, why_size, "the workflow's batch could not be packed");
    msgpack_unpacked_destroy (&unpacked);
    return err;
}

int
workflow_write_initial (broker_t *broker, const scenario_t *scenario,
                        char *why, size_t why_size)
{
    if (scenario->key_count == 0)
        return 0;
    state_raw_op_t *ops = calloc (2 * scenario->key_count, sizeof (state_raw_op_t));
    if (!ops) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    size_t count = 0;
    for (size_t i = 0; i < scenario->key_count; i++) {
        const scenario_key_t *key = &scenario->keys [i];
        state_reducer_t reducer;
        state_reducer_from_name (key->reducer, strlen (key->reducer), &reducer);
        ops [count++] = (state_raw_op_t) { .op = STATE_OP_DECLARE, .key = key->key,
                                           .reducer = reducer };
        if (key->value)
            ops [count++] = (state_raw_op_t) { .op = STATE_OP_SET, .key = key->key,
                                               .value = key->value, .size = key->size };
    }
    char reason [256] = "";
    perr_t err = state_apply_raw (broker->state, ops, count, NULL, reason, sizeof reason);
    free (ops);
    if (err)
        snprintf (why, why_size, "%s: the initial state was refused: %s",
                  scenario->path, reason);
    return err ? -1 : 0;
}

//  The request's checks, before anything changes. PERR_NONE or the error
//  written into the reply.
static perr_t
s_check (broker_t *broker, const pmsg_t *msg, agent_t *agent, uint64_t id,
         wf_status_t *status, bool *status_given, const role_t **next)
{
    workflow_t *self = broker->workflow;
    if (workflow_ended (self)) {
        dispatch_error (broker, id, PERR_WORKFLOW_ENDED, "the workflow is %s: %s",
                        wf_status_name (self->status), self->reason);
        return PERR_WORKFLOW_ENDED;
    }
    if (!self->agent [0] || strcmp (self->agent, agent->id) != 0) {
        dispatch_error (broker, id, PERR_NOT_TURN_HOLDER,
                        "%s does not hold the turn: %s holds it for role %s", agent->id,
                        self->agent [0] ? self->agent : "nobody", self->holder->name);
        return PERR_NOT_TURN_HOLDER;
    }
    size_t len = 0;
    const char *text = pmsg_str (msg, "status", &len);
    *status_given = text != NULL;
    if (text && (!wf_status_from_name (text, len, status) || *status == WF_PENDING)) {
        dispatch_error (broker, id, PERR_BAD_FIELD,
                        "status must be in_progress, revision, done or failed");
        return PERR_BAD_FIELD;
    }
    bool ending = text && (*status == WF_DONE || *status == WF_FAILED);
    char name [PROTO_MAX_NAME + 1] = "";
    if (!pmsg_strcpy (msg, "next", name, sizeof name) && !ending) {
        dispatch_error (broker, id, PERR_BAD_FIELD, "HANDOVER needs `next`, the role that "
                        "takes the turn (or status done/failed)");
        return PERR_BAD_FIELD;
    }
    *next = name [0] ? scenario_role (self->scenario, name) : NULL;
    if (name [0] && !*next) {
        dispatch_error (broker, id, PERR_BAD_FIELD, "next: \"%s\" is not a role of scenario %s",
                        name, self->scenario->name);
        return PERR_BAD_FIELD;
    }
    const role_t *role = self->holder;
    bool allowed = role->handover_count == 0 || !*next;
    for (size_t i = 0; i < role->handover_count && !allowed; i++)
        allowed = strcmp (role->handover [i], name) == 0;
    if (!allowed) {
        dispatch_error (broker, id, PERR_BAD_FIELD, "role %s may not hand the turn to %s "
                        "(its role file's actions.handover)", role->name, name);
        return PERR_BAD_FIELD;
    }
    const msgpack_object *ops = pmsg_field (msg, "ops");
    if (ops && ops->via.array.size > WORKFLOW_MAX_OPS) {
        dispatch_error (broker, id, PERR_TOO_LARGE, "a HANDOVER carries at most %d ops (the "
                        "batch also holds the workflow keys and the revision's clears)",
                        WORKFLOW_MAX_OPS);
        return PERR_TOO_LARGE;
    }
    for (uint32_t i = 0; ops && i < ops->via.array.size; i++) {
        const char *key = pobj_str (&ops->via.array.ptr [i], "key", &len);
        char copy [PROTO_MAX_KEY + 1];
        snprintf (copy, sizeof copy, "%.*s", (int) len, key ? key : "");
        if (key && workflow_is_key (self, key, len)) {
            dispatch_error (broker, id, PERR_BAD_FIELD, "op %u: '%s' is a workflow key; "
                            "say it with next/status", i, copy);
            return PERR_BAD_FIELD;
        }
        if (key && role->write_count && !role_write_of (role, copy)) {
            dispatch_error (broker, id, PERR_BAD_FIELD, "op %u: role %s does not write '%s' "
                            "(its role file's actions.writes)", i, role->name, copy);
            return PERR_BAD_FIELD;
        }
    }
    return PERR_NONE;
}

//  The workflow fields after the hand-over, in `after` (the limits may
//  turn it into a failure: not an error, the reply says so).
static void
s_next_fields (const workflow_t *self, wf_status_t status, bool status_given,
               const role_t *next, const char *reason, workflow_t *after)
{
    *after = *self;
    snprintf (after->reason, sizeof after->reason, "%s", reason ? reason : "");
    after->agent [0] = 0;
    if (status_given && (status == WF_DONE || status == WF_FAILED)) {
        after->status = status;
        after->holder = NULL;
        return;
    }
    if (status_given && status == WF_REVISION) {
        if (self->revisions >= self->flow->max_revisions) {
            after->status = WF_FAILED;
            after->holder = NULL;
            snprintf (after->reason, sizeof after->reason,
                      "revision limit: %llu revisions made and validation %llu failed too",
                      (unsigned long long) self->revisions,
                      (unsigned long long) self->revisions + 1);
            return;
        }
        after->revisions++;
    }
    after->status = status_given ? status : self->status == WF_PENDING ? WF_IN_PROGRESS
                  : self->status;
    if (self->turn + 1 > self->flow->max_turns) {
        after->status = WF_FAILED;
        after->holder = NULL;
        snprintf (after->reason, sizeof after->reason,
                  "turn limit: %llu turns taken without finishing (max_turns %u)",
                  (unsigned long long) self->turn, self->flow->max_turns);
        return;
    }
    after->turn++;
    after->holder = next;
}

static void
s_pack_clear (msgpack_packer *packer, const char *key)
{
    msgpack_pack_map (packer, 2);
    msgpack_pack_str_with_body (packer, "op", 2);
    msgpack_pack_str_with_body (packer, "clear", 5);
    msgpack_pack_str_with_body (packer, "key", 3);
    msgpack_pack_str_with_body (packer, key, strlen (key));
}

void
workflow_handover (broker_t *broker, const pmsg_t *msg, agent_t *agent, uint64_t id)
{
    workflow_t *self = broker->workflow;
    wf_status_t status = self->status;
    bool status_given = false;
    const role_t *next = NULL;
    if (s_check (broker, msg, agent, id, &status, &status_given, &next))
        return;
    char reason [256] = "";
    pmsg_strcpy (msg, "reason", reason, sizeof reason);
    workflow_t after;
    s_next_fields (self, status, status_given, next, reason, &after);

    //  One batch: clears, the holder's ops, the workflow keys.
    const msgpack_object *ops = pmsg_field (msg, "ops");
    size_t own = ops ? ops->via.array.size : 0;
    size_t clears = 0;
    const char *clear_keys [SCENARIO_MAX_CLEAR];
    state_entry_t entry;
    for (size_t i = 0; status_given && status == WF_REVISION && i < self->flow->clear_count; i++)
        if (state_get (broker->state, self->flow->clear_on_revision [i], &entry))
            clear_keys [clears++] = self->flow->clear_on_revision [i];
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer packer;
    msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array (&packer, (uint32_t) (clears + own + 4));
    for (size_t i = 0; i < clears; i++)
        s_pack_clear (&packer, clear_keys [i]);
    for (size_t i = 0; i < own; i++)
        msgpack_pack_object (&packer, ops->via.array.ptr [i]);
    workflow_pack_keys (&after, &packer);

    char why [512] = "";
    state_result_t result = { 0 };
    uint64_t before = state_seq (broker->state);
    perr_t err = workflow_apply_packed (broker, buffer.data, buffer.size, &result, why, sizeof why);
    msgpack_sbuffer_destroy (&buffer);
    if (err) {
        //  Name the holder's own op, not its place in the combined batch.
        const char *rest = strstr (why, ": ");
        if (result.failed_op >= clears && result.failed_op < clears + own && rest)
            dispatch_error (broker, id, err, "op %zu%s", result.failed_op - clears, rest);
        else
            dispatch_error (broker, id, err, "%s", why [0] ? why : "the hand-over was rejected");
        return;
    }
    const char *from = self->holder->name;
    plog_info ("workflow turn %llu: %s (%s) -> %s, status %s%s%s",
               (unsigned long long) self->turn, from, agent->id,
               after.holder ? after.holder->name : "(end)", wf_status_name (after.status),
               after.reason [0] ? ": " : "", after.reason);
    *self = after;
    publish_state_changes (broker, before);
    workflow_checkpoint (broker);
    if (workflow_ended (self))
        workflow_publish (broker, wf_status_name (self->status));
    else
        workflow_assign (broker, NULL);
    workflow_encode_info (broker, id);
}
