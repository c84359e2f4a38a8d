// SPDX-License-Identifier: MIT
/*  sender - pipelined SENDs on their way out. See sender.h.

    Time limits: the oldest SEND in flight must be confirmed within the
    request timeout of when it went out (the broker answers a parked SEND
    within its wait_ms, three quarters of that timeout); otherwise the
    connection is given up and, on the next session, every SEND not
    confirmed is sent again in order (at-least-once). After `attempts`
    rounds without a confirm they fail as PARLEY_ERR_TIMEOUT.

    What a post costs: its items are encoded once into a scratch buffer
    and copied into the held buffer, behind room left for the SEND's
    header; the frame is that buffer with the header written into the
    room, and the flight takes the buffer itself for the resend (no copy).
    The system call, the broker's read, decode and journal record are per
    frame. A post reads the clock once in S_TICKS and looks for confirms
    at most every S_DRAIN_US: each costs about as much as the rest of it.
*/
#include <assert.h>
#include <inttypes.h>
#include <string.h>
#include "ackhold.h"
#include "mem.h"
#include "outbox_int.h"
#include "pclock.h"
#include "plog.h"
#include "sender.h"
#include "welcome_int.h"

//  Room a SEND's header takes before its items: the window's sums, and
//  the room left at the front of the held buffer (the largest header,
//  every field at its longest, is 86 bytes).
#define S_FRAME_HEAD 96
//  Frames stay well inside the broker's frame limit.
#define S_MAX_BYTES (PROTO_MAX_FRAME / 2)
//  A post looks for confirms at most this often: looking is a system call
//  (libzmq polls its mailbox).
#define S_DRAIN_US 50
//  Posts read the clock (for the timer and those looks) once in this many.
#define S_TICKS 16

//  Why a frame went: the counters PARLEY_COUNTER_FLUSH_*.
typedef enum { S_FULL, S_TIMER, S_WAIT, S_IDLE, S_CALL, S_ALONE, S_REASONS } s_reason_t;

struct _client_sender_t {
    client_conn_t *conn;            //  borrowed
    client_flight_t *flight;        //  borrowed
    size_t max_messages, max_bytes;
    int64_t linger_us;              //  0: every post is its own frame
    int64_t wait_ms;                //  -1: the default
    //  The posts held: their items (after S_FRAME_HEAD bytes of room), and
    //  a (ticket, count) pair each. The flight takes both with the frame;
    //  the next frame's are made as large.
    char *held;
    size_t held_size, held_cap, held_messages;
    uint64_t *spans;
    size_t posts, spans_cap;
    int64_t held_since;             //  when the oldest came (us)
    int64_t drained;                //  when a post last looked for confirms (us)
    unsigned ticks;                 //  posts, for reading the clock every S_TICKS
    uint64_t last_frame;            //  the id of the last frame sent
    penc_t scratch, frame;
    client_ackhold_t *acks;         //  the acknowledgement held for the next SEND
    int64_t alarm;                  //  what the descriptor's timer is set to
    uint64_t frames, flushes [S_REASONS], acks_sent;
};

client_sender_t *
client_sender_new (client_conn_t *conn, client_flight_t *flight)
{
    assert (conn && flight);
    client_sender_t *self = (client_sender_t *) client_mem_zalloc (sizeof (client_sender_t));
    if (!self)
        return NULL;
    self->conn = conn;
    self->flight = flight;
    self->max_messages = 1024;
    self->max_bytes = 256 * 1024;
    self->linger_us = 1000;
    self->wait_ms = -1;
    penc_init_alloc (&self->scratch, client_mem_realloc, client_mem_free);
    penc_init_alloc (&self->frame, client_mem_realloc, client_mem_free);
    if (!(self->acks = client_ackhold_new ()))
        client_sender_destroy (&self);
    return self;
}

void
client_sender_destroy (client_sender_t **self_p)
{
    assert (self_p);
    client_sender_t *self = *self_p;
    if (self) {
        client_mem_free (self->held);
        client_mem_free (self->spans);
        client_ackhold_destroy (&self->acks);
        penc_fini (&self->scratch);
        penc_fini (&self->frame);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_sender_set_coalesce (client_sender_t *self, size_t messages, size_t bytes,
                            int64_t linger_us)
{
    assert (self);
    self->max_messages = messages ? messages : 1;
    self->max_bytes = bytes && bytes < S_MAX_BYTES ? bytes : S_MAX_BYTES;
    self->linger_us = linger_us > 0 ? linger_us : 0;
}

void
client_sender_set_wait (client_sender_t *self, int64_t wait_ms)
{
    assert (self);
    self->wait_ms = wait_ms < 0 ? 0 : wait_ms;
}

uint64_t
client_sender_wait_ms (const client_sender_t *self)
{
    assert (self);
    int64_t most = client_conn_request_ms (self->conn) * 3 / 4;
    int64_t wait = self->wait_ms < 0 || self->wait_ms > most ? most : self->wait_ms;
    return wait > 0 ? (uint64_t) wait : 0;
}

static const parley_welcome_t *
s_welcome (const client_sender_t *self)
{
    return client_session_welcome (client_conn_session (self->conn));
}

//  A frame can go now: a session, on an open socket.
static bool
s_can_send (const client_sender_t *self)
{
    return client_conn_up (self->conn)
        && client_transport_is_open (client_conn_transport (self->conn));
}

//  The bounds of one frame: the options, within the window and WELCOME's
//  max_batch.
static void
s_bounds (const client_sender_t *self, size_t *messages, size_t *bytes)
{
    size_t window_messages, window_bytes;
    client_flight_window (self->flight, &window_messages, &window_bytes);
    uint64_t max_batch = parley_welcome_max_batch (s_welcome (self));
    *messages = self->max_messages;
    if (*messages > window_messages)
        *messages = window_messages;
    if (max_batch && *messages > max_batch)
        *messages = (size_t) max_batch;
    *bytes = self->max_bytes;
    if (*bytes > window_bytes)
        *bytes = window_bytes;
}

//  ---------------------------------------------------------------------
//  The session and the window

parley_err_t
client_sender_session (client_sender_t *self)
{
    assert (self);
    client_conn_t *conn = self->conn;
    parley_err_t rc = client_conn_ensure (conn);
    if (rc != PARLEY_OK)
        return rc;
    client_flight_t *flight = self->flight;
    uint64_t epoch = client_session_epoch (client_conn_session (conn));
    if (client_flight_epoch (flight) == epoch || client_flight_count (flight) == 0) {
        client_flight_set_epoch (flight, epoch);
        return PARLEY_OK;
    }
    client_flight_set_epoch (flight, epoch);
    if (client_flight_round (flight) >= client_conn_attempts (conn)) {
        client_flight_give_up (flight);
        return client_conn_fail (conn, PARLEY_ERR_TIMEOUT, "pipelined SENDs unconfirmed after %d "
                                 "attempts", client_conn_attempts (conn));
    }
    plog_info ("sending %zu unconfirmed pipelined SENDs again on the new session",
               client_flight_count (flight));
    uint64_t id = 0;
    const void *data;
    size_t size;
    while (client_flight_next (flight, id, &id, &data, &size)) {
        if (client_conn_send (conn, data, size, true) != 0)
            break;              //  the oldest's timeout brings the next round
        client_flight_resent (flight, id, client_conn_last_send (conn));
    }
    return PARLEY_OK;
}

//  Reads replies up to the oldest SEND's deadline; at the deadline the
//  connection is given up (the next session sends them all again).
static parley_err_t
s_pump (client_sender_t *self)
{
    client_conn_t *conn = self->conn;
    client_flight_t *flight = self->flight;
    if (!client_flight_count (flight) || !client_transport_is_open (client_conn_transport (conn)))
        return PARLEY_OK;
    int64_t left = client_flight_oldest_sent (flight) + client_conn_request_ms (conn)
                 - pclock_mono_ms ();
    if (left <= 0) {
        client_conn_count (conn, PARLEY_COUNTER_TIMEOUTS);
        plog_warn ("no CONFIRM from broker in %" PRId64 " ms; reconnecting",
                   client_conn_request_ms (conn));
        client_conn_close (conn, PARLEY_ERR_TIMEOUT);
        return PARLEY_OK;
    }
    if (client_conn_stopped (conn))
        return client_conn_fail (conn, PARLEY_ERR_STOPPED, "stopped");
    bool busy = client_conn_busy (conn);
    client_conn_set_busy (conn, true);
    client_conn_pump (conn, left < CLIENT_ROUTER_SLICE_MS ? left : CLIENT_ROUTER_SLICE_MS);
    client_conn_set_busy (conn, busy);
    return PARLEY_OK;
}

//  Waits, taking confirms, until the window has room for `messages` and
//  `bytes` more (one SEND always goes).
static parley_err_t
s_room (client_sender_t *self, size_t messages, size_t bytes, bool *waited)
{
    while (client_flight_full (self->flight, messages, bytes)) {
        *waited = true;
        parley_err_t rc = s_pump (self);
        if (rc == PARLEY_OK)
            rc = client_sender_session (self);
        if (rc != PARLEY_OK)
            return rc;
    }
    return PARLEY_OK;
}

//  ---------------------------------------------------------------------
//  Acknowledgements

static bool
s_rides (const client_sender_t *self)
{
    return client_welcome_send_ack (s_welcome (self));
}

//  An ACK frame without waiting for its OK (a reply nobody claims).
static parley_err_t
s_send_ack (client_sender_t *self, uint64_t seq)
{
    client_conn_t *conn = self->conn;
    if (!s_can_send (self))
        return client_conn_fail (conn, PARLEY_ERR_NOT_HELLO, "no session: the ack is sent "
                                 "again with the next HELLO");
    //  Its own encoder: the caller's request must survive.
    penc_t *enc = client_conn_aside_encoder (conn);
    penc_begin (enc, PMSG_ACK, client_conn_next_id (conn), 1);
    penc_kv_uint (enc, "seq", seq);
    if (!penc_ok (enc))
        return client_conn_nomem (conn);
    if (client_conn_send (conn, penc_data (enc), penc_size (enc), false) != 0)
        return client_conn_fail (conn, PARLEY_ERR_TIMEOUT, "the ack could not be sent: %s",
                                 zmq_strerror (zmq_errno ()));
    self->acks_sent++;
    client_ackhold_sent (self->acks, seq);
    return PARLEY_OK;
}

parley_err_t
client_sender_ack (client_sender_t *self, uint64_t seq)
{
    assert (self);
    if (!s_rides (self))
        return s_send_ack (self, seq);
    client_ackhold_hold (self->acks, seq, pclock_mono_us ());
    return PARLEY_OK;
}

uint64_t
client_sender_take_ack (client_sender_t *self)
{
    assert (self);
    return s_rides (self) ? client_ackhold_ride (self->acks) : 0;
}

void
client_sender_ack_refused (client_sender_t *self)
{
    assert (self);
    client_ackhold_refused (self->acks, pclock_mono_us (), self->linger_us);
}

void
client_sender_acked (client_sender_t *self, uint64_t seq)
{
    assert (self);
    client_ackhold_sent (self->acks, seq);
}

//  ---------------------------------------------------------------------
//  Frames

//  What is held goes as one SEND (the held acknowledgement riding on
//  it), recorded in the flight first. A frame the socket would not take
//  stays in flight, and the connection is given up: the next session
//  sends it again, as every SEND in flight.
static parley_err_t
s_flush (client_sender_t *self, s_reason_t reason)
{
    assert (self->posts);
    client_conn_t *conn = self->conn;
    //  The last post's ticket names the frame when it is newer than the
    //  last frame (ids of pipelined SENDs must increase), as it always is
    //  when every post goes alone.
    uint64_t last = self->spans [2 * (self->posts - 1)];
    uint64_t id = last > self->last_frame ? last : client_conn_next_id (conn);
    uint64_t ack = client_sender_take_ack (self);
    penc_t *head = &self->frame;
    penc_begin (head, PMSG_SEND, id, ack ? 4 : 3);
    penc_kv_bool (head, "pipelined", true);
    penc_kv_uint (head, "wait_ms", client_sender_wait_ms (self));
    if (ack)
        penc_kv_uint (head, "ack", ack);
    penc_key (head, "messages");
    msgpack_pack_array (penc_packer (head), self->held_messages);
    size_t head_size = penc_size (head);
    assert (!penc_ok (head) || head_size <= S_FRAME_HEAD);
    char *frame = self->held + S_FRAME_HEAD - head_size;
    size_t size = head_size + self->held_size;
    if (penc_ok (head))
        memcpy (frame, penc_data (head), head_size);
    if (!penc_ok (head)
    ||  client_flight_push (self->flight, id, self->held_messages, self->held, frame, size,
                            self->spans, self->posts, ack, pclock_mono_ms ()) != 0) {
        if (ack)
            client_ackhold_again (self->acks, ack, pclock_mono_us (), self->linger_us);
        return client_conn_nomem (conn);
    }
    //  The flight has the buffers now.
    self->held = NULL;
    self->spans = NULL;
    self->last_frame = id;
    self->frames++;
    self->flushes [reason]++;
    self->held_size = self->held_messages = self->posts = 0;
    bool busy = client_conn_busy (conn);
    client_conn_set_busy (conn, true);
    int sent = client_conn_send (conn, frame, size, true);
    client_conn_set_busy (conn, busy);
    if (sent != 0 && client_transport_is_open (client_conn_transport (conn))) {
        plog_warn ("the socket would not take a SEND within %" PRId64 " ms (%s); reconnecting",
                   client_conn_request_ms (conn), zmq_strerror (zmq_errno ()));
        client_conn_count (conn, PARLEY_COUNTER_TIMEOUTS);
        client_conn_close (conn, PARLEY_ERR_TIMEOUT);
    }
    return PARLEY_OK;
}

//  What is held goes, after waiting for room in the window.
static parley_err_t
s_flush_waiting (client_sender_t *self, s_reason_t reason, bool *waited)
{
    parley_err_t rc = client_sender_session (self);
    if (rc == PARLEY_OK)
        rc = s_room (self, self->held_messages, self->held_size + S_FRAME_HEAD, waited);
    if (rc == PARLEY_OK && self->posts)
        rc = s_flush (self, reason);
    return rc;
}

//  Holds a post whose items are in the scratch encoder. PARLEY_OK, or
//  _NOMEM with nothing held.
static parley_err_t
s_hold (client_sender_t *self, uint64_t ticket, size_t count, int64_t now)
{
    size_t size = penc_size (&self->scratch);
    size_t need = S_FRAME_HEAD + self->held_size + size;
    if (!self->held || need > self->held_cap) {
        size_t cap = self->held_cap > 4096 ? self->held_cap : 4096;
        while (cap < need)
            cap *= 2;
        char *held = (char *) client_mem_realloc (self->held, cap);
        if (!held)
            return client_conn_nomem (self->conn);
        self->held = held;
        self->held_cap = cap;
    }
    if (!self->spans || self->posts == self->spans_cap) {
        size_t cap = !self->spans_cap ? 64 : self->spans ? self->spans_cap * 2 : self->spans_cap;
        uint64_t *spans = (uint64_t *) client_mem_array (self->spans, cap,
                                                         2 * sizeof (uint64_t));
        if (!spans)
            return client_conn_nomem (self->conn);
        self->spans = spans;
        self->spans_cap = cap;
    }
    memcpy (self->held + S_FRAME_HEAD + self->held_size, penc_data (&self->scratch), size);
    self->held_size += size;
    self->held_messages += count;
    self->spans [2 * self->posts] = ticket;
    self->spans [2 * self->posts + 1] = count;
    if (self->posts++ == 0)
        self->held_since = now;
    return PARLEY_OK;
}

//  ---------------------------------------------------------------------
//  What is due

int64_t
client_sender_due (const client_sender_t *self)
{
    assert (self);
    int64_t due = self->posts ? self->held_since + self->linger_us : 0;
    int64_t ack_due = client_ackhold_since (self->acks) + self->linger_us;
    if (client_ackhold_seq (self->acks) && (!due || ack_due < due))
        due = ack_due;
    return due;
}

//  The descriptor fires when something held falls due.
static void
s_alarm (client_sender_t *self)
{
    int64_t due = client_sender_due (self);
    if (due && due != self->alarm) {
        client_transport_set_alarm (client_conn_transport (self->conn), due);
        self->alarm = due;
    }
}

//  Sends what is due at `now` without waiting for the window (now 0: what
//  needs no clock).
static void
s_due (client_sender_t *self, bool idle, int64_t now)
{
    if (!s_can_send (self))
        return;
    uint64_t unacked = client_flight_take_unacked (self->flight);
    if (unacked)
        client_ackhold_again (self->acks, unacked, pclock_mono_us (), self->linger_us);
    if (self->posts) {
        size_t messages, bytes;
        s_bounds (self, &messages, &bytes);
        s_reason_t reason = client_flight_count (self->flight) == 0 ? S_IDLE
                          : self->held_messages >= messages || self->held_size >= bytes ? S_FULL
                          : now && now >= self->held_since + self->linger_us ? S_TIMER
                          : idle ? S_WAIT : S_REASONS;
        if (reason != S_REASONS && !client_flight_full (self->flight, self->held_messages,
                                                        self->held_size + S_FRAME_HEAD))
            s_flush (self, reason);
    }
    uint64_t ack = client_ackhold_seq (self->acks);
    if (ack && (idle || (now && now >= client_ackhold_since (self->acks) + self->linger_us)))
        s_send_ack (self, ack);
    if (now || idle)
        s_alarm (self);
}

void
client_sender_service (client_sender_t *self, bool idle)
{
    assert (self);
    if (client_flight_count (self->flight) && s_can_send (self))
        client_conn_drain (self->conn);
    if (self->posts || client_ackhold_seq (self->acks) || client_flight_count (self->flight))
        s_due (self, idle, pclock_mono_us ());
}

bool
client_sender_active (const client_sender_t *self)
{
    assert (self);
    return self->posts || client_ackhold_seq (self->acks) || client_flight_count (self->flight);
}

//  ---------------------------------------------------------------------
//  Posts

parley_err_t
client_sender_post (client_sender_t *self, const parley_outbox_t *messages,
                    parley_ticket_t *ticket_p)
{
    assert (self && messages);
    client_conn_t *conn = self->conn;
    //  A session that is up and knows the SENDs in flight needs nothing.
    parley_err_t rc = PARLEY_OK;
    if (!client_conn_up (conn)
    ||  client_flight_epoch (self->flight) != client_session_epoch (client_conn_session (conn)))
        rc = client_sender_session (self);
    if (rc != PARLEY_OK)
        return rc;
    penc_reset (&self->scratch);
    client_outbox_encode_items (messages, &self->scratch,
                                (size_t) parley_welcome_max_body (s_welcome (self)));
    if (!penc_ok (&self->scratch))
        return client_conn_nomem (conn);
    size_t count = parley_outbox_count (messages), size = penc_size (&self->scratch);
    size_t max_messages, max_bytes;
    s_bounds (self, &max_messages, &max_bytes);
    bool waited = false;
    if (self->linger_us == 0)
        //  Not coalescing: the post goes alone, once the window has room.
        rc = s_room (self, count, size + S_FRAME_HEAD, &waited);
    else
    if (self->posts && (self->held_messages + count > max_messages
                    ||  self->held_size + size > max_bytes))
        rc = s_flush_waiting (self, S_FULL, &waited);
    if (rc != PARLEY_OK)
        return rc;
    uint64_t ticket = client_conn_next_id (conn);
    int64_t now = self->posts == 0 || ++self->ticks % S_TICKS == 0 ? pclock_mono_us () : 0;
    if ((rc = s_hold (self, ticket, count, now)) != PARLEY_OK)
        return rc;
    client_flight_count_post (self->flight, waited);
    if (ticket_p)
        *ticket_p = ticket;
    if (self->linger_us == 0)
        return s_flush (self, S_ALONE);
    //  Confirms that came free the window (and may empty the pipe).
    if (now && now - self->drained >= S_DRAIN_US && client_flight_count (self->flight)) {
        client_conn_drain (conn);
        self->drained = now;
    }
    //  Between clock reads only an idle pipe or a full frame can be due.
    if (now || client_ackhold_seq (self->acks) || !client_flight_count (self->flight)
    ||  self->held_messages >= max_messages || self->held_size >= max_bytes)
        s_due (self, false, now);
    return PARLEY_OK;
}

parley_err_t
client_sender_flush (client_sender_t *self)
{
    assert (self);
    bool waited = false;
    while (self->posts || client_ackhold_seq (self->acks) || client_flight_count (self->flight)) {
        parley_err_t rc = self->posts ? s_flush_waiting (self, S_CALL, &waited)
                                      : client_sender_session (self);
        if (rc == PARLEY_OK && client_ackhold_seq (self->acks))
            rc = s_send_ack (self, client_ackhold_seq (self->acks));
        if (rc == PARLEY_OK && !self->posts && !client_flight_count (self->flight))
            return PARLEY_OK;
        if (rc == PARLEY_OK)
            rc = s_pump (self);
        if (rc != PARLEY_OK)
            return rc;
    }
    return PARLEY_OK;
}

parley_err_t
client_sender_before (client_sender_t *self)
{
    assert (self);
    if (!self->posts && !client_ackhold_seq (self->acks))
        return PARLEY_OK;
    bool waited = false;
    parley_err_t rc = self->posts ? s_flush_waiting (self, S_CALL, &waited) : PARLEY_OK;
    //  No session: it goes again with the next HELLO.
    if (rc == PARLEY_OK && client_ackhold_seq (self->acks) && s_can_send (self))
        rc = s_send_ack (self, client_ackhold_seq (self->acks));
    return rc;
}

void
client_sender_farewell (client_sender_t *self)
{
    assert (self);
    if (!s_can_send (self) || !(self->posts || client_ackhold_seq (self->acks)))
        return;
    if (self->posts)
        s_flush (self, S_CALL);
    if (client_ackhold_seq (self->acks))
        s_send_ack (self, client_ackhold_seq (self->acks));
    //  The socket closes next: what it has not written yet must still go.
    client_transport_linger (client_conn_transport (self->conn),
                             client_conn_request_ms (self->conn));
}

uint64_t
client_sender_counter (const client_sender_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_SEND_FRAMES:   return self->frames;
        case PARLEY_COUNTER_FLUSH_FULL:    return self->flushes [S_FULL];
        case PARLEY_COUNTER_FLUSH_TIMER:   return self->flushes [S_TIMER];
        case PARLEY_COUNTER_FLUSH_WAIT:    return self->flushes [S_WAIT];
        case PARLEY_COUNTER_FLUSH_IDLE:    return self->flushes [S_IDLE];
        case PARLEY_COUNTER_FLUSH_CALL:    return self->flushes [S_CALL];
        case PARLEY_COUNTER_HELD:          return self->posts;
        case PARLEY_COUNTER_ACKS_RIDDEN:   return client_ackhold_counter (self->acks, counter);
        case PARLEY_COUNTER_ACKS_SENT:     return self->acks_sent;
        default:                           return 0;
    }
}
