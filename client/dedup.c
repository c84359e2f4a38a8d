// SPDX-License-Identifier: MIT
/*  dedup - mail handed out once. See dedup.h. */
#include <assert.h>
#include <inttypes.h>
#include "dedup.h"
#include "mem.h"
#include "plog.h"

struct _client_dedup_t {
    bool on;
    bool welcomed;              //  a WELCOME was seen
    uint64_t handed;            //  the highest seq handed out
    uint64_t origin;            //  the broker lifetime it belongs to
    uint64_t duplicates;
};

client_dedup_t *
client_dedup_new (void)
{
    client_dedup_t *self = (client_dedup_t *) client_mem_zalloc (sizeof (client_dedup_t));
    if (self)
        self->on = true;
    return self;
}

void
client_dedup_destroy (client_dedup_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

void
client_dedup_set_on (client_dedup_t *self, bool on)
{
    assert (self);
    self->on = on;
}

void
client_dedup_welcome (client_dedup_t *self, uint64_t origin, uint64_t mail_seq, uint64_t acked)
{
    assert (self);
    if (self->welcomed && (origin != self->origin || mail_seq < self->handed)) {
        if (self->handed)
            plog_info ("broker mail counter restarted; resuming at %" PRIu64, acked);
        self->handed = acked;
    }
    self->welcomed = true;
    self->origin = origin;
}

bool
client_dedup_seen (client_dedup_t *self, uint64_t seq)
{
    assert (self);
    if (!self->on || seq == 0 || seq > self->handed)
        return false;
    self->duplicates++;
    return true;
}

void
client_dedup_hand (client_dedup_t *self, uint64_t seq)
{
    assert (self);
    if (seq > self->handed)
        self->handed = seq;
}

uint64_t
client_dedup_handed (const client_dedup_t *self)
{
    assert (self);
    return self->handed;
}

uint64_t
client_dedup_duplicates (const client_dedup_t *self)
{
    assert (self);
    return self->duplicates;
}
