// SPDX-License-Identifier: MIT
/*  mailbox - a ring of mail references. See mailbox.h for why a ring. */
#include <assert.h>
#include <stdlib.h>

#include "mailbox.h"

#define MAILBOX_MIN_CAP 16      //  power of two

struct _mailbox_t {
    mail_t **ring;
    size_t cap;                 //  power of two (0 until the first push)
    size_t head;                //  index of the oldest
    size_t count;
    uint64_t bytes;             //  sum of body_len
};

mailbox_t *
mailbox_new (void)
{
    return calloc (1, sizeof (mailbox_t));
}

void
mailbox_destroy (mailbox_t **self_p)
{
    assert (self_p);
    mailbox_t *self = *self_p;
    if (self) {
        assert (self->count == 0);
        free (self->ring);
        free (self);
        *self_p = NULL;
    }
}

//  Doubles the ring, unrolling it so the head lands at index 0.
static bool
s_grow (mailbox_t *self)
{
    size_t cap = self->cap ? self->cap * 2 : MAILBOX_MIN_CAP;
    mail_t **ring = malloc (cap * sizeof (mail_t *));
    if (!ring)
        return false;
    for (size_t i = 0; i < self->count; i++)
        ring [i] = self->ring [(self->head + i) & (self->cap - 1)];
    free (self->ring);
    self->ring = ring;
    self->cap = cap;
    self->head = 0;
    return true;
}

bool
mailbox_push (mailbox_t *self, mail_t *mail)
{
    assert (self && mail);
    if (self->count == self->cap && !s_grow (self))
        return false;
    self->ring [(self->head + self->count) & (self->cap - 1)] = mail;
    self->count++;
    self->bytes += mail->body_len;
    return true;
}

mail_t *
mailbox_head (mailbox_t *self)
{
    assert (self);
    return self->count ? self->ring [self->head] : NULL;
}

mail_t *
mailbox_pop (mailbox_t *self)
{
    assert (self);
    if (!self->count)
        return NULL;
    mail_t *mail = self->ring [self->head];
    self->head = (self->head + 1) & (self->cap - 1);
    self->count--;
    self->bytes -= mail->body_len;
    //  An emptied box that grew large gives its memory back, so one burst
    //  does not pin a big ring for the life of the agent.
    if (self->count == 0 && self->cap > 1024) {
        free (self->ring);
        self->ring = NULL;
        self->cap = 0;
        self->head = 0;
    }
    return mail;
}

mail_t *
mailbox_at (mailbox_t *self, size_t index)
{
    assert (self);
    assert (index < self->count);
    return self->ring [(self->head + index) & (self->cap - 1)];
}

size_t
mailbox_find_after (mailbox_t *self, uint64_t seq)
{
    assert (self);
    size_t low = 0, high = self->count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (self->ring [(self->head + mid) & (self->cap - 1)]->seq <= seq)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

size_t
mailbox_count (mailbox_t *self)
{
    assert (self);
    return self->count;
}

uint64_t
mailbox_bytes (mailbox_t *self)
{
    assert (self);
    return self->bytes;
}
