// SPDX-License-Identifier: MIT
/*  mail - one accepted message, stored once and shared by every inbox.

    A message sent to "all" or to a channel reaches many agents. It is stored
    once, in ONE allocation (header, sender, recipient or channel name and the
    body inline), and each recipient's inbox holds a counted reference. The
    last release frees it. That keeps fan-out to N agents at one malloc and N
    pointer stores instead of N copies.

    A channel post is also linked into its channel's list of pending posts
    (chan_prev/chan_next, intrusive so no extra allocation): that is what the
    channel's count/byte bound and its drop-oldest policy work on. A post that
    a channel drops is marked `dropped`; inboxes that still hold it skip it
    when they fetch and release it when the ack passes it.

    This is a plain record, not a class: mailroom.c, mailbox.c and channels.c
    are its only users and they are the hot path.
*/
#ifndef PARLEY_BROKER_MAIL_H
#define PARLEY_BROKER_MAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _channel_t channel_t;

typedef enum {
    MAIL_DIRECT,        //  to one agent
    MAIL_ALL,           //  to every registered agent but the sender
    MAIL_CHANNEL        //  to the listeners of a channel
} mail_kind_t;

typedef struct _mail_t mail_t;
struct _mail_t {
    uint64_t seq;               //  broker-wide mail sequence
    int64_t ts;                 //  wall clock, µs since the epoch
    uint32_t refs;              //  inboxes holding it
    uint32_t body_len;
    uint8_t from_len;
    uint8_t to_len;             //  recipient id, "all" or channel name
    uint8_t kind;               //  mail_kind_t
    bool body_bin;              //  sender used bin (else str): echoed as sent
    bool dropped;               //  dropped by its channel's overflow policy
    channel_t *channel;         //  MAIL_CHANNEL only
    mail_t *chan_prev, *chan_next;
    char data [];               //  from '\0' to '\0' body
};

//  One allocation; refs starts at 0 (the caller adds each holder).
mail_t *mail_new (uint64_t seq, int64_t ts, mail_kind_t kind,
                  const char *from, size_t from_len,
                  const char *to, size_t to_len,
                  const void *body, size_t body_len, bool body_bin);
void mail_free (mail_t **self_p);
//  Memory one message takes (its single allocation), for the global bound
//  on queued bytes; the _MAX form bounds it before the names are known.
static inline size_t mail_footprint (const mail_t *self)
{
    return sizeof (mail_t) + self->from_len + 1u + self->to_len + 1u + self->body_len;
}
#define MAIL_FOOTPRINT_MAX(body_len) (sizeof (mail_t) + 2 * 256 + (size_t) (body_len))

static inline const char *mail_from (const mail_t *self) { return self->data; }
static inline const char *mail_to (const mail_t *self) { return self->data + self->from_len + 1; }
static inline const char *
mail_body (const mail_t *self)
{
    return self->data + self->from_len + 1 + self->to_len + 1;
}

#endif
