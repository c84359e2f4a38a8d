// SPDX-License-Identifier: MIT
/*  sent - parley_sent_t (a SEND's SENT) and parley_failure_t (a message or
    a whole SEND the broker refused), parley/mail.h.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "mem.h"
#include "sent_int.h"

struct _parley_failure_t {
    parley_ticket_t ticket;
    bool whole;
    size_t index;
    int code;
    char agent [PARLEY_NAME_MAX + 1];
    char message [256];
};

struct _parley_sent_t {
    uint64_t batch;
    size_t count;
    size_t accepted;
    uint64_t *seqs;             //  count of them
    size_t seq_cap;
    parley_failure_t *errors;
    size_t error_count, error_cap;
};

static void
s_fill (parley_failure_t *self, parley_ticket_t ticket, bool whole, size_t index, int code,
        const char *agent, size_t agent_len, const char *message, size_t message_len)
{
    *self = (parley_failure_t) { .ticket = ticket, .whole = whole, .index = index, .code = code };
    snprintf (self->agent, sizeof self->agent, "%.*s", (int) (agent ? agent_len : 0),
              agent ? agent : "");
    snprintf (self->message, sizeof self->message, "%.*s", (int) (message ? message_len : 0),
              message ? message : "");
}

parley_failure_t *
client_failure_new (parley_ticket_t ticket, bool whole, size_t index, int code, const char *agent,
                    size_t agent_len, const char *message, size_t message_len)
{
    parley_failure_t *self = (parley_failure_t *) client_mem_alloc (sizeof (parley_failure_t));
    if (self)
        s_fill (self, ticket, whole, index, code, agent, agent_len, message, message_len);
    return self;
}

void
parley_failure_destroy (parley_failure_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

parley_ticket_t
parley_failure_ticket (const parley_failure_t *self)
{
    assert (self);
    return self->ticket;
}

bool
parley_failure_whole (const parley_failure_t *self)
{
    assert (self);
    return self->whole;
}

size_t
parley_failure_index (const parley_failure_t *self)
{
    assert (self);
    return self->index;
}

int
parley_failure_code (const parley_failure_t *self)
{
    assert (self);
    return self->code;
}

const char *
parley_failure_agent (const parley_failure_t *self)
{
    assert (self);
    return self->agent;
}

const char *
parley_failure_message (const parley_failure_t *self)
{
    assert (self);
    return self->message;
}

//  ---------------------------------------------------------------------

parley_sent_t *
client_sent_new (void)
{
    return (parley_sent_t *) client_mem_zalloc (sizeof (parley_sent_t));
}

void
parley_sent_destroy (parley_sent_t **self_p)
{
    assert (self_p);
    parley_sent_t *self = *self_p;
    if (self) {
        client_mem_free (self->seqs);
        client_mem_free (self->errors);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_sent_clear (parley_sent_t *self)
{
    assert (self);
    self->batch = 0;
    self->count = self->accepted = self->error_count = 0;
}

static const msgpack_object *
s_array (const msgpack_object *map, const char *name)
{
    const msgpack_object *array = pobj_get (map, name);
    return array && array->type == MSGPACK_OBJECT_ARRAY ? array : NULL;
}

parley_err_t
client_sent_decode (parley_sent_t *self, const msgpack_object *map, uint64_t batch, size_t count)
{
    assert (self && map);
    client_sent_clear (self);
    const msgpack_object *seqs = s_array (map, "seqs");
    const msgpack_object *errors = s_array (map, "errors");
    size_t error_count = errors ? errors->via.array.size : 0;
    if (count > self->seq_cap) {
        uint64_t *grown = (uint64_t *) client_mem_array (self->seqs, count, sizeof (uint64_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->seqs = grown;
        self->seq_cap = count;
    }
    if (error_count > self->error_cap) {
        parley_failure_t *grown = (parley_failure_t *)
            client_mem_array (self->errors, error_count, sizeof (parley_failure_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->errors = grown;
        self->error_cap = error_count;
    }
    self->batch = batch;
    self->count = count;
    self->accepted = pobj_uint (map, "accepted", 0);
    for (size_t i = 0; i < count; i++) {
        const msgpack_object *o = seqs && i < seqs->via.array.size ? &seqs->via.array.ptr [i] : NULL;
        self->seqs [i] = o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? o->via.u64 : 0;
    }
    for (size_t i = 0; i < error_count; i++) {
        const msgpack_object *e = &errors->via.array.ptr [i];
        size_t agent_len = 0, message_len = 0;
        const char *agent = pobj_str (e, "agent", &agent_len);
        const char *message = pobj_str (e, "message", &message_len);
        s_fill (&self->errors [i], 0, false, pobj_uint (e, "index", 0),
                (int) pobj_uint (e, "code", 0), agent, agent_len, message, message_len);
    }
    self->error_count = error_count;
    return PARLEY_OK;
}

uint64_t
parley_sent_batch (const parley_sent_t *self)
{
    assert (self);
    return self->batch;
}

size_t
parley_sent_count (const parley_sent_t *self)
{
    assert (self);
    return self->count;
}

size_t
parley_sent_accepted (const parley_sent_t *self)
{
    assert (self);
    return self->accepted;
}

uint64_t
parley_sent_seq (const parley_sent_t *self, size_t index)
{
    assert (self);
    return index < self->count ? self->seqs [index] : 0;
}

size_t
parley_sent_error_count (const parley_sent_t *self)
{
    assert (self);
    return self->error_count;
}

const parley_failure_t *
parley_sent_error_at (const parley_sent_t *self, size_t index)
{
    assert (self);
    return index < self->error_count ? &self->errors [index] : NULL;
}
