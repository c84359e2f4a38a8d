// SPDX-License-Identifier: MIT
/*  workflow_resume - going back to a checkpoint, and the workflow in the
    journal's snapshot and the canonical dump.

    RESUME rebuilds the state at checkpoint N (checkpoints_state_at) and
    turns the live state into it with one raw batch: keys that did not
    exist then are deleted, keys whose reducer differs are deleted and
    declared again, values that differ are set. The broker's world.* keys
    are left alone (the world is not part of a checkpoint). Then the
    workflow fields come back from the checkpoint and later checkpoints are
    dropped (the run forks there).

    Snapshot records (the caller's kinds K_FIELDS and K_KEY):
        [K_FIELDS, status, holder, turn, revisions, reason, checkpoint,
         next_number, dropped]
        [K_KEY, 0, number, turn, revisions, status, holder, reason]   a checkpoint
        [K_KEY, 1, number or nil (the base), key, reducer, removed, value]
    A checkpoint's keys follow its info; the base's come first.
*/
#include <assert.h>
#include <string.h>

#include "workflow_int.h"
#include "snapshot_obj.h"

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

static int
s_key_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

//  The checkpoint's keys: declared when missing (or just deleted), set
//  when their value differs. In key order, so the batch (and the seqs it
//  gives) is the same in the live run and in its replay.
static void
s_plan_target (state_t *state, s_plan_t *plan)
{
    size_t count = zhashx_size (plan->target);
    const char **keys = malloc ((count ? count : 1) * sizeof (char *));
    if (!keys) {
        plan->failed = true;
        return;
    }
    size_t n = 0;
    for (void *v = zhashx_first (plan->target); v; v = zhashx_next (plan->target))
        keys [n++] = zhashx_cursor (plan->target);
    qsort (keys, n, sizeof (char *), s_key_cmp);
    for (size_t i = 0; i < n; i++) {
        const char *key = keys [i];
        checkpoint_value_t *then = zhashx_lookup (plan->target, key);
        state_entry_t now;
        bool live = state_get (state, key, &now) && now.reducer == then->reducer;
        if (live && now.size == then->size && memcmp (now.value, then->value, then->size) == 0)
            continue;
        if (!live)
            s_push (plan, (state_raw_op_t) { .op = STATE_OP_DECLARE, .key = key,
                                             .reducer = then->reducer });
        s_push (plan, (state_raw_op_t) { .op = STATE_OP_SET, .key = key,
                                         .value = then->value, .size = then->size });
    }
    free (keys);
}

perr_t
workflow_resume (workflow_t *self, state_t *state, uint64_t number, char *why, size_t why_size)
{
    const checkpoint_info_t *info = checkpoints_find (self->checkpoints, number);
    if (!info) {
        snprintf (why, why_size, "checkpoint %llu is not kept (see CHECKPOINTS)",
                  (unsigned long long) number);
        return PERR_NO_SUCH_CHECKPOINT;
    }
    //  Its holder must be a role of this scenario while the workflow runs
    //  on from it: a checkpoint of a scenario since changed is refused,
    //  nothing changed.
    const role_t *holder = scenario_role (self->scenario, info->meta.holder);
    if (!holder && info->meta.status != WF_DONE && info->meta.status != WF_FAILED) {
        snprintf (why, why_size, "checkpoint %llu's holder \"%s\" is not a role of scenario "
                  "%s (did the scenario change?)", (unsigned long long) number,
                  info->meta.holder, self->scenario->name);
        return PERR_BAD_FIELD;
    }
    s_plan_t plan = { .target = checkpoints_state_at (self->checkpoints, number) };
    if (!plan.target) {
        fprintf (stderr, "parley-broker: out of memory rebuilding checkpoint %llu\n",
                 (unsigned long long) number);
        abort ();
    }
    //  The live keys are visited before any op runs, so their names stay
    //  valid while the batch is planned. state_foreach_prefix walks in key
    //  order: the deletes come in the same order in every run.
    state_foreach_prefix (state, NULL, 0, s_visit_live, &plan);
    s_plan_target (state, &plan);
    if (plan.failed) {
        fprintf (stderr, "parley-broker: out of memory planning a resume\n");
        abort ();
    }
    char batch_why [512] = "";
    perr_t err = PERR_NONE;
    if (plan.count > PROTO_MAX_BATCH) {
        //  One batch, so all or nothing: a bigger change is refused whole.
        err = PERR_TOO_LARGE;
        snprintf (batch_why, sizeof batch_why, "going back needs %zu key changes, more than "
                  "one batch of %d", plan.count, PROTO_MAX_BATCH);
    }
    if (!err && plan.count)
        err = state_apply_raw (state, plan.ops, plan.count, NULL, batch_why, sizeof batch_why);
    for (size_t i = 0; i < plan.count; i++)
        free ((char *) plan.ops [i].key);
    free (plan.ops);
    zhashx_destroy (&plan.target);
    if (err) {
        snprintf (why, why_size, "resume from checkpoint %llu failed, nothing changed: %s",
                  (unsigned long long) number, batch_why);
        return err;
    }
    checkpoint_info_t kept = *info;
    checkpoints_fork (self->checkpoints, number);
    self->status = kept.meta.status;
    self->turn = kept.meta.turn;
    self->revisions = kept.meta.revisions;
    self->holder = scenario_role (self->scenario, kept.meta.holder);
    snprintf (self->reason, sizeof self->reason, "%s", kept.meta.reason);
    self->checkpoint = kept.number;
    return PERR_NONE;
}

//  ---------------------------------------------------------------------
//  Snapshot and dump

typedef struct {
    msgpack_sbuffer *buf;
    msgpack_packer pk;
    int kind_key;
    workflow_emit_fn *emit;
    void *arg;
    bool dump;                  //  into one packer, no records
    msgpack_packer *out;
    size_t rows;                //  dump rows written
} s_writer_t;

static void
s_str (msgpack_packer *pk, const char *text)
{
    msgpack_pack_str_with_body (pk, text, strlen (text));
}

static int
s_emit (s_writer_t *w)
{
    int rc = w->emit (w->buf, w->arg);
    msgpack_sbuffer_clear (w->buf);
    return rc;
}

static void
s_pack_meta (msgpack_packer *pk, const checkpoint_info_t *info)
{
    msgpack_pack_uint64 (pk, info->number);
    msgpack_pack_uint64 (pk, info->meta.turn);
    msgpack_pack_uint64 (pk, info->meta.revisions);
    msgpack_pack_uint32 (pk, (uint32_t) info->meta.status);
    s_str (pk, info->meta.holder);
    s_str (pk, info->meta.reason);
}

static void
s_pack_value (msgpack_packer *pk, const char *key, const checkpoint_value_t *value)
{
    s_str (pk, key);
    msgpack_pack_uint32 (pk, (uint32_t) value->reducer);
    if (value->removed)
        msgpack_pack_true (pk);
    else
        msgpack_pack_false (pk);
    msgpack_pack_bin (pk, value->size);
    msgpack_pack_bin_body (pk, value->value, value->size);
}

static int
s_on_info (const checkpoint_info_t *info, void *arg)
{
    s_writer_t *w = arg;
    if (w->dump) {
        w->rows++;
        msgpack_pack_array (w->out, 7);
        msgpack_pack_str_with_body (w->out, "checkpoint", 10);
        s_pack_meta (w->out, info);
        return 0;
    }
    msgpack_pack_array (&w->pk, 8);
    msgpack_pack_int (&w->pk, w->kind_key);
    msgpack_pack_int (&w->pk, 0);
    s_pack_meta (&w->pk, info);
    return s_emit (w);
}

static int
s_on_key (uint64_t number, const char *key, const checkpoint_value_t *value, void *arg)
{
    s_writer_t *w = arg;
    if (w->dump) {
        w->rows++;
        msgpack_pack_array (w->out, 5);
        if (number == UINT64_MAX)
            msgpack_pack_nil (w->out);
        else
            msgpack_pack_uint64 (w->out, number);
        s_pack_value (w->out, key, value);
        return 0;
    }
    msgpack_pack_array (&w->pk, 7);
    msgpack_pack_int (&w->pk, w->kind_key);
    msgpack_pack_int (&w->pk, 1);
    if (number == UINT64_MAX)
        msgpack_pack_nil (&w->pk);
    else
        msgpack_pack_uint64 (&w->pk, number);
    s_pack_value (&w->pk, key, value);
    return s_emit (w);
}

static void
s_pack_fields (workflow_t *self, msgpack_packer *pk)
{
    msgpack_pack_uint32 (pk, (uint32_t) self->status);
    s_str (pk, self->holder ? self->holder->name : "");
    msgpack_pack_uint64 (pk, self->turn);
    msgpack_pack_uint64 (pk, self->revisions);
    s_str (pk, self->reason);
    msgpack_pack_uint64 (pk, self->checkpoint);
    msgpack_pack_uint64 (pk, checkpoints_next_number (self->checkpoints));
    msgpack_pack_uint64 (pk, checkpoints_dropped (self->checkpoints));
}

int
workflow_snapshot (workflow_t *self, int kind_fields, int kind_key, msgpack_sbuffer *buf,
                   workflow_emit_fn *emit, void *arg)
{
    s_writer_t w = { .buf = buf, .kind_key = kind_key, .emit = emit, .arg = arg };
    msgpack_packer_init (&w.pk, buf, msgpack_sbuffer_write);
    msgpack_sbuffer_clear (buf);
    msgpack_pack_array (&w.pk, 9);
    msgpack_pack_int (&w.pk, kind_fields);
    s_pack_fields (self, &w.pk);
    int rc = s_emit (&w);
    if (rc == 0)
        rc = checkpoints_visit (self->checkpoints, s_on_info, s_on_key, &w);
    return rc;
}

void
workflow_dump (workflow_t *self, msgpack_packer *pk)
{
    //  [fields..., [rows]]: a "checkpoint" row per kept checkpoint, each
    //  followed by its keys' rows; the base's keys come first. The rows
    //  are packed aside and counted, as a msgpack array carries its length.
    msgpack_pack_array (pk, 9);
    s_pack_fields (self, pk);
    msgpack_sbuffer scratch;
    msgpack_sbuffer_init (&scratch);
    msgpack_packer scratch_pk;
    msgpack_packer_init (&scratch_pk, &scratch, msgpack_sbuffer_write);
    s_writer_t w = { .dump = true, .out = &scratch_pk };
    checkpoints_visit (self->checkpoints, s_on_info, s_on_key, &w);
    msgpack_pack_array (pk, (uint32_t) w.rows);
    if (scratch.size)
        pk->callback (pk->data, scratch.data, scratch.size);
    msgpack_sbuffer_destroy (&scratch);
}

//  Restoring (at recovery): the records workflow_snapshot wrote.

static bool
s_is (const msgpack_object *o, msgpack_object_type type)
{
    return o->type == type;
}

int
workflow_restore_fields (workflow_t *self, const msgpack_object *items, uint32_t count,
                         char *why, size_t why_size)
{
    if (count != 9 || !s_is (&items [1], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  items [1].via.u64 >= WF__COUNT || !s_is (&items [2], MSGPACK_OBJECT_STR)
    ||  items [2].via.str.size > PROTO_MAX_NAME
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [5], MSGPACK_OBJECT_STR)
    ||  !s_is (&items [6], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [7], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [8], MSGPACK_OBJECT_POSITIVE_INTEGER)) {
        snprintf (why, why_size, "the workflow record has the wrong shape");
        return -1;
    }
    char holder [PROTO_MAX_NAME + 1];
    snapshot_obj_copy (&items [2], holder, sizeof holder);
    const role_t *role = holder [0] ? scenario_role (self->scenario, holder) : NULL;
    if (holder [0] && !role) {
        snprintf (why, why_size, "the workflow's holder %s is not a role of scenario %s "
                  "(did the scenario change?)", holder, self->scenario->name);
        return -1;
    }
    //  A workflow that has not ended always has a role holding the turn
    //  (every hand-over and the turn's agent depend on it).
    wf_status_t status = (wf_status_t) items [1].via.u64;
    if (!role && status != WF_DONE && status != WF_FAILED) {
        snprintf (why, why_size, "the workflow record names no holder for a workflow %s",
                  wf_status_name (status));
        return -1;
    }
    //  The checkpoints follow; the ones workflow_start recorded make way.
    checkpoints_t *fresh = checkpoints_new (self->retain);
    if (!fresh) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    checkpoints_destroy (&self->checkpoints);
    self->checkpoints = fresh;
    self->status = (wf_status_t) items [1].via.u64;
    self->holder = role;
    self->turn = items [3].via.u64;
    self->revisions = items [4].via.u64;
    snapshot_obj_copy (&items [5], self->reason, sizeof self->reason);
    self->checkpoint = items [6].via.u64;
    self->restore_next = items [7].via.u64;
    self->restore_dropped = items [8].via.u64;
    return 0;
}

int
workflow_restore_key (workflow_t *self, const msgpack_object *items, uint32_t count,
                      char *why, size_t why_size)
{
    int rc = -1;
    if (count == 8 && s_is (&items [1], MSGPACK_OBJECT_POSITIVE_INTEGER) && items [1].via.u64 == 0
    &&  s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&  s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&  s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&  s_is (&items [5], MSGPACK_OBJECT_POSITIVE_INTEGER) && items [5].via.u64 < WF__COUNT
    &&  s_is (&items [6], MSGPACK_OBJECT_STR) && s_is (&items [7], MSGPACK_OBJECT_STR)) {
        checkpoint_info_t info = { .number = items [2].via.u64 };
        info.meta.turn = items [3].via.u64;
        info.meta.revisions = items [4].via.u64;
        info.meta.status = (wf_status_t) items [5].via.u64;
        snapshot_obj_copy (&items [6], info.meta.holder, sizeof info.meta.holder);
        snapshot_obj_copy (&items [7], info.meta.reason, sizeof info.meta.reason);
        rc = checkpoints_restore_info (self->checkpoints, &info);
    }
    else
    if (count == 7 && s_is (&items [1], MSGPACK_OBJECT_POSITIVE_INTEGER) && items [1].via.u64 == 1
    &&  (s_is (&items [2], MSGPACK_OBJECT_NIL) || s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER))
    &&  s_is (&items [3], MSGPACK_OBJECT_STR) && items [3].via.str.size <= PROTO_MAX_KEY
    &&  s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&  items [4].via.u64 < STATE_REDUCER__COUNT
    &&  s_is (&items [5], MSGPACK_OBJECT_BOOLEAN) && s_is (&items [6], MSGPACK_OBJECT_BIN)) {
        char key [PROTO_MAX_KEY + 1];
        snapshot_obj_copy (&items [3], key, sizeof key);
        uint64_t number = s_is (&items [2], MSGPACK_OBJECT_NIL) ? UINT64_MAX : items [2].via.u64;
        rc = checkpoints_restore_key (self->checkpoints, number, key,
                                      (state_reducer_t) items [4].via.u64, items [6].via.bin.ptr,
                                      items [6].via.bin.size, items [5].via.boolean);
    }
    if (rc)
        snprintf (why, why_size, "a checkpoint record has the wrong shape or comes out of order");
    return rc;
}

int
workflow_restore_end (workflow_t *self, char *why, size_t why_size)
{
    if (checkpoints_restore_end (self->checkpoints, self->restore_next, self->restore_dropped)) {
        snprintf (why, why_size, "out of memory rebuilding the checkpoints");
        return -1;
    }
    return 0;
}
