// SPDX-License-Identifier: MIT
/*  arena - the strings and values of one result, in one growing buffer
    addressed by offset (the buffer may move while the result is built, so
    records keep offsets and read them back with client_arena_at).

    A copy that cannot get memory does not fail on its own: it returns
    offset 0, which always reads as "", and the arena remembers it; the
    decoder asks client_arena_failed once at the end and reports
    PARLEY_ERR_NOMEM. So a decoder has one check, not one per string.
*/
#ifndef PARLEY_CLIENT_ARENA_H
#define PARLEY_CLIENT_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <msgpack.h>

typedef struct _client_arena_t client_arena_t;

//  NULL when memory ran out.
client_arena_t *client_arena_new (void);
void client_arena_destroy (client_arena_t **self_p);
//  Empties it, keeping the buffer, and forgets a failure.
void client_arena_reset (client_arena_t *self);
//  `len` bytes and a NUL; their offset (0 on failure: "").
size_t client_arena_text (client_arena_t *self, const char *text, size_t len);
//  A str object's bytes as a text ("" for anything else).
size_t client_arena_str (client_arena_t *self, const msgpack_object *object);
//  A msgpack object packed back to bytes; their offset, the size in *size.
size_t client_arena_pack (client_arena_t *self, const msgpack_object *object, size_t *size);
//  `count` bytes, zeroed and aligned for any record; their offset.
size_t client_arena_zero (client_arena_t *self, size_t count);
//  The str elements of `array` (others are skipped): the offset of a
//  table of their offsets, their number in *count.
size_t client_arena_strings (client_arena_t *self, const msgpack_object *array, size_t *count);
//  String `index` of such a table; NULL past `count`.
const char *client_arena_string_at (const client_arena_t *self, size_t table, size_t count,
                                    size_t index);
//  The bytes at `offset` ("" for offset 0).
const char *client_arena_at (const client_arena_t *self, size_t offset);
bool client_arena_failed (const client_arena_t *self);

#endif
