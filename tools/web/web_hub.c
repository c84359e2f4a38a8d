// SPDX-License-Identifier: MIT
/*  web_hub - the model and the event ring shared by the feed and the
    HTTP streams. See web_hub.h.

    Events are formatted as SSE text once, when published, so a hundred
    open pages cost one json_dumps per event, not a hundred. Waiting
    streams sleep on one condition variable; publishing wakes them all.
*/
#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include "web_hub.h"

typedef struct {
    uint64_t seq;               //  0: empty slot
    char *text;                 //  "event: ...\nid: ...\ndata: ...\n\n"
} s_slot_t;

typedef struct {
    uint64_t tseq;
    char *json;
} s_frame_t;

struct _web_hub_t {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool replay;
    bool stopped;
    size_t capacity;
    s_slot_t *ring;
    s_frame_t *frames;
    uint64_t next_seq;          //  seq of the next event (first is 1)
    json_t *info;
    json_t *state;              //  key -> {seq, value}
    json_t *agents;
    json_t *world;
    json_t *recent;             //  last WEB_HUB_RECENT message summaries
    json_t *trails;             //  agent -> [positions], from world.agent_positions
    json_t *workflow;           //  the workflow's overview (null: not read yet)
    size_t streams;
};

web_hub_t *
web_hub_new (size_t capacity, bool replay)
{
    assert (capacity > 0);
    web_hub_t *self = (web_hub_t *) zmalloc (sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->changed, &attr);
    pthread_condattr_destroy (&attr);
    self->replay = replay;
    self->capacity = capacity;
    self->ring = (s_slot_t *) zmalloc (capacity * sizeof (s_slot_t));
    self->frames = (s_frame_t *) zmalloc (capacity * sizeof (s_frame_t));
    self->next_seq = 1;
    self->info = json_object ();
    self->state = json_object ();
    self->agents = json_array ();
    self->world = json_null ();
    self->recent = json_array ();
    self->trails = json_object ();
    self->workflow = json_null ();
    return self;
}

void
web_hub_destroy (web_hub_t **self_p)
{
    assert (self_p);
    web_hub_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->capacity; i++) {
        free (self->ring [i].text);
        free (self->frames [i].json);
    }
    free (self->ring);
    free (self->frames);
    json_decref (self->info);
    json_decref (self->state);
    json_decref (self->agents);
    json_decref (self->world);
    json_decref (self->recent);
    json_decref (self->trails);
    json_decref (self->workflow);
    pthread_cond_destroy (&self->changed);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

static char *
s_sse (const char *name, uint64_t seq, const json_t *data)
{
    char *json = json_dumps (data, JSON_COMPACT | JSON_ENCODE_ANY);
    char *text = json? zsys_sprintf ("event: %s\nid: %" PRIu64 "\ndata: %s\n\n", name, seq, json): NULL;
    free (json);
    return text;
}

//  Appends one event to the ring; lock held. Borrows `data`.
static void
s_publish (web_hub_t *self, const char *name, const json_t *data)
{
    uint64_t seq = self->next_seq++;
    s_slot_t *slot = &self->ring [seq % self->capacity];
    free (slot->text);
    slot->text = s_sse (name, seq, data);
    slot->seq = slot->text? seq: 0;
    pthread_cond_broadcast (&self->changed);
}

void
web_hub_set_info (web_hub_t *self, json_t *info)
{
    assert (self);
    assert (info);
    pthread_mutex_lock (&self->lock);
    json_decref (self->info);
    self->info = info;
    s_publish (self, "info", info);
    pthread_mutex_unlock (&self->lock);
}

//  A page that opens late still sees where each agent has been: the
//  positions are appended to the model's trails (WEB_HUB_TRAIL at most
//  per agent, the oldest dropped). Lock held.
static void
s_trails (web_hub_t *self, const json_t *positions)
{
    if (!json_is_object (positions)) {
        json_object_clear (self->trails);
        return;
    }
    const char *agent;
    json_t *position;
    json_object_foreach ((json_t *) positions, agent, position) {
        if (!json_is_integer (position))
            continue;
        json_t *trail = json_object_get (self->trails, agent);
        if (!trail) {
            if (json_object_size (self->trails) >= WEB_HUB_TRAIL)
                continue;
            trail = json_array ();
            json_object_set_new (self->trails, agent, trail);
        }
        json_t *last = json_array_get (trail, json_array_size (trail) - 1);
        if (last && json_integer_value (last) == json_integer_value (position))
            continue;
        json_array_append (trail, position);
        if (json_array_size (trail) > WEB_HUB_TRAIL)
            json_array_remove (trail, 0);
    }
}

bool
web_hub_state (web_hub_t *self, const char *key, uint64_t seq, json_t *value)
{
    assert (self);
    assert (key);
    pthread_mutex_lock (&self->lock);
    json_t *old = json_object_get (self->state, key);
    json_t *old_seq = old? json_object_get (old, "seq"): NULL;
    bool apply = !old_seq || (uint64_t) json_integer_value (old_seq) < seq;
    if (apply) {
        json_t *entry = json_pack ("{s:s,s:I,s:o}", "key", key, "seq", (json_int_t) seq,
                                   "value", value? value: json_null ());
        value = NULL;
        if (entry) {
            if (streq (key, "world.agent_positions") && !self->replay)
                s_trails (self, json_object_get (entry, "value"));
            s_publish (self, "state", entry);
            if (json_is_null (json_object_get (entry, "value")))
                json_object_del (self->state, key);
            else
                json_object_set (self->state, key, entry);
            json_decref (entry);
        }
    }
    pthread_mutex_unlock (&self->lock);
    json_decref (value);
    return apply;
}

void
web_hub_agents (web_hub_t *self, json_t *agents)
{
    assert (self);
    assert (agents);
    pthread_mutex_lock (&self->lock);
    if (!json_equal (agents, self->agents)) {
        json_decref (self->agents);
        self->agents = json_incref (agents);
        s_publish (self, "agents", agents);
    }
    pthread_mutex_unlock (&self->lock);
    json_decref (agents);
}

void
web_hub_message (web_hub_t *self, uint64_t tseq, json_t *summary, json_t *full)
{
    assert (self);
    assert (summary);
    char *text = full? json_dumps (full, JSON_COMPACT): NULL;
    json_decref (full);
    pthread_mutex_lock (&self->lock);
    s_frame_t *frame = &self->frames [tseq % self->capacity];
    free (frame->json);
    frame->tseq = tseq;
    frame->json = text;
    s_publish (self, "msg", summary);
    if (!self->replay) {
        json_array_append (self->recent, summary);
        if (json_array_size (self->recent) > WEB_HUB_RECENT)
            json_array_remove (self->recent, 0);
    }
    pthread_mutex_unlock (&self->lock);
    json_decref (summary);
}

void
web_hub_workflow (web_hub_t *self, json_t *workflow)
{
    assert (self);
    assert (workflow);
    pthread_mutex_lock (&self->lock);
    if (!json_equal (workflow, self->workflow)) {
        json_decref (self->workflow);
        self->workflow = json_incref (workflow);
        s_publish (self, "workflow", workflow);
    }
    pthread_mutex_unlock (&self->lock);
    json_decref (workflow);
}

void
web_hub_event (web_hub_t *self, const char *name, json_t *data)
{
    assert (self);
    assert (name);
    assert (data);
    pthread_mutex_lock (&self->lock);
    if (streq (name, "world") && !self->replay) {
        json_decref (self->world);
        self->world = json_incref (data);
        const char *event = json_string_value (json_object_get (data, "event"));
        if (event && streq (event, "reset"))
            json_object_clear (self->trails);
    }
    s_publish (self, name, data);
    pthread_mutex_unlock (&self->lock);
    json_decref (data);
}

char *
web_hub_frame (web_hub_t *self, uint64_t tseq)
{
    assert (self);
    char *result = NULL;
    pthread_mutex_lock (&self->lock);
    s_frame_t *frame = &self->frames [tseq % self->capacity];
    if (frame->json && frame->tseq == tseq)
        result = strdup (frame->json);
    pthread_mutex_unlock (&self->lock);
    return result;
}

//  The oldest seq still in the ring; lock held.
static uint64_t
s_oldest (web_hub_t *self)
{
    return self->next_seq > self->capacity? self->next_seq - self->capacity: 1;
}

//  The model as JSON; lock held.
static json_t *
s_model (web_hub_t *self)
{
    if (self->replay)
        return json_pack ("{s:O}", "info", self->info);
    return json_pack ("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "info", self->info, "state", self->state,
                      "agents", self->agents, "world", self->world, "recent", self->recent,
                      "trails", self->trails, "workflow", self->workflow);
}

char *
web_hub_model (web_hub_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->lock);
    json_t *model = s_model (self);
    char *text = model? json_dumps (model, JSON_COMPACT): NULL;
    pthread_mutex_unlock (&self->lock);
    json_decref (model);
    return text;
}

char *
web_hub_start (web_hub_t *self, uint64_t *cursor)
{
    assert (self);
    assert (cursor);
    pthread_mutex_lock (&self->lock);
    self->streams++;
    json_t *init = s_model (self);
    *cursor = self->replay? s_oldest (self): self->next_seq;
    char *text = init? s_sse ("init", *cursor - 1, init): NULL;
    pthread_mutex_unlock (&self->lock);
    json_decref (init);
    return text;
}

char *
web_hub_next (web_hub_t *self, uint64_t *cursor, int timeout_ms, bool *stopped)
{
    assert (self);
    assert (cursor);
    assert (stopped);
    struct timespec deadline;
    clock_gettime (CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock (&self->lock);
    while (!self->stopped && *cursor >= self->next_seq) {
        if (pthread_cond_timedwait (&self->changed, &self->lock, &deadline) == ETIMEDOUT)
            break;
    }
    *stopped = self->stopped;
    char *result = NULL;
    if (!self->stopped && *cursor < self->next_seq) {
        if (*cursor < s_oldest (self)) {
            //  Overwritten: the page must start again from a new model.
            result = zsys_sprintf ("event: reset\ndata: {}\n\n");
            *cursor = self->next_seq;
        }
        else {
            //  Everything ready, in one write (bounded by the ring).
            size_t total = 0;
            for (uint64_t seq = *cursor; seq < self->next_seq; seq++) {
                const s_slot_t *slot = &self->ring [seq % self->capacity];
                if (slot->seq == seq)
                    total += strlen (slot->text);
                if (total > 256 * 1024)
                    break;
            }
            result = (char *) zmalloc (total + 1);
            size_t pos = 0;
            uint64_t seq = *cursor;
            for (; seq < self->next_seq && pos < total; seq++) {
                const s_slot_t *slot = &self->ring [seq % self->capacity];
                if (slot->seq != seq)
                    continue;
                size_t len = strlen (slot->text);
                if (pos + len > total)
                    break;
                memcpy (result + pos, slot->text, len);
                pos += len;
            }
            result [pos] = 0;
            *cursor = seq;
        }
    }
    pthread_mutex_unlock (&self->lock);
    return result;
}

void
web_hub_stop (web_hub_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->lock);
    self->stopped = true;
    pthread_cond_broadcast (&self->changed);
    pthread_mutex_unlock (&self->lock);
}

uint64_t
web_hub_published (web_hub_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->lock);
    uint64_t count = self->next_seq - 1;
    pthread_mutex_unlock (&self->lock);
    return count;
}

size_t
web_hub_streams (web_hub_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->lock);
    size_t count = self->streams;
    pthread_mutex_unlock (&self->lock);
    return count;
}

void
web_hub_stream_closed (web_hub_t *self)
{
    assert (self);
    pthread_mutex_lock (&self->lock);
    if (self->streams)
        self->streams--;
    pthread_mutex_unlock (&self->lock);
}
