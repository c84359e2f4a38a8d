// SPDX-License-Identifier: MIT
/*  handover - parley_handover_t: a turn's writes and the next role, built
    by the caller (parley/workflow.h). The role and the reason are copied.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "handover_int.h"
#include "mem.h"
#include "ops_int.h"

struct _parley_handover_t {
    parley_ops_t *ops;
    char *next;                 //  NULL: none
    parley_wf_status_t status;
    char *reason;               //  NULL: none
    parley_err_t error;
    char why [128];
};

parley_handover_t *
parley_handover_new (void)
{
    parley_handover_t *self = (parley_handover_t *) client_mem_zalloc (sizeof (parley_handover_t));
    if (self && !(self->ops = parley_ops_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_handover_destroy (parley_handover_t **self_p)
{
    assert (self_p);
    parley_handover_t *self = *self_p;
    if (self) {
        parley_ops_destroy (&self->ops);
        client_mem_free (self->next);
        client_mem_free (self->reason);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
parley_handover_reset (parley_handover_t *self)
{
    assert (self);
    parley_ops_reset (self->ops);
    client_mem_free (self->next);
    client_mem_free (self->reason);
    self->next = self->reason = NULL;
    self->status = PARLEY_WF_UNSET;
    self->error = PARLEY_OK;
    self->why [0] = 0;
}

parley_ops_t *
parley_handover_ops (parley_handover_t *self)
{
    assert (self);
    return self->ops;
}

static parley_err_t
s_refuse (parley_handover_t *self, parley_err_t code, const char *format, const char *arg)
{
    if (self->error == PARLEY_OK) {
        self->error = code;
        snprintf (self->why, sizeof self->why, format, arg);
    }
    return code;
}

//  A copy of `text` into *field (NULL clears it).
static parley_err_t
s_set (parley_handover_t *self, char **field, const char *text)
{
    char *copy = NULL;
    if (text && !(copy = client_mem_strdup (text)))
        return s_refuse (self, PARLEY_ERR_NOMEM, "%s", "out of memory");
    client_mem_free (*field);
    *field = copy;
    return PARLEY_OK;
}

parley_err_t
parley_handover_set_next (parley_handover_t *self, const char *role)
{
    assert (self);
    if (role && !pmsg_name_valid (role, strlen (role)))
        return s_refuse (self, PARLEY_ERR_INVALID, "bad role name '%.64s'", role);
    return s_set (self, &self->next, role);
}

parley_err_t
parley_handover_set_status (parley_handover_t *self, parley_wf_status_t status)
{
    assert (self);
    if ((unsigned) status > PARLEY_WF_FAILED)
        return s_refuse (self, PARLEY_ERR_INVALID, "%s", "HANDOVER with a status out of range");
    self->status = status;
    return PARLEY_OK;
}

parley_err_t
parley_handover_set_reason (parley_handover_t *self, const char *reason)
{
    assert (self);
    return s_set (self, &self->reason, reason);
}

parley_err_t
client_handover_encode (const parley_handover_t *self, penc_t *enc, uint64_t id, const char **why)
{
    assert (self && enc && why);
    *why = self->why;
    if (self->error != PARLEY_OK)
        return self->error;
    parley_err_t rc = client_ops_error (self->ops, why);
    if (rc != PARLEY_OK)
        return rc;
    size_t ops = parley_ops_count (self->ops);
    if (ops > PROTO_MAX_BATCH) {
        *why = "a HANDOVER of more than 4096 ops";
        return PARLEY_ERR_INVALID;
    }
    bool status = self->status != PARLEY_WF_UNSET;
    penc_begin (enc, PMSG_HANDOVER, id, (ops > 0) + !!self->next + status + !!self->reason);
    if (ops)
        client_ops_encode (self->ops, enc);
    if (self->next)
        penc_kv_cstr (enc, "next", self->next);
    if (status)
        penc_kv_cstr (enc, "status", parley_wf_status_name (self->status));
    if (self->reason)
        penc_kv_cstr (enc, "reason", self->reason);
    return PARLEY_OK;
}
