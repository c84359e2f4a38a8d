// SPDX-License-Identifier: MIT
/*  mpjson - test helpers: JSON text <-> msgpack, so state and world tests
    can write values and assertions readably.

    JSON -> msgpack: objects become str-keyed maps (key order kept), arrays,
    strings, integers (uint when >= 0), reals (float64), true/false, null.
    msgpack -> JSON (compact, key order kept): non-str map keys are printed
    as their JSON text in a string ("0"), bin as a string, ext as null.
*/
#ifndef PARLEY_MPJSON_H
#define PARLEY_MPJSON_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>

//  Packs the JSON text as one msgpack value into sbuf; false on bad JSON.
bool mpjson_pack (msgpack_sbuffer *sbuf, const char *json);
//  Parses the JSON text into a msgpack object living in `result`
//  (msgpack_unpacked_destroy it); NULL on bad JSON.
const msgpack_object *mpjson_object (msgpack_unpacked *result, const char *json);
//  Compact JSON for a msgpack object / encoded value; caller frees.
char *mpjson_dump_object (const msgpack_object *object);
char *mpjson_dump (const void *data, size_t size);

#endif
