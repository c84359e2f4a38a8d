// SPDX-License-Identifier: MIT
/*  tickets - posted requests by id. See tickets.h. */
#include <assert.h>
#include "mem.h"
#include "tickets.h"

typedef struct {
    uint64_t id;
    pmsg_type_t expect;
    uint64_t batch;
    size_t count;
    pmsg_t *reply;
    parley_err_t code;
} s_entry_t;

struct _client_tickets_t {
    s_entry_t *entries;         //  PARLEY_MAX_IN_FLIGHT of them, once one is posted
    size_t count;
};

client_tickets_t *
client_tickets_new (void)
{
    return (client_tickets_t *) client_mem_zalloc (sizeof (client_tickets_t));
}

void
client_tickets_destroy (client_tickets_t **self_p)
{
    assert (self_p);
    client_tickets_t *self = *self_p;
    if (self) {
        for (size_t i = 0; i < self->count; i++)
            pmsg_destroy (&self->entries [i].reply);
        client_mem_free (self->entries);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static s_entry_t *
s_find (const client_tickets_t *self, uint64_t id)
{
    for (size_t i = 0; i < self->count; i++)
        if (self->entries [i].id == id)
            return &self->entries [i];
    return NULL;
}

int
client_tickets_add (client_tickets_t *self, uint64_t id, pmsg_type_t expect, uint64_t batch,
                    size_t count)
{
    assert (self && self->count < PARLEY_MAX_IN_FLIGHT);
    if (!self->entries
    &&  !(self->entries = (s_entry_t *) client_mem_array (NULL, PARLEY_MAX_IN_FLIGHT,
                                                          sizeof (s_entry_t))))
        return -1;
    self->entries [self->count++] = (s_entry_t) {
        .id = id, .expect = expect, .batch = batch, .count = count
    };
    return 0;
}

size_t
client_tickets_count (const client_tickets_t *self)
{
    assert (self);
    return self->count;
}

bool
client_tickets_claim (void *owner, pmsg_t **msg_p)
{
    client_tickets_t *self = (client_tickets_t *) owner;
    s_entry_t *entry = s_find (self, pmsg_id (*msg_p));
    if (!entry || entry->reply || entry->code)
        return false;
    entry->reply = *msg_p;
    *msg_p = NULL;
    return true;
}

void
client_tickets_fail (client_tickets_t *self, parley_err_t code)
{
    assert (self);
    for (size_t i = 0; i < self->count; i++)
        if (!self->entries [i].reply && !self->entries [i].code)
            self->entries [i].code = code;
}

bool
client_tickets_find (const client_tickets_t *self, uint64_t id, pmsg_type_t *expect)
{
    assert (self);
    s_entry_t *entry = s_find (self, id);
    if (entry && expect)
        *expect = entry->expect;
    return entry != NULL;
}

bool
client_tickets_done (const client_tickets_t *self, uint64_t id)
{
    assert (self);
    s_entry_t *entry = s_find (self, id);
    return entry && (entry->reply || entry->code);
}

void
client_tickets_answer (client_tickets_t *self, uint64_t id, pmsg_t *reply)
{
    assert (self);
    s_entry_t *entry = s_find (self, id);
    assert (entry && !entry->reply);
    entry->reply = reply;
}

void
client_tickets_take (client_tickets_t *self, uint64_t id, pmsg_t **reply_p, parley_err_t *code,
                     uint64_t *batch, size_t *count)
{
    assert (self && reply_p && code);
    s_entry_t *entry = s_find (self, id);
    assert (entry);
    *reply_p = entry->reply;
    *code = entry->code;
    if (batch)
        *batch = entry->batch;
    if (count)
        *count = entry->count;
    //  Out of the table by moving the last entry into its place: a memmove
    //  of the whole table per collect costs more than the reply's decode
    //  when hundreds are in flight, and the search needs no order.
    *entry = self->entries [--self->count];
}
