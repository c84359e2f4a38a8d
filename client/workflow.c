// SPDX-License-Identifier: MIT
/*  workflow - parley_workflow_t (WORKFLOW_INFO) and parley_wf_event_t
    (WORKFLOW_EVENT), parley/workflow.h, and the status names. The text of
    a status or an event is kept next to its type, so a newer broker's
    words still reach the caller.
*/
#include <assert.h>
#include <string.h>
#include "mem.h"
#include "workflow_int.h"

//  What WORKFLOW_INFO and WORKFLOW_EVENT both carry: where the turn is.
typedef struct {
    parley_wf_status_t status;
    char status_name [PARLEY_NAME_MAX + 1];
    uint64_t turn, revisions;
    char holder [PARLEY_NAME_MAX + 1];
    char agent [PARLEY_NAME_MAX + 1];
    char *reason;               //  "" when none
} s_turn_t;

struct _parley_workflow_t {
    s_turn_t common;
    uint64_t max_revisions, max_turns, checkpoint, seq;
    bool paused;
};

struct _parley_wf_event_t {
    s_turn_t common;
    parley_wf_event_kind_t kind;
    char name [PARLEY_NAME_MAX + 1];
    uint64_t checkpoint;
    bool has_checkpoint;
};

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
    return (unsigned) status < S_STATUS_COUNT ? s_status_names [status] : "";
}

parley_wf_status_t
parley_wf_status_parse (const char *name)
{
    for (size_t i = 1; name && i < S_STATUS_COUNT; i++)
        if (strcmp (name, s_status_names [i]) == 0)
            return (parley_wf_status_t) i;
    return PARLEY_WF_UNSET;
}

//  A str field of a map into a fixed buffer ("" if absent or too long).
static void
s_copy (const msgpack_object *map, const char *name, char *buf, size_t size)
{
    if (!map || !pobj_strcpy (map, name, buf, size))
        buf [0] = 0;
}

parley_wf_status_t
client_wf_status_of (const msgpack_object *map, char *name, size_t name_size)
{
    s_copy (map, "status", name, name_size);
    return parley_wf_status_parse (name);
}

//  The reason into *reason_p (grown as needed); false when memory ran out.
static bool
s_reason (const msgpack_object *map, char **reason_p)
{
    size_t len = 0;
    const char *text = pobj_str (map, "reason", &len);
    char *copy = (char *) client_mem_realloc (*reason_p, (text ? len : 0) + 1);
    if (!copy)
        return false;
    if (text)
        memcpy (copy, text, len);
    copy [text ? len : 0] = 0;
    *reason_p = copy;
    return true;
}

//  The common part of `root` into `turn`, whose reason buffer is kept
//  and grown. PARLEY_ERR_NOMEM (the reason left "") when memory ran out.
static parley_err_t
s_turn_decode (s_turn_t *turn, const msgpack_object *root)
{
    char *reason = turn->reason;
    memset (turn, 0, sizeof (*turn));
    turn->reason = reason;
    if (!s_reason (root, &turn->reason)) {
        if (turn->reason)
            turn->reason [0] = 0;
        return PARLEY_ERR_NOMEM;
    }
    turn->status = client_wf_status_of (root, turn->status_name, sizeof turn->status_name);
    turn->turn = pobj_uint (root, "turn", 0);
    turn->revisions = pobj_uint (root, "revisions", 0);
    s_copy (root, "holder", turn->holder, sizeof turn->holder);
    s_copy (root, "agent", turn->agent, sizeof turn->agent);
    return PARLEY_OK;
}

//  The accessors of the common part, for parley_<prefix>_t.
#define S_TURN_ACCESSORS(prefix) \
    parley_wf_status_t parley_##prefix##_status (const parley_##prefix##_t *self) \
    { assert (self); return self->common.status; } \
    const char *parley_##prefix##_status_name (const parley_##prefix##_t *self) \
    { assert (self); return self->common.status_name; } \
    uint64_t parley_##prefix##_turn (const parley_##prefix##_t *self) \
    { assert (self); return self->common.turn; } \
    uint64_t parley_##prefix##_revisions (const parley_##prefix##_t *self) \
    { assert (self); return self->common.revisions; } \
    const char *parley_##prefix##_holder (const parley_##prefix##_t *self) \
    { assert (self); return self->common.holder; } \
    const char *parley_##prefix##_agent (const parley_##prefix##_t *self) \
    { assert (self); return self->common.agent; } \
    const char *parley_##prefix##_reason (const parley_##prefix##_t *self) \
    { assert (self); return self->common.reason ? self->common.reason : ""; }

//  ---------------------------------------------------------------------

parley_workflow_t *
client_workflow_new (void)
{
    return (parley_workflow_t *) client_mem_zalloc (sizeof (parley_workflow_t));
}

void
parley_workflow_destroy (parley_workflow_t **self_p)
{
    assert (self_p);
    parley_workflow_t *self = *self_p;
    if (self) {
        client_mem_free (self->common.reason);
        client_mem_free (self);
        *self_p = NULL;
    }
}

parley_err_t
client_workflow_decode (parley_workflow_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    const msgpack_object *root = pmsg_root (reply);
    parley_err_t rc = s_turn_decode (&self->common, root);
    self->paused = pobj_bool (root, "paused", false);
    self->max_revisions = pobj_uint (root, "max_revisions", 0);
    self->max_turns = pobj_uint (root, "max_turns", 0);
    self->checkpoint = pobj_uint (root, "checkpoint", 0);
    self->seq = pobj_uint (root, "seq", 0);
    return rc;
}

S_TURN_ACCESSORS (workflow)

#define S_FIELD(type, field) \
    type parley_workflow_##field (const parley_workflow_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (bool, paused)
S_FIELD (uint64_t, max_revisions)
S_FIELD (uint64_t, max_turns)
S_FIELD (uint64_t, checkpoint)
S_FIELD (uint64_t, seq)
#undef S_FIELD

//  ---------------------------------------------------------------------

parley_wf_event_t *
client_wf_event_new (void)
{
    return (parley_wf_event_t *) client_mem_zalloc (sizeof (parley_wf_event_t));
}

void
parley_wf_event_destroy (parley_wf_event_t **self_p)
{
    assert (self_p);
    parley_wf_event_t *self = *self_p;
    if (self) {
        client_mem_free (self->common.reason);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static parley_wf_event_kind_t
s_event_kind (const char *name)
{
    for (size_t i = 1; i < S_EVENT_COUNT; i++)
        if (strcmp (name, s_event_names [i]) == 0)
            return (parley_wf_event_kind_t) i;
    return PARLEY_WF_EVENT_OTHER;
}

parley_err_t
client_wf_event_decode (parley_wf_event_t *self, const pmsg_t *event)
{
    assert (self && event);
    const msgpack_object *root = pmsg_root (event);
    parley_err_t rc = s_turn_decode (&self->common, root);
    s_copy (root, "event", self->name, sizeof self->name);
    self->kind = s_event_kind (self->name);
    self->has_checkpoint = pobj_get (root, "checkpoint") != NULL;
    self->checkpoint = pobj_uint (root, "checkpoint", 0);
    return rc;
}

S_TURN_ACCESSORS (wf_event)
#undef S_TURN_ACCESSORS

#define S_FIELD(type, field) \
    type parley_wf_event_##field (const parley_wf_event_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (parley_wf_event_kind_t, kind)
S_FIELD (bool, has_checkpoint)
S_FIELD (uint64_t, checkpoint)
#undef S_FIELD

const char *
parley_wf_event_name (const parley_wf_event_t *self)
{
    assert (self);
    return self->name;
}
