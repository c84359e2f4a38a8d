// SPDX-License-Identifier: MIT
/*  web_feed - TAP frames to hub events. See web_feed.h.

    Each frame is decoded twice (tap_frame: the TAP envelope, then the
    Parley frame inside) and converted once to JSON (tap_json, the same
    conversion as `parley-tap --json`); the small summary for the
    timeline is picked from that JSON, the whole of it is kept for bodies
    on demand.
*/
#include <assert.h>
#include <czmq.h>
#include <msgpack.h>
#include "pclock.h"
#include "pmsg.h"
#include "tap_frame.h"
#include "tap_json.h"
#include "tap_text.h"
#include "web_feed.h"

struct _web_feed_t {
    web_hub_t *hub;
    char *own_name;             //  the view's own id: its frames are not shown
    char own_peer [PROTO_MAX_NAME + 1];
    char *hidden;               //  the operator's id: its traffic is not shown
    char hidden_peer [PROTO_MAX_NAME + 1];  //  and its latest connection's
    bool reading;               //  that connection is one of the operator's reads
    uint64_t last_tseq;         //  0: none yet
    uint64_t frames;
    uint64_t bad;
};

web_feed_t *
web_feed_new (web_hub_t *hub)
{
    assert (hub);
    web_feed_t *self = (web_feed_t *) zmalloc (sizeof *self);
    self->hub = hub;
    return self;
}

void
web_feed_destroy (web_feed_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free ((*self_p)->own_name);
        free ((*self_p)->hidden);
    }
    free (*self_p);
    *self_p = NULL;
}

void
web_feed_set_own_name (web_feed_t *self, const char *name)
{
    assert (self);
    free (self->own_name);
    self->own_name = name? strdup (name): NULL;
    self->own_peer [0] = 0;
}

void
web_feed_hide_agent (web_feed_t *self, const char *name)
{
    assert (self);
    free (self->hidden);
    self->hidden = name? strdup (name): NULL;
}

//  True when the HELLO's caps hold `cap`.
static bool
s_has_cap (const json_t *msg, const char *cap)
{
    size_t i;
    const json_t *item;
    json_array_foreach (json_object_get (msg, "caps"), i, item)
        if (json_is_string (item) && streq (json_string_value (item), cap))
            return true;
    return false;
}

//  The operator's reads are the view's own traffic: a HELLO as the
//  operator with the reader's capability starts one, and its requests and
//  replies (named by its connection before WELCOME and after BYE, by the
//  id between) and the events about it are left out until the operator's
//  next HELLO. Its actions (another HELLO, without that capability) are
//  shown like anyone's.
static bool
s_hidden (web_feed_t *self, const tap_frame_t *frame, const pmsg_t *body, const json_t *msg)
{
    if (!self->hidden)
        return false;
    const char *agent = json_string_value (json_object_get (msg, "agent"));
    bool named = agent && streq (agent, self->hidden);
    pmsg_type_t type = body? pmsg_type (body): PMSG_ERROR;
    const char *peer = tap_frame_peer (frame);
    if (named && type == PMSG_HELLO && tap_frame_dir (frame) == TAP_DIR_IN) {
        self->reading = s_has_cap (msg, WEB_FEED_READER_CAP);
        snprintf (self->hidden_peer, sizeof self->hidden_peer, "%s", peer);
    }
    if (!self->reading)
        return false;
    if (tap_frame_dir (frame) == TAP_DIR_PUB)
        return named && type == PMSG_AGENT_EVENT;
    return streq (peer, self->hidden) || streq (peer, self->hidden_peer);
}

//  The view's own requests and replies (HELLO observe, SNAPSHOT, AGENTS
//  every second) would fill the timeline; its connection is learnt from
//  a marker GET and left out.
static bool
s_own (web_feed_t *self, const tap_frame_t *frame, const pmsg_t *body, json_t *msg)
{
    if (s_hidden (self, frame, body, msg))
        return true;
    if (!self->own_name)
        return false;
    const char *peer = tap_frame_peer (frame);
    if (tap_frame_dir (frame) == TAP_DIR_PUB)
        return false;
    //  The view's HELLO went out before the tap was subscribed; the GET of
    //  a marker key (its own name) that web_live sends until
    //  web_feed_knows_self says true tells the connection.
    if (body && pmsg_type (body) == PMSG_GET && tap_frame_dir (frame) == TAP_DIR_IN) {
        json_t *key = json_array_get (json_object_get (msg, "keys"), 0);
        if (json_is_string (key) && streq (json_string_value (key), self->own_name))
            snprintf (self->own_peer, sizeof self->own_peer, "%s", peer);
    }
    return self->own_peer [0] && streq (peer, self->own_peer);
}

json_t *
web_feed_value (const void *data, size_t size)
{
    if (!data || !size)
        return json_null ();
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    json_t *result = NULL;
    if (msgpack_unpack_next (&unpacked, (const char *) data, size, &offset) == MSGPACK_UNPACK_SUCCESS)
        result = tap_json_from_msgpack (&unpacked.data);
    msgpack_unpacked_destroy (&unpacked);
    return result? result: json_null ();
}

//  Copies `name` from the frame's JSON into the summary when it is a string.
static void
s_copy_str (json_t *summary, const json_t *msg, const char *name, const char *as)
{
    json_t *value = json_object_get (msg, name);
    if (json_is_string (value))
        json_object_set (summary, as, value);
}

//  Recipients: SEND's to/channel per message ("#name" for a channel),
//  LISTEN/UNLISTEN's channel; at most 32 names.
static json_t *
s_recipients (const json_t *msg)
{
    json_t *to = json_array ();
    json_t *messages = json_object_get (msg, "messages");
    size_t index;
    json_t *item;
    json_array_foreach (messages, index, item) {
        if (json_array_size (to) >= 32)
            break;
        json_t *agent = json_object_get (item, "to");
        json_t *channel = json_object_get (item, "channel");
        if (json_is_string (agent))
            json_array_append (to, agent);
        else
        if (json_is_string (channel))
            json_array_append_new (to, json_sprintf ("#%s", json_string_value (channel)));
    }
    json_t *channel = json_object_get (msg, "channel");
    if (json_is_string (channel))
        json_array_append_new (to, json_sprintf ("#%s", json_string_value (channel)));
    return to;
}

static void
s_event (web_feed_t *self, pmsg_type_t type, json_t *msg)
{
    if (type == PMSG_STATE_UPDATE) {
        json_t *key = json_object_get (msg, "key");
        json_t *seq = json_object_get (msg, "seq");
        if (json_is_string (key) && json_is_integer (seq)) {
            json_t *value = json_object_get (msg, "value");
            web_hub_state (self->hub, json_string_value (key), (uint64_t) json_integer_value (seq),
                           value? json_incref (value): NULL);
        }
    }
    else
    if (type == PMSG_WORLD_EVENT) {
        json_t *world = json_object ();
        s_copy_str (world, msg, "event", "event");
        const char *numbers [] = { "coverage", "explored", "objects_total" };
        for (size_t i = 0; i < 3; i++) {
            json_t *value = json_object_get (msg, numbers [i]);
            if (json_is_number (value))
                json_object_set (world, numbers [i], value);
        }
        web_hub_event (self->hub, "world", world);
    }
    else
    if (type == PMSG_WORKFLOW_EVENT) {
        json_t *event = json_object ();
        const char *texts [] = { "event", "status", "holder", "agent", "reason" };
        for (size_t i = 0; i < 5; i++)
            s_copy_str (event, msg, texts [i], texts [i]);
        const char *numbers [] = { "turn", "revisions", "checkpoint" };
        for (size_t i = 0; i < 3; i++) {
            json_t *value = json_object_get (msg, numbers [i]);
            if (json_is_integer (value))
                json_object_set (event, numbers [i], value);
        }
        web_hub_event (self->hub, "workflow_event", event);
    }
}

web_feed_outcome_t
web_feed_frame (web_feed_t *self, const void *data, size_t size)
{
    assert (self);
    self->frames++;
    tap_frame_t *frame = tap_frame_new (data, size);
    if (!tap_frame_ok (frame)) {
        self->bad++;
        web_hub_event (self->hub, "bad", json_pack ("{s:s,s:I}", "error",
                       perr_name (tap_frame_error (frame)), "size", (json_int_t) size));
        tap_frame_destroy (&frame);
        return WEB_FEED_BAD;
    }
    web_feed_outcome_t outcome = WEB_FEED_FRAME;
    uint64_t tseq = tap_frame_tseq (frame);
    if (self->last_tseq && tseq > self->last_tseq + 1) {
        web_hub_event (self->hub, "dropped", json_pack ("{s:I,s:I,s:I}",
                       "count", (json_int_t) (tseq - self->last_tseq - 1),
                       "after_tseq", (json_int_t) self->last_tseq, "before_tseq", (json_int_t) tseq));
        outcome = WEB_FEED_GAP;
    }
    self->last_tseq = tseq;

    char iso [40];
    pclock_iso8601 ((int64_t) tap_frame_ts (frame), iso, sizeof iso);
    json_t *summary = json_pack ("{s:I,s:I,s:s,s:s,s:I}", "tseq", (json_int_t) tseq,
                                 "ts", (json_int_t) tap_frame_ts (frame), "time", iso,
                                 "dir", tap_frame_dir_name (frame),
                                 "size", (json_int_t) tap_frame_body_size (frame));
    json_t *peer = json_string (tap_frame_peer (frame));
    json_object_set_new (summary, "peer", peer? peer: json_string ("?"));
    if (tap_frame_dir (frame) != TAP_DIR_PUB && peer)
        json_object_set (summary, "agent", peer);
    json_t *full = json_deep_copy (summary);

    const pmsg_t *body = tap_frame_body (frame);
    json_t *msg = body? tap_json_from_msgpack (pmsg_root (body)): NULL;
    if (s_own (self, frame, body, msg)) {
        json_decref (msg);
        json_decref (summary);
        json_decref (full);
        tap_frame_destroy (&frame);
        return outcome;
    }
    if (body) {
        pmsg_type_t type = pmsg_type (body);
        char text [1024];
        tap_text_summary (body, text, sizeof text);
        //  Before HELLO the peer is a connection id: name the agent.
        json_t *hello_agent = json_object_get (msg, "agent");
        if (type == PMSG_HELLO && json_is_string (hello_agent))
            json_object_set (summary, "agent", hello_agent);
        json_object_set_new (summary, "type", json_string (pmsg_type_name (type)));
        json_object_set_new (summary, "id", json_integer ((json_int_t) pmsg_id (body)));
        json_t *line = json_string (text);
        json_object_set_new (summary, "summary", line? line: json_string ("(not UTF-8)"));
        json_t *to = s_recipients (msg);
        if (json_array_size (to))
            json_object_set (summary, "to", to);
        json_decref (to);
        s_copy_str (summary, msg, "action", "action");
        json_t *step = json_object_get (msg, "step");
        if (json_is_integer (step))
            json_object_set (summary, "step", step);
        s_copy_str (summary, msg, "error", "error");
        //  What a replay needs without AGENT_LIST: the world's size from
        //  WELCOME, an agent's caps from HELLO.
        json_t *world = json_object_get (msg, "world");
        if (json_is_object (world))
            json_object_set (summary, "world", world);
        json_t *caps = json_object_get (msg, "caps");
        if (json_is_array (caps) && json_array_size (caps) <= 32)
            json_object_set (summary, "caps", caps);
        if (json_is_true (json_object_get (msg, "observe")))
            json_object_set_new (summary, "observe", json_true ());
        //  A BYE that forgets the registration: the broker publishes only
        //  "left" for it, so the page learns the forgetting here.
        if (type == PMSG_BYE && json_is_true (json_object_get (msg, "forget")))
            json_object_set_new (summary, "forget", json_true ());
        //  Who an AGENT_EVENT is about, and what happened to it.
        if (type == PMSG_AGENT_EVENT) {
            s_copy_str (summary, msg, "event", "event");
            s_copy_str (summary, msg, "agent", "subject");
        }
        json_object_set (full, "type", json_object_get (summary, "type"));
        json_object_set (full, "msg", msg);
        if (tap_frame_dir (frame) == TAP_DIR_PUB)
            s_event (self, type, msg);
        if (type == PMSG_AGENT_EVENT || type == PMSG_HELLO || type == PMSG_BYE)
            outcome = outcome == WEB_FEED_GAP? outcome: WEB_FEED_AGENTS;
        if (type == PMSG_WORKFLOW_EVENT && tap_frame_dir (frame) == TAP_DIR_PUB)
            outcome = outcome == WEB_FEED_GAP? outcome: WEB_FEED_WORKFLOW;
    }
    else {
        json_object_set_new (summary, "type", json_null ());
        json_object_set_new (summary, "error", json_string (perr_name (tap_frame_body_error (frame))));
        json_object_set (full, "error", json_object_get (summary, "error"));
        json_t *why = json_string (tap_frame_body_why (frame));
        json_object_set_new (full, "why", why? why: json_string ("?"));
    }
    json_decref (msg);
    web_hub_message (self->hub, tseq, summary, full);
    tap_frame_destroy (&frame);
    return outcome;
}

bool
web_feed_knows_self (web_feed_t *self)
{
    assert (self);
    return self->own_peer [0] != 0;
}

uint64_t
web_feed_frames (web_feed_t *self)
{
    assert (self);
    return self->frames;
}

uint64_t
web_feed_bad (web_feed_t *self)
{
    assert (self);
    return self->bad;
}
