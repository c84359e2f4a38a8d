// SPDX-License-Identifier: MIT
/*  hash - a table of items by string key (copied), chained, growing by
    doubling. Inserting is the only call that allocates, and it says when
    it could not; a table that cannot grow its buckets goes on at a
    higher load.
*/
#ifndef PARLEY_CLIENT_HASH_H
#define PARLEY_CLIENT_HASH_H

#include <stddef.h>

typedef struct _client_hash_t client_hash_t;
typedef void (client_hash_destructor_fn) (void **item_p);
typedef void (client_hash_visit_fn) (const char *key, void *item, void *arg);

//  NULL when memory ran out.
client_hash_t *client_hash_new (client_hash_destructor_fn *destructor);
void client_hash_destroy (client_hash_t **self_p);
void *client_hash_lookup (const client_hash_t *self, const char *key);
//  Sets `key` to `item`, destroying the item it had. 0, or -1 when memory
//  ran out (the table is then unchanged and the caller keeps `item`).
int client_hash_update (client_hash_t *self, const char *key, void *item);
//  Removes and destroys the key's item, if any.
void client_hash_delete (client_hash_t *self, const char *key);
//  Each item once, in no order; `visit` must not change the table.
void client_hash_foreach (client_hash_t *self, client_hash_visit_fn *visit, void *arg);
size_t client_hash_size (const client_hash_t *self);
void client_hash_purge (client_hash_t *self);

#endif
