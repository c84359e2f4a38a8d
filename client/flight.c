// SPDX-License-Identifier: MIT
/*  flight - pipelined SENDs in flight. See flight.h. */
#include <assert.h>
#include <string.h>
#include "flight.h"
#include "mem.h"
#include "plog.h"
#include "queue.h"
#include "sent_int.h"

typedef struct {
    uint64_t id;
    size_t messages;
    size_t size;
    size_t posts;                   //  (ticket, count) pairs in `spans`
    uint64_t ack;                   //  the acknowledgement the frame carries
    int64_t sent_ms;
    void *block;                    //  what holds the frame
    const char *frame;              //  inside `block`
    uint64_t *spans;
} s_entry_t;

struct _client_flight_t {
    s_entry_t *ring;
    size_t cap, head, count;
    size_t messages, bytes, posts;  //  in flight
    size_t window_messages, window_bytes;
    uint64_t epoch;                 //  the session they went out on
    int rounds;                     //  resends without a confirm in between
    bool lost;                      //  a CONFIRM said NOT_HELLO
    uint64_t unacked;               //  an ack a refused frame carried
    client_queue_t *failures;       //  parley_failure_t *, oldest first
    uint64_t posted, confirmed, accepted, failed_messages, failed_sends, errors_omitted,
             failures_dropped, window_waits, resent, nomem;
};

static void
s_failure_destroy (void **item_p)
{
    parley_failure_destroy ((parley_failure_t **) item_p);
}

client_flight_t *
client_flight_new (void)
{
    client_flight_t *self = (client_flight_t *) client_mem_zalloc (sizeof (client_flight_t));
    if (!self)
        return NULL;
    self->window_messages = 16384;
    self->window_bytes = 16 * 1024 * 1024;
    if (!(self->failures = client_queue_new (s_failure_destroy))) {
        client_mem_free (self);
        return NULL;
    }
    return self;
}

void
client_flight_destroy (client_flight_t **self_p)
{
    assert (self_p);
    client_flight_t *self = *self_p;
    if (self) {
        for (size_t i = 0; i < self->count; i++)
        {
            client_mem_free (self->ring [(self->head + i) % self->cap].block);
            client_mem_free (self->ring [(self->head + i) % self->cap].spans);
        }
        client_mem_free (self->ring);
        client_queue_destroy (&self->failures);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_flight_set_window (client_flight_t *self, size_t messages, size_t bytes)
{
    assert (self);
    self->window_messages = messages ? messages : 1;
    self->window_bytes = bytes ? bytes : 1;
}

void
client_flight_window (const client_flight_t *self, size_t *messages, size_t *bytes)
{
    assert (self && messages && bytes);
    *messages = self->window_messages;
    *bytes = self->window_bytes;
}

bool
client_flight_full (const client_flight_t *self, size_t messages, size_t bytes)
{
    assert (self);
    return self->count
        && (self->messages + messages > self->window_messages
        ||  self->bytes + bytes > self->window_bytes);
}

static s_entry_t *
s_at (const client_flight_t *self, size_t index)
{
    return &self->ring [(self->head + index) % self->cap];
}

int
client_flight_push (client_flight_t *self, uint64_t id, size_t messages, void *block,
                    const void *frame, size_t size, uint64_t *spans, size_t posts, uint64_t ack,
                    int64_t sent_ms)
{
    assert (self && block && frame && spans && posts);
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 64;
        s_entry_t *ring = (s_entry_t *) client_mem_array (NULL, cap, sizeof (s_entry_t));
        if (!ring) {
            self->nomem++;
            return -1;
        }
        for (size_t i = 0; i < self->count; i++)
            ring [i] = *s_at (self, i);
        client_mem_free (self->ring);
        self->ring = ring;
        self->cap = cap;
        self->head = 0;
    }
    *s_at (self, self->count++) = (s_entry_t) {
        .id = id, .messages = messages, .size = size, .posts = posts, .ack = ack,
        .sent_ms = sent_ms, .block = block, .frame = (const char *) frame, .spans = spans
    };
    self->messages += messages;
    self->bytes += size;
    self->posts += posts;
    return 0;
}

size_t
client_flight_count (const client_flight_t *self)
{
    assert (self);
    return self->count;
}

int64_t
client_flight_oldest_sent (const client_flight_t *self)
{
    assert (self);
    return self->count ? s_at (self, 0)->sent_ms : 0;
}

bool
client_flight_next (const client_flight_t *self, uint64_t after, uint64_t *id, const void **data,
                    size_t *size)
{
    assert (self && id && data && size);
    for (size_t i = 0; i < self->count; i++) {
        const s_entry_t *entry = s_at (self, i);
        if (entry->id > after) {
            *id = entry->id;
            *data = entry->frame;
            *size = entry->size;
            return true;
        }
    }
    return false;
}

void
client_flight_resent (client_flight_t *self, uint64_t id, int64_t sent_ms)
{
    assert (self);
    for (size_t i = 0; i < self->count; i++)
        if (s_at (self, i)->id == id) {
            s_at (self, i)->sent_ms = sent_ms;
            self->resent += s_at (self, i)->posts;
            return;
        }
}

uint64_t
client_flight_epoch (const client_flight_t *self)
{
    assert (self);
    return self->epoch;
}

void
client_flight_set_epoch (client_flight_t *self, uint64_t epoch)
{
    assert (self);
    self->epoch = epoch;
}

int
client_flight_round (client_flight_t *self)
{
    assert (self);
    return ++self->rounds;
}

//  Out of the ring: the oldest, or (rare, so a move is fine) one inside.
static void
s_remove (client_flight_t *self, size_t index)
{
    s_entry_t *entry = s_at (self, index);
    client_mem_free (entry->block);
    client_mem_free (entry->spans);
    self->messages -= entry->messages;
    self->bytes -= entry->size;
    self->posts -= entry->posts;
    if (index == 0) {
        self->head = (self->head + 1) % self->cap;
        self->count--;
        return;
    }
    for (size_t j = index; j + 1 < self->count; j++)
        *s_at (self, j) = *s_at (self, j + 1);
    self->count--;
}

//  A failure for the caller; the oldest is dropped when the queue is full
//  (the newest say most about what is wrong now).
static void
s_failure (client_flight_t *self, uint64_t ticket, bool whole, size_t index, int code,
           const char *agent, size_t agent_len, const char *message, size_t message_len)
{
    if (whole)
        self->failed_sends++;
    else
        self->failed_messages++;
    if (client_queue_size (self->failures) >= PARLEY_SEND_FAILURES) {
        parley_failure_t *oldest = (parley_failure_t *) client_queue_pop (self->failures);
        parley_failure_destroy (&oldest);
        self->failures_dropped++;
    }
    parley_failure_t *failure = client_failure_new (ticket, whole, index, code, agent, agent_len,
                                                    message, message_len);
    if (!failure || client_queue_push (self->failures, failure) != 0) {
        parley_failure_destroy (&failure);
        self->failures_dropped++;
        self->nomem++;
    }
}

//  The entry of frame `id`, or NULL. Failures name the oldest frames, so
//  the walk from the head is short.
static s_entry_t *
s_find (const client_flight_t *self, uint64_t id)
{
    for (size_t i = 0; i < self->count; i++)
        if (s_at (self, i)->id == id)
            return s_at (self, i);
    return NULL;
}

//  A frame refused whole: each of its posts failed whole, and the
//  acknowledgement it carried was not applied.
static void
s_fail_whole (client_flight_t *self, const s_entry_t *entry, int code, const char *message,
              size_t message_len)
{
    for (size_t p = 0; p < entry->posts; p++)
        s_failure (self, entry->spans [2 * p], true, 0, code, NULL, 0, message, message_len);
    if (entry->ack > self->unacked)
        self->unacked = entry->ack;
}

//  Item `index` of frame `id` failed: the post that holds it, and its
//  index there.
static void
s_fail_item (client_flight_t *self, uint64_t id, size_t index, int code, const char *agent,
             size_t agent_len, const char *message, size_t message_len)
{
    const s_entry_t *entry = s_find (self, id);
    uint64_t ticket = id;
    for (size_t p = 0; entry && p < entry->posts; p++) {
        ticket = entry->spans [2 * p];
        size_t count = (size_t) entry->spans [2 * p + 1];
        if (index < count || p + 1 == entry->posts)
            break;
        index -= count;
    }
    s_failure (self, ticket, false, index, code, agent, agent_len, message, message_len);
}

void
client_flight_give_up (client_flight_t *self)
{
    assert (self);
    const char *why = "no CONFIRM after every attempt; it may or may not have been applied";
    while (self->count) {
        s_fail_whole (self, s_at (self, 0), PARLEY_ERR_TIMEOUT, why, strlen (why));
        s_remove (self, 0);
    }
    self->rounds = 0;
}

bool
client_flight_claim_confirm (void *owner, pmsg_t **msg_p)
{
    client_flight_t *self = (client_flight_t *) owner;
    const pmsg_t *msg = *msg_p;
    uint64_t through = pmsg_uint (msg, "through", 0);
    self->accepted += pmsg_uint (msg, "accepted", 0);
    self->errors_omitted += pmsg_uint (msg, "errors_omitted", 0);
    //  A SEND refused NOT_HELLO was not applied: the session is gone, and
    //  it and every later one go again on the next (they stay in flight).
    uint64_t lost_from = 0;
    const msgpack_object *errors = pmsg_field (msg, "errors");
    for (uint32_t i = 0; errors && i < errors->via.array.size; i++) {
        const msgpack_object *error = &errors->via.array.ptr [i];
        uint64_t id = pobj_uint (error, "id", 0);
        int code = (int) pobj_uint (error, "code", 0);
        bool whole = !pobj_get (error, "index");
        if (whole && code == PERR_NOT_HELLO) {
            if (!lost_from || id < lost_from)
                lost_from = id;
            continue;
        }
        size_t agent_len = 0, text_len = 0;
        const char *agent = pobj_str (error, "agent", &agent_len);
        const char *text = pobj_str (error, "message", &text_len);
        const s_entry_t *entry = whole ? s_find (self, id) : NULL;
        if (entry)
            s_fail_whole (self, entry, code, text, text_len);
        else
        if (whole)
            s_failure (self, id, true, 0, code, NULL, 0, text, text_len);
        else
            s_fail_item (self, id, (size_t) pobj_uint (error, "index", 0), code,
                         agent, agent_len, text, text_len);
    }
    //  It covers the `count` frames up to `through` that the broker
    //  answered since its previous CONFIRM, no more: frames before them
    //  went to a broker that is gone (killed and restarted on the same
    //  endpoint, the socket reconnected under us) and never reached this
    //  one. They stay in flight, to go again on the next session.
    size_t end = 0;
    while (end < self->count && s_at (self, end)->id <= through)
        end++;
    uint64_t covered = pmsg_uint (msg, "count", UINT64_MAX);
    size_t from = covered < end ? end - (size_t) covered : 0;
    while (from < end && (!lost_from || s_at (self, from)->id < lost_from)) {
        self->confirmed += s_at (self, from)->posts;
        s_remove (self, from);
        end--;
    }
    self->rounds = 0;
    if (lost_from) {
        plog_info ("broker forgot us (NOT_HELLO) under pipelined SENDs; will say HELLO again");
        self->lost = true;
    }
    pmsg_destroy (msg_p);
    return true;
}

//  An ERROR with the id of a pipelined SEND: refused before it was
//  handled (too many requests held behind a parked one), unapplied.
bool
client_flight_claim_error (void *owner, pmsg_t **msg_p)
{
    client_flight_t *self = (client_flight_t *) owner;
    const pmsg_t *msg = *msg_p;
    uint64_t id = pmsg_id (msg);
    if (pmsg_type (msg) != PMSG_ERROR || id == 0)
        return false;
    for (size_t i = 0; i < self->count; i++) {
        if (s_at (self, i)->id != id)
            continue;
        size_t len = 0;
        const char *text = pmsg_str (msg, "message", &len);
        s_fail_whole (self, s_at (self, i), (int) pmsg_uint (msg, "code", 0), text, len);
        s_remove (self, i);
        pmsg_destroy (msg_p);
        return true;
    }
    return false;
}

bool
client_flight_take_lost (client_flight_t *self)
{
    assert (self);
    bool lost = self->lost;
    self->lost = false;
    return lost;
}

uint64_t
client_flight_take_unacked (client_flight_t *self)
{
    assert (self);
    uint64_t ack = self->unacked;
    self->unacked = 0;
    return ack;
}

bool
client_flight_take_failure (client_flight_t *self, parley_failure_t **failure_p)
{
    assert (self && failure_p);
    parley_failure_t *failure = (parley_failure_t *) client_queue_pop (self->failures);
    if (!failure)
        return false;
    parley_failure_destroy (failure_p);
    *failure_p = failure;
    return true;
}

void
client_flight_count_post (client_flight_t *self, bool waited)
{
    assert (self);
    self->posted++;
    if (waited)
        self->window_waits++;
}

void
client_flight_count_wait (client_flight_t *self)
{
    assert (self);
    self->window_waits++;
}

uint64_t
client_flight_counter (const client_flight_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_POSTED:             return self->posted;
        case PARLEY_COUNTER_CONFIRMED:          return self->confirmed;
        case PARLEY_COUNTER_ACCEPTED:           return self->accepted;
        case PARLEY_COUNTER_FAILED_MESSAGES:    return self->failed_messages;
        case PARLEY_COUNTER_FAILED_SENDS:       return self->failed_sends;
        case PARLEY_COUNTER_ERRORS_OMITTED:     return self->errors_omitted;
        case PARLEY_COUNTER_FAILURES_DROPPED:   return self->failures_dropped;
        case PARLEY_COUNTER_WINDOW_WAITS:       return self->window_waits;
        case PARLEY_COUNTER_RESENT:             return self->resent;
        case PARLEY_COUNTER_IN_FLIGHT:          return self->posts;
        case PARLEY_COUNTER_IN_FLIGHT_MESSAGES: return self->messages;
        case PARLEY_COUNTER_IN_FLIGHT_BYTES:    return self->bytes;
        case PARLEY_COUNTER_NOMEM:              return self->nomem;
        default:                                return 0;
    }
}
