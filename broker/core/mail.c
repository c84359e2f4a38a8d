// SPDX-License-Identifier: MIT
/*  mail - one accepted message in one allocation. See mail.h. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "mail.h"

mail_t *
mail_new (uint64_t seq, int64_t ts, mail_kind_t kind,
          const char *from, size_t from_len, const char *to, size_t to_len,
          const void *body, size_t body_len, bool body_bin)
{
    assert (from && to);
    assert (from_len <= 255 && to_len <= 255);
    assert (body_len <= UINT32_MAX);
    mail_t *self = malloc (sizeof (mail_t) + from_len + 1 + to_len + 1 + body_len);
    if (!self)
        return NULL;
    self->seq = seq;
    self->ts = ts;
    self->refs = 0;
    self->body_len = (uint32_t) body_len;
    self->from_len = (uint8_t) from_len;
    self->to_len = (uint8_t) to_len;
    self->kind = (uint8_t) kind;
    self->body_bin = body_bin;
    self->dropped = false;
    self->channel = NULL;
    self->chan_prev = self->chan_next = NULL;
    char *p = self->data;
    memcpy (p, from, from_len);
    p [from_len] = 0;
    p += from_len + 1;
    memcpy (p, to, to_len);
    p [to_len] = 0;
    p += to_len + 1;
    if (body_len)
        memcpy (p, body, body_len);
    return self;
}

void
mail_free (mail_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}
