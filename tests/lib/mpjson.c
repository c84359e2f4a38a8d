// SPDX-License-Identifier: MIT
/*  mpjson - JSON text <-> msgpack for tests (see mpjson.h). */
#include "mpjson.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void
pack_json (msgpack_packer *pk, const json_t *j)
{
    switch (json_typeof (j)) {
        case JSON_OBJECT: {
            msgpack_pack_map (pk, json_object_size (j));
            const char *key;
            json_t *value;
            json_object_foreach ((json_t *) j, key, value) {
                msgpack_pack_str_with_body (pk, key, strlen (key));
                pack_json (pk, value);
            }
            break;
        }
        case JSON_ARRAY:
            msgpack_pack_array (pk, json_array_size (j));
            for (size_t i = 0; i < json_array_size (j); i++)
                pack_json (pk, json_array_get (j, i));
            break;
        case JSON_STRING:
            msgpack_pack_str_with_body (pk, json_string_value (j), json_string_length (j));
            break;
        case JSON_INTEGER: {
            json_int_t v = json_integer_value (j);
            if (v >= 0)
                msgpack_pack_uint64 (pk, (uint64_t) v);
            else
                msgpack_pack_int64 (pk, v);
            break;
        }
        case JSON_REAL:
            msgpack_pack_double (pk, json_real_value (j));
            break;
        case JSON_TRUE:
            msgpack_pack_true (pk);
            break;
        case JSON_FALSE:
            msgpack_pack_false (pk);
            break;
        default:
            msgpack_pack_nil (pk);
    }
}

bool
mpjson_pack (msgpack_sbuffer *sbuf, const char *json)
{
    json_error_t error;
    json_t *j = json_loads (json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
    if (!j)
        return false;
    msgpack_packer pk;
    msgpack_packer_init (&pk, sbuf, msgpack_sbuffer_write);
    pack_json (&pk, j);
    json_decref (j);
    return true;
}

const msgpack_object *
mpjson_object (msgpack_unpacked *result, const char *json)
{
    //  msgpack-c's objects point into the buffer they were unpacked from
    //  (strings are not copied), so the bytes are copied into the zone that
    //  msgpack_unpacked_destroy frees.
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_unpacked_init (result);
    const msgpack_object *object = NULL;
    if (mpjson_pack (&sbuf, json)) {
        result->zone = msgpack_zone_new (MSGPACK_ZONE_CHUNK_SIZE);
        char *copy = (char *) msgpack_zone_malloc (result->zone, sbuf.size);
        memcpy (copy, sbuf.data, sbuf.size);
        size_t offset = 0;
        if (msgpack_unpack (copy, sbuf.size, &offset, result->zone, &result->data)
            == MSGPACK_UNPACK_SUCCESS)
            object = &result->data;
    }
    msgpack_sbuffer_destroy (&sbuf);
    return object;
}

static json_t *
to_json (const msgpack_object *o)
{
    switch (o->type) {
        case MSGPACK_OBJECT_BOOLEAN: return json_boolean (o->via.boolean);
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return json_integer ((json_int_t) o->via.u64);
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer (o->via.i64);
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64: return json_real (o->via.f64);
        case MSGPACK_OBJECT_STR: return json_stringn (o->via.str.ptr, o->via.str.size);
        case MSGPACK_OBJECT_BIN: return json_stringn (o->via.bin.ptr, o->via.bin.size);
        case MSGPACK_OBJECT_ARRAY: {
            json_t *a = json_array ();
            for (uint32_t i = 0; i < o->via.array.size; i++)
                json_array_append_new (a, to_json (&o->via.array.ptr [i]));
            return a;
        }
        case MSGPACK_OBJECT_MAP: {
            json_t *m = json_object ();
            for (uint32_t i = 0; i < o->via.map.size; i++) {
                const msgpack_object *k = &o->via.map.ptr [i].key;
                char *name;
                if (k->type == MSGPACK_OBJECT_STR)
                    name = strndup (k->via.str.ptr, k->via.str.size);
                else {
                    json_t *kj = to_json (k);
                    name = json_dumps (kj, JSON_ENCODE_ANY | JSON_COMPACT);
                    json_decref (kj);
                }
                json_object_set_new (m, name, to_json (&o->via.map.ptr [i].val));
                free (name);
            }
            return m;
        }
        default: return json_null ();
    }
}

char *
mpjson_dump_object (const msgpack_object *object)
{
    json_t *j = to_json (object);
    char *text = json_dumps (j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref (j);
    return text;
}

char *
mpjson_dump (const void *data, size_t size)
{
    msgpack_unpacked result;
    msgpack_unpacked_init (&result);
    size_t offset = 0;
    char *text = NULL;
    if (msgpack_unpack_next (&result, (const char *) data, size, &offset) == MSGPACK_UNPACK_SUCCESS
    &&  offset == size)
        text = mpjson_dump_object (&result.data);
    else
        text = strdup ("<not one msgpack value>");
    msgpack_unpacked_destroy (&result);
    return text;
}
