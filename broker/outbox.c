// SPDX-License-Identifier: MIT
/*  outbox - replies and events held until the durability point. See
    outbox.h.

    Two arrays: the entries (fixed-size records) and the bytes they point
    into by offset. Both grow by doubling; after a turn that needed more
    than S_KEEP bytes the buffer is given back, so one burst of big
    replies does not pin its memory for the broker's life.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox.h"

#define S_KEEP (4u * 1024 * 1024)

typedef struct {
    outbox_kind_t kind;
    conn_id_t conn;
    uint64_t serial;
    bool envelope;
    char agent [PROTO_MAX_NAME + 1];
    size_t topic_len;
    size_t offset, size;        //  in bytes: the topic (events), then the data
} s_entry_t;

struct _outbox_t {
    s_entry_t *entries;
    size_t count, cap, next;
    char *bytes;
    size_t used, room;
};

static void
s_oom (void)
{
    fprintf (stderr, "parley-broker: out of memory holding a reply\n");
    abort ();
}

outbox_t *
outbox_new (void)
{
    return calloc (1, sizeof (outbox_t));
}

void
outbox_destroy (outbox_t **self_p)
{
    outbox_t *self = *self_p;
    if (self) {
        free (self->entries);
        free (self->bytes);
        free (self);
        *self_p = NULL;
    }
}

static s_entry_t *
s_add (outbox_t *self, size_t bytes)
{
    if (self->count == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 256;
        s_entry_t *grown = realloc (self->entries, cap * sizeof (s_entry_t));
        if (!grown)
            s_oom ();
        self->entries = grown;
        self->cap = cap;
    }
    if (self->used + bytes > self->room) {
        size_t room = self->room ? self->room : 64 * 1024;
        while (room < self->used + bytes)
            room *= 2;
        char *grown = realloc (self->bytes, room);
        if (!grown)
            s_oom ();
        self->bytes = grown;
        self->room = room;
    }
    s_entry_t *entry = &self->entries [self->count++];
    memset (entry, 0, sizeof *entry);
    entry->offset = self->used;
    self->used += bytes;
    return entry;
}

void
outbox_reply (outbox_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
              const char *agent, const void *data, size_t size)
{
    s_entry_t *entry = s_add (self, size);
    entry->kind = OUTBOX_REPLY;
    entry->conn = *conn;
    entry->serial = serial;
    entry->envelope = envelope;
    snprintf (entry->agent, sizeof entry->agent, "%s", agent ? agent : "");
    entry->size = size;
    memcpy (self->bytes + entry->offset, data, size);
}

void
outbox_event (outbox_t *self, const char *topic, size_t topic_len, const void *data,
              size_t size)
{
    s_entry_t *entry = s_add (self, topic_len + size);
    entry->kind = OUTBOX_EVENT;
    entry->topic_len = topic_len;
    entry->size = size;
    memcpy (self->bytes + entry->offset, topic, topic_len);
    memcpy (self->bytes + entry->offset + topic_len, data, size);
}

size_t
outbox_size (outbox_t *self)
{
    return self->count - self->next;
}

size_t
outbox_bytes (outbox_t *self)
{
    return self->used;
}

bool
outbox_next (outbox_t *self, outbox_entry_t *out)
{
    if (self->next == self->count) {
        self->next = self->count = 0;
        if (self->room > S_KEEP) {
            free (self->bytes);
            self->bytes = NULL;
            self->room = 0;
        }
        self->used = 0;
        return false;
    }
    const s_entry_t *entry = &self->entries [self->next++];
    out->kind = entry->kind;
    out->conn = entry->conn;
    out->serial = entry->serial;
    out->envelope = entry->envelope;
    memcpy (out->agent, entry->agent, sizeof out->agent);
    out->topic = entry->kind == OUTBOX_EVENT ? self->bytes + entry->offset : NULL;
    out->topic_len = entry->topic_len;
    out->data = self->bytes + entry->offset + entry->topic_len;
    out->size = entry->size;
    return true;
}
