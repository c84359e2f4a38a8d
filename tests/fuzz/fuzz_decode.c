// SPDX-License-Identifier: MIT
/*  fuzz_decode - libFuzzer target for the frame decoder.

    Properties checked on every input (abort() = a finding):
      - pmsg_decode never crashes, leaks, hangs or over-allocates (the
        sanitizers and libFuzzer's -rss_limit_mb/-timeout catch those);
      - a failure always has a code and a sentence;
      - pwire_check agrees: a frame that decodes passes the walk;
      - a decoded message re-encoded with penc_object decodes again, to the
        same type and id, and every schema field read through the getters;
      - penc_error can quote the decoder's sentence and the result decodes;
      - proto's own unpacker (pwire_unpack) accepts exactly what pwire_check
        accepts, and then builds msgpack-c's tree (msgpack_unpack's).
    Inputs above PROTO_MAX_FRAME are decoded with the tap limits, so the
    TAP size path is fuzzed too. Built and run by scripts/fuzz.sh.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"
#include "pwire.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
s_read_fields (const pmsg_t *msg)
{
    const pschema_t *schema = pmsg_schema (pmsg_type (msg));
    char buffer [PROTO_MAX_NAME + 1];
    for (size_t i = 0; i < schema->count; i++) {
        const char *name = schema->fields [i].name;
        size_t len;
        (void) pmsg_uint (msg, name, 0);
        (void) pmsg_int (msg, name, 0);
        (void) pmsg_num (msg, name, 0);
        (void) pmsg_bool (msg, name, false);
        (void) pmsg_str (msg, name, &len);
        (void) pmsg_strcpy (msg, name, buffer, sizeof (buffer));
    }
}

static void
s_reencode (const pmsg_t *msg, const pwire_limits_t *limits)
{
    penc_t enc;
    penc_init (&enc);
    penc_object (&enc, pmsg_root (msg));
    perr_t err;
    uint64_t id;
    char why [256];
    pmsg_t *copy = pmsg_decode (penc_data (&enc), penc_size (&enc), limits, &err, &id,
                                why, sizeof (why));
    if (!copy || pmsg_type (copy) != pmsg_type (msg) || pmsg_id (copy) != pmsg_id (msg))
        abort ();
    s_read_fields (copy);
    pmsg_destroy (&copy);
    penc_fini (&enc);
}

static void
s_error_reply (uint64_t id, perr_t err, const char *why)
{
    penc_t enc;
    penc_init (&enc);
    penc_error (&enc, id, err, "%s", why);
    perr_t again;
    pmsg_t *reply = pmsg_decode (penc_data (&enc), penc_size (&enc), NULL, &again, NULL,
                                 NULL, 0);
    if (!reply || pmsg_uint (reply, "code", 0) != (uint64_t) err)
        abort ();
    pmsg_destroy (&reply);
    penc_fini (&enc);
}

//  Same tree, floats by their bits.
static bool
s_same (const msgpack_object *a, const msgpack_object *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
        case MSGPACK_OBJECT_ARRAY:
            if (a->via.array.size != b->via.array.size)
                return false;
            for (uint32_t i = 0; i < a->via.array.size; i++)
                if (!s_same (&a->via.array.ptr [i], &b->via.array.ptr [i]))
                    return false;
            return true;
        case MSGPACK_OBJECT_MAP:
            if (a->via.map.size != b->via.map.size)
                return false;
            for (uint32_t i = 0; i < a->via.map.size; i++)
                if (!s_same (&a->via.map.ptr [i].key, &b->via.map.ptr [i].key)
                ||  !s_same (&a->via.map.ptr [i].val, &b->via.map.ptr [i].val))
                    return false;
            return true;
        case MSGPACK_OBJECT_STR:
        case MSGPACK_OBJECT_BIN:
            return a->via.str.size == b->via.str.size && (a->via.str.size == 0
                   || memcmp (a->via.str.ptr, b->via.str.ptr, a->via.str.size) == 0);
        case MSGPACK_OBJECT_EXT:
            return a->via.ext.type == b->via.ext.type && a->via.ext.size == b->via.ext.size
                && (a->via.ext.size == 0
                    || memcmp (a->via.ext.ptr, b->via.ext.ptr, a->via.ext.size) == 0);
        case MSGPACK_OBJECT_NIL:
            return true;
        case MSGPACK_OBJECT_BOOLEAN:
            return a->via.boolean == b->via.boolean;
        default:                    //  integers and floats: the same 8 bytes
            return memcmp (&a->via.u64, &b->via.u64, sizeof (uint64_t)) == 0;
    }
}

static void
s_unpackers_agree (const uint8_t *data, size_t size, const pwire_limits_t *limits)
{
    perr_t checked = pwire_check (data, size, limits, NULL, 0);
    msgpack_zone *zone = msgpack_zone_new (1024);
    msgpack_object ours;
    if (!zone || pwire_unpack (data, size, limits, zone, &ours, NULL, 0) != checked)
        abort ();
    if (checked == PERR_NONE) {
        msgpack_zone *their_zone = msgpack_zone_new (1024);
        msgpack_object theirs;
        size_t offset = 0;
        if (!their_zone
        ||  msgpack_unpack ((const char *) data, size, &offset, their_zone, &theirs)
                != MSGPACK_UNPACK_SUCCESS
        ||  offset != size || !s_same (&ours, &theirs))
            abort ();
        msgpack_zone_free (their_zone);
    }
    msgpack_zone_free (zone);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const pwire_limits_t *limits = size > PROTO_MAX_FRAME ? pwire_tap_limits () : NULL;
    perr_t err = PERR__COUNT;
    uint64_t id = 0;
    char why [256] = "";
    s_unpackers_agree (data, size, limits);
    pmsg_t *msg = pmsg_decode (data, size, limits, &err, &id, why, sizeof (why));
    if (msg) {
        if (err != PERR_NONE || pwire_check (data, size, limits, NULL, 0) != PERR_NONE)
            abort ();
        s_read_fields (msg);
        s_reencode (msg, limits);
        pmsg_destroy (&msg);
    }
    else {
        if (err == PERR_NONE || err >= PERR__COUNT || why [0] == 0)
            abort ();
        s_error_reply (id, err, why);
    }
    return 0;
}
