// SPDX-License-Identifier: MIT
/*  penc - builds one frame in a reusable msgpack sbuffer. See pmsg.h.

    penc_begin() empties the buffer, so one penc_t serves a whole connection
    without reallocating once it has grown to the largest frame sent.

    The key/value shortcuts write straight into the sbuffer's bytes: one
    room check per pair, then the msgpack header and body, instead of the
    packer's callback per header and per body (a MAIL record of five pairs
    was twenty calls through msgpack_sbuffer_write, the broker's top cost
    when it encodes mail). pmsg.h wraps them in inline functions that pass
    the key's length, so a literal key costs no strlen. The encodings are
    msgpack-c's own (the smallest form of each header), so frames are the
    same bytes as before. Callers may still pack through penc_packer():
    both write to the same sbuffer.

    Out of memory: a write that cannot get room is dropped (msgpack-c's
    packer does the same when its write returns -1) and the encoder
    remembers it (penc_ok), so a sender can refuse to send a short frame;
    a frame sent anyway is rejected by the receiver as truncated.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"

//  Room for `n` more bytes at the end of the buffer, or NULL.
static char *
s_grow (penc_t *self, size_t n)
{
    msgpack_sbuffer *buffer = &self->buffer;
    if (n > SIZE_MAX / 2 - buffer->size) {
        self->failed = true;
        return NULL;
    }
    size_t alloc = buffer->alloc ? buffer->alloc * 2 : MSGPACK_SBUFFER_INIT_SIZE;
    while (alloc < buffer->size + n)
        alloc *= 2;
    char *data = (char *) self->realloc_fn (buffer->data, alloc);
    if (!data) {
        self->failed = true;
        return NULL;
    }
    buffer->data = data;
    buffer->alloc = alloc;
    return data + buffer->size;
}

static inline char *
s_room (penc_t *self, size_t n)
{
    msgpack_sbuffer *buffer = &self->buffer;
    if (buffer->alloc - buffer->size >= n)
        return buffer->data + buffer->size;
    return s_grow (self, n);
}

//  Big-endian stores.
static inline void
s_be16 (char *p, uint16_t v)
{
    p [0] = (char) (v >> 8);
    p [1] = (char) v;
}

static inline void
s_be32 (char *p, uint32_t v)
{
    p [0] = (char) (v >> 24);
    p [1] = (char) (v >> 16);
    p [2] = (char) (v >> 8);
    p [3] = (char) v;
}

//  A str header for `len` bytes (fixstr, str8, str16, str32); its size.
static inline size_t
s_str_head (char *p, size_t len)
{
    if (len < 32) {
        p [0] = (char) (0xa0 | len);
        return 1;
    }
    if (len < 256) {
        p [0] = (char) 0xd9;
        p [1] = (char) len;
        return 2;
    }
    if (len < 65536) {
        p [0] = (char) 0xda;
        s_be16 (p + 1, (uint16_t) len);
        return 3;
    }
    p [0] = (char) 0xdb;
    s_be32 (p + 1, (uint32_t) len);
    return 5;
}

static inline size_t
s_bin_head (char *p, size_t len)
{
    if (len < 256) {
        p [0] = (char) 0xc4;
        p [1] = (char) len;
        return 2;
    }
    if (len < 65536) {
        p [0] = (char) 0xc5;
        s_be16 (p + 1, (uint16_t) len);
        return 3;
    }
    p [0] = (char) 0xc6;
    s_be32 (p + 1, (uint32_t) len);
    return 5;
}

//  A uint in its smallest form (fixint, uint8/16/32/64); its size.
static inline size_t
s_uint (char *p, uint64_t v)
{
    if (v < 128) {
        p [0] = (char) v;
        return 1;
    }
    if (v < 256) {
        p [0] = (char) 0xcc;
        p [1] = (char) v;
        return 2;
    }
    if (v < 65536) {
        p [0] = (char) 0xcd;
        s_be16 (p + 1, (uint16_t) v);
        return 3;
    }
    if (v <= UINT32_MAX) {
        p [0] = (char) 0xce;
        s_be32 (p + 1, (uint32_t) v);
        return 5;
    }
    p [0] = (char) 0xcf;
    s_be32 (p + 1, (uint32_t) (v >> 32));
    s_be32 (p + 5, (uint32_t) v);
    return 9;
}

//  The key as a str (header + bytes) at p; its size. p has room.
static inline size_t
s_key (char *p, const char *key, size_t key_len)
{
    size_t used = s_str_head (p, key_len);
    memcpy (p + used, key, key_len);
    return used + key_len;
}

//  The packer's writes, into the same buffer by the same growth rule.
static int
s_write (void *data, const char *bytes, size_t len)
{
    penc_t *self = (penc_t *) data;
    char *p = s_room (self, len);
    if (!p)
        return -1;
    memcpy (p, bytes, len);
    self->buffer.size += len;
    return 0;
}

void
penc_init_alloc (penc_t *self, void *(*realloc_fn) (void *, size_t), void (*free_fn) (void *))
{
    assert (self && realloc_fn && free_fn);
    msgpack_sbuffer_init (&self->buffer);
    msgpack_packer_init (&self->packer, self, s_write);
    self->realloc_fn = realloc_fn;
    self->free_fn = free_fn;
    self->failed = false;
}

void
penc_init (penc_t *self)
{
    penc_init_alloc (self, realloc, free);
}

void
penc_fini (penc_t *self)
{
    assert (self);
    if (self->free_fn)
        self->free_fn (self->buffer.data);
    memset (self, 0, sizeof (*self));
}

void
penc_reset (penc_t *self)
{
    assert (self);
    msgpack_sbuffer_clear (&self->buffer);
    self->failed = false;
}

bool
penc_ok (const penc_t *self)
{
    assert (self);
    return !self->failed;
}

msgpack_packer *
penc_packer (penc_t *self)
{
    assert (self);
    return &self->packer;
}

const void *
penc_data (const penc_t *self)
{
    assert (self);
    return self->buffer.data;
}

size_t
penc_size (const penc_t *self)
{
    assert (self);
    return self->buffer.size;
}

void
penc_str (penc_t *self, const char *text, size_t len)
{
    assert (self && (text || len == 0));
    char *p = s_room (self, 5 + len);
    if (!p)
        return;
    size_t used = s_str_head (p, len);
    if (len)
        memcpy (p + used, text, len);
    self->buffer.size += used + len;
}

void
penc_cstr (penc_t *self, const char *text)
{
    assert (text);
    penc_str (self, text, strlen (text));
}

void
penc_key_n (penc_t *self, const char *key, size_t key_len)
{
    penc_str (self, key, key_len);
}

void
penc_begin (penc_t *self, pmsg_type_t type, uint64_t id, size_t fields)
{
    assert (self);
    assert ((unsigned) type < PMSG__COUNT);
    penc_reset (self);
    msgpack_pack_map (&self->packer, 3 + fields);
    penc_kv_uint (self, "v", PROTO_VERSION);
    penc_kv_cstr (self, "t", pmsg_type_name (type));
    penc_kv_uint (self, "id", id);
}

void
penc_kv_str_n (penc_t *self, const char *key, size_t key_len, const char *text, size_t len)
{
    assert (self && key && (text || len == 0));
    char *p = s_room (self, 5 + key_len + 5 + len);
    if (!p)
        return;
    size_t used = s_key (p, key, key_len);
    used += s_str_head (p + used, len);
    if (len)
        memcpy (p + used, text, len);
    self->buffer.size += used + len;
}

void
penc_kv_bin_n (penc_t *self, const char *key, size_t key_len, const void *data, size_t len)
{
    assert (self && key && (data || len == 0));
    char *p = s_room (self, 5 + key_len + 5 + len);
    if (!p)
        return;
    size_t used = s_key (p, key, key_len);
    used += s_bin_head (p + used, len);
    if (len)
        memcpy (p + used, data, len);
    self->buffer.size += used + len;
}

void
penc_kv_uint_n (penc_t *self, const char *key, size_t key_len, uint64_t value)
{
    assert (self && key);
    char *p = s_room (self, 5 + key_len + 9);
    if (!p)
        return;
    size_t used = s_key (p, key, key_len);
    self->buffer.size += used + s_uint (p + used, value);
}

void
penc_kv_int (penc_t *self, const char *key, int64_t value)
{
    penc_key (self, key);
    msgpack_pack_int64 (&self->packer, value);
}

void
penc_kv_num (penc_t *self, const char *key, double value)
{
    penc_key (self, key);
    msgpack_pack_double (&self->packer, value);
}

void
penc_kv_bool (penc_t *self, const char *key, bool value)
{
    penc_key (self, key);
    if (value)
        msgpack_pack_true (&self->packer);
    else
        msgpack_pack_false (&self->packer);
}

void
penc_raw (penc_t *self, const void *msgpack, size_t len)
{
    assert (self && (msgpack || len == 0));
    char *p = len ? s_room (self, len) : NULL;
    if (p) {
        memcpy (p, msgpack, len);
        self->buffer.size += len;
    }
}

void
penc_kv_raw (penc_t *self, const char *key, const void *msgpack, size_t len)
{
    assert (self && key && (msgpack || len == 0));
    size_t key_len = strlen (key);
    char *p = s_room (self, 5 + key_len + len);
    if (!p)
        return;
    size_t used = s_key (p, key, key_len);
    if (len)
        memcpy (p + used, msgpack, len);
    self->buffer.size += used + len;
}

void
penc_object (penc_t *self, const msgpack_object *object)
{
    assert (self && object);
    //  msgpack_pack_object recurses over the tree; decoded trees are at most
    //  PROTO_MAX_DEPTH deep, so the recursion is bounded.
    msgpack_pack_object (&self->packer, *object);
}

void
penc_error (penc_t *self, uint64_t id, perr_t code, const char *format, ...)
{
    char message [PROTO_MAX_TEXT + 1];
    va_list args;
    va_start (args, format);
    int len = vsnprintf (message, sizeof (message), format, args);
    va_end (args);
    if (len < 0)
        len = 0;
    if ((size_t) len > PROTO_MAX_TEXT)
        len = PROTO_MAX_TEXT;       //  truncated to the protocol's text limit
    penc_begin (self, PMSG_ERROR, id, 3);
    penc_kv_uint (self, "code", (uint64_t) code);
    penc_kv_cstr (self, "error", perr_name (code));
    penc_kv_str (self, "message", message, (size_t) len);
}
