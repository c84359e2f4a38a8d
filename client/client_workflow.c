// SPDX-License-Identifier: MIT
/*  client_workflow - the workflow's requests (WORKFLOW, HANDOVER,
    CHECKPOINTS, CHECKPOINT, RESUME), their typed results, and the
    WORKFLOW_EVENT queue fed by the event socket (client_events.c).

    Statuses and event names are typed (parley_wf_status_t,
    parley_wf_event_kind_t); the text as sent is kept next to them so a
    newer broker's words still reach the caller.
*/
#include <assert.h>
#include "client_internal.h"

static const char *s_status_names [] = {
    [PARLEY_WF_UNSET] = "",
    [PARLEY_WF_PENDING] = "pending",
    [PARLEY_WF_IN_PROGRESS] = "in_progress",
    [PARLEY_WF_REVISION] = "revision",
    [PARLEY_WF_DONE] = "done",
    [PARLEY_WF_FAILED] = "failed",
};
#define S_STATUS_COUNT (sizeof (s_status_names) / sizeof (s_status_names [0]))

static const char *s_event_names [] = {
    [PARLEY_WF_EVENT_OTHER] = "",
    [PARLEY_WF_EVENT_TURN] = "turn",
    [PARLEY_WF_EVENT_PAUSED] = "paused",
    [PARLEY_WF_EVENT_DONE] = "done",
    [PARLEY_WF_EVENT_FAILED] = "failed",
    [PARLEY_WF_EVENT_RESUMED] = "resumed",
};
#define S_EVENT_COUNT (sizeof (s_event_names) / sizeof (s_event_names [0]))

const char *
parley_wf_status_name (parley_wf_status_t status)
{
    return (unsigned) status < S_STATUS_COUNT? s_status_names [status]: "";
}

parley_wf_status_t
parley_wf_status_parse (const char *name)
{
    for (size_t i = 1; name && i < S_STATUS_COUNT; i++)
        if (streq (name, s_status_names [i]))
            return (parley_wf_status_t) i;
    return PARLEY_WF_UNSET;
}

static parley_wf_event_kind_t
s_event_kind (const char *name)
{
    for (size_t i = 1; i < S_EVENT_COUNT; i++)
        if (streq (name, s_event_names [i]))
            return (parley_wf_event_kind_t) i;
    return PARLEY_WF_EVENT_OTHER;
}

//  A str field of a map into a fixed buffer ("" if absent).
static void
s_copy (const msgpack_object *map, const char *name, char *buf, size_t size)
{
    if (!map || !pobj_strcpy (map, name, buf, size))
        buf [0] = 0;
}

//  A str field into the arena; its offset (the arena may still move).
static size_t
s_text (parley_client_t *self, const msgpack_object *map, const char *name)
{
    size_t len = 0;
    const char *text = map? pobj_str (map, name, &len): NULL;
    return client_arena_copy (&self->arena, text? text: "", text? len: 0);
}

//  WORKFLOW_INFO into `out`; its reason is in the arena.
static void
s_decode_info (parley_client_t *self, parley_workflow_t *out)
{
    const msgpack_object *root = pmsg_root (self->reply);
    memset (out, 0, sizeof (*out));
    s_copy (root, "status", out->status_name, sizeof (out->status_name));
    out->status = parley_wf_status_parse (out->status_name);
    out->turn = pobj_uint (root, "turn", 0);
    out->revisions = pobj_uint (root, "revisions", 0);
    s_copy (root, "holder", out->holder, sizeof (out->holder));
    s_copy (root, "agent", out->agent, sizeof (out->agent));
    out->paused = pobj_bool (root, "paused", false);
    out->max_revisions = pobj_uint (root, "max_revisions", 0);
    out->max_turns = pobj_uint (root, "max_turns", 0);
    out->checkpoint = pobj_uint (root, "checkpoint", 0);
    out->seq = pobj_uint (root, "seq", 0);
    size_t reason = s_text (self, root, "reason");     //  may move the arena
    out->reason = self->arena.data + reason;
}

static void
s_decode_checkpoint_info (const msgpack_object *map, parley_checkpoint_info_t *out)
{
    memset (out, 0, sizeof (*out));
    out->number = pobj_uint (map, "number", 0);
    out->turn = pobj_uint (map, "turn", 0);
    s_copy (map, "status", out->status_name, sizeof (out->status_name));
    out->status = parley_wf_status_parse (out->status_name);
    s_copy (map, "holder", out->holder, sizeof (out->holder));
    out->revisions = pobj_uint (map, "revisions", 0);
    out->changed = pobj_uint (map, "changed", 0);
    out->bytes = pobj_uint (map, "bytes", 0);
}

//  WORKFLOW_INFO requests share their ending.
static parley_err_t
s_info_call (parley_client_t *self, parley_workflow_t *result)
{
    parley_err_t rc = client_call (self, PMSG_WORKFLOW_INFO);
    if (rc == PARLEY_OK && result)
        s_decode_info (self, result);
    return rc;
}

parley_err_t
parley_client_workflow (parley_client_t *self, parley_workflow_t *result)
{
    assert (self && result);
    client_begin (self, PMSG_WORKFLOW, 0);
    return s_info_call (self, result);
}

parley_err_t
parley_client_handover (parley_client_t *self, const parley_handover_t *handover,
                        parley_workflow_t *result)
{
    assert (self && handover && (handover->ops || handover->op_count == 0));
    if (handover->op_count > PROTO_MAX_BATCH)
        return client_fail (self, PARLEY_ERR_INVALID, "HANDOVER of %zu ops (at most %d)",
                            handover->op_count, PROTO_MAX_BATCH);
    if ((unsigned) handover->status >= S_STATUS_COUNT)
        return client_fail (self, PARLEY_ERR_INVALID, "HANDOVER with status %d", handover->status);
    if (handover->next && !pmsg_name_valid (handover->next, strlen (handover->next)))
        return client_fail (self, PARLEY_ERR_INVALID, "bad role name '%.64s'", handover->next);
    parley_err_t rc = client_ops_check (self, handover->ops, handover->op_count);
    if (rc != PARLEY_OK)
        return rc;
    bool status = handover->status != PARLEY_WF_UNSET;
    penc_t *enc = client_begin (self, PMSG_HANDOVER, (handover->op_count > 0)
                                + !!handover->next + status + !!handover->reason);
    if (handover->op_count)
        client_ops_encode (enc, handover->ops, handover->op_count);
    if (handover->next)
        penc_kv_cstr (enc, "next", handover->next);
    if (status)
        penc_kv_cstr (enc, "status", s_status_names [handover->status]);
    if (handover->reason)
        penc_kv_cstr (enc, "reason", handover->reason);
    return s_info_call (self, result);
}

parley_err_t
parley_client_resume (parley_client_t *self, uint64_t number, parley_workflow_t *result)
{
    assert (self);
    penc_t *enc = client_begin (self, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", number);
    return s_info_call (self, result);
}

parley_err_t
parley_client_checkpoints (parley_client_t *self, parley_checkpoint_list_t *result)
{
    assert (self && result);
    client_begin (self, PMSG_CHECKPOINTS, 0);
    parley_err_t rc = client_call (self, PMSG_CHECKPOINT_LIST);
    if (rc != PARLEY_OK)
        return rc;
    memset (result, 0, sizeof (*result));
    const msgpack_object *all = pmsg_field (self->reply, "checkpoints");
    size_t n = all && all->type == MSGPACK_OBJECT_ARRAY? all->via.array.size: 0;
    parley_checkpoint_info_t *list = (parley_checkpoint_info_t *)
        client_items (&self->items, &self->items_size, n, sizeof (parley_checkpoint_info_t));
    for (size_t i = 0; i < n; i++)
        s_decode_checkpoint_info (&all->via.array.ptr [i], &list [i]);
    result->checkpoints = list;
    result->count = n;
    result->dropped = pmsg_uint (self->reply, "dropped", 0);
    return PARLEY_OK;
}

//  CHECKPOINT_STATE: entries' keys, reducers and values go into the arena
//  as offsets first (it may move), pointers once it is done.
static void
s_decode_checkpoint_state (parley_client_t *self, parley_checkpoint_state_t *out)
{
    memset (out, 0, sizeof (*out));
    out->number = pmsg_uint (self->reply, "number", 0);
    out->has_since = pmsg_field (self->reply, "since") != NULL;
    out->since = pmsg_uint (self->reply, "since", 0);
    s_decode_checkpoint_info (pmsg_field (self->reply, "info"), &out->info);
    const msgpack_object *entries = pmsg_field (self->reply, "entries");
    size_t n = entries && entries->type == MSGPACK_OBJECT_ARRAY? entries->via.array.size: 0;
    parley_checkpoint_entry_t *list = (parley_checkpoint_entry_t *)
        client_items (&self->items, &self->items_size, n, sizeof (parley_checkpoint_entry_t));
    size_t *offs = (size_t *) client_items (&self->items2, &self->items2_size, n * 3,
                                            sizeof (size_t));
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *entry = &entries->via.array.ptr [i];
        offs [i * 3] = s_text (self, entry, "key");
        offs [i * 3 + 1] = s_text (self, entry, "reducer");
        list [i].removed = pobj_bool (entry, "removed", false);
        const msgpack_object *value = pobj_get (entry, "value");
        if (value && !list [i].removed)
            offs [i * 3 + 2] = client_arena_pack (&self->arena, value, &list [i].value_size);
    }
    for (size_t i = 0; i < n; i++) {
        list [i].key = self->arena.data + offs [i * 3];
        list [i].reducer = self->arena.data + offs [i * 3 + 1];
        list [i].value = list [i].value_size? self->arena.data + offs [i * 3 + 2]: NULL;
    }
    out->entries = list;
    out->count = n;
}

static parley_err_t
s_checkpoint (parley_client_t *self, uint64_t number, const uint64_t *since,
              parley_checkpoint_state_t *result)
{
    assert (self && result);
    penc_t *enc = client_begin (self, PMSG_CHECKPOINT, since? 2: 1);
    penc_kv_uint (enc, "number", number);
    if (since)
        penc_kv_uint (enc, "since", *since);
    parley_err_t rc = client_call (self, PMSG_CHECKPOINT_STATE);
    if (rc == PARLEY_OK)
        s_decode_checkpoint_state (self, result);
    return rc;
}

parley_err_t
parley_client_checkpoint (parley_client_t *self, uint64_t number,
                          parley_checkpoint_state_t *result)
{
    return s_checkpoint (self, number, NULL, result);
}

parley_err_t
parley_client_checkpoint_diff (parley_client_t *self, uint64_t number, uint64_t since,
                               parley_checkpoint_state_t *result)
{
    return s_checkpoint (self, number, &since, result);
}

//  ---------------------------------------------------------------------
//  Events

static void
s_event_free (void **item)
{
    pmsg_t *msg = (pmsg_t *) *item;
    pmsg_destroy (&msg);
    *item = NULL;
}

void
parley_client_workflow_events (parley_client_t *self, bool on)
{
    assert (self);
    if (on && !self->workflow_queue) {
        self->workflow_queue = zlistx_new ();
        zlistx_set_destructor (self->workflow_queue, s_event_free);
    }
    if (self->sub && on != self->workflow_on) {
        if (on)
            zsock_set_subscribe (self->sub, "workflow.");
        else
            zsock_set_unsubscribe (self->sub, "workflow.");
    }
    self->workflow_on = on;
}

void
client_workflow_queue (parley_client_t *self, zframe_t *frame)
{
    if (!self->workflow_on || !frame)
        return;
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *event = pmsg_decode (zframe_data (frame), zframe_size (frame),
                                 pwire_default_limits (), &code, &id, why, sizeof (why));
    if (!event || pmsg_type (event) != PMSG_WORKFLOW_EVENT) {
        self->stats.bad_frames++;
        pmsg_destroy (&event);
        return;
    }
    //  Bounded: a caller that never takes them must not grow us for ever.
    if (zlistx_size (self->workflow_queue) >= PARLEY_WF_EVENT_QUEUE) {
        zlistx_first (self->workflow_queue);
        zlistx_delete (self->workflow_queue, NULL);
        self->stats.workflow_dropped++;
    }
    zlistx_add_end (self->workflow_queue, event);
    self->stats.workflow_events++;
}

bool
parley_client_workflow_event (parley_client_t *self, parley_workflow_event_t *event)
{
    assert (self && event);
    client_drain_events (self);
    if (!self->workflow_queue || zlistx_size (self->workflow_queue) == 0)
        return false;
    pmsg_destroy (&self->workflow_event);
    self->workflow_event = (pmsg_t *) zlistx_detach (self->workflow_queue, NULL);
    const msgpack_object *root = pmsg_root (self->workflow_event);
    memset (event, 0, sizeof (*event));
    s_copy (root, "event", event->name, sizeof (event->name));
    event->kind = s_event_kind (event->name);
    s_copy (root, "status", event->status_name, sizeof (event->status_name));
    event->status = parley_wf_status_parse (event->status_name);
    event->turn = pobj_uint (root, "turn", 0);
    event->revisions = pobj_uint (root, "revisions", 0);
    s_copy (root, "holder", event->holder, sizeof (event->holder));
    s_copy (root, "agent", event->agent, sizeof (event->agent));
    event->has_checkpoint = pobj_get (root, "checkpoint") != NULL;
    event->checkpoint = pobj_uint (root, "checkpoint", 0);
    //  The frame's strings are not NUL-terminated: the reason is copied
    //  (the arena belongs to requests, which may run before it is read).
    size_t len = 0;
    const char *reason = pobj_str (root, "reason", &len);
    static const char empty [] = "";
    event->reason = empty;
    if (reason) {
        char *copy = (char *) client_alloc (NULL, len + 1);
        memcpy (copy, reason, len);
        copy [len] = 0;
        free (self->workflow_reason);
        self->workflow_reason = copy;
        event->reason = copy;
    }
    return true;
}

bool
client_workflow_pending (parley_client_t *self)
{
    return self->workflow_queue && zlistx_size (self->workflow_queue) > 0;
}

void
client_workflow_destroy (parley_client_t *self)
{
    zlistx_destroy (&self->workflow_queue);
    pmsg_destroy (&self->workflow_event);
    free (self->workflow_reason);
    self->workflow_reason = NULL;
}
