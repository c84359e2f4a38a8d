// SPDX-License-Identifier: MIT
/*  mailbox - one agent's inbox: references to mail, ordered by seq.

    A ring buffer of mail_t pointers. Messages are appended in seq order (the
    broker assigns seq at acceptance and appends at once), so the oldest
    unacknowledged message is always at the head: FETCH reads from the head
    without removing, ACK pops from the head. Why not zlistx: it allocates a
    node per item, and in an "all" fan-out to 100 agents that would be 100
    mallocs per message plus pointer chasing on every FETCH. The ring is one
    contiguous array that grows by doubling (up to the inbox bound) and
    allocates nothing in steady state.

    The box counts messages and body bytes for the inbox bounds. It does not
    own the mail: pop returns the reference and the caller releases it.
*/
#ifndef PARLEY_BROKER_MAILBOX_H
#define PARLEY_BROKER_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mail.h"

typedef struct _mailbox_t mailbox_t;

mailbox_t *mailbox_new (void);
void mailbox_destroy (mailbox_t **self_p);      //  the box must be empty

//  Appends; false only when memory runs out.
bool mailbox_push (mailbox_t *self, mail_t *mail);
//  The oldest reference, or NULL when empty; pop removes it.
mail_t *mailbox_head (mailbox_t *self);
mail_t *mailbox_pop (mailbox_t *self);
//  The reference at position `index` from the head (0 = oldest).
mail_t *mailbox_at (mailbox_t *self, size_t index);
//  Index of the first reference with seq > `seq` (mailbox_count when none):
//  a binary search, the ring being in seq order.
size_t mailbox_find_after (mailbox_t *self, uint64_t seq);
size_t mailbox_count (mailbox_t *self);
uint64_t mailbox_bytes (mailbox_t *self);

#endif
