// SPDX-License-Identifier: MIT
/*  mail - parley_mail_t and parley_message_t: a batch of mail decoded from
    a MAIL, MAIL_PUSH or STEPPED frame (parley/mail.h).

    Mail is the bulk of what a client decodes, so a record is filled in
    one pass over its fields (a lookup by name per field would scan the
    record six times), names are copied into the record itself, and the
    body points into the frame, which the batch keeps.
*/
#include <assert.h>
#include <string.h>
#include "mail_int.h"
#include "mem.h"

struct _parley_message_t {
    uint64_t seq;
    uint64_t ts;
    const char *body;
    size_t body_size;
    char from [PARLEY_NAME_MAX + 1];
    char to [PARLEY_NAME_MAX + 1];
    char channel [PARLEY_NAME_MAX + 1];
};

struct _parley_mail_t {
    pmsg_t *reply;              //  the frame the bodies point into, when owned
    parley_message_t *messages;
    size_t count, cap;
    uint64_t pending, acked;
};

parley_mail_t *
client_mail_new (void)
{
    return (parley_mail_t *) client_mem_zalloc (sizeof (parley_mail_t));
}

void
parley_mail_destroy (parley_mail_t **self_p)
{
    assert (self_p);
    parley_mail_t *self = *self_p;
    if (self) {
        pmsg_destroy (&self->reply);
        client_mem_free (self->messages);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_mail_clear (parley_mail_t *self)
{
    assert (self);
    pmsg_destroy (&self->reply);
    self->count = 0;
    self->pending = self->acked = 0;
}

//  A str value into a fixed buffer: "" when it is not a str, does not
//  fit, or holds a NUL.
static void
s_name (const msgpack_object *o, char *buf, size_t size)
{
    size_t len = o->type == MSGPACK_OBJECT_STR ? o->via.str.size : size;
    if (len >= size || memchr (o->via.str.ptr, 0, len)) {
        buf [0] = 0;
        return;
    }
    memcpy (buf, o->via.str.ptr, len);
    buf [len] = 0;
}

//  One record into `m`. The first of a repeated key counts, as with
//  pobj_get; nil is absent.
static void
s_record (const msgpack_object *item, parley_message_t *m)
{
    *m = (parley_message_t) { .body = "" };
    if (item->type != MSGPACK_OBJECT_MAP)
        return;
    unsigned seen = 0;
    for (uint32_t k = 0; k < item->via.map.size; k++) {
        const msgpack_object *key = &item->via.map.ptr [k].key;
        const msgpack_object *val = &item->via.map.ptr [k].val;
        if (key->type != MSGPACK_OBJECT_STR || val->type == MSGPACK_OBJECT_NIL)
            continue;
        const char *name = key->via.str.ptr;
        size_t len = key->via.str.size;
        unsigned bit = 0;
        #define S_KEY(text, flag) (len == sizeof (text) - 1 && memcmp (name, text, len) == 0 \
                                   && !(seen & (bit = flag)))
        if (S_KEY ("seq", 1))
            m->seq = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? val->via.u64 : 0;
        else
        if (S_KEY ("ts", 2))
            m->ts = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? val->via.u64 : 0;
        else
        if (S_KEY ("from", 4))
            s_name (val, m->from, sizeof m->from);
        else
        if (S_KEY ("to", 8))
            s_name (val, m->to, sizeof m->to);
        else
        if (S_KEY ("channel", 16))
            s_name (val, m->channel, sizeof m->channel);
        else
        if (S_KEY ("body", 32)) {
            //  str or bin, as sent.
            if (val->type == MSGPACK_OBJECT_STR) {
                m->body = val->via.str.ptr;
                m->body_size = val->via.str.size;
            }
            else
            if (val->type == MSGPACK_OBJECT_BIN) {
                m->body = val->via.bin.ptr;
                m->body_size = val->via.bin.size;
            }
        }
        #undef S_KEY
        seen |= bit;
    }
}

parley_err_t
client_mail_decode (parley_mail_t *self, pmsg_t **reply_p, const msgpack_object *map,
                    const char *key, client_dedup_t *dedup)
{
    assert (self && map && key);
    client_mail_clear (self);
    const msgpack_object *items = pobj_get (map, key);
    size_t n = items && items->type == MSGPACK_OBJECT_ARRAY ? items->via.array.size : 0;
    //  Room first, so that running out changes nothing.
    if (n > self->cap) {
        parley_message_t *grown = (parley_message_t *)
            client_mem_array (self->messages, n, sizeof (parley_message_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->messages = grown;
        self->cap = n;
    }
    self->pending = pobj_uint (map, "pending", 0);
    self->acked = pobj_uint (map, "acked", 0);
    for (size_t i = 0; i < n; i++) {
        parley_message_t *m = &self->messages [self->count];
        s_record (&items->via.array.ptr [i], m);
        if (dedup && client_dedup_seen (dedup, m->seq))
            continue;
        if (dedup)
            client_dedup_hand (dedup, m->seq);
        self->count++;
    }
    if (reply_p) {
        self->reply = *reply_p;
        *reply_p = NULL;
    }
    return PARLEY_OK;
}

void
client_mail_set_acked (parley_mail_t *self, uint64_t acked)
{
    assert (self);
    self->acked = acked;
}

size_t
parley_mail_count (const parley_mail_t *self)
{
    assert (self);
    return self->count;
}

const parley_message_t *
parley_mail_at (const parley_mail_t *self, size_t index)
{
    assert (self);
    return index < self->count ? &self->messages [index] : NULL;
}

uint64_t
parley_mail_pending (const parley_mail_t *self)
{
    assert (self);
    return self->pending;
}

uint64_t
parley_mail_acked (const parley_mail_t *self)
{
    assert (self);
    return self->acked;
}

uint64_t
parley_mail_last_seq (const parley_mail_t *self)
{
    assert (self);
    uint64_t last = 0;
    for (size_t i = 0; i < self->count; i++)
        if (self->messages [i].seq > last)
            last = self->messages [i].seq;
    return last;
}

uint64_t
parley_message_seq (const parley_message_t *self)
{
    assert (self);
    return self->seq;
}

uint64_t
parley_message_ts (const parley_message_t *self)
{
    assert (self);
    return self->ts;
}

const char *
parley_message_from (const parley_message_t *self)
{
    assert (self);
    return self->from;
}

const char *
parley_message_to (const parley_message_t *self)
{
    assert (self);
    return self->to;
}

const char *
parley_message_channel (const parley_message_t *self)
{
    assert (self);
    return self->channel;
}

const void *
parley_message_body (const parley_message_t *self)
{
    assert (self);
    return self->body;
}

size_t
parley_message_body_size (const parley_message_t *self)
{
    assert (self);
    return self->body_size;
}
