// SPDX-License-Identifier: MIT
/*  event - parley_event_t: one event taken by topic prefix
    (parley/broker.h), a copy of the topic and the body in one block.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "event_int.h"
#include "mem.h"
#include "pmsg.h"

struct _parley_event_t {
    uint64_t received_us;
    size_t topic_len, body_size;
    char type [PROTO_MAX_NAME + 1];
    char data [];               //  topic, NUL, body
};

parley_event_t *
client_event_new (const char *topic, const void *body, size_t body_size, uint64_t received_us)
{
    assert (topic && (body || body_size == 0));
    size_t topic_len = strlen (topic);
    parley_event_t *self = (parley_event_t *)
        client_mem_alloc (sizeof (parley_event_t) + topic_len + 1 + body_size);
    if (!self)
        return NULL;
    self->received_us = received_us;
    self->topic_len = topic_len;
    self->body_size = body_size;
    self->type [0] = 0;
    memcpy (self->data, topic, topic_len + 1);
    if (body_size)
        memcpy (self->data + topic_len + 1, body, body_size);
    return self;
}

void
parley_event_destroy (parley_event_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

bool
client_event_typed (parley_event_t *self)
{
    assert (self);
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *decoded = pmsg_decode (self->data + self->topic_len + 1, self->body_size,
                                   pwire_default_limits (), &code, &id, why, sizeof why);
    if (!decoded)
        return false;
    snprintf (self->type, sizeof self->type, "%s", pmsg_type_name (pmsg_type (decoded)));
    pmsg_destroy (&decoded);
    return true;
}

const char *
parley_event_topic (const parley_event_t *self)
{
    assert (self);
    return self->data;
}

const char *
parley_event_type (const parley_event_t *self)
{
    assert (self);
    return self->type;
}

const void *
parley_event_body (const parley_event_t *self)
{
    assert (self);
    return self->data + self->topic_len + 1;
}

size_t
parley_event_body_size (const parley_event_t *self)
{
    assert (self);
    return self->body_size;
}

uint64_t
parley_event_received_us (const parley_event_t *self)
{
    assert (self);
    return self->received_us;
}
