// SPDX-License-Identifier: MIT
/*  pwire - bounded structural check of one msgpack frame, and the unpacker
    that builds the tree in the same walk.

    msgpack-c's unpacker trusts declared counts: `dd ff ff ff ff` (an array
    of 4 billion elements) makes it reserve ~100 GB for the element table
    before it reads one element. Parley does not use it for frames: this
    walk proves, byte by byte, that
      - every str/bin/ext length fits in the bytes that remain;
      - every object still declared - the children of the container just
        read and the rest of every container still open - has at least a
        byte of its own left (each value takes at least one byte), so the
        element tables are bounded by the frame size, all of them together;
      - nesting is at most max_depth, objects at most max_objects;
      - the bytes are exactly one value: no truncation, no trailing bytes;
    and, given a zone (pwire_unpack), fills in the msgpack_object tree as
    it reads each header, so a frame is read once, not checked and then
    unpacked. A container's table is allocated when its header is read,
    only after the count passed the check above.
    The walk is iterative with a fixed stack, so it needs no recursion and
    its cost is linear in the frame size.
*/
#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "pwire.h"

//  msgpack-c's unpacker fails past this depth anyway; we stop first.
#define PWIRE_STACK 32

static const pwire_limits_t s_default_limits = {
    .max_frame = PROTO_MAX_FRAME,
    .max_depth = PROTO_MAX_DEPTH,
    .max_objects = PROTO_MAX_OBJECTS
};

const pwire_limits_t *
pwire_default_limits (void)
{
    return &s_default_limits;
}

perr_t
pwire_fail (char *why, size_t why_size, perr_t code, const char *format, ...)
{
    if (why && why_size > 0) {
        va_list args;
        va_start (args, format);
        vsnprintf (why, why_size, format, args);
        va_end (args);
    }
    return code;
}

//  Reads a big-endian unsigned integer of `width` bytes.
static uint64_t
s_be (const uint8_t *p, size_t width)
{
    uint64_t value = 0;
    for (size_t i = 0; i < width; i++)
        value = (value << 8) | p [i];
    return value;
}

//  What one header says: bytes of header, bytes of payload that follow it
//  inline (str/bin/ext data, scalar bodies) and, for containers, children.
typedef struct {
    size_t header;          //  bytes to read for the header itself
    size_t width;           //  bytes of length/count inside the header
    uint64_t payload;       //  inline bytes after the header
    uint64_t children;      //  child objects (map: 2 per pair)
    bool container;
    bool is_map;
    bool valid;
} s_head_t;

//  Classifies the first byte. Lengths/counts stored in following bytes are
//  filled in later (width > 0) once we know those bytes exist.
static s_head_t
s_classify (uint8_t b)
{
    s_head_t h = { .header = 1, .valid = true };
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return h;                                       //  fixint, nil, bool
    if (b >= 0x80 && b <= 0x8f) {
        h.container = h.is_map = true;
        h.children = 2u * (b & 0x0f);
        return h;
    }
    if (b >= 0x90 && b <= 0x9f) {
        h.container = true;
        h.children = b & 0x0f;
        return h;
    }
    if (b >= 0xa0 && b <= 0xbf) {
        h.payload = b & 0x1f;
        return h;
    }
    switch (b) {
        case 0xcc: case 0xd0: h.payload = 1; break;
        case 0xcd: case 0xd1: h.payload = 2; break;
        case 0xca: case 0xce: case 0xd2: h.payload = 4; break;
        case 0xcb: case 0xcf: case 0xd3: h.payload = 8; break;
        case 0xd4: h.payload = 2; break;                //  fixext: type + data
        case 0xd5: h.payload = 3; break;
        case 0xd6: h.payload = 5; break;
        case 0xd7: h.payload = 9; break;
        case 0xd8: h.payload = 17; break;
        case 0xc4: case 0xd9: h.width = 1; break;       //  bin8, str8
        case 0xc5: case 0xda: h.width = 2; break;
        case 0xc6: case 0xdb: h.width = 4; break;
        case 0xc7: h.width = 1; break;                  //  ext8/16/32 (+1 type byte)
        case 0xc8: h.width = 2; break;
        case 0xc9: h.width = 4; break;
        case 0xdc: h.width = 2; h.container = true; break;
        case 0xdd: h.width = 4; h.container = true; break;
        case 0xde: h.width = 2; h.container = h.is_map = true; break;
        case 0xdf: h.width = 4; h.container = h.is_map = true; break;
        default: h.valid = false;                       //  0xc1: never used
    }
    h.header += h.width;
    return h;
}

//  Reads one object header at data[pos]; checks it against what remains.
static perr_t
s_read_head (const uint8_t *data, size_t size, size_t pos, s_head_t *h,
             char *why, size_t why_size)
{
    *h = s_classify (data [pos]);
    if (!h->valid)
        return pwire_fail (why, why_size, PERR_MALFORMED,
                           "byte %zu: 0xc1 is not a msgpack type", pos);
    if (h->header > size - pos)
        return pwire_fail (why, why_size, PERR_MALFORMED,
                           "byte %zu: header truncated (frame ends at %zu)", pos, size);
    if (h->width > 0) {
        uint64_t n = s_be (data + pos + 1, h->width);
        uint8_t b = data [pos];
        if (h->container)
            h->children = h->is_map ? 2 * n : n;
        else
            h->payload = (b >= 0xc7 && b <= 0xc9) ? n + 1 : n;
    }
    uint64_t left = size - pos - h->header;
    if (h->payload > left)
        return pwire_fail (why, why_size, PERR_MALFORMED,
                           "byte %zu: %llu bytes declared but only %llu remain",
                           pos, (unsigned long long) h->payload,
                           (unsigned long long) left);
    //  Every child takes at least one byte: a count larger than the bytes
    //  left is a lie, caught before the unpacker sizes a table from it.
    if (h->children > left)
        return pwire_fail (why, why_size, PERR_MALFORMED,
                           "byte %zu: %s of %llu %s declared but only %llu bytes remain",
                           pos, h->is_map ? "map" : "array",
                           (unsigned long long) (h->is_map ? h->children / 2 : h->children),
                           h->is_map ? "pairs" : "elements", (unsigned long long) left);
    return PERR_NONE;
}

//  The msgpack_object for one scalar whose header (h) starts at p. The
//  header and payload were checked against the frame already.
static void
s_scalar (const uint8_t *p, const s_head_t *h, msgpack_object *o)
{
    uint8_t b = p [0];
    const uint8_t *body = p + h->header;
    if (b <= 0x7f) {
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = b;
        return;
    }
    if (b >= 0xe0) {
        o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        o->via.i64 = (int8_t) b;
        return;
    }
    if ((b >= 0xa0 && b <= 0xbf) || b == 0xd9 || b == 0xda || b == 0xdb) {
        o->type = MSGPACK_OBJECT_STR;
        o->via.str.ptr = (const char *) body;
        o->via.str.size = (uint32_t) h->payload;
        return;
    }
    switch (b) {
        case 0xc0:
            o->type = MSGPACK_OBJECT_NIL;
            return;
        case 0xc2: case 0xc3:
            o->type = MSGPACK_OBJECT_BOOLEAN;
            o->via.boolean = b == 0xc3;
            return;
        case 0xcc: case 0xcd: case 0xce: case 0xcf:
            o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
            o->via.u64 = s_be (body, (size_t) h->payload);
            return;
        case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
            //  Sign-extend; a signed encoding of a value >= 0 is a
            //  positive integer, as msgpack-c reports it.
            size_t width = (size_t) h->payload;
            uint64_t raw = s_be (body, width);
            int64_t value = width == 8 ? (int64_t) raw
                          : (int64_t) (raw << (64 - 8 * width)) >> (64 - 8 * width);
            if (value >= 0) {
                o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
                o->via.u64 = (uint64_t) value;
            }
            else {
                o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
                o->via.i64 = value;
            }
            return;
        }
        case 0xca: {
            uint32_t bits = (uint32_t) s_be (body, 4);
            float value;
            memcpy (&value, &bits, sizeof value);
            o->type = MSGPACK_OBJECT_FLOAT32;
            o->via.f64 = value;
            return;
        }
        case 0xcb: {
            uint64_t bits = s_be (body, 8);
            double value;
            memcpy (&value, &bits, sizeof value);
            o->type = MSGPACK_OBJECT_FLOAT64;
            o->via.f64 = value;
            return;
        }
        case 0xc4: case 0xc5: case 0xc6:
            o->type = MSGPACK_OBJECT_BIN;
            o->via.bin.ptr = (const char *) body;
            o->via.bin.size = (uint32_t) h->payload;
            return;
        default:                    //  ext: one type byte, then the data
            o->type = MSGPACK_OBJECT_EXT;
            o->via.ext.type = (int8_t) body [0];
            o->via.ext.ptr = (const char *) body + 1;
            o->via.ext.size = (uint32_t) (h->payload - 1);
            return;
    }
}

//  One level of the walk: children still to read and, when building, where
//  the next one goes. A map's table of n key/value pairs is filled as 2n
//  objects in a row: msgpack_object_kv is a key and a value, nothing
//  between or after them (checked below).
typedef struct {
    uint64_t left;
    msgpack_object *next;
} s_level_t;

_Static_assert (sizeof (msgpack_object_kv) == 2 * sizeof (msgpack_object)
             && offsetof (msgpack_object_kv, val) == sizeof (msgpack_object),
                "msgpack_object_kv must be two msgpack_objects in a row");

//  The walk behind pwire_scan and pwire_unpack. With a zone it also builds
//  the msgpack_object tree (strings point into data), allocating a
//  container's table when its header is read: the count was checked
//  against the bytes left together with every child still owed by the
//  open containers, so all tables together hold at most one object per
//  byte of the frame, whatever the counts claim.
static perr_t
s_walk (const void *data, size_t size, const pwire_limits_t *limits,
        msgpack_zone *zone, msgpack_object *root, pwire_stats_t *stats,
        char *why, size_t why_size)
{
    if (!limits)
        limits = &s_default_limits;
    if (size > limits->max_frame)
        return pwire_fail (why, why_size, PERR_TOO_LARGE,
                           "frame of %zu bytes is over the %zu-byte limit",
                           size, limits->max_frame);
    if (size == 0 || !data)
        return pwire_fail (why, why_size, PERR_MALFORMED, "empty frame");

    const uint8_t *bytes = data;
    unsigned max_depth = limits->max_depth < PWIRE_STACK ? limits->max_depth : PWIRE_STACK;
    s_level_t level [PWIRE_STACK + 1];
    unsigned top = 0;
    level [0] = (s_level_t) { .left = 1, .next = root };
    size_t pos = 0, objects = 0, containers = 0;
    uint64_t owed = 1;                  //  children owed by every open level

    while (true) {
        if (pos >= size)
            return pwire_fail (why, why_size, PERR_MALFORMED,
                               "frame truncated at byte %zu", size);
        //  Fast path for the commonest objects: positive fixint, fixstr
        //  (map keys, small values), fixmap and fixarray (records) - every
        //  header that is its first byte alone. The same checks as below,
        //  inline; when one fails, the general path finds and words it.
        uint8_t first = bytes [pos];
        if (first <= 0xbf) {
            bool is_int = first <= 0x7f, is_str = first >= 0xa0;
            bool container = !is_int && !is_str;
            uint64_t payload = is_str ? first & 0x1f : 0;
            uint64_t children = !container ? 0 : first <= 0x8f ? 2u * (first & 0x0f)
                                                              : first & 0x0fu;
            uint64_t after = size - pos - 1;
            if (payload <= after && children <= after - payload
            &&  owed - 1 <= after - payload - children
            &&  objects < limits->max_objects
            &&  (!container || top + 1 <= max_depth)) {
                owed--;
                objects++;
                msgpack_object *o = zone ? level [top].next++ : NULL;
                level [top].left--;
                if (container) {
                    containers++;
                    pos += 1;
                    msgpack_object *table = NULL;
                    if (o) {
                        uint32_t n = first & 0x0f;
                        o->type = first <= 0x8f ? MSGPACK_OBJECT_MAP : MSGPACK_OBJECT_ARRAY;
                        o->via.array.size = n;
                        o->via.array.ptr = NULL;
                        if (n > 0) {
                            table = msgpack_zone_malloc (zone, children * sizeof (msgpack_object));
                            if (!table)
                                return pwire_fail (why, why_size, PERR_INTERNAL, "out of memory");
                            if (first <= 0x8f)
                                o->via.map.ptr = (msgpack_object_kv *) table;
                            else
                                o->via.array.ptr = table;
                        }
                    }
                    if (children > 0) {
                        owed += children;
                        level [++top] = (s_level_t) { .left = children, .next = table };
                        continue;
                    }
                }
                else {
                    if (o && is_int) {
                        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
                        o->via.u64 = first;
                    }
                    else
                    if (o) {
                        o->type = MSGPACK_OBJECT_STR;
                        o->via.str.ptr = (const char *) bytes + pos + 1;
                        o->via.str.size = (uint32_t) payload;
                    }
                    pos += 1 + payload;
                }
                while (top > 0 && level [top].left == 0)
                    top--;
                if (top == 0 && level [0].left == 0)
                    break;
                continue;
            }
        }
        s_head_t h;
        perr_t rc = s_read_head (bytes, size, pos, &h, why, why_size);
        if (rc)
            return rc;
        //  Every object still owed (this one's children and the rest of
        //  every open container) takes at least one of the bytes after it.
        owed--;                         //  this object, owed by its parent
        uint64_t after = size - pos - h.header - h.payload;
        if (h.children > after || owed > after - h.children)
            return pwire_fail (why, why_size, PERR_MALFORMED,
                               "byte %zu: %llu objects still declared but only %llu bytes remain",
                               pos, (unsigned long long) (owed + h.children),
                               (unsigned long long) after);
        if (++objects > limits->max_objects)
            return pwire_fail (why, why_size, PERR_TOO_LARGE,
                               "more than %zu objects in one frame", limits->max_objects);
        msgpack_object *o = zone ? level [top].next++ : NULL;
        level [top].left--;
        if (h.container) {
            containers++;
            if (top + 1 > max_depth)
                return pwire_fail (why, why_size, PERR_TOO_LARGE,
                                   "byte %zu: nesting deeper than %u", pos, max_depth);
            s_level_t next = { .left = h.children, .next = NULL };
            if (o) {
                //  children <= bytes left <= max_frame: these sizes cannot overflow
                uint32_t n = (uint32_t) (h.is_map ? h.children / 2 : h.children);
                o->type = h.is_map ? MSGPACK_OBJECT_MAP : MSGPACK_OBJECT_ARRAY;
                o->via.array.size = n;
                o->via.array.ptr = NULL;
                if (n > 0) {
                    void *table = msgpack_zone_malloc (zone, h.is_map
                                                       ? n * sizeof (msgpack_object_kv)
                                                       : n * sizeof (msgpack_object));
                    if (!table)
                        return pwire_fail (why, why_size, PERR_INTERNAL, "out of memory");
                    if (h.is_map)
                        o->via.map.ptr = table;
                    else
                        o->via.array.ptr = table;
                    next.next = table;
                }
            }
            pos += h.header;
            if (h.children > 0) {
                owed += h.children;
                level [++top] = next;
                continue;
            }
        }
        else {
            if (o)
                s_scalar (bytes + pos, &h, o);
            pos += h.header + h.payload;
        }
        while (top > 0 && level [top].left == 0)
            top--;
        if (top == 0 && level [0].left == 0)
            break;
    }
    if (pos != size)
        return pwire_fail (why, why_size, PERR_MALFORMED,
                           "%zu trailing bytes after the value", size - pos);
    if (stats) {
        stats->objects = objects;
        stats->containers = containers;
    }
    return PERR_NONE;
}

perr_t
pwire_scan (const void *data, size_t size, const pwire_limits_t *limits,
            pwire_stats_t *stats, char *why, size_t why_size)
{
    return s_walk (data, size, limits, NULL, NULL, stats, why, why_size);
}

perr_t
pwire_unpack (const void *data, size_t size, const pwire_limits_t *limits,
              msgpack_zone *zone, msgpack_object *root, char *why, size_t why_size)
{
    assert (zone && root);
    return s_walk (data, size, limits, zone, root, NULL, why, why_size);
}

perr_t
pwire_check (const void *data, size_t size, const pwire_limits_t *limits,
             char *why, size_t why_size)
{
    return pwire_scan (data, size, limits, NULL, why, why_size);
}

static const pwire_limits_t s_tap_limits = {
    .max_frame = PROTO_MAX_TAP_FRAME,
    .max_depth = PROTO_MAX_DEPTH,
    .max_objects = PROTO_MAX_OBJECTS
};

const pwire_limits_t *
pwire_tap_limits (void)
{
    return &s_tap_limits;
}
