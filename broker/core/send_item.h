// SPDX-License-Identifier: MIT
/*  send_item - the fields of one SEND item, read in one pass.

    handle_send.c posts each item and parking_fit.c sums what each would
    queue; both need `to`, `channel`, `body` and `resolve`. Four pobj_get
    calls walk the item's map four times with a strlen and a compare per
    key, which a profile of one-message SENDs put at a fifth of the
    broker's time; this walks it once, comparing key lengths first. The
    frame was decoded strictly (no duplicate keys, names are str), so the
    first key of a name is the only one. A nil value counts as absent, as
    for pobj_get.
*/
#ifndef PARLEY_BROKER_SEND_ITEM_H
#define PARLEY_BROKER_SEND_ITEM_H

#include <stdbool.h>
#include <string.h>
#include <msgpack.h>

typedef struct {
    const msgpack_object *body;     //  NULL: absent
    const char *to;                 //  NULL: absent ("" when empty)
    size_t to_len;
    const char *channel;            //  NULL: absent ("" when empty)
    size_t channel_len;
    bool resolve;
} send_item_t;

static inline bool
send_item_key (const msgpack_object *key, const char *name, size_t len)
{
    return key->via.str.size == len && memcmp (key->via.str.ptr, name, len) == 0;
}

//  A str or bin value as text; NULL for anything else.
static inline const char *
send_item_text (const msgpack_object *value, size_t *len)
{
    if (value->type != MSGPACK_OBJECT_STR && value->type != MSGPACK_OBJECT_BIN)
        return NULL;
    *len = value->via.str.size;
    return value->via.str.size ? value->via.str.ptr : "";
}

static inline void
send_item_read (const msgpack_object *item, send_item_t *out)
{
    memset (out, 0, sizeof *out);
    if (item->type != MSGPACK_OBJECT_MAP)
        return;
    for (uint32_t i = 0; i < item->via.map.size; i++) {
        const msgpack_object *key = &item->via.map.ptr [i].key;
        const msgpack_object *value = &item->via.map.ptr [i].val;
        if (key->type != MSGPACK_OBJECT_STR || value->type == MSGPACK_OBJECT_NIL)
            continue;
        if (send_item_key (key, "to", 2))
            out->to = send_item_text (value, &out->to_len);
        else
        if (send_item_key (key, "body", 4))
            out->body = value;
        else
        if (send_item_key (key, "channel", 7))
            out->channel = send_item_text (value, &out->channel_len);
        else
        if (send_item_key (key, "resolve", 7))
            out->resolve = value->type == MSGPACK_OBJECT_BOOLEAN && value->via.boolean;
    }
}

#endif
