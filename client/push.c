// SPDX-License-Identifier: MIT
/*  push - pushed mail waiting to be taken. See push.h. */
#include <assert.h>
#include "mem.h"
#include "push.h"
#include "queue.h"

struct _client_push_t {
    client_queue_t *queue;      //  pmsg_t *, oldest first
    uint32_t credit;
    uint64_t credit_bytes;
    uint64_t acked, acked_origin;
    parley_ack_policy_t policy;
    uint64_t nomem;
};

static void
s_frame_destroy (void **item_p)
{
    pmsg_destroy ((pmsg_t **) item_p);
}

client_push_t *
client_push_new (void)
{
    client_push_t *self = (client_push_t *) client_mem_zalloc (sizeof (client_push_t));
    if (self && !(self->queue = client_queue_new (s_frame_destroy))) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
client_push_destroy (client_push_t **self_p)
{
    assert (self_p);
    client_push_t *self = *self_p;
    if (self) {
        client_queue_destroy (&self->queue);
        client_mem_free (self);
        *self_p = NULL;
    }
}

int
client_push_reserve (client_push_t *self, uint32_t credit)
{
    assert (self);
    return client_queue_reserve (self->queue, credit);
}

void
client_push_set_window (client_push_t *self, uint32_t credit, uint64_t credit_bytes)
{
    assert (self);
    self->credit = credit;
    self->credit_bytes = credit_bytes;
}

uint32_t
client_push_credit (const client_push_t *self)
{
    assert (self);
    return self->credit;
}

uint64_t
client_push_credit_bytes (const client_push_t *self)
{
    assert (self);
    return self->credit_bytes;
}

bool
client_push_claim (void *owner, pmsg_t **msg_p)
{
    client_push_t *self = (client_push_t *) owner;
    if (client_queue_push (self->queue, *msg_p) != 0) {
        self->nomem++;
        return false;           //  dropped by the router; pushed again after a reconnect
    }
    *msg_p = NULL;
    return true;
}

bool
client_push_pending (const client_push_t *self)
{
    assert (self);
    return client_queue_size (self->queue) > 0;
}

pmsg_t *
client_push_peek (client_push_t *self)
{
    assert (self);
    return (pmsg_t *) client_queue_peek (self->queue);
}

void
client_push_drop_oldest (client_push_t *self)
{
    assert (self);
    pmsg_t *frame = (pmsg_t *) client_queue_pop (self->queue);
    pmsg_destroy (&frame);
}

pmsg_t *
client_push_pop (client_push_t *self)
{
    assert (self);
    return (pmsg_t *) client_queue_pop (self->queue);
}

void
client_push_purge (client_push_t *self)
{
    assert (self);
    client_queue_purge (self->queue);
}

uint64_t
client_push_acked (const client_push_t *self)
{
    assert (self);
    return self->acked;
}

uint64_t
client_push_acked_origin (const client_push_t *self)
{
    assert (self);
    return self->acked_origin;
}

void
client_push_set_acked (client_push_t *self, uint64_t seq, uint64_t origin)
{
    assert (self);
    self->acked = seq;
    self->acked_origin = origin;
}

parley_ack_policy_t
client_push_policy (const client_push_t *self)
{
    assert (self);
    return self->policy;
}

void
client_push_set_policy (client_push_t *self, parley_ack_policy_t policy)
{
    assert (self);
    self->policy = policy;
}

uint64_t
client_push_nomem (const client_push_t *self)
{
    assert (self);
    return self->nomem;
}
