// SPDX-License-Identifier: MIT
/*  publish - events on the PUB socket (and their copy on the tap).

    Topics (PROTOCOL.md section 1): mail.<agent> MAIL_READY, state.<key>
    STATE_UPDATE, world.<event> WORLD_EVENT, agent.<agent> AGENT_EVENT,
    workflow.<event> WORKFLOW_EVENT. Each event is two frames, topic then
    the msgpack map, encoded in the broker's one reused event encoder and
    queued in the outbox: it leaves with the turn's replies, once what it
    tells of is durable (outbox.h). PUB never blocks: a subscriber that
    falls behind its HWM loses events (a state replica sees the seq gap and
    takes a new SNAPSHOT; an agent's FETCH still finds all its mail).
    A consumer (CONSUME) gets its mail pushed instead of MAIL_READY.
*/
#include <stdio.h>
#include <string.h>

#include "broker_internal.h"

static void
s_send (broker_t *self, const char *topic, size_t topic_len)
{
    if (self->replaying)
        return;                 //  recovery re-runs history: nobody to tell
    outbox_event (self->outbox, topic, topic_len, penc_data (&self->event),
                  penc_size (&self->event));
}

void
publish_send (broker_t *self, const char *topic, size_t topic_len, const void *data,
              size_t size)
{
    if (tap_active (self->tap))
        tap_frame (self->tap, "pub", topic, topic_len, data, size);
    if (zmq_send (self->pub_handle, topic, topic_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) == -1)
        return;
    zmq_send (self->pub_handle, data, size, ZMQ_DONTWAIT);
    self->counters.published++;
}

void
publish_encoded (broker_t *self, const char *topic, size_t topic_len)
{
    s_send (self, topic, topic_len);
}

void
publish_mail_ready (broker_t *self)
{
    agent_t *agent;
    char topic [8 + PROTO_MAX_NAME];
    while ((agent = mailroom_next_wakeup (self->mailroom))) {
        if (agent->credit) {
            mailroom_mark_push (self->mailroom, agent);
            continue;
        }
        penc_begin (&self->event, PMSG_MAIL_READY, 0, 2);
        penc_kv_str (&self->event, "agent", agent->id, agent->id_len);
        penc_kv_uint (&self->event, "seq", agent->wake_seq);
        int len = snprintf (topic, sizeof topic, "mail.%s", agent->id);
        s_send (self, topic, (size_t) len);
    }
}

void
publish_agent_event (broker_t *self, const agent_t *agent, const char *event)
{
    char topic [8 + PROTO_MAX_NAME];
    penc_begin (&self->event, PMSG_AGENT_EVENT, 0, 2);
    penc_kv_str (&self->event, "agent", agent->id, agent->id_len);
    penc_kv_cstr (&self->event, "event", event);
    int len = snprintf (topic, sizeof topic, "agent.%s", agent->id);
    s_send (self, topic, (size_t) len);
}

void
publish_state_changes (broker_t *self, uint64_t seq_before)
{
    if (self->replaying || state_seq (self->state) == seq_before)
        return;
    char topic [8 + PROTO_MAX_KEY];
    memcpy (topic, "state.", 6);
    size_t count = state_change_count (self->state);
    for (size_t i = 0; i < count; i++) {
        const state_change_t *change = state_change_at (self->state, i);
        penc_begin (&self->event, PMSG_STATE_UPDATE, 0, STATE_CHANGE_FIELDS);
        state_encode_change (change, &self->event);
        //  A copy, not snprintf: one topic per changed key of every WRITE.
        //  Keys are at most PROTO_MAX_KEY bytes (state_ops.c).
        size_t len = strnlen (change->key, PROTO_MAX_KEY);
        memcpy (topic + 6, change->key, len);
        s_send (self, topic, 6 + len);
    }
}

void
publish_world_event (broker_t *self, const char *event)
{
    char topic [32];
    penc_begin (&self->event, PMSG_WORLD_EVENT, 0, WORLD_EVENT_FIELDS);
    world_encode_event (self->world, event, &self->event);
    int len = snprintf (topic, sizeof topic, "world.%s", event);
    s_send (self, topic, (size_t) len);
}
