// SPDX-License-Identifier: MIT
/*  mpjs - msgpack <-> jansson. See mpjs.h. */
#include "mpjs.h"

#include <stdio.h>
#include <string.h>

static json_t *
s_to_json (const msgpack_object *o, int depth)
{
    if (depth > MPJS_MAX_DEPTH)
        return json_null ();
    switch (o->type) {
        case MSGPACK_OBJECT_NIL:
            return json_null ();
        case MSGPACK_OBJECT_BOOLEAN:
            return json_boolean (o->via.boolean);
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            return json_integer ((json_int_t) o->via.u64);
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return json_integer ((json_int_t) o->via.i64);
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            return json_real (o->via.f64);
        //  An empty str may come with a NULL pointer, which jansson refuses.
        case MSGPACK_OBJECT_STR:
            return json_stringn_nocheck (o->via.str.size ? o->via.str.ptr : "", o->via.str.size);
        case MSGPACK_OBJECT_BIN:
            return json_stringn_nocheck (o->via.bin.size ? o->via.bin.ptr : "", o->via.bin.size);
        case MSGPACK_OBJECT_ARRAY: {
            json_t *array = json_array ();
            for (uint32_t i = 0; array && i < o->via.array.size; i++)
                json_array_append_new (array, s_to_json (&o->via.array.ptr [i], depth + 1));
            return array;
        }
        case MSGPACK_OBJECT_MAP: {
            json_t *map = json_object ();
            for (uint32_t i = 0; map && i < o->via.map.size; i++) {
                const msgpack_object *key = &o->via.map.ptr [i].key;
                char text [64];
                const char *name = text;
                size_t len;
                if (key->type == MSGPACK_OBJECT_STR) {
                    name = key->via.str.ptr;
                    len = key->via.str.size;
                }
                else {
                    if (key->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                        snprintf (text, sizeof text, "%llu", (unsigned long long) key->via.u64);
                    else
                        snprintf (text, sizeof text, "?");
                    len = strlen (text);
                }
                json_object_setn_new_nocheck (map, name, len,
                                              s_to_json (&o->via.map.ptr [i].val, depth + 1));
            }
            return map;
        }
        default:
            return json_null ();
    }
}

json_t *
mpjs_to_json (const msgpack_object *object)
{
    return s_to_json (object, 1);
}

json_t *
mpjs_decode (const void *data, size_t size)
{
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    json_t *json = NULL;
    size_t offset = 0;
    if (msgpack_unpack_next (&unpacked, data, size, &offset) == MSGPACK_UNPACK_SUCCESS
    &&  offset == size)
        json = mpjs_to_json (&unpacked.data);
    msgpack_unpacked_destroy (&unpacked);
    return json;
}

static void
s_pack (msgpack_packer *packer, const json_t *value, int depth)
{
    if (depth > MPJS_MAX_DEPTH) {
        msgpack_pack_nil (packer);
        return;
    }
    switch (json_typeof (value)) {
        case JSON_OBJECT: {
            msgpack_pack_map (packer, json_object_size (value));
            const char *key;
            json_t *item;
            json_object_foreach ((json_t *) value, key, item) {
                msgpack_pack_str_with_body (packer, key, strlen (key));
                s_pack (packer, item, depth + 1);
            }
            break;
        }
        case JSON_ARRAY: {
            msgpack_pack_array (packer, json_array_size (value));
            size_t i;
            json_t *item;
            json_array_foreach (value, i, item)
                s_pack (packer, item, depth + 1);
            break;
        }
        case JSON_STRING:
            msgpack_pack_str_with_body (packer, json_string_value (value),
                                        json_string_length (value));
            break;
        case JSON_INTEGER:
            msgpack_pack_int64 (packer, json_integer_value (value));
            break;
        case JSON_REAL:
            msgpack_pack_double (packer, json_real_value (value));
            break;
        case JSON_TRUE:
            msgpack_pack_true (packer);
            break;
        case JSON_FALSE:
            msgpack_pack_false (packer);
            break;
        default:
            msgpack_pack_nil (packer);
    }
}

void
mpjs_pack (msgpack_packer *packer, const json_t *value)
{
    s_pack (packer, value, 1);
}
