// SPDX-License-Identifier: MIT
/*  workflow_core - the workflow's fields, its key writes, hand-over and
    failure. See workflow_core.h; RESUME and the snapshot are in
    workflow_resume.c.

    A HANDOVER becomes ONE state batch, in this order:
        clear  each clear_on_revision key (status revision only)
        ...    the holder's own ops, as sent
        set    holder, status, revisions, turn
    and goes through state_apply like a WRITE, so it is all or nothing and
    every WRITE rule (reducers, limits, the broker's world.* keys) holds.
    The clears come first so the list holds this validation's issues only:
    an append reducer alone can never empty it.
*/
#include <assert.h>
#include <string.h>

#include "workflow_int.h"

workflow_t *
workflow_new (const scenario_t *scenario, size_t retain)
{
    assert (scenario && scenario->workflow.enabled);
    workflow_t *self = calloc (1, sizeof (workflow_t));
    if (!self)
        return NULL;
    self->scenario = scenario;
    self->flow = &scenario->workflow;
    self->max_turns = self->flow->max_turns;
    self->max_revisions = self->flow->max_revisions;
    self->retain = retain ? retain : 1;
    self->checkpoints = checkpoints_new (self->retain);
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

void
workflow_set_limits (workflow_t *self, uint32_t max_turns, uint32_t max_revisions, size_t retain)
{
    assert (self);
    self->max_turns = max_turns;
    self->max_revisions = max_revisions;
    self->retain = retain ? retain : 1;
    checkpoints_set_retain (self->checkpoints, self->retain);
}

const scenario_t *workflow_scenario (workflow_t *self) { return self->scenario; }
wf_status_t workflow_status (workflow_t *self) { return self->status; }
const role_t *workflow_holder (workflow_t *self) { return self->holder; }
uint64_t workflow_turn (workflow_t *self) { return self->turn; }
uint64_t workflow_revisions (workflow_t *self) { return self->revisions; }
uint32_t workflow_max_turns (workflow_t *self) { return self->max_turns; }
uint32_t workflow_max_revisions (workflow_t *self) { return self->max_revisions; }
const char *workflow_reason (workflow_t *self) { return self->reason; }
uint64_t workflow_checkpoint_number (workflow_t *self) { return self->checkpoint; }
checkpoints_t *workflow_checkpoints (workflow_t *self) { return self->checkpoints; }

bool
workflow_ended (workflow_t *self)
{
    return self->status == WF_DONE || self->status == WF_FAILED;
}

const char *
workflow_role_of_caps (zlistx_t *caps)
{
    for (const char *cap = zlistx_first (caps); cap; cap = zlistx_next (caps))
        if (strncmp (cap, WORKFLOW_ROLE_CAP, strlen (WORKFLOW_ROLE_CAP)) == 0)
            return cap + strlen (WORKFLOW_ROLE_CAP);
    return NULL;
}

bool
workflow_is_key (workflow_t *self, const char *key, size_t len)
{
    const char *keys [] = { self->flow->holder_key, self->flow->status_key,
                            self->flow->revisions_key, self->flow->turn_key };
    for (size_t i = 0; i < 4; i++)
        if (strlen (keys [i]) == len && memcmp (keys [i], key, len) == 0)
            return true;
    return false;
}

//  The workflow keys' values (`fields`: the fields after the change), as
//  set ops for a batch.
static void
s_pack_keys (const workflow_t *fields, msgpack_packer *packer)
{
    const char *keys [] = { fields->flow->holder_key, fields->flow->status_key,
                            fields->flow->revisions_key, fields->flow->turn_key };
    for (size_t i = 0; i < 4; i++) {
        msgpack_pack_map (packer, 3);
        msgpack_pack_str_with_body (packer, "op", 2);
        msgpack_pack_str_with_body (packer, "set", 3);
        msgpack_pack_str_with_body (packer, "key", 3);
        msgpack_pack_str_with_body (packer, keys [i], strlen (keys [i]));
        msgpack_pack_str_with_body (packer, "value", 5);
        if (i == 0 && fields->holder)
            msgpack_pack_str_with_body (packer, fields->holder->name, strlen (fields->holder->name));
        else
        if (i == 0)
            msgpack_pack_nil (packer);
        else
        if (i == 1)
            msgpack_pack_str_with_body (packer, wf_status_name (fields->status),
                                        strlen (wf_status_name (fields->status)));
        else
            msgpack_pack_uint64 (packer, i == 2 ? fields->revisions : fields->turn);
    }
}

//  Applies a packed array of write_ops as one batch (state_apply).
static perr_t
s_apply_packed (state_t *state, const void *data, size_t size, state_result_t *result,
                char *why, size_t why_size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    perr_t err = PERR_INTERNAL;
    if (msgpack_unpack_next (&unpacked, data, size, NULL) == MSGPACK_UNPACK_SUCCESS)
        err = state_apply (state, &unpacked.data, result, why, why_size);
    else
        snprintf (why, why_size, "the workflow's batch could not be packed");
    msgpack_unpacked_destroy (&unpacked);
    return err;
}

//  Writes the workflow keys of `fields` on their own.
static perr_t
s_write_keys (const workflow_t *fields, state_t *state, char *why, size_t why_size)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer packer;
    msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array (&packer, 4);
    s_pack_keys (fields, &packer);
    perr_t err = s_apply_packed (state, buffer.data, buffer.size, NULL, why, why_size);
    msgpack_sbuffer_destroy (&buffer);
    return err;
}

void
workflow_checkpoint (workflow_t *self, state_t *state)
{
    checkpoint_meta_t meta = {
        .turn = self->turn, .revisions = self->revisions, .status = self->status
    };
    snprintf (meta.holder, sizeof meta.holder, "%s", self->holder ? self->holder->name : "");
    snprintf (meta.reason, sizeof meta.reason, "%s", self->reason);
    int64_t number = checkpoint_record (self->checkpoints, state, &meta);
    //  Out of memory here would make the live run and its replay differ:
    //  stop instead (core.h).
    if (number < 0) {
        fprintf (stderr, "parley-broker: out of memory recording a checkpoint\n");
        abort ();
    }
    self->checkpoint = (uint64_t) number;
}

perr_t
workflow_write_initial (state_t *state, const scenario_t *scenario, char *why, size_t why_size)
{
    if (scenario->key_count == 0)
        return PERR_NONE;
    state_raw_op_t *ops = calloc (2 * scenario->key_count, sizeof (state_raw_op_t));
    if (!ops) {
        snprintf (why, why_size, "out of memory");
        return PERR_INTERNAL;
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
    perr_t err = state_apply_raw (state, ops, count, NULL, reason, sizeof reason);
    free (ops);
    if (err)
        snprintf (why, why_size, "%s: the initial state was refused: %s",
                  scenario->path, reason);
    return err;
}

perr_t
workflow_start (workflow_t *self, state_t *state, char *why, size_t why_size)
{
    self->status = WF_PENDING;
    self->holder = scenario_role (self->scenario, self->flow->entry);
    perr_t err = s_write_keys (self, state, why, why_size);
    if (err)
        return err;
    workflow_checkpoint (self, state);
    return PERR_NONE;
}

perr_t
workflow_begin (workflow_t *self, state_t *state, char *why, size_t why_size)
{
    if (self->status != WF_PENDING) {
        snprintf (why, why_size, "the workflow has begun already (%s)",
                  wf_status_name (self->status));
        return PERR_BAD_FIELD;
    }
    workflow_t after = *self;
    after.status = WF_IN_PROGRESS;
    after.turn = 1;
    perr_t err = s_write_keys (&after, state, why, why_size);
    if (err)
        return err;
    *self = after;
    workflow_checkpoint (self, state);
    return PERR_NONE;
}

perr_t
workflow_fail (workflow_t *self, state_t *state, const char *reason, char *why, size_t why_size)
{
    if (workflow_ended (self)) {
        snprintf (why, why_size, "the workflow is %s already", wf_status_name (self->status));
        return PERR_WORKFLOW_ENDED;
    }
    workflow_t after = *self;
    after.status = WF_FAILED;
    after.holder = NULL;
    snprintf (after.reason, sizeof after.reason, "%s", reason);
    perr_t err = s_write_keys (&after, state, why, why_size);
    if (err)
        return err;
    *self = after;
    workflow_checkpoint (self, state);
    return PERR_NONE;
}

//  The request's own checks, before anything changes.
static perr_t
s_check (workflow_t *self, const pmsg_t *msg, wf_status_t *status, bool *status_given,
         const role_t **next, char *why, size_t why_size)
{
    if (workflow_ended (self)) {
        snprintf (why, why_size, "the workflow is %s: %s", wf_status_name (self->status),
                  self->reason);
        return PERR_WORKFLOW_ENDED;
    }
    size_t len = 0;
    const char *text = pmsg_str (msg, "status", &len);
    *status_given = text != NULL;
    if (text && (!wf_status_from_name (text, len, status) || *status == WF_PENDING)) {
        snprintf (why, why_size, "status must be in_progress, revision, done or failed");
        return PERR_BAD_FIELD;
    }
    bool ending = text && (*status == WF_DONE || *status == WF_FAILED);
    char name [PROTO_MAX_NAME + 1] = "";
    if (!pmsg_strcpy (msg, "next", name, sizeof name) && !ending) {
        snprintf (why, why_size, "HANDOVER needs `next`, the role that takes the turn (or "
                  "status done/failed)");
        return PERR_BAD_FIELD;
    }
    *next = name [0] ? scenario_role (self->scenario, name) : NULL;
    if (name [0] && !*next) {
        snprintf (why, why_size, "next: \"%s\" is not a role of scenario %s", name,
                  self->scenario->name);
        return PERR_BAD_FIELD;
    }
    const role_t *role = self->holder;
    bool allowed = role->handover_count == 0 || !*next;
    for (size_t i = 0; i < role->handover_count && !allowed; i++)
        allowed = strcmp (role->handover [i], name) == 0;
    if (!allowed) {
        snprintf (why, why_size, "role %s may not hand the turn to %s (its role file's "
                  "actions.handover)", role->name, name);
        return PERR_BAD_FIELD;
    }
    const msgpack_object *ops = pmsg_field (msg, "ops");
    if (ops && ops->via.array.size > WORKFLOW_MAX_OPS) {
        snprintf (why, why_size, "a HANDOVER carries at most %d ops (the batch also holds the "
                  "workflow keys and the revision's clears)", WORKFLOW_MAX_OPS);
        return PERR_TOO_LARGE;
    }
    for (uint32_t i = 0; ops && i < ops->via.array.size; i++) {
        const char *key = pobj_str (&ops->via.array.ptr [i], "key", &len);
        char copy [PROTO_MAX_KEY + 1];
        snprintf (copy, sizeof copy, "%.*s", (int) len, key ? key : "");
        if (key && workflow_is_key (self, key, len)) {
            snprintf (why, why_size, "op %u: '%s' is a workflow key; say it with next/status",
                      i, copy);
            return PERR_BAD_FIELD;
        }
        if (key && role->write_count && !role_write_of (role, copy)) {
            snprintf (why, why_size, "op %u: role %s does not write '%s' (its role file's "
                      "actions.writes)", i, role->name, copy);
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
    if (status_given && (status == WF_DONE || status == WF_FAILED)) {
        after->status = status;
        after->holder = NULL;
        return;
    }
    if (status_given && status == WF_REVISION) {
        if (self->revisions >= self->max_revisions) {
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
    if (self->turn + 1 > self->max_turns) {
        after->status = WF_FAILED;
        after->holder = NULL;
        snprintf (after->reason, sizeof after->reason,
                  "turn limit: %llu turns taken without finishing (max_turns %u)",
                  (unsigned long long) self->turn, self->max_turns);
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

perr_t
workflow_handover (workflow_t *self, state_t *state, const pmsg_t *msg, state_result_t *result,
                   char *why, size_t why_size)
{
    wf_status_t status = self->status;
    bool status_given = false;
    const role_t *next = NULL;
    perr_t err = s_check (self, msg, &status, &status_given, &next, why, why_size);
    if (err)
        return err;
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
        if (state_get (state, self->flow->clear_on_revision [i], &entry))
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
    s_pack_keys (&after, &packer);

    char batch_why [512] = "";
    state_result_t local = { 0 };
    if (!result)
        result = &local;
    err = s_apply_packed (state, buffer.data, buffer.size, result, batch_why, sizeof batch_why);
    msgpack_sbuffer_destroy (&buffer);
    if (err) {
        //  Name the holder's own op, not its place in the combined batch.
        const char *rest = strstr (batch_why, ": ");
        if (result->failed_op >= clears && result->failed_op < clears + own && rest)
            snprintf (why, why_size, "op %zu%s", result->failed_op - clears, rest);
        else
            snprintf (why, why_size, "%s", batch_why [0] ? batch_why : "the hand-over was rejected");
        return err;
    }
    *self = after;
    workflow_checkpoint (self, state);
    return PERR_NONE;
}
