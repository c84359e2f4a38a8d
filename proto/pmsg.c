// SPDX-License-Identifier: MIT
/*  pmsg - decode one frame: bounded walk, unpack into a zone, envelope,
    schema. See pmsg.h for the contract and PROTOCOL.md for the rules.

    The hot path (SEND batches of thousands of small messages, decoded by
    the broker; MAIL replies, decoded by every client) reads the frame
    once: pwire_unpack checks each header and builds its msgpack_object in
    the same walk (msgpack-c's unpacker, which trusts declared counts, is
    not used). One msgpack zone holds the pmsg_t, a copy of the frame (the
    strings point into it) and the objects; its first chunk is sized for a
    typical frame. The schema check walks the unpacked tree once; a field
    is looked up first at the schema position after the previous field
    (encoders write fields in schema order), then linearly over the small
    schema, comparing bytes without strlen.
    Duplicate keys: known fields are tracked in a 64-bit mask; unknown keys
    (rare) are sorted and compared, so a map of many unknown keys costs
    n log n, never n^2.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pwire.h"
#include "pmsg_check.h"

struct _pmsg_t {
    msgpack_zone *zone;         //  owns everything, self included
    void (*release) (void *);   //  adopted frame: frees it on destroy
    void *release_arg;
    pmsg_type_t type;
    uint64_t id;
    msgpack_object root;
};

//  Finds v, t and id; rejects non-str keys and duplicate envelope keys.
typedef struct {
    const msgpack_object *v, *t, *id;
} s_envelope_t;

static perr_t
s_find_envelope (pcheck_t *ctx, const msgpack_object *root, s_envelope_t *env)
{
    memset (env, 0, sizeof (*env));
    if (root->type != MSGPACK_OBJECT_MAP)
        return pcheck_fail (ctx, PERR_MALFORMED, "the frame is not a msgpack map");
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object *key = &root->via.map.ptr [i].key;
        const msgpack_object *val = &root->via.map.ptr [i].val;
        if (key->type != MSGPACK_OBJECT_STR)
            return pcheck_fail (ctx, PERR_MALFORMED, "top-level key %u is not a string", i);
        //  By size and bytes: this runs for every top-level key.
        const msgpack_object **slot = NULL;
        const char *text = key->via.str.ptr;
        if (key->via.str.size == 1 && text [0] == 'v')
            slot = &env->v;
        else
        if (key->via.str.size == 1 && text [0] == 't')
            slot = &env->t;
        else
        if (key->via.str.size == 2 && text [0] == 'i' && text [1] == 'd')
            slot = &env->id;
        if (!slot)
            continue;
        if (*slot)
            return pcheck_fail (ctx, PERR_MALFORMED, "duplicate key \"%.*s\"",
                                (int) key->via.str.size, key->via.str.ptr);
        *slot = val;
    }
    return PERR_NONE;
}

//  known/named: what pmsg_type_from_name said of "t" (looked up once).
static perr_t
s_check_envelope (pcheck_t *ctx, const s_envelope_t *env, bool known, pmsg_type_t named,
                  pmsg_type_t *type, uint64_t *id)
{
    if (env->id && env->id->type != MSGPACK_OBJECT_NIL) {
        if (env->id->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return pcheck_fail (ctx, PERR_BAD_FIELD, "\"id\" must be an unsigned integer");
        *id = env->id->via.u64;
    }
    if (!env->v || env->v->type == MSGPACK_OBJECT_NIL)
        return pcheck_fail (ctx, PERR_BAD_FIELD, "missing required field \"v\" (version)");
    if (env->v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return pcheck_fail (ctx, PERR_BAD_FIELD, "\"v\" must be an unsigned integer");
    if (env->v->via.u64 != PROTO_VERSION)
        return pcheck_fail (ctx, PERR_VERSION, "version %llu is not spoken here (only %d)",
                            (unsigned long long) env->v->via.u64, PROTO_VERSION);
    if (!env->t || env->t->type == MSGPACK_OBJECT_NIL)
        return pcheck_fail (ctx, PERR_BAD_FIELD, "missing required field \"t\" (type)");
    if (env->t->type != MSGPACK_OBJECT_STR)
        return pcheck_fail (ctx, PERR_BAD_FIELD, "\"t\" must be a string");
    const char *name = env->t->via.str.ptr;
    uint32_t len = env->t->via.str.size;
    if (!known)
        return pcheck_fail (ctx, PERR_UNKNOWN_TYPE, "unknown message type \"%.*s\"",
                            (int) (len > 64 ? 64 : len), name);
    *type = named;
    return PERR_NONE;
}

//  The zone's first chunk: the pmsg_t, the frame copy, and room for the
//  objects of a typical frame (about one msgpack_object per 8 bytes; mail
//  records of short bodies come close). A frame with more objects grows
//  the zone by further chunks; their total is bounded by the walk (at
//  most one object per frame byte).
static size_t
s_zone_size (size_t size, bool copy)
{
    return sizeof (pmsg_t) + (copy ? size : 0) + (size / 8 + 8) * sizeof (msgpack_object)
         + 256;
}

//  Into *self_p, a message whose strings point into a copy of the frame,
//  or into the frame itself when `copy` is false (the caller then gives
//  the message the frame's ownership).
//  One spare zone for small frames (a request or reply of one message,
//  one op: most of them), kept across decodes so that such a frame costs
//  no malloc and free of a zone. One slot, exchanged atomically, so any
//  thread may take or give it; a zone that finds the slot full is freed.
#define S_SPARE_CHUNK 4096
static _Atomic (msgpack_zone *) s_spare;

static msgpack_zone *
s_zone_take (size_t want)
{
    if (want > S_SPARE_CHUNK)
        return msgpack_zone_new (want);
    msgpack_zone *zone = atomic_exchange (&s_spare, NULL);
    return zone ? zone : msgpack_zone_new (S_SPARE_CHUNK);
}

static void
s_zone_give (msgpack_zone *zone)
{
    if (zone->chunk_size == S_SPARE_CHUNK) {
        msgpack_zone_clear (zone);          //  keeps its first chunk only
        zone = atomic_exchange (&s_spare, zone);
    }
    if (zone)
        msgpack_zone_free (zone);
}

static perr_t
s_unpack (const void *data, size_t size, const pwire_limits_t *limits, bool copy,
          pmsg_t **self_p, char *why, size_t why_size)
{
    if (!limits)
        limits = pwire_default_limits ();
    //  The walk reports these first; checked before sizing the zone.
    if (size > limits->max_frame || size == 0 || !data)
        return pwire_scan (data, size, limits, NULL, why, why_size);
    msgpack_zone *zone = s_zone_take (s_zone_size (size, copy));
    if (!zone)
        return pwire_fail (why, why_size, PERR_INTERNAL, "out of memory");
    pmsg_t *self = msgpack_zone_malloc (zone, sizeof (pmsg_t));
    char *bytes = copy ? msgpack_zone_malloc_no_align (zone, size) : (char *) data;
    if (!self || !bytes) {
        s_zone_give (zone);
        return pwire_fail (why, why_size, PERR_INTERNAL, "out of memory");
    }
    if (copy)
        memcpy (bytes, data, size);
    memset (self, 0, sizeof (*self));
    self->zone = zone;
    perr_t rc = pwire_unpack (bytes, size, limits, zone, &self->root, why, why_size);
    if (rc) {
        s_zone_give (zone);
        return rc;
    }
    *self_p = self;
    return PERR_NONE;
}

pmsg_t *
pmsg_decode (const void *data, size_t size, const pwire_limits_t *limits,
             perr_t *err, uint64_t *id_out, char *why, size_t why_size)
{
    return pmsg_decode_with_type (data, size, limits, err, id_out, NULL, NULL, why, why_size);
}

static pmsg_t *
s_decode (const void *data, size_t size, const pwire_limits_t *limits, bool copy,
          perr_t *err, uint64_t *id_out, pmsg_type_t *type_out,
          bool *type_known, char *why, size_t why_size)
{
    pmsg_t *self = NULL;
    uint64_t id = 0;
    bool known = false;
    pmsg_type_t type = PMSG_HELLO;
    if (why && why_size)
        why [0] = 0;
    perr_t rc = s_unpack (data, size, limits, copy, &self, why, why_size);
    if (rc)
        goto done;

    pcheck_t ctx;
    pcheck_init (&ctx, self->zone, why, why_size);
    s_envelope_t env;
    rc = s_find_envelope (&ctx, &self->root, &env);
    //  The type "t" names, as soon as the envelope keys are found, whatever
    //  else the envelope or the fields get wrong.
    if (!rc && env.t && env.t->type == MSGPACK_OBJECT_STR)
        known = pmsg_type_from_name (env.t->via.str.ptr, env.t->via.str.size, &type);
    if (!rc)
        rc = s_check_envelope (&ctx, &env, known, type, &self->type, &id);
    if (!rc) {
        self->id = id;
        ctx.request = pmsg_type_kind (self->type) == PMSG_REQUEST;
        ctx.type_name = pmsg_type_name (self->type);
        rc = pcheck_map (&ctx, &self->root, pmsg_schema (self->type), true);
    }
    if (rc)
        pmsg_destroy (&self);
done:
    if (err)
        *err = rc;
    if (id_out)
        *id_out = id;
    if (type_out)
        *type_out = type;
    if (type_known)
        *type_known = known;
    return self;
}

pmsg_t *
pmsg_decode_with_type (const void *data, size_t size, const pwire_limits_t *limits,
                       perr_t *err, uint64_t *id_out, pmsg_type_t *type_out,
                       bool *type_known, char *why, size_t why_size)
{
    return s_decode (data, size, limits, true, err, id_out, type_out, type_known,
                     why, why_size);
}

pmsg_t *
pmsg_decode_adopt (const void *data, size_t size, const pwire_limits_t *limits,
                   void (*release) (void *), void *release_arg,
                   perr_t *err, uint64_t *id_out, char *why, size_t why_size)
{
    assert (release);
    pmsg_t *self = s_decode (data, size, limits, false, err, id_out, NULL, NULL,
                             why, why_size);
    if (self) {
        self->release = release;
        self->release_arg = release_arg;
    }
    else
        release (release_arg);
    return self;
}

void
pmsg_destroy (pmsg_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        pmsg_t *self = *self_p;
        *self_p = NULL;
        void (*release) (void *) = self->release;
        void *release_arg = self->release_arg;
        s_zone_give (self->zone);           //  self lives in the zone
        if (release)
            release (release_arg);
    }
}

pmsg_type_t
pmsg_type (const pmsg_t *self)
{
    assert (self);
    return self->type;
}

uint64_t
pmsg_id (const pmsg_t *self)
{
    assert (self);
    return self->id;
}

const msgpack_object *
pmsg_root (const pmsg_t *self)
{
    assert (self);
    return &self->root;
}
