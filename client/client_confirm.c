// SPDX-License-Identifier: MIT
/*  client_confirm - libparley's pipelined SENDs: posted without a SENT,
    confirmed together by the broker's CONFIRM frames, in a bounded window.

    The SENDs in flight are a ring in id order (the broker confirms them in
    that order: a CONFIRM's `through` pops every entry up to it), each with
    its frame, kept for the resend after a reconnect. A post waits for room
    in the window (messages and bytes) by reading replies: CONFIRMs, and
    whatever else comes (replies to posted tickets are kept for their
    collect, as everywhere in the client).

    Time limits: the oldest SEND in flight must be confirmed within the
    request timeout of when it went out (the broker answers a parked SEND
    within its wait_ms, three quarters of that timeout); otherwise the
    connection is given up and, on the next session, every SEND not
    confirmed is sent again in order (at-least-once). After `attempts`
    rounds without a confirm they fail as PARLEY_ERR_TIMEOUT.
*/
#include <assert.h>
#include "client_internal.h"
#include "pclock.h"
#include "plog.h"

uint64_t
client_send_wait (parley_client_t *self)
{
    int64_t most = self->request_ms * 3 / 4;
    int64_t wait = self->send_wait_ms < 0 || self->send_wait_ms > most? most: self->send_wait_ms;
    return wait > 0? (uint64_t) wait: 0;
}

void
parley_client_set_send_wait (parley_client_t *self, int64_t wait_ms)
{
    assert (self);
    self->send_wait_ms = wait_ms < 0? 0: wait_ms;
}

void
parley_client_set_send_window (parley_client_t *self, size_t messages, size_t bytes)
{
    assert (self);
    self->window_messages = messages? messages: 1;
    self->window_bytes = bytes? bytes: 1;
}

void
client_confirm_destroy (parley_client_t *self)
{
    for (size_t i = 0; i < self->flight_count; i++)
        free (self->flight [(self->flight_head + i) % self->flight_cap].frame);
    free (self->flight);
    self->flight = NULL;
    self->flight_count = self->flight_cap = self->flight_head = 0;
    free (self->failures);
    self->failures = NULL;
    self->failure_count = 0;
}

//  ---------------------------------------------------------------------
//  Failures

static void
s_failure (parley_client_t *self, uint64_t id, bool whole, size_t index, int code,
           const char *agent, size_t agent_len, const char *message, size_t message_len)
{
    if (!self->failures)
        self->failures = (parley_send_failure_t *) client_alloc (
            NULL, PARLEY_SEND_FAILURES * sizeof (parley_send_failure_t));
    if (self->failure_count == PARLEY_SEND_FAILURES) {
        //  The oldest makes room: the newest say most about what is wrong now.
        self->failure_head = (self->failure_head + 1) % PARLEY_SEND_FAILURES;
        self->failure_count--;
        self->pstats.failures_dropped++;
    }
    parley_send_failure_t *failure =
        &self->failures [(self->failure_head + self->failure_count++) % PARLEY_SEND_FAILURES];
    *failure = (parley_send_failure_t) { .ticket = id, .whole = whole, .index = index,
                                         .code = code };
    snprintf (failure->agent, sizeof failure->agent, "%.*s", (int) agent_len, agent? agent: "");
    snprintf (failure->message, sizeof failure->message, "%.*s", (int) message_len,
              message? message: "");
    if (whole)
        self->pstats.failed_sends++;
    else
        self->pstats.failed_messages++;
}

bool
parley_client_send_failure (parley_client_t *self, parley_send_failure_t *failure)
{
    assert (self && failure);
    if (self->failure_count == 0)
        return false;
    *failure = self->failures [self->failure_head];
    self->failure_head = (self->failure_head + 1) % PARLEY_SEND_FAILURES;
    self->failure_count--;
    return true;
}

void
parley_client_pipeline_stats (parley_client_t *self, parley_pipeline_stats_t *stats)
{
    assert (self && stats);
    *stats = self->pstats;
    stats->in_flight = self->flight_count;
    stats->in_flight_messages = self->flight_messages;
    stats->in_flight_bytes = self->flight_bytes;
}

//  ---------------------------------------------------------------------
//  The ring

static client_flight_t *
s_oldest (parley_client_t *self)
{
    return self->flight_count? &self->flight [self->flight_head]: NULL;
}

static void
s_pop (parley_client_t *self)
{
    client_flight_t *entry = s_oldest (self);
    assert (entry);
    free (entry->frame);
    entry->frame = NULL;
    self->flight_messages -= entry->messages;
    self->flight_bytes -= entry->size;
    self->flight_head = (self->flight_head + 1) % self->flight_cap;
    self->flight_count--;
}

static void
s_push (parley_client_t *self, uint64_t id, size_t messages, const void *frame, size_t size)
{
    if (self->flight_count == self->flight_cap) {
        size_t cap = self->flight_cap? self->flight_cap * 2: 64;
        client_flight_t *ring = (client_flight_t *) client_alloc (NULL, cap * sizeof *ring);
        for (size_t i = 0; i < self->flight_count; i++)
            ring [i] = self->flight [(self->flight_head + i) % self->flight_cap];
        free (self->flight);
        self->flight = ring;
        self->flight_cap = cap;
        self->flight_head = 0;
    }
    client_flight_t *entry =
        &self->flight [(self->flight_head + self->flight_count++) % self->flight_cap];
    entry->id = id;
    entry->messages = messages;
    entry->size = size;
    entry->sent_ms = pclock_mono_ms ();
    entry->frame = (char *) client_alloc (NULL, size);
    memcpy (entry->frame, frame, size);
    self->flight_messages += messages;
    self->flight_bytes += size;
}

//  ---------------------------------------------------------------------
//  Confirms

static void
s_on_confirm (parley_client_t *self, const pmsg_t *msg)
{
    uint64_t through = pmsg_uint (msg, "through", 0);
    self->pstats.accepted += pmsg_uint (msg, "accepted", 0);
    self->pstats.errors_omitted += pmsg_uint (msg, "errors_omitted", 0);
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
        s_failure (self, id, whole, (size_t) pobj_uint (error, "index", 0), code,
                   agent, agent_len, text, text_len);
    }
    client_flight_t *entry;
    while ((entry = s_oldest (self)) && entry->id <= through
    &&     (!lost_from || entry->id < lost_from)) {
        s_pop (self);
        self->pstats.confirmed++;
    }
    self->flight_rounds = 0;
    if (lost_from) {
        plog_info ("broker forgot us (NOT_HELLO) under pipelined SENDs; will say HELLO again");
        client_pending_fail (self, PARLEY_ERR_NOT_HELLO);
        client_close_dealer (self);
    }
}

//  An ERROR with the id of a pipelined SEND: refused before it was
//  handled (too many requests held behind a parked one), unapplied.
static bool
s_on_error (parley_client_t *self, const pmsg_t *msg)
{
    uint64_t id = pmsg_id (msg);
    for (size_t i = 0; id && i < self->flight_count; i++) {
        client_flight_t *entry = &self->flight [(self->flight_head + i) % self->flight_cap];
        if (entry->id != id)
            continue;
        size_t len = 0;
        const char *text = pmsg_str (msg, "message", &len);
        s_failure (self, id, true, 0, (int) pmsg_uint (msg, "code", 0), NULL, 0, text, len);
        //  Out of the ring, keeping its order: rare, so a move is fine.
        free (entry->frame);
        self->flight_messages -= entry->messages;
        self->flight_bytes -= entry->size;
        for (size_t j = i; j + 1 < self->flight_count; j++)
            self->flight [(self->flight_head + j) % self->flight_cap] =
                self->flight [(self->flight_head + j + 1) % self->flight_cap];
        self->flight_count--;
        return true;
    }
    return false;
}

bool
client_confirm_keep (parley_client_t *self, pmsg_t *msg)
{
    pmsg_type_t type = pmsg_type (msg);
    if (type == PMSG_CONFIRM)
        s_on_confirm (self, msg);
    else
    if (!(type == PMSG_ERROR && self->flight_count && s_on_error (self, msg)))
        return false;
    pmsg_destroy (&msg);
    return true;
}

//  ---------------------------------------------------------------------
//  Sending and waiting

//  Takes every reply waiting, without blocking.
static void
s_take_replies (parley_client_t *self)
{
    pmsg_t *msg;
    while (self->dealer && (zsock_events (self->dealer) & ZMQ_POLLIN)
    &&     (msg = client_recv_reply (self, true)))
        if (!client_pending_keep (self, msg))
            pmsg_destroy (&msg);    //  a late reply to a request given up on
}

//  Sends one frame, waiting (up to the request timeout) while the
//  DEALER's send queue is at its high-water mark: a window larger than
//  that queue is drained by the broker as it reads. 0, or -1.
static int
s_send_frame (parley_client_t *self, const void *data, size_t size)
{
    int64_t until = pclock_mono_ms () + self->request_ms;
    while (zmq_send (zsock_resolve (self->dealer), data, size, ZMQ_DONTWAIT) < 0) {
        int64_t left = until - pclock_mono_ms ();
        if (zmq_errno () != EAGAIN || left <= 0 || parley_client_stopped (self))
            return -1;
        zmq_pollitem_t item = { zsock_resolve (self->dealer), 0, ZMQ_POLLIN | ZMQ_POLLOUT, 0 };
        if (zmq_poll (&item, 1, left < CLIENT_POLL_SLICE_MS? left: CLIENT_POLL_SLICE_MS) > 0
        &&  (item.revents & ZMQ_POLLIN))
            s_take_replies (self);
        if (!self->dealer)
            return -1;          //  a reply closed the connection (NOT_HELLO)
    }
    self->last_send_ms = pclock_mono_ms ();
    return 0;
}

//  A session, and on a new one every SEND in flight sent again, in order.
static parley_err_t
s_session (parley_client_t *self)
{
    parley_err_t rc = client_ensure_session (self);
    if (rc == PARLEY_ERR_STOPPED)
        return client_fail (self, rc, "stopped");
    if (rc != PARLEY_OK) {
        char why [sizeof (self->error)];
        snprintf (why, sizeof why, "%s", self->error);
        return client_fail (self, rc == PARLEY_ERR_TIMEOUT? rc: PARLEY_ERR_LOST,
                            "broker %s HELLO: %s", rc == PARLEY_ERR_TIMEOUT? "not answering":
                            "refused", why);
    }
    if (self->flight_epoch == self->epoch || self->flight_count == 0) {
        self->flight_epoch = self->epoch;
        return PARLEY_OK;
    }
    self->flight_epoch = self->epoch;
    if (++self->flight_rounds >= self->attempts) {
        //  Given up: each SEND left fails whole.
        while (self->flight_count) {
            client_flight_t *entry = s_oldest (self);
            const char *why = "no CONFIRM after every attempt; it may or may not have been applied";
            s_failure (self, entry->id, true, 0, PARLEY_ERR_TIMEOUT, NULL, 0, why, strlen (why));
            s_pop (self);
        }
        self->flight_rounds = 0;
        return client_fail (self, PARLEY_ERR_TIMEOUT, "pipelined SENDs unconfirmed after %d "
                            "attempts", self->attempts);
    }
    plog_info ("sending %zu unconfirmed pipelined SENDs again on the new session",
               self->flight_count);
    for (size_t i = 0; i < self->flight_count; i++) {
        client_flight_t *entry = &self->flight [(self->flight_head + i) % self->flight_cap];
        self->stats.requests++;
        self->pstats.resent++;
        if (s_send_frame (self, entry->frame, entry->size) != 0)
            break;          //  the oldest's timeout brings the next round
        entry->sent_ms = self->last_send_ms;
    }
    return PARLEY_OK;
}

//  Reads one reply, up to the oldest SEND's deadline; at the deadline the
//  connection is given up (the next s_session sends them all again).
static parley_err_t
s_pump (parley_client_t *self)
{
    client_flight_t *oldest = s_oldest (self);
    if (!oldest || !self->dealer)
        return PARLEY_OK;
    int64_t until = oldest->sent_ms + self->request_ms;
    int64_t left = until - pclock_mono_ms ();
    if (left <= 0) {
        self->stats.timeouts++;
        plog_warn ("no CONFIRM from broker in %" PRId64 " ms; reconnecting", self->request_ms);
        client_pending_fail (self, PARLEY_ERR_TIMEOUT);
        client_close_dealer (self);
        return PARLEY_OK;
    }
    if (parley_client_stopped (self))
        return client_fail (self, PARLEY_ERR_STOPPED, "stopped");
    zmq_pollitem_t item = { zsock_resolve (self->dealer), 0, ZMQ_POLLIN, 0 };
    self->busy = true;
    if (zmq_poll (&item, 1, left < CLIENT_POLL_SLICE_MS? left: CLIENT_POLL_SLICE_MS) > 0)
        s_take_replies (self);
    self->busy = false;
    return PARLEY_OK;
}

parley_err_t
parley_client_send_pipelined (parley_client_t *self, const parley_outgoing_t *items,
                              size_t count, parley_ticket_t *ticket)
{
    assert (self);
    if (ticket)
        *ticket = 0;
    self->error [0] = 0;
    parley_err_t rc = s_session (self);
    if (rc != PARLEY_OK)
        return rc;
    rc = client_encode_send (self, items, count, NULL);
    if (rc != PARLEY_OK)
        return rc;
    size_t size = penc_size (&self->enc);
    bool waited = false;
    while (self->flight_count
    &&     (self->flight_messages + count > self->window_messages
    ||      self->flight_bytes + size > self->window_bytes)) {
        if (!waited)
            self->pstats.window_waits++;
        waited = true;
        if ((rc = s_pump (self)) != PARLEY_OK || (rc = s_session (self)) != PARLEY_OK)
            return rc;
    }
    //  The id was given at encode; the ones resent meanwhile are older,
    //  so ids still increase on the connection.
    self->stats.requests++;
    self->busy = true;
    int sent = s_send_frame (self, penc_data (&self->enc), size);
    self->busy = false;
    if (sent != 0)
        return client_fail (self, PARLEY_ERR_TIMEOUT, "the socket would not take the request "
                            "within %" PRId64 " ms: %s", self->request_ms, zmq_strerror (zmq_errno ()));
    s_push (self, self->enc_id, count, penc_data (&self->enc), size);
    self->pstats.posted++;
    if (ticket)
        *ticket = self->enc_id;
    //  Take what has come without waiting: confirms free the window early.
    s_take_replies (self);
    return PARLEY_OK;
}

parley_err_t
parley_client_send_flush (parley_client_t *self)
{
    assert (self);
    self->error [0] = 0;
    while (self->flight_count) {
        parley_err_t rc = s_session (self);
        if (rc == PARLEY_OK)
            rc = s_pump (self);
        if (rc != PARLEY_OK)
            return rc;
    }
    return PARLEY_OK;
}
