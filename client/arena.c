// SPDX-License-Identifier: MIT
/*  arena - one result's strings and values by offset. See arena.h. */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "arena.h"
#include "mem.h"

struct _client_arena_t {
    char *data;
    size_t size, used;
    bool failed;
};

client_arena_t *
client_arena_new (void)
{
    return (client_arena_t *) client_mem_zalloc (sizeof (client_arena_t));
}

void
client_arena_destroy (client_arena_t **self_p)
{
    assert (self_p);
    client_arena_t *self = *self_p;
    if (self) {
        client_mem_free (self->data);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_arena_reset (client_arena_t *self)
{
    assert (self);
    self->used = self->data ? 1 : 0;   //  offset 0 stays the empty string
    self->failed = false;
}

//  Room for `size` more bytes at `align`; their offset, or 0.
static size_t
s_reserve (client_arena_t *self, size_t size, size_t align)
{
    if (self->failed)
        return 0;
    size_t used = self->used ? self->used : 1;
    size_t at = (used + align - 1) / align * align;
    if (size > SIZE_MAX / 4 - at) {
        self->failed = true;
        return 0;
    }
    if (at + size > self->size || !self->data) {
        size_t want = self->size ? self->size : 1024;
        while (want < at + size)
            want *= 2;
        char *data = (char *) client_mem_realloc (self->data, want);
        if (!data) {
            self->failed = true;
            return 0;
        }
        if (!self->data)
            data [0] = 0;
        self->data = data;
        self->size = want;
    }
    self->used = at + size;
    return at;
}

size_t
client_arena_text (client_arena_t *self, const char *text, size_t len)
{
    assert (self);
    if (len == 0)
        return 0;
    size_t at = s_reserve (self, len + 1, 1);
    if (at) {
        memcpy (self->data + at, text, len);
        self->data [at + len] = 0;
    }
    return at;
}

size_t
client_arena_str (client_arena_t *self, const msgpack_object *object)
{
    if (!object || object->type != MSGPACK_OBJECT_STR)
        return 0;
    return client_arena_text (self, object->via.str.ptr, object->via.str.size);
}

static int
s_write (void *data, const char *bytes, size_t len)
{
    client_arena_t *self = (client_arena_t *) data;
    size_t at = s_reserve (self, len, 1);
    if (!at)
        return -1;
    memcpy (self->data + at, bytes, len);
    return 0;
}

size_t
client_arena_pack (client_arena_t *self, const msgpack_object *object, size_t *size)
{
    assert (self && object && size);
    *size = 0;
    //  Reserving nothing makes sure the buffer (and its "" at 0) exists,
    //  so the packed bytes start at `used`.
    (void) s_reserve (self, 0, 1);
    if (self->failed)
        return 0;
    size_t at = self->used;
    msgpack_packer packer;
    msgpack_packer_init (&packer, self, s_write);
    if (msgpack_pack_object (&packer, *object) != 0 || self->failed) {
        self->failed = true;
        return 0;
    }
    *size = self->used - at;
    return *size ? at : 0;
}

size_t
client_arena_zero (client_arena_t *self, size_t count)
{
    assert (self);
    size_t at = s_reserve (self, count ? count : 1, sizeof (max_align_t));
    if (at)
        memset (self->data + at, 0, count ? count : 1);
    return at;
}

size_t
client_arena_strings (client_arena_t *self, const msgpack_object *array, size_t *count)
{
    assert (self && count);
    *count = 0;
    if (!array || array->type != MSGPACK_OBJECT_ARRAY || array->via.array.size == 0)
        return 0;
    size_t n = array->via.array.size;
    size_t table = client_arena_zero (self, n * sizeof (size_t));
    if (!table)
        return 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *o = &array->via.array.ptr [i];
        if (o->type != MSGPACK_OBJECT_STR)
            continue;
        size_t at = client_arena_str (self, o);
        //  The table's address is taken again: the copy may move the buffer.
        memcpy (self->data + table + kept * sizeof (size_t), &at, sizeof at);
        kept++;
    }
    *count = kept;
    return table;
}

const char *
client_arena_string_at (const client_arena_t *self, size_t table, size_t count, size_t index)
{
    assert (self);
    if (index >= count)
        return NULL;
    size_t at;
    memcpy (&at, self->data + table + index * sizeof (size_t), sizeof at);
    return client_arena_at (self, at);
}

const char *
client_arena_at (const client_arena_t *self, size_t offset)
{
    assert (self);
    return offset && self->data ? self->data + offset : "";
}

bool
client_arena_failed (const client_arena_t *self)
{
    assert (self);
    return self->failed;
}
