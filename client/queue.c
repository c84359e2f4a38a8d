// SPDX-License-Identifier: MIT
/*  queue - a ring of pointers. See queue.h. */
#include <assert.h>
#include <stdint.h>
#include "mem.h"
#include "queue.h"

struct _client_queue_t {
    void **items;
    size_t cap, head, count;
    client_queue_destructor_fn *destructor;
};

client_queue_t *
client_queue_new (client_queue_destructor_fn *destructor)
{
    client_queue_t *self = (client_queue_t *) client_mem_zalloc (sizeof (client_queue_t));
    if (self)
        self->destructor = destructor;
    return self;
}

void
client_queue_destroy (client_queue_t **self_p)
{
    assert (self_p);
    client_queue_t *self = *self_p;
    if (self) {
        client_queue_purge (self);
        client_mem_free (self->items);
        client_mem_free (self);
        *self_p = NULL;
    }
}

//  The ring copied into a larger one, oldest first.
static int
s_grow (client_queue_t *self, size_t cap)
{
    void **items = (void **) client_mem_array (NULL, cap, sizeof (void *));
    if (!items)
        return -1;
    for (size_t i = 0; i < self->count; i++)
        items [i] = self->items [(self->head + i) % self->cap];
    client_mem_free (self->items);
    self->items = items;
    self->cap = cap;
    self->head = 0;
    return 0;
}

int
client_queue_reserve (client_queue_t *self, size_t count)
{
    assert (self);
    return count > self->cap ? s_grow (self, count) : 0;
}

int
client_queue_push (client_queue_t *self, void *item)
{
    assert (self);
    if (self->count == self->cap && s_grow (self, self->cap ? self->cap * 2 : 16) != 0)
        return -1;
    self->items [(self->head + self->count++) % self->cap] = item;
    return 0;
}

void *
client_queue_pop (client_queue_t *self)
{
    assert (self);
    if (self->count == 0)
        return NULL;
    void *item = self->items [self->head];
    self->head = (self->head + 1) % self->cap;
    self->count--;
    return item;
}

void *
client_queue_peek (client_queue_t *self)
{
    assert (self);
    return self->count ? self->items [self->head] : NULL;
}

size_t
client_queue_size (const client_queue_t *self)
{
    assert (self);
    return self->count;
}

void
client_queue_drop (client_queue_t *self)
{
    assert (self);
    void *item = client_queue_pop (self);
    if (item && self->destructor)
        self->destructor (&item);
}

void
client_queue_purge (client_queue_t *self)
{
    assert (self);
    while (self->count) {
        void *item = client_queue_pop (self);
        if (self->destructor)
            self->destructor (&item);
    }
    self->head = 0;
}
