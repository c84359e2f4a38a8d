// SPDX-License-Identifier: MIT
/*  outbox - what the broker has to say, held until it may be said.

    Every reply and every event of a loop turn goes here first, in the
    order it was made, and leaves only once the journal has reached the
    fsync policy's durability point for everything the turn changed
    (outbox_release): written to the page cache under `everysec` and
    `no`, fdatasync'ed under `always`. So nobody, not the client that
    asked and not a subscriber watching, ever sees a change that a crash
    could take back (under `always`), or that is not at least in the
    kernel's hands (the others). Reads wait with the writes of their turn:
    a client never reads what it could not read again after a restart.

    A reply is addressed to a connection (routing id and handshake
    serial), never to an agent id: an id may change connections between
    the moment a reply is made and the moment it leaves.

    Entries are copied into one growing buffer (the reply encoder is
    reused for the next request); the turn's replies are usually a few
    kilobytes, a MAIL reply up to a frame.
*/
#ifndef PARLEY_BROKER_OUTBOX_H
#define PARLEY_BROKER_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/agents.h"

typedef struct _outbox_t outbox_t;

typedef enum { OUTBOX_REPLY, OUTBOX_EVENT } outbox_kind_t;

//  One entry, as outbox_next hands it out.
typedef struct {
    outbox_kind_t kind;
    conn_id_t conn;             //  REPLY
    uint64_t serial;            //  REPLY: the connection's handshake serial
    bool envelope;              //  REPLY: echo an empty delimiter first
    char agent [PROTO_MAX_NAME + 1];    //  REPLY: the agent it answers ("" none), for logs
    const char *topic;          //  EVENT
    size_t topic_len;
    const void *data;
    size_t size;
} outbox_entry_t;

outbox_t *outbox_new (void);
void outbox_destroy (outbox_t **self_p);

//  Copies a reply or an event in. Aborts when memory runs out (bounded:
//  one turn's output; see the doc block).
void outbox_reply (outbox_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                   const char *agent, const void *data, size_t size);
void outbox_event (outbox_t *self, const char *topic, size_t topic_len,
                   const void *data, size_t size);

size_t outbox_size (outbox_t *self);            //  entries held
size_t outbox_bytes (outbox_t *self);           //  their bytes

//  Walks the entries in order; false at the end, and then the outbox is
//  empty (its memory kept for the next turn, up to a bound).
bool outbox_next (outbox_t *self, outbox_entry_t *entry);

#endif
