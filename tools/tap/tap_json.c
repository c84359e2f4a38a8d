// SPDX-License-Identifier: MIT
/*  tap_json - JSON lines for parley-tap; see tap_json.h. Uses jansson; each
    line is built as a tree and dumped compact. That allocates per frame,
    which is fine at tap rates (a person or jq reads the output); --stats is
    the mode for heavy traffic.
*/
#include <czmq.h>
#include <math.h>
#include <string.h>
#include "pclock.h"
#include "tap_json.h"
#include "tap_text.h"

static json_t *
s_bytes (const char *data, size_t size)
{
    json_t *text = json_stringn (data, size);     //  NULL unless valid UTF-8
    if (text)
        return text;
    zarmour_t *armour = zarmour_new ();
    char *base64 = zarmour_encode (armour, (const byte *) data, size);
    json_t *result = json_pack ("{s:s}", "base64", base64? base64: "");
    zstr_free (&base64);
    zarmour_destroy (&armour);
    return result;
}

static json_t *
s_map (const msgpack_object *object)
{
    json_t *result = json_object ();
    for (uint32_t i = 0; i < object->via.map.size; i++) {
        const msgpack_object_kv *kv = &object->via.map.ptr [i];
        char key [128];
        if (kv->key.type == MSGPACK_OBJECT_STR) {
            size_t len = kv->key.via.str.size;
            if (len >= sizeof key)
                len = sizeof key - 1;       //  state keys are <= 256; cut, not lost
            memcpy (key, kv->key.via.str.ptr, len);
            key [len] = 0;
        }
        else
        if (msgpack_object_print_buffer (key, sizeof key, kv->key) <= 0)
            strcpy (key, "?");
        //  jansson needs UTF-8 keys and stops at NUL; escape anything else.
        json_t *probe = json_string (key);
        if (probe)
            json_decref (probe);
        else {
            char safe [128];
            size_t pos = 0;
            safe [0] = 0;
            tap_text_escape (safe, sizeof safe, &pos, key, strlen (key), 60);
            memcpy (key, safe, pos + 1);
        }
        json_object_set_new (result, key, tap_json_from_msgpack (&kv->val));
    }
    return result;
}

json_t *
tap_json_from_msgpack (const msgpack_object *object)
{
    assert (object);
    switch (object->type) {
        case MSGPACK_OBJECT_NIL:
            return json_null ();
        case MSGPACK_OBJECT_BOOLEAN:
            return json_boolean (object->via.boolean);
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            if (object->via.u64 <= INT64_MAX)
                return json_integer ((json_int_t) object->via.u64);
            else {
                char digits [32];
                snprintf (digits, sizeof digits, "%" PRIu64, object->via.u64);
                return json_string (digits);
            }
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return json_integer ((json_int_t) object->via.i64);
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            return isfinite (object->via.f64)? json_real (object->via.f64): json_null ();
        case MSGPACK_OBJECT_STR:
            return s_bytes (object->via.str.ptr, object->via.str.size);
        case MSGPACK_OBJECT_BIN:
            return s_bytes (object->via.bin.ptr, object->via.bin.size);
        case MSGPACK_OBJECT_EXT:
            return json_pack ("{s:i,s:o}", "ext", (int) object->via.ext.type, "data",
                              s_bytes (object->via.ext.ptr, object->via.ext.size));
        case MSGPACK_OBJECT_ARRAY: {
            json_t *array = json_array ();
            for (uint32_t i = 0; i < object->via.array.size; i++)
                json_array_append_new (array, tap_json_from_msgpack (&object->via.array.ptr [i]));
            return array;
        }
        case MSGPACK_OBJECT_MAP:
            return s_map (object);
    }
    return json_null ();
}

//  A JSON string for text that should be UTF-8 but came off the wire.
static json_t *
s_text (const char *text)
{
    json_t *result = json_string (text);
    if (result)
        return result;
    char safe [512];
    size_t pos = 0;
    safe [0] = 0;
    tap_text_escape (safe, sizeof safe, &pos, text, strlen (text), 400);
    return json_string (safe);
}

static void
s_dump (FILE *out, json_t *line)
{
    char *text = json_dumps (line, JSON_COMPACT);
    if (text) {
        fprintf (out, "%s\n", text);
        free (text);
    }
    json_decref (line);
}

void
tap_json_print (FILE *out, const tap_frame_t *frame)
{
    assert (out);
    assert (frame);
    if (!tap_frame_ok (frame)) {
        s_dump (out, json_pack ("{s:s,s:s,s:o,s:I}", "kind", "bad_tap",
                                "error", perr_name (tap_frame_error (frame)),
                                "why", s_text (tap_frame_why (frame)),
                                "size", (json_int_t) tap_frame_size (frame)));
        return;
    }
    char iso [40];
    pclock_iso8601 ((int64_t) tap_frame_ts (frame), iso, sizeof iso);
    json_t *line = json_pack ("{s:s,s:I,s:I,s:s,s:o,s:o,s:I}", "kind", "frame",
                              "tseq", (json_int_t) tap_frame_tseq (frame),
                              "ts", (json_int_t) tap_frame_ts (frame), "time", iso,
                              "dir", s_text (tap_frame_dir_name (frame)),
                              "peer", s_text (tap_frame_peer (frame)),
                              "size", (json_int_t) tap_frame_body_size (frame));
    const pmsg_t *body = tap_frame_body (frame);
    if (body) {
        char summary [1024];
        tap_text_summary (body, summary, sizeof summary);
        json_object_set_new (line, "type", json_string (pmsg_type_name (pmsg_type (body))));
        json_object_set_new (line, "id", json_integer ((json_int_t) pmsg_id (body)));
        json_object_set_new (line, "summary", s_text (summary));
        json_object_set_new (line, "msg", tap_json_from_msgpack (pmsg_root (body)));
    }
    else {
        json_object_set_new (line, "type", json_null ());
        json_object_set_new (line, "error", json_string (perr_name (tap_frame_body_error (frame))));
        json_object_set_new (line, "why", s_text (tap_frame_body_why (frame)));
    }
    s_dump (out, line);
}

void
tap_json_print_gap (FILE *out, uint64_t after_tseq, uint64_t before_tseq)
{
    assert (out);
    s_dump (out, json_pack ("{s:s,s:I,s:I,s:I}", "kind", "dropped",
                            "count", (json_int_t) (before_tseq - after_tseq - 1),
                            "after_tseq", (json_int_t) after_tseq,
                            "before_tseq", (json_int_t) before_tseq));
}
