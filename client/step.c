// SPDX-License-Identifier: MIT
/*  step - parley_step_t: an agent's whole step, built by the caller
    (parley/world.h). Its messages and ops are an outbox and ops of its
    own, encoded by their own code; the action is copied.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "mem.h"
#include "ops_int.h"
#include "outbox_int.h"
#include "step_int.h"

struct _parley_step_t {
    parley_outbox_t *messages;
    parley_ops_t *ops;
    uint64_t number, ack;
    char *action;               //  NULL: none
    bool perceive, stream;
    size_t fetch;
    parley_err_t error;         //  the first refusal of the step itself
    char why [128];
};

parley_step_t *
parley_step_new (void)
{
    parley_step_t *self = (parley_step_t *) client_mem_zalloc (sizeof (parley_step_t));
    if (!self)
        return NULL;
    self->messages = parley_outbox_new ();
    self->ops = parley_ops_new ();
    if (!self->messages || !self->ops)
        parley_step_destroy (&self);
    return self;
}

void
parley_step_destroy (parley_step_t **self_p)
{
    assert (self_p);
    parley_step_t *self = *self_p;
    if (self) {
        parley_outbox_destroy (&self->messages);
        parley_ops_destroy (&self->ops);
        client_mem_free (self->action);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
parley_step_reset (parley_step_t *self)
{
    assert (self);
    parley_outbox_reset (self->messages);
    parley_ops_reset (self->ops);
    client_mem_free (self->action);
    self->action = NULL;
    self->number = self->ack = 0;
    self->perceive = self->stream = false;
    self->fetch = 0;
    self->error = PARLEY_OK;
    self->why [0] = 0;
}

void
parley_step_set_number (parley_step_t *self, uint64_t step)
{
    assert (self);
    self->number = step;
}

void
parley_step_set_ack (parley_step_t *self, uint64_t seq)
{
    assert (self);
    self->ack = seq;
}

parley_outbox_t *
parley_step_messages (parley_step_t *self)
{
    assert (self);
    return self->messages;
}

parley_ops_t *
parley_step_ops (parley_step_t *self)
{
    assert (self);
    return self->ops;
}

static parley_err_t
s_refuse (parley_step_t *self, parley_err_t code, const char *why)
{
    if (self->error == PARLEY_OK) {
        self->error = code;
        snprintf (self->why, sizeof self->why, "%s", why);
    }
    return code;
}

parley_err_t
parley_step_set_action (parley_step_t *self, const char *action)
{
    assert (self);
    char *copy = NULL;
    if (action) {
        if (!*action || strlen (action) > PROTO_MAX_TEXT)
            return s_refuse (self, PARLEY_ERR_INVALID, "STEP action empty or too long");
        if (!(copy = client_mem_strdup (action)))
            return s_refuse (self, PARLEY_ERR_NOMEM, "out of memory");
    }
    client_mem_free (self->action);
    self->action = copy;
    return PARLEY_OK;
}

void
parley_step_set_perceive (parley_step_t *self, bool perceive)
{
    assert (self);
    self->perceive = perceive;
}

void
parley_step_set_fetch (parley_step_t *self, size_t max, bool stream)
{
    assert (self);
    self->fetch = max;
    self->stream = stream;
}

size_t
client_step_message_count (const parley_step_t *self)
{
    assert (self);
    return parley_outbox_count (self->messages);
}

parley_err_t
client_step_encode (const parley_step_t *self, penc_t *enc, uint64_t id, size_t max_body,
                    const char **why)
{
    assert (self && enc && why);
    *why = self->why;
    if (self->error != PARLEY_OK)
        return self->error;
    parley_err_t rc = client_outbox_error (self->messages, why);
    if (rc == PARLEY_OK)
        rc = client_ops_error (self->ops, why);
    if (rc != PARLEY_OK)
        return rc;
    size_t messages = parley_outbox_count (self->messages);
    size_t ops = parley_ops_count (self->ops);
    if (messages > PROTO_MAX_BATCH || ops > PROTO_MAX_BATCH) {
        *why = "a STEP of more than 4096 messages or ops";
        return PARLEY_ERR_INVALID;
    }
    size_t fields = (self->number ? 1 : 0) + (self->ack ? 1 : 0) + (messages ? 1 : 0)
                  + (ops ? 1 : 0) + (self->action ? 1 : 0)
                  + (!self->action && self->perceive ? 1 : 0) + (self->fetch ? 1 : 0)
                  + (self->fetch && self->stream ? 1 : 0);
    penc_begin (enc, PMSG_STEP, id, fields);
    if (self->number)
        penc_kv_uint (enc, "step", self->number);
    if (self->ack)
        penc_kv_uint (enc, "ack", self->ack);
    if (messages)
        client_outbox_encode (self->messages, enc, max_body);
    if (ops)
        client_ops_encode (self->ops, enc);
    if (self->action)
        penc_kv_cstr (enc, "action", self->action);
    else
    if (self->perceive)
        penc_kv_bool (enc, "perceive", true);
    if (self->fetch)
        penc_kv_uint (enc, "fetch", self->fetch);
    if (self->fetch && self->stream)
        penc_kv_bool (enc, "stream", true);
    return PARLEY_OK;
}
