// SPDX-License-Identifier: MIT
/*  hash - items by string key. See hash.h. */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "hash.h"
#include "mem.h"

typedef struct s_node_t {
    struct s_node_t *next;
    uint64_t hash;
    void *item;
    char key [];
} s_node_t;

struct _client_hash_t {
    s_node_t **buckets;
    size_t bucket_count;            //  a power of two
    size_t count;
    client_hash_destructor_fn *destructor;
};

//  FNV-1a: keys are short names, and this is the table of one client.
static uint64_t
s_hash (const char *key)
{
    uint64_t hash = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *) key; *p; p++)
        hash = (hash ^ *p) * 1099511628211ULL;
    return hash;
}

client_hash_t *
client_hash_new (client_hash_destructor_fn *destructor)
{
    client_hash_t *self = (client_hash_t *) client_mem_zalloc (sizeof (client_hash_t));
    if (!self)
        return NULL;
    self->bucket_count = 16;
    self->buckets = (s_node_t **) client_mem_zalloc (16 * sizeof (s_node_t *));
    if (!self->buckets) {
        client_mem_free (self);
        return NULL;
    }
    self->destructor = destructor;
    return self;
}

void
client_hash_destroy (client_hash_t **self_p)
{
    assert (self_p);
    client_hash_t *self = *self_p;
    if (self) {
        client_hash_purge (self);
        client_mem_free (self->buckets);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static s_node_t **
s_find (const client_hash_t *self, const char *key, uint64_t hash)
{
    s_node_t **link = &self->buckets [hash & (self->bucket_count - 1)];
    while (*link && ((*link)->hash != hash || strcmp ((*link)->key, key) != 0))
        link = &(*link)->next;
    return link;
}

void *
client_hash_lookup (const client_hash_t *self, const char *key)
{
    assert (self && key);
    s_node_t *node = *s_find (self, key, s_hash (key));
    return node ? node->item : NULL;
}

static void
s_grow (client_hash_t *self)
{
    size_t count = self->bucket_count * 2;
    s_node_t **buckets = (s_node_t **) client_mem_zalloc (count * sizeof (s_node_t *));
    if (!buckets)
        return;                 //  a longer chain is slower, not wrong
    for (size_t i = 0; i < self->bucket_count; i++)
        for (s_node_t *node = self->buckets [i], *next; node; node = next) {
            next = node->next;
            s_node_t **head = &buckets [node->hash & (count - 1)];
            node->next = *head;
            *head = node;
        }
    client_mem_free (self->buckets);
    self->buckets = buckets;
    self->bucket_count = count;
}

static void
s_destroy_item (client_hash_t *self, void *item)
{
    if (self->destructor && item)
        self->destructor (&item);
}

int
client_hash_update (client_hash_t *self, const char *key, void *item)
{
    assert (self && key);
    uint64_t hash = s_hash (key);
    s_node_t **link = s_find (self, key, hash);
    if (*link) {
        void *old = (*link)->item;
        (*link)->item = item;
        if (old != item)
            s_destroy_item (self, old);
        return 0;
    }
    size_t len = strlen (key);
    s_node_t *node = (s_node_t *) client_mem_alloc (sizeof (s_node_t) + len + 1);
    if (!node)
        return -1;
    node->next = NULL;
    node->hash = hash;
    node->item = item;
    memcpy (node->key, key, len + 1);
    *link = node;
    if (++self->count > self->bucket_count)
        s_grow (self);
    return 0;
}

void
client_hash_delete (client_hash_t *self, const char *key)
{
    assert (self && key);
    s_node_t **link = s_find (self, key, s_hash (key));
    s_node_t *node = *link;
    if (!node)
        return;
    *link = node->next;
    self->count--;
    s_destroy_item (self, node->item);
    client_mem_free (node);
}

void
client_hash_foreach (client_hash_t *self, client_hash_visit_fn *visit, void *arg)
{
    assert (self && visit);
    for (size_t i = 0; i < self->bucket_count; i++)
        for (s_node_t *node = self->buckets [i]; node; node = node->next)
            visit (node->key, node->item, arg);
}

size_t
client_hash_size (const client_hash_t *self)
{
    assert (self);
    return self->count;
}

void
client_hash_purge (client_hash_t *self)
{
    assert (self);
    for (size_t i = 0; i < self->bucket_count; i++) {
        s_node_t *node = self->buckets [i];
        while (node) {
            s_node_t *next = node->next;
            s_destroy_item (self, node->item);
            client_mem_free (node);
            node = next;
        }
        self->buckets [i] = NULL;
    }
    self->count = 0;
}
