// SPDX-License-Identifier: MIT
/*  tap_text - text lines for parley-tap; see tap_text.h.

    Lines are built in a fixed stack buffer (TAP_TEXT_LINE bytes) with
    bounded appends, so a frame with thousands of items costs the same as one
    with a few: summaries list at most TAP_TEXT_LIST names and say how many
    more there were.
*/
#include <czmq.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include "pclock.h"
#include "tap_text.h"

#define TAP_TEXT_LINE 1024
#define TAP_TEXT_LIST 6

typedef struct {
    char *buf;
    size_t size;
    size_t pos;
} s_line_t;

static void s_add (s_line_t *line, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
s_add (s_line_t *line, const char *format, ...)
{
    if (line->pos + 1 >= line->size)
        return;
    va_list args;
    va_start (args, format);
    int n = vsnprintf (line->buf + line->pos, line->size - line->pos, format, args);
    va_end (args);
    if (n > 0)
        line->pos += (size_t) n;
    if (line->pos >= line->size)
        line->pos = line->size - 1;
}

//  Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid.
static size_t
s_utf8_len (const unsigned char *p, size_t left)
{
    size_t need;
    if (p [0] < 0x80) return 1;
    else if ((p [0] & 0xE0) == 0xC0 && p [0] >= 0xC2) need = 2;
    else if ((p [0] & 0xF0) == 0xE0) need = 3;
    else if ((p [0] & 0xF8) == 0xF0 && p [0] <= 0xF4) need = 4;
    else return 0;
    if (need > left)
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((p [i] & 0xC0) != 0x80)
            return 0;
    return need;
}

void
tap_text_escape (char *buf, size_t size, size_t *pos, const char *text,
                 size_t len, size_t max)
{
    s_line_t line = { buf, size, *pos };
    const unsigned char *p = (const unsigned char *) text;
    size_t i = 0;
    while (i < len && i < max) {
        size_t n = s_utf8_len (p + i, len - i);
        if (n == 1 && p [i] >= 0x20 && p [i] != 0x7F && p [i] != '"' && p [i] != '\\')
            s_add (&line, "%c", p [i]);
        else
        if (n == 1 && (p [i] == '"' || p [i] == '\\'))
            s_add (&line, "\\%c", p [i]);
        else
        if (n == 1 && p [i] == '\n')
            s_add (&line, "\\n");
        else
        if (n == 1 && p [i] == '\t')
            s_add (&line, "\\t");
        else
        if (n > 1)
            s_add (&line, "%.*s", (int) n, (const char *) p + i);
        else
            s_add (&line, "\\x%02X", p [i]);
        i += n? n: 1;
    }
    if (i < len)
        s_add (&line, "...");
    *pos = line.pos;
}

static void
s_add_text (s_line_t *line, const char *text, size_t len, size_t max)
{
    tap_text_escape (line->buf, line->size, &line->pos, text, len, max);
}

static void
s_add_field_text (s_line_t *line, const msgpack_object *map, const char *name, size_t max)
{
    size_t len = 0;
    const char *text = pobj_str (map, name, &len);
    if (text)
        s_add_text (line, text, len, max);
}

//  " to X" or " #chan" for a send_item / mail_item.
static void
s_add_target (s_line_t *line, const msgpack_object *item)
{
    size_t len = 0;
    const char *name = pobj_str (item, "channel", &len);
    if (name) {
        s_add (line, " #");
        s_add_text (line, name, len, PROTO_MAX_NAME);
    }
    else
    if ((name = pobj_str (item, "to", &len))) {
        s_add (line, " to ");
        s_add_text (line, name, len, PROTO_MAX_NAME);
    }
}

static void
s_add_body (s_line_t *line, const msgpack_object *item)
{
    size_t len = 0;
    const char *body = pobj_str (item, "body", &len);
    if (body) {
        s_add (line, " \"");
        s_add_text (line, body, len, TAP_TEXT_MAX_BODY);
        s_add (line, "\"");
    }
}

//  Up to TAP_TEXT_LIST elements of an array: strings, or the str field
//  `field` of maps. Then "(+N more)".
static void
s_add_list (s_line_t *line, const msgpack_object *array, const char *field)
{
    if (!array || array->type != MSGPACK_OBJECT_ARRAY)
        return;
    uint32_t count = array->via.array.size;
    for (uint32_t i = 0; i < count && i < TAP_TEXT_LIST; i++) {
        const msgpack_object *o = &array->via.array.ptr [i];
        s_add (line, i? ",": "");
        if (field)
            s_add_field_text (line, o, field, 48);
        else
        if (o->type == MSGPACK_OBJECT_STR)
            s_add_text (line, o->via.str.ptr, o->via.str.size, 48);
    }
    if (count > TAP_TEXT_LIST)
        s_add (line, " (+%" PRIu32 " more)", count - TAP_TEXT_LIST);
}

static uint32_t
s_count (const msgpack_object *array)
{
    return array && array->type == MSGPACK_OBJECT_ARRAY? array->via.array.size: 0;
}

static void
s_summary_messages (s_line_t *line, const pmsg_t *msg, bool mail)
{
    const msgpack_object *items = pmsg_field (msg, "messages");
    uint32_t count = s_count (items);
    s_add (line, " %" PRIu32 " msg%s", count, count == 1? "": "s");
    if (mail)
        s_add (line, " pending=%" PRIu64, pmsg_uint (msg, "pending", 0));
    if (count == 0)
        return;
    const msgpack_object *first = &items->via.array.ptr [0];
    s_add (line, ":");
    if (mail) {
        s_add (line, " #%" PRIu64 " from ", pobj_uint (first, "seq", 0));
        s_add_field_text (line, first, "from", PROTO_MAX_NAME);
    }
    s_add_target (line, first);
    s_add_body (line, first);
    if (count > 1)
        s_add (line, " (+%" PRIu32 " more)", count - 1);
}

static void
s_summary_sent (s_line_t *line, const pmsg_t *msg)
{
    const msgpack_object *seqs = pmsg_field (msg, "seqs");
    s_add (line, " accepted %" PRIu64 "/%" PRIu32, pmsg_uint (msg, "accepted", 0), s_count (seqs));
    const msgpack_object *errors = pmsg_field (msg, "errors");
    uint32_t count = s_count (errors);
    for (uint32_t i = 0; i < count && i < TAP_TEXT_LIST; i++) {
        const msgpack_object *e = &errors->via.array.ptr [i];
        s_add (line, " [%" PRIu64 "]%s", pobj_uint (e, "index", 0),
               perr_name ((int) pobj_uint (e, "code", 0)));
        size_t len = 0;
        const char *agent = pobj_str (e, "agent", &len);
        if (agent) {
            s_add (line, "(");
            s_add_text (line, agent, len, PROTO_MAX_NAME);
            s_add (line, ")");
        }
    }
    if (count > TAP_TEXT_LIST)
        s_add (line, " (+%" PRIu32 " more errors)", count - TAP_TEXT_LIST);
}

static void
s_summary_write (s_line_t *line, const pmsg_t *msg)
{
    const msgpack_object *ops = pmsg_field (msg, "ops");
    uint32_t count = s_count (ops);
    s_add (line, " %" PRIu32 " op%s:", count, count == 1? "": "s");
    for (uint32_t i = 0; i < count && i < TAP_TEXT_LIST; i++) {
        const msgpack_object *op = &ops->via.array.ptr [i];
        s_add (line, " ");
        s_add_field_text (line, op, "op", 16);
        s_add (line, " ");
        s_add_field_text (line, op, "key", 48);
        if (i + 1 < count && i + 1 < TAP_TEXT_LIST)
            s_add (line, ",");
    }
    if (count > TAP_TEXT_LIST)
        s_add (line, " (+%" PRIu32 " more)", count - TAP_TEXT_LIST);
}

static void
s_summary_observation (s_line_t *line, const pmsg_t *msg)
{
    s_add (line, " pos=%" PRIu64 " (%" PRIu64 ",%" PRIu64 ") ", pmsg_uint (msg, "position", 0),
           pmsg_uint (msg, "x", 0), pmsg_uint (msg, "y", 0));
    size_t len = 0;
    const char *outcome = pmsg_str (msg, "outcome", &len);
    if (outcome)
        s_add_text (line, outcome, len, 16);
    s_add (line, " objects=[");
    s_add_list (line, pmsg_field (msg, "objects"), NULL);
    s_add (line, "] new=[");
    s_add_list (line, pmsg_field (msg, "new_objects"), NULL);
    s_add (line, "] explored %" PRIu64 "/%" PRIu64 " coverage=%.2f%s",
           pmsg_uint (msg, "explored", 0), pmsg_uint (msg, "objects_total", 0),
           pmsg_num (msg, "coverage", 0), pmsg_bool (msg, "done", false)? " done": "");
}

//  " name=text" for a str field, if present.
static void
s_add_kv_text (s_line_t *line, const pmsg_t *msg, const char *name, size_t max)
{
    size_t len = 0;
    const char *text = pmsg_str (msg, name, &len);
    if (text) {
        s_add (line, " %s=", name);
        s_add_text (line, text, len, max);
    }
}

static void
s_summary_events (s_line_t *line, const pmsg_t *msg)
{
    switch (pmsg_type (msg)) {
        case PMSG_MAIL_READY:
            s_add_kv_text (line, msg, "agent", PROTO_MAX_NAME);
            s_add (line, " seq=%" PRIu64, pmsg_uint (msg, "seq", 0));
            break;
        case PMSG_STATE_UPDATE:
            s_add_kv_text (line, msg, "key", 64);
            s_add_kv_text (line, msg, "op", 16);
            s_add (line, " seq=%" PRIu64, pmsg_uint (msg, "seq", 0));
            break;
        case PMSG_WORLD_EVENT:
            s_add_kv_text (line, msg, "event", 32);
            s_add (line, " explored %" PRIu64 "/%" PRIu64 " coverage=%.2f",
                   pmsg_uint (msg, "explored", 0), pmsg_uint (msg, "objects_total", 0),
                   pmsg_num (msg, "coverage", 0));
            break;
        case PMSG_AGENT_EVENT:
            s_add_kv_text (line, msg, "agent", PROTO_MAX_NAME);
            s_add_kv_text (line, msg, "event", 32);
            break;
        default:
            break;
    }
}

static void
s_summary_replies (s_line_t *line, const pmsg_t *msg)
{
    const msgpack_object *world;
    switch (pmsg_type (msg)) {
        case PMSG_WELCOME:
            s_add_kv_text (line, msg, "agent", PROTO_MAX_NAME);
            s_add_kv_text (line, msg, "pub", 128);
            s_add_kv_text (line, msg, "tap", 128);
            s_add (line, " acked=%" PRIu64, pmsg_uint (msg, "acked", 0));
            world = pmsg_field (msg, "world");
            if (world)
                s_add (line, " coverage=%.2f", pobj_num (world, "coverage", 0));
            break;
        case PMSG_ERROR: {
            uint64_t code = pmsg_uint (msg, "code", 0);
            s_add (line, " %s(%" PRIu64 "):", perr_name ((int) code), code);
            size_t len = 0;
            const char *text = pmsg_str (msg, "message", &len);
            if (text) {
                s_add (line, " ");
                s_add_text (line, text, len, 120);
            }
            break;
        }
        case PMSG_AGENT_LIST:
            s_add (line, " %" PRIu32 " agents: ", s_count (pmsg_field (msg, "agents")));
            s_add_list (line, pmsg_field (msg, "agents"), "agent");
            break;
        case PMSG_SENT:
            s_summary_sent (line, msg);
            break;
        case PMSG_MAIL:
            s_summary_messages (line, msg, true);
            break;
        case PMSG_WRITTEN:
            s_add (line, " seq=%" PRIu64 " changed=%" PRIu64,
                   pmsg_uint (msg, "seq", 0), pmsg_uint (msg, "changed", 0));
            break;
        case PMSG_STATE:
            s_add (line, " seq=%" PRIu64 " %" PRIu32 " entries: ", pmsg_uint (msg, "seq", 0),
                   s_count (pmsg_field (msg, "entries")));
            s_add_list (line, pmsg_field (msg, "entries"), "key");
            break;
        case PMSG_OBSERVATION:
            s_summary_observation (line, msg);
            break;
        case PMSG_STEPPED: {
            const msgpack_object *sent = pmsg_field (msg, "sent");
            const msgpack_object *obs = pmsg_field (msg, "observation");
            if (pmsg_field (msg, "step"))
                s_add (line, " step=%" PRIu64, pmsg_uint (msg, "step", 0));
            if (pmsg_bool (msg, "replayed", false))
                s_add (line, " replayed");
            if (sent)
                s_add (line, " accepted=%" PRIu64, pobj_uint (sent, "accepted", 0));
            if (pmsg_field (msg, "written"))
                s_add (line, " written");
            if (pmsg_field (msg, "ops_error"))
                s_add (line, " ops_error=%s", perr_name ((int) pobj_uint (pmsg_field (msg, "ops_error"), "code", 0)));
            if (obs) {
                s_add (line, " pos=%" PRIu64 " ", pobj_uint (obs, "position", 0));
                s_add_field_text (line, obs, "outcome", 16);
            }
            if (pmsg_field (msg, "action_error"))
                s_add (line, " action_error=%s", perr_name ((int) pobj_uint (pmsg_field (msg, "action_error"), "code", 0)));
            if (pmsg_field (msg, "mail"))
                s_add (line, " mail=%" PRIu32, s_count (pmsg_field (msg, "mail")));
            s_add (line, " acked=%" PRIu64, pmsg_uint (msg, "acked", 0));
            break;
        }
        case PMSG_STATS_REPLY:
            s_add (line, " agents=%" PRIu64 " online=%" PRIu64 " queued=%" PRIu64
                   " in=%" PRIu64 " out=%" PRIu64 " rate_in=%.0f/s",
                   pmsg_uint (msg, "agents", 0), pmsg_uint (msg, "online", 0),
                   pmsg_uint (msg, "queued", 0), pmsg_uint (msg, "msgs_in", 0),
                   pmsg_uint (msg, "msgs_out", 0), pmsg_num (msg, "rate_in", 0));
            break;
        default:
            s_summary_events (line, msg);
            break;
    }
}

static void
s_summary (s_line_t *line, const pmsg_t *msg)
{
    if (pmsg_id (msg))
        s_add (line, " id=%" PRIu64, pmsg_id (msg));
    switch (pmsg_type (msg)) {
        case PMSG_HELLO:
            s_add_kv_text (line, msg, "agent", PROTO_MAX_NAME);
            s_add (line, " caps=[");
            s_add_list (line, pmsg_field (msg, "caps"), NULL);
            s_add (line, "]");
            break;
        case PMSG_BYE:
            if (pmsg_bool (msg, "forget", false))
                s_add (line, " forget");
            break;
        case PMSG_SEND:
            s_summary_messages (line, msg, false);
            break;
        case PMSG_FETCH:
            if (pmsg_field (msg, "ack"))
                s_add (line, " ack=%" PRIu64, pmsg_uint (msg, "ack", 0));
            if (pmsg_field (msg, "max"))
                s_add (line, " max=%" PRIu64, pmsg_uint (msg, "max", 0));
            break;
        case PMSG_ACK:
            s_add (line, " seq=%" PRIu64, pmsg_uint (msg, "seq", 0));
            break;
        case PMSG_LISTEN:
        case PMSG_UNLISTEN: {
            size_t len = 0;
            const char *channel = pmsg_str (msg, "channel", &len);
            s_add (line, " #");
            s_add_text (line, channel? channel: "", channel? len: 0, PROTO_MAX_NAME);
            break;
        }
        case PMSG_WRITE:
            s_summary_write (line, msg);
            break;
        case PMSG_GET:
            s_add (line, " %" PRIu32 " keys: ", s_count (pmsg_field (msg, "keys")));
            s_add_list (line, pmsg_field (msg, "keys"), NULL);
            break;
        case PMSG_SNAPSHOT:
            s_add_kv_text (line, msg, "prefix", 64);
            break;
        case PMSG_ACT:
            s_add_kv_text (line, msg, "action", 32);
            break;
        case PMSG_STEP:
            //  The step and what it carries, one word a part.
            if (pmsg_field (msg, "step"))
                s_add (line, " step=%" PRIu64, pmsg_uint (msg, "step", 0));
            if (pmsg_field (msg, "ack"))
                s_add (line, " ack=%" PRIu64, pmsg_uint (msg, "ack", 0));
            if (pmsg_field (msg, "messages"))
                s_add (line, " messages=%" PRIu32, s_count (pmsg_field (msg, "messages")));
            if (pmsg_field (msg, "ops"))
                s_add (line, " ops=%" PRIu32, s_count (pmsg_field (msg, "ops")));
            s_add_kv_text (line, msg, "action", 32);
            if (pmsg_bool (msg, "perceive", false))
                s_add (line, " perceive");
            if (pmsg_field (msg, "fetch"))
                s_add (line, " fetch=%" PRIu64, pmsg_uint (msg, "fetch", 0));
            break;
        case PMSG_WORLD_RESET:
            if (pmsg_field (msg, "seed"))
                s_add (line, " seed=%" PRIu64, pmsg_uint (msg, "seed", 0));
            break;
        default:
            s_summary_replies (line, msg);
            break;
    }
}

void
tap_text_summary (const pmsg_t *msg, char *buf, size_t size)
{
    assert (msg);
    assert (buf && size > 0);
    s_line_t line = { buf, size, 0 };
    buf [0] = 0;
    s_summary (&line, msg);
    //  Drop the leading blank every field adds.
    if (buf [0] == ' ')
        memmove (buf, buf + 1, strlen (buf));
}

static void
s_add_time (s_line_t *line, uint64_t ts)
{
    char iso [40];
    pclock_iso8601 ((int64_t) ts, iso, sizeof iso);
    //  "2026-11-21T08:40:01.123Z": the time of day is what a person scans for.
    const char *t = strchr (iso, 'T');
    size_t len = strlen (iso);
    if (t && len > 0 && iso [len - 1] == 'Z')
        s_add (line, "%.*s", (int) (iso + len - 1 - (t + 1)), t + 1);
    else
        s_add (line, "%s", iso);
}

void
tap_text_print (FILE *out, const tap_frame_t *frame)
{
    assert (out);
    assert (frame);
    char buf [TAP_TEXT_LINE];
    s_line_t line = { buf, sizeof buf, 0 };
    buf [0] = 0;
    if (!tap_frame_ok (frame)) {
        s_add (&line, "?            ?   ?                !%-11s undecodable TAP frame (%zu bytes): ",
               perr_name (tap_frame_error (frame)), tap_frame_size (frame));
        const char *why = tap_frame_why (frame);
        s_add_text (&line, why, strlen (why), 200);
        fprintf (out, "%s\n", buf);
        return;
    }
    s_add_time (&line, tap_frame_ts (frame));
    s_add (&line, " %-3s ", tap_frame_dir_name (frame));
    size_t peer_at = line.pos;
    const char *peer = tap_frame_peer (frame);
    s_add_text (&line, peer, strlen (peer), 48);
    for (size_t width = line.pos - peer_at; width < 16; width++)
        s_add (&line, " ");
    const pmsg_t *body = tap_frame_body (frame);
    if (body) {
        s_add (&line, " %-12s", pmsg_type_name (pmsg_type (body)));
        s_summary (&line, body);
    }
    else {
        s_add (&line, " !%-11s undecodable body (%zu bytes): ",
               perr_name (tap_frame_body_error (frame)), tap_frame_body_size (frame));
        const char *why = tap_frame_body_why (frame);
        s_add_text (&line, why, strlen (why), 200);
    }
    fprintf (out, "%s\n", buf);
}

//  One message item of a SEND or MAIL in full: "    [i] #seq from X to Y: "body"".
//  The escaped body is built in a buffer sized from the body actually
//  received (at most 4 output bytes per input byte, for \xNN), which the
//  frame size (1 MiB) bounds.
static void
s_print_item (FILE *out, const msgpack_object *item, uint32_t index, bool mail)
{
    char head [TAP_TEXT_LINE];
    s_line_t line = { head, sizeof head, 0 };
    head [0] = 0;
    s_add (&line, "    [%" PRIu32 "]", index);
    if (mail) {
        s_add (&line, " #%" PRIu64 " from ", pobj_uint (item, "seq", 0));
        s_add_field_text (&line, item, "from", PROTO_MAX_NAME);
    }
    s_add_target (&line, item);
    s_add (&line, ":");
    size_t len = 0;
    const char *body = pobj_str (item, "body", &len);
    if (!body) {
        fprintf (out, "%s (no body)\n", head);
        return;
    }
    size_t size = len * 4 + 8;
    char *text = (char *) malloc (size);
    if (!text) {
        fprintf (out, "%s (%zu bytes: out of memory)\n", head, len);
        return;
    }
    size_t pos = 0;
    text [0] = 0;
    tap_text_escape (text, size, &pos, body, len, len);
    fprintf (out, "%s \"%s\"\n", head, text);
    free (text);
}

void
tap_text_print_bodies (FILE *out, const tap_frame_t *frame)
{
    assert (out);
    assert (frame);
    const pmsg_t *msg = tap_frame_body (frame);
    if (!msg || (pmsg_type (msg) != PMSG_SEND && pmsg_type (msg) != PMSG_MAIL))
        return;
    const msgpack_object *items = pmsg_field (msg, "messages");
    uint32_t count = s_count (items);
    for (uint32_t i = 0; i < count; i++)
        s_print_item (out, &items->via.array.ptr [i], i, pmsg_type (msg) == PMSG_MAIL);
}

void
tap_text_print_gap (FILE *out, uint64_t after_tseq, uint64_t before_tseq)
{
    assert (out);
    fprintf (out, "-- dropped %" PRIu64 " frame%s (tseq %" PRIu64 "..%" PRIu64 " missing)\n",
             before_tseq - after_tseq - 1, before_tseq - after_tseq == 2? "": "s",
             after_tseq + 1, before_tseq - 1);
}
