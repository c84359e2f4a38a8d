// SPDX-License-Identifier: MIT
/*  queue - a first-in first-out queue of pointers, as a ring that grows
    by doubling. Pushing is the only call that allocates, and it says
    when it could not (the item is then not taken).

        client_queue_t *queue = client_queue_new (destructor);
        if (client_queue_push (queue, item) != 0)
            ... out of memory: the caller still owns item ...
        void *oldest = client_queue_pop (queue);
*/
#ifndef PARLEY_CLIENT_QUEUE_H
#define PARLEY_CLIENT_QUEUE_H

#include <stddef.h>

typedef struct _client_queue_t client_queue_t;
//  Destroys an item the queue still holds when purged or destroyed.
typedef void (client_queue_destructor_fn) (void **item_p);

//  NULL when memory ran out.
client_queue_t *client_queue_new (client_queue_destructor_fn *destructor);
void client_queue_destroy (client_queue_t **self_p);
//  0, or -1 when memory ran out.
int client_queue_push (client_queue_t *self, void *item);
//  Room for `count` items in all, so that pushing that many allocates
//  nothing. 0, or -1 when memory ran out.
int client_queue_reserve (client_queue_t *self, size_t count);
//  The oldest item, taken out; NULL when empty.
void *client_queue_pop (client_queue_t *self);
//  The oldest item, left in; NULL when empty.
void *client_queue_peek (client_queue_t *self);
size_t client_queue_size (const client_queue_t *self);
//  Destroys the oldest item.
void client_queue_drop (client_queue_t *self);
//  Destroys every item.
void client_queue_purge (client_queue_t *self);

#endif
