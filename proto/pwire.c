// SPDX-License-Identifier: MIT
/*  pwire - bounded structural check of one msgpack frame, before unpacking.

    msgpack-c's unpacker trusts declared counts: `dd ff ff ff ff` (an array
    of 4 billion elements) makes it reserve ~100 GB for the element table
    before it reads one element. So nothing reaches the unpacker until this
    walk has proved, byte by byte and without allocating, that:
      - every str/bin/ext length fits in the bytes that remain;
      - every array of n elements has at least n bytes left, a map of n
        pairs at least 2n (each value takes at least one byte), so the
        unpacker's tables are bounded by the frame size;
      - nesting is at most max_depth (and never above msgpack-c's own
        MSGPACK_EMBED_STACK_SIZE), objects at most max_objects;
      - the bytes are exactly one value: no truncation, no trailing bytes.
    The walk is iterative with a fixed stack, so it needs no recursion and
    its cost is linear in the frame size.
*/
#include <stdarg.h>
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

perr_t
pwire_scan (const void *data, size_t size, const pwire_limits_t *limits,
            pwire_stats_t *stats, char *why, size_t why_size)
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
    uint64_t left [PWIRE_STACK + 1];    //  children still to read per level
    unsigned top = 0;
    left [0] = 1;                       //  level 0: the one root value
    size_t pos = 0, objects = 0, containers = 0;

    while (true) {
        if (pos >= size)
            return pwire_fail (why, why_size, PERR_MALFORMED,
                               "frame truncated at byte %zu", size);
        s_head_t h;
        perr_t rc = s_read_head (bytes, size, pos, &h, why, why_size);
        if (rc)
            return rc;
        if (++objects > limits->max_objects)
            return pwire_fail (why, why_size, PERR_TOO_LARGE,
                               "more than %zu objects in one frame", limits->max_objects);
        pos += h.header + h.payload;
        left [top]--;
        if (h.container) {
            containers++;
            if (top + 1 > max_depth)
                return pwire_fail (why, why_size, PERR_TOO_LARGE,
                                   "byte %zu: nesting deeper than %u", pos - h.header,
                                   max_depth);
            if (h.children > 0) {
                left [++top] = h.children;
                continue;
            }
        }
        while (top > 0 && left [top] == 0)
            top--;
        if (top == 0 && left [0] == 0)
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
