// SPDX-License-Identifier: MIT
/*  events - the event socket's traffic by topic. See events.h. */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "event_int.h"
#include "events.h"
#include "mem.h"
#include "pclock.h"
#include "pmsg.h"
#include "queue.h"
#include "workflow_int.h"

//  Longest topic prefix: "state." and a whole state key, with room.
#define S_TOPIC_MAX (PROTO_MAX_KEY + 16)

struct _client_events_t {
    char *topics [PARLEY_MAX_EVENT_TOPICS];
    size_t topic_count;
    client_queue_t *queue;          //  parley_event_t *, made with the first topic
    bool workflow;
    client_queue_t *wf_queue;       //  pmsg_t * WORKFLOW_EVENTs, made when first needed
    bool mail_flag;
    client_events_state_fn *state_sink;
    void *state_arg;
    uint64_t mail_wakeups, world_events, events, events_dropped, workflow_events,
             workflow_dropped, bad_frames, nomem;
};

static void
s_event_destroy (void **item_p)
{
    parley_event_destroy ((parley_event_t **) item_p);
}

static void
s_frame_destroy (void **item_p)
{
    pmsg_destroy ((pmsg_t **) item_p);
}

client_events_t *
client_events_new (void)
{
    return (client_events_t *) client_mem_zalloc (sizeof (client_events_t));
}

void
client_events_destroy (client_events_t **self_p)
{
    assert (self_p);
    client_events_t *self = *self_p;
    if (self) {
        for (size_t i = 0; i < self->topic_count; i++)
            client_mem_free (self->topics [i]);
        client_queue_destroy (&self->queue);
        client_queue_destroy (&self->wf_queue);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_events_set_state_sink (client_events_t *self, client_events_state_fn *sink, void *arg)
{
    assert (self);
    self->state_sink = sink;
    self->state_arg = arg;
}

parley_err_t
client_events_subscribe (client_events_t *self, const char *prefix, bool *added, char *why,
                         size_t why_size)
{
    assert (self && prefix && added);
    *added = false;
    if (strlen (prefix) > S_TOPIC_MAX) {
        snprintf (why, why_size, "topic prefix longer than %d bytes", S_TOPIC_MAX);
        return PARLEY_ERR_INVALID;
    }
    for (size_t i = 0; i < self->topic_count; i++)
        if (strcmp (self->topics [i], prefix) == 0)
            return PARLEY_OK;
    if (self->topic_count >= PARLEY_MAX_EVENT_TOPICS) {
        snprintf (why, why_size, "at most %d topic prefixes", PARLEY_MAX_EVENT_TOPICS);
        return PARLEY_ERR_INVALID;
    }
    char *copy = client_mem_strdup (prefix);
    if (!copy || (!self->queue && !(self->queue = client_queue_new (s_event_destroy)))) {
        client_mem_free (copy);
        snprintf (why, why_size, "out of memory");
        return PARLEY_ERR_NOMEM;
    }
    self->topics [self->topic_count++] = copy;
    *added = true;
    return PARLEY_OK;
}

bool
client_events_unsubscribe (client_events_t *self, const char *prefix)
{
    assert (self && prefix);
    for (size_t i = 0; i < self->topic_count; i++) {
        if (strcmp (self->topics [i], prefix) != 0)
            continue;
        client_mem_free (self->topics [i]);
        self->topics [i] = self->topics [--self->topic_count];
        return true;
    }
    return false;
}

size_t
client_events_topic_count (const client_events_t *self)
{
    assert (self);
    return self->topic_count;
}

const char *
client_events_topic (const client_events_t *self, size_t index)
{
    assert (self && index < self->topic_count);
    return self->topics [index];
}

void
client_events_set_workflow (client_events_t *self, bool on)
{
    assert (self);
    self->workflow = on;
}

bool
client_events_workflow (const client_events_t *self)
{
    assert (self);
    return self->workflow;
}

//  Queues `item`, dropping the oldest beyond `most`; false when memory
//  ran out (the caller still owns `item`).
static bool
s_bounded_push (client_queue_t *queue, void *item, size_t most, uint64_t *dropped)
{
    if (client_queue_size (queue) >= most) {
        client_queue_drop (queue);
        (*dropped)++;
    }
    return client_queue_push (queue, item) == 0;
}

static bool
s_prefix (const char *text, const char *prefix)
{
    return strncmp (text, prefix, strlen (prefix)) == 0;
}

//  A copy for the caller when its topic was asked for.
static void
s_queue_copy (client_events_t *self, const char *topic, const void *body, size_t size)
{
    bool wanted = false;
    for (size_t i = 0; i < self->topic_count && !wanted; i++)
        wanted = s_prefix (topic, self->topics [i]);
    if (!wanted)
        return;
    parley_event_t *event = client_event_new (topic, body, size, (uint64_t) pclock_wall_us ());
    if (!event || !s_bounded_push (self->queue, event, PARLEY_EVENT_QUEUE,
                                   &self->events_dropped)) {
        parley_event_destroy (&event);
        self->nomem++;
        return;
    }
    self->events++;
}

//  A WORKFLOW_EVENT, checked and kept decoded.
static void
s_queue_workflow (client_events_t *self, const void *body, size_t size)
{
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *event = pmsg_decode (body, size, pwire_default_limits (), &code, &id, why, sizeof why);
    if (!event || pmsg_type (event) != PMSG_WORKFLOW_EVENT) {
        if (event || code != PERR_INTERNAL)
            self->bad_frames++;
        else
            self->nomem++;
        pmsg_destroy (&event);
        return;
    }
    if ((!self->wf_queue && !(self->wf_queue = client_queue_new (s_frame_destroy)))
    ||  !s_bounded_push (self->wf_queue, event, PARLEY_WF_EVENT_QUEUE, &self->workflow_dropped)) {
        pmsg_destroy (&event);
        self->nomem++;
        return;
    }
    self->workflow_events++;
}

void
client_events_take (client_events_t *self, const char *topic, const void *body, size_t size)
{
    assert (self && topic);
    if (self->topic_count)
        s_queue_copy (self, topic, body, size);
    if (s_prefix (topic, "mail.")) {
        self->mail_wakeups++;
        self->mail_flag = true;
    }
    else
    if (s_prefix (topic, "world."))
        self->world_events++;
    else
    if (s_prefix (topic, "workflow.") && self->workflow)
        s_queue_workflow (self, body, size);
    else
    if (s_prefix (topic, "state.") && self->state_sink)
        self->state_sink (self->state_arg, topic + 6, body, size);
}

bool
client_events_pending (const client_events_t *self)
{
    assert (self);
    return self->queue && client_queue_size (self->queue) > 0;
}

bool
client_events_next (client_events_t *self, parley_event_t **event_p)
{
    assert (self && event_p);
    while (client_events_pending (self)) {
        parley_event_t *event = (parley_event_t *) client_queue_pop (self->queue);
        //  Typed from its envelope: one that does not decode is counted
        //  and skipped, as on the other event paths.
        if (!client_event_typed (event)) {
            parley_event_destroy (&event);
            self->bad_frames++;
            continue;
        }
        parley_event_destroy (event_p);
        *event_p = event;
        return true;
    }
    return false;
}

bool
client_events_wf_pending (const client_events_t *self)
{
    assert (self);
    return self->wf_queue && client_queue_size (self->wf_queue) > 0;
}

bool
client_events_wf_next (client_events_t *self, parley_wf_event_t **event_p)
{
    assert (self && event_p);
    if (!client_events_wf_pending (self))
        return false;
    if (!*event_p && !(*event_p = client_wf_event_new ())) {
        self->nomem++;
        return false;           //  stays queued
    }
    if (client_wf_event_decode (*event_p, (const pmsg_t *) client_queue_peek (self->wf_queue))
        != PARLEY_OK) {
        self->nomem++;
        return false;
    }
    client_queue_drop (self->wf_queue);
    return true;
}

bool
client_events_mail_flag (const client_events_t *self)
{
    assert (self);
    return self->mail_flag;
}

void
client_events_clear_mail (client_events_t *self)
{
    assert (self);
    self->mail_flag = false;
}

uint64_t
client_events_counter (const client_events_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_MAIL_WAKEUPS:       return self->mail_wakeups;
        case PARLEY_COUNTER_WORLD_EVENTS:       return self->world_events;
        case PARLEY_COUNTER_WORKFLOW_EVENTS:    return self->workflow_events;
        case PARLEY_COUNTER_WORKFLOW_DROPPED:   return self->workflow_dropped;
        case PARLEY_COUNTER_EVENTS:             return self->events;
        case PARLEY_COUNTER_EVENTS_DROPPED:     return self->events_dropped;
        case PARLEY_COUNTER_BAD_FRAMES:         return self->bad_frames;
        case PARLEY_COUNTER_NOMEM:              return self->nomem;
        default:                                return 0;
    }
}
