// SPDX-License-Identifier: MIT
/*  outbox - parley_outbox_t: the messages of one SEND or STEP, built by
    the caller (parley/mail.h). It refers to the caller's strings and
    bodies: a SEND copies them into its frame, so keeping them here would
    cost a second copy of every body.
*/
#include <assert.h>
#include <string.h>
#include "mem.h"
#include "outbox_int.h"
#include "refusal.h"

typedef enum { S_TO, S_CHANNEL, S_RESOLVE } s_kind_t;

typedef struct {
    s_kind_t kind;
    const char *target;
    const void *body;
    size_t size;
} s_item_t;

struct _parley_outbox_t {
    s_item_t *items;
    size_t count, cap;
    parley_err_t error;         //  the first refusal
    char why [128];
};

parley_outbox_t *
parley_outbox_new (void)
{
    return (parley_outbox_t *) client_mem_zalloc (sizeof (parley_outbox_t));
}

void
parley_outbox_destroy (parley_outbox_t **self_p)
{
    assert (self_p);
    parley_outbox_t *self = *self_p;
    if (self) {
        client_mem_free (self->items);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
parley_outbox_reset (parley_outbox_t *self)
{
    assert (self);
    self->count = 0;
    self->error = PARLEY_OK;
    self->why [0] = 0;
}

static parley_err_t
s_refuse (parley_outbox_t *self, parley_err_t code, const char *why)
{
    return client_refusal_set (&self->error, self->why, sizeof self->why, code, "message",
                               self->count, why);
}

static parley_err_t
s_add (parley_outbox_t *self, s_kind_t kind, const char *target, const void *body, size_t size)
{
    assert (self);
    if (!target)
        return s_refuse (self, PARLEY_ERR_INVALID, "no recipient");
    if (!body && size)
        return s_refuse (self, PARLEY_ERR_INVALID, "a NULL body of non-zero size");
    s_item_t *items = (s_item_t *) client_refusal_room (self->items, &self->cap, self->count,
                                                        sizeof (s_item_t), 8);
    if (!items)
        return s_refuse (self, PARLEY_ERR_NOMEM, "out of memory");
    self->items = items;
    self->items [self->count++] = (s_item_t) { kind, target, body, size };
    return PARLEY_OK;
}

parley_err_t
parley_outbox_to (parley_outbox_t *self, const char *agent, const void *body, size_t body_size)
{
    return s_add (self, S_TO, agent, body, body_size);
}

parley_err_t
parley_outbox_channel (parley_outbox_t *self, const char *channel, const void *body,
                       size_t body_size)
{
    return s_add (self, S_CHANNEL, channel, body, body_size);
}

parley_err_t
parley_outbox_resolve (parley_outbox_t *self, const char *name, const void *body, size_t body_size)
{
    return s_add (self, S_RESOLVE, name, body, body_size);
}

size_t
parley_outbox_count (const parley_outbox_t *self)
{
    assert (self);
    return self->count;
}

parley_err_t
client_outbox_error (const parley_outbox_t *self, const char **why)
{
    assert (self);
    if (why)
        *why = self->why;
    return self->error;
}

//  The body's length cut to max_body (0: no cut) at a UTF-8 character
//  boundary: a cut inside a character would send a str that is not UTF-8
//  to every reader.
static size_t
s_body_len (const char *body, size_t len, size_t max_body)
{
    if (max_body == 0 || len <= max_body)
        return len;
    len = max_body;
    while (len > 0 && ((unsigned char) body [len] & 0xC0) == 0x80)
        len--;
    return len;
}

void
client_outbox_encode_items (const parley_outbox_t *self, penc_t *enc, size_t max_body)
{
    assert (self && enc);
    for (size_t i = 0; i < self->count; i++) {
        const s_item_t *item = &self->items [i];
        bool resolve = item->kind == S_RESOLVE;
        msgpack_pack_map (penc_packer (enc), resolve ? 3 : 2);
        penc_kv_cstr (enc, item->kind == S_TO ? "to" : "channel", item->target);
        if (resolve)
            penc_kv_bool (enc, "resolve", true);
        const char *body = item->body ? (const char *) item->body : "";
        penc_kv_str (enc, "body", body, s_body_len (body, item->size, max_body));
    }
}

void
client_outbox_encode (const parley_outbox_t *self, penc_t *enc, size_t max_body)
{
    assert (self && enc);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), self->count);
    client_outbox_encode_items (self, enc, max_body);
}
