// SPDX-License-Identifier: MIT
/*  penc - builds one frame in a reusable msgpack sbuffer. See pmsg.h.

    penc_begin() empties the buffer, so one penc_t serves a whole connection
    without reallocating once it has grown to the largest frame sent. The
    packer writes straight into the sbuffer; nothing else is allocated.
    Out of memory inside msgpack_sbuffer_write aborts in msgpack-c's own
    way (it returns -1, which the packer ignores): the frame is then short
    and the receiver rejects it as truncated, which is what we want.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "pmsg.h"

void
penc_init (penc_t *self)
{
    assert (self);
    msgpack_sbuffer_init (&self->buffer);
    msgpack_packer_init (&self->packer, &self->buffer, msgpack_sbuffer_write);
}

void
penc_fini (penc_t *self)
{
    assert (self);
    msgpack_sbuffer_destroy (&self->buffer);
    memset (self, 0, sizeof (*self));
}

void
penc_reset (penc_t *self)
{
    assert (self);
    msgpack_sbuffer_clear (&self->buffer);
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
    msgpack_pack_str (&self->packer, len);
    if (len)
        msgpack_pack_str_body (&self->packer, text, len);
}

void
penc_cstr (penc_t *self, const char *text)
{
    assert (text);
    penc_str (self, text, strlen (text));
}

void
penc_key (penc_t *self, const char *key)
{
    penc_cstr (self, key);
}

void
penc_begin (penc_t *self, pmsg_type_t type, uint64_t id, size_t fields)
{
    assert (self);
    assert ((unsigned) type < PMSG__COUNT);
    penc_reset (self);
    msgpack_pack_map (&self->packer, 3 + fields);
    penc_key (self, "v");
    msgpack_pack_uint64 (&self->packer, PROTO_VERSION);
    penc_key (self, "t");
    penc_cstr (self, pmsg_type_name (type));
    penc_key (self, "id");
    msgpack_pack_uint64 (&self->packer, id);
}

void
penc_kv_cstr (penc_t *self, const char *key, const char *text)
{
    penc_key (self, key);
    penc_cstr (self, text);
}

void
penc_kv_str (penc_t *self, const char *key, const char *text, size_t len)
{
    penc_key (self, key);
    penc_str (self, text, len);
}

void
penc_kv_bin (penc_t *self, const char *key, const void *data, size_t len)
{
    assert (data || len == 0);
    penc_key (self, key);
    msgpack_pack_bin (&self->packer, len);
    if (len)
        msgpack_pack_bin_body (&self->packer, data, len);
}

void
penc_kv_uint (penc_t *self, const char *key, uint64_t value)
{
    penc_key (self, key);
    msgpack_pack_uint64 (&self->packer, value);
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
    if (len)
        msgpack_sbuffer_write (&self->buffer, msgpack, len);
}

void
penc_kv_raw (penc_t *self, const char *key, const void *msgpack, size_t len)
{
    penc_key (self, key);
    penc_raw (self, msgpack, len);
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
