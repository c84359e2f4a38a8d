// SPDX-License-Identifier: MIT
/*  pmsg_get - typed getters over a decoded message and its nested maps.

    The schema already checked every known field's kind, so a getter only
    picks the representation; on a field of another kind (an unknown field,
    or a caller asking for the wrong kind) it behaves as if absent. Lookups
    are linear in the map's size: protocol maps have a handful of keys.
*/
#include <assert.h>
#include <string.h>
#include "pmsg.h"

//  The str's bytes equal the NUL-terminated text. No strlen: the compare
//  stops at the first differing byte, which is usually the first, since
//  getters look a name up among a map's few keys. A str holding a NUL
//  never matches (the text's NUL ends the compare first).
static inline bool
s_str_is (const msgpack_object *o, const char *text)
{
    const char *bytes = o->via.str.ptr;
    uint32_t size = o->via.str.size;
    for (uint32_t i = 0; i < size; i++)
        if (text [i] == 0 || text [i] != bytes [i])
            return false;
    return text [size] == 0;
}

bool
pobj_streq (const msgpack_object *o, const char *text)
{
    if (!o || o->type != MSGPACK_OBJECT_STR || !text)
        return false;
    return s_str_is (o, text);
}

const msgpack_object *
pobj_get (const msgpack_object *map, const char *name)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP || !name)
        return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object_kv *kv = &map->via.map.ptr [i];
        if (kv->key.type == MSGPACK_OBJECT_STR && s_str_is (&kv->key, name))
            return kv->val.type == MSGPACK_OBJECT_NIL ? NULL : &kv->val;
    }
    return NULL;
}

uint64_t
pobj_uint (const msgpack_object *map, const char *name, uint64_t fallback)
{
    const msgpack_object *o = pobj_get (map, name);
    return o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? o->via.u64 : fallback;
}

int64_t
pobj_int (const msgpack_object *map, const char *name, int64_t fallback)
{
    const msgpack_object *o = pobj_get (map, name);
    if (o && o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return o->via.i64;
    if (o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX)
        return (int64_t) o->via.u64;
    return fallback;
}

double
pobj_num (const msgpack_object *map, const char *name, double fallback)
{
    const msgpack_object *o = pobj_get (map, name);
    if (!o)
        return fallback;
    switch (o->type) {
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double) o->via.u64;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double) o->via.i64;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64: return o->via.f64;
        default: return fallback;
    }
}

bool
pobj_bool (const msgpack_object *map, const char *name, bool fallback)
{
    const msgpack_object *o = pobj_get (map, name);
    return o && o->type == MSGPACK_OBJECT_BOOLEAN ? o->via.boolean : fallback;
}

const char *
pobj_str (const msgpack_object *map, const char *name, size_t *len)
{
    const msgpack_object *o = pobj_get (map, name);
    if (!o || (o->type != MSGPACK_OBJECT_STR && o->type != MSGPACK_OBJECT_BIN)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = o->via.str.size;
    //  An empty str may have a NULL ptr in msgpack-c; callers test for NULL
    //  to mean absent, so give them a valid empty string instead.
    return o->via.str.size ? o->via.str.ptr : "";
}

bool
pobj_strcpy (const msgpack_object *map, const char *name, char *buf, size_t size)
{
    assert (buf && size > 0);
    size_t len;
    const char *text = pobj_str (map, name, &len);
    if (!text || len >= size || memchr (text, 0, len)) {
        buf [0] = 0;
        return false;
    }
    memcpy (buf, text, len);
    buf [len] = 0;
    return true;
}

const msgpack_object *
pmsg_field (const pmsg_t *self, const char *name)
{
    return pobj_get (pmsg_root (self), name);
}

uint64_t
pmsg_uint (const pmsg_t *self, const char *name, uint64_t fallback)
{
    return pobj_uint (pmsg_root (self), name, fallback);
}

int64_t
pmsg_int (const pmsg_t *self, const char *name, int64_t fallback)
{
    return pobj_int (pmsg_root (self), name, fallback);
}

double
pmsg_num (const pmsg_t *self, const char *name, double fallback)
{
    return pobj_num (pmsg_root (self), name, fallback);
}

bool
pmsg_bool (const pmsg_t *self, const char *name, bool fallback)
{
    return pobj_bool (pmsg_root (self), name, fallback);
}

const char *
pmsg_str (const pmsg_t *self, const char *name, size_t *len)
{
    return pobj_str (pmsg_root (self), name, len);
}

bool
pmsg_strcpy (const pmsg_t *self, const char *name, char *buf, size_t size)
{
    return pobj_strcpy (pmsg_root (self), name, buf, size);
}
