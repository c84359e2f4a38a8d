// SPDX-License-Identifier: MIT
/*  mpjs - msgpack values <-> jansson JSON values.

    The shared state holds msgpack; people and the built-in scene policies
    read and write JSON. Conversion rules: maps with str keys become objects
    (other keys are written as their JSON text), bin becomes a string, ext
    becomes null; JSON integers become msgpack ints, reals float64. Depth is
    capped (MPJS_MAX_DEPTH): deeper values convert to null rather than
    recursing without bound.
*/
#ifndef PARLEY_MPJS_H
#define PARLEY_MPJS_H

#include <jansson.h>
#include <msgpack.h>

#define MPJS_MAX_DEPTH 64

//  A new JSON value (caller json_decref's), NULL on out of memory.
json_t *mpjs_to_json (const msgpack_object *object);
//  As above from encoded msgpack bytes; NULL when they do not decode.
json_t *mpjs_decode (const void *data, size_t size);
//  Packs a JSON value as one msgpack value.
void mpjs_pack (msgpack_packer *packer, const json_t *value);

#endif
