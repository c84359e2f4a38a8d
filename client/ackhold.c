// SPDX-License-Identifier: MIT
/*  ackhold - the acknowledgement held for the next SEND. See ackhold.h. */
#include <assert.h>
#include "ackhold.h"
#include "mem.h"

struct _client_ackhold_t {
    uint64_t seq;                   //  held, 0: nothing
    int64_t since;                  //  held since (us)
    uint64_t ridden;                //  the highest that rode on a SEND
    uint64_t rides;
};

client_ackhold_t *
client_ackhold_new (void)
{
    return (client_ackhold_t *) client_mem_zalloc (sizeof (client_ackhold_t));
}

void
client_ackhold_destroy (client_ackhold_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

void
client_ackhold_hold (client_ackhold_t *self, uint64_t seq, int64_t now)
{
    assert (self);
    if (seq <= self->seq)
        return;
    if (!self->seq)
        self->since = now;
    self->seq = seq;
}

void
client_ackhold_again (client_ackhold_t *self, uint64_t seq, int64_t now, int64_t linger)
{
    assert (self);
    if (seq > self->seq) {
        self->seq = seq;
        self->since = now - linger;
    }
}

void
client_ackhold_refused (client_ackhold_t *self, int64_t now, int64_t linger)
{
    assert (self);
    client_ackhold_again (self, self->ridden, now, linger);
}

uint64_t
client_ackhold_seq (const client_ackhold_t *self)
{
    assert (self);
    return self->seq;
}

int64_t
client_ackhold_since (const client_ackhold_t *self)
{
    assert (self);
    return self->since;
}

uint64_t
client_ackhold_ride (client_ackhold_t *self)
{
    assert (self);
    uint64_t seq = self->seq;
    if (!seq)
        return 0;
    self->seq = 0;
    self->since = 0;
    if (seq > self->ridden)
        self->ridden = seq;
    self->rides++;
    return seq;
}

void
client_ackhold_sent (client_ackhold_t *self, uint64_t seq)
{
    assert (self);
    if (self->seq <= seq) {
        self->seq = 0;
        self->since = 0;
    }
}

uint64_t
client_ackhold_counter (const client_ackhold_t *self, parley_counter_t counter)
{
    assert (self);
    return counter == PARLEY_COUNTER_ACKS_RIDDEN ? self->rides : 0;
}
