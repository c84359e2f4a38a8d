// SPDX-License-Identifier: MIT
/*  parking - backpressure: SENDs that wait for room in a full inbox, and
    the requests of their connections held behind them (parking.h).

    One record per connection that has a parked SEND or held requests:
    the SEND's frame (copied: the ROUTER's message is gone after the
    read), a FIFO of the frames that came after it, the recipient it waits
    for and its deadline. Records are kept in an array (retries go in the
    order the SENDs parked: first come, first served) and in a hash by
    connection (the dispatcher asks for every frame while anything is
    parked; nothing is looked up when nothing is).

    What is slow: a retry walks the SEND's items again (parking_fit.c);
    retries happen only when an acknowledgement freed room in the inbox
    waited for, or a SEND parked before went on.
*/
#include <string.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"
#include "parking_int.h"


parking_t *
parking_new (void)
{
    parking_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->timer_id = -1;
    self->by_conn = conn_id_index_new ();
    if (!self->by_conn) {
        free (self);
        return NULL;
    }
    return self;
}

static void
s_record_free (parked_t *rec)
{
    free (rec->send);
    while (rec->head) {
        held_t *next = rec->head->next;
        free (rec->head);
        rec->head = next;
    }
    free (rec);
}

void
parking_destroy (parking_t **self_p)
{
    assert (self_p);
    parking_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        s_record_free (self->list [i]);
    free (self->list);
    zhashx_destroy (&self->by_conn);
    free (self->need_count);
    free (self->need_bytes);
    free (self->stamp);
    free (self->touched);
    free (self);
    *self_p = NULL;
}

size_t
parking_waiting (parking_t *self)
{
    return self ? self->waiting : 0;
}

size_t
parking_held (parking_t *self)
{
    return self ? self->held : 0;
}

bool
parking_forced (parking_t *self)
{
    return self && self->forced;
}


//  ---------------------------------------------------------------------
//  Records

static held_t *
s_held_new (const void *data, size_t size, const request_t *req, size_t extra)
{
    held_t *held = malloc (sizeof *held + size);
    if (!held)
        return NULL;
    memset (held, 0, sizeof *held);
    held->envelope = req->envelope;
    held->serial = req->serial;
    memcpy (held->key, req->key, sizeof held->key);
    held->conn_fd = request_fd (req);
    held->arrived_ms = req->arrived_ms;
    held->extra = extra;
    held->size = size;
    memcpy (held->data, data, size);
    return held;
}

static parked_t *
s_record (broker_t *self, const conn_id_t *conn)
{
    parking_t *p = self->parking;
    parked_t *rec = zhashx_lookup (p->by_conn, conn);
    if (rec)
        return rec;
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        parked_t **list = realloc (p->list, cap * sizeof *list);
        if (!list)
            return NULL;
        p->list = list;
        p->cap = cap;
    }
    rec = calloc (1, sizeof *rec);
    if (!rec)
        return NULL;
    rec->conn = *conn;
    if (zhashx_insert (p->by_conn, &rec->conn, rec) != 0) {
        free (rec);
        return NULL;
    }
    p->list [p->count++] = rec;
    if (p->timer_id < 0 && self->loop)
        p->timer_id = zloop_timer (self->loop, PARKING_TIMER_MS, 0, parking_on_timer, self);
    return rec;
}

bool
parking_hold (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
              size_t extra_frames, const request_t *req)
{
    parking_t *p = self->parking;
    if (p->count == 0)
        return false;
    parked_t *rec = zhashx_lookup (p->by_conn, conn);
    if (!rec)
        return false;
    held_t *held = NULL;
    if (rec->held < PARKING_HELD_MAX && rec->held_bytes + size <= PARKING_HELD_BYTES
    &&  p->held_bytes + size <= PARKING_HELD_TOTAL_BYTES)
        held = s_held_new (data, size, req, extra_frames);
    if (held) {
        if (rec->tail)
            rec->tail->next = held;
        else
            rec->head = held;
        rec->tail = held;
        rec->held++;
        rec->held_bytes += size;
        p->held++;
        p->held_bytes += size;
        return true;
    }
    //  Over the bound: refused now, unapplied. Its reply overtakes the
    //  parked SEND's, which the client tells apart by request id.
    perr_t code;
    uint64_t id = 0;
    char why [64];
    pmsg_t *msg = pmsg_decode (data, size, pwire_default_limits (), &code, &id, why, sizeof why);
    if (msg)
        id = pmsg_id (msg);
    pmsg_destroy (&msg);
    self->counters.requests++;
    self->counters.requests_refused_held++;
    dispatch_error (self, id, PERR_QUEUES_FULL, "%zu requests (%zu bytes) wait behind a SEND "
                    "parked for room in a full inbox, the most this broker holds per connection "
                    "(%d requests, %d bytes; %d bytes for all): this request was refused, "
                    "unapplied; send it again after earlier ones are answered", rec->held,
                    rec->held_bytes, PARKING_HELD_MAX, PARKING_HELD_BYTES,
                    PARKING_HELD_TOTAL_BYTES);
    dispatch_reply (self, conn, req->serial, req->envelope, agents_by_conn (self->agents, conn),
                    penc_data (&self->reply), penc_size (&self->reply));
    return true;
}

bool
parking_park (broker_t *self, request_t *req, agent_t *on, int64_t deadline_ms)
{
    parking_t *p = self->parking;
    parked_t *rec = s_record (self, req->conn);
    if (!rec)
        return false;
    assert (!rec->send);
    held_t *held;
    if (p->current && p->current_rec == rec) {
        held = p->current;      //  the held frame being retried: kept as it is
        p->current = NULL;
    }
    else
    if (!(held = s_held_new (req->frame, req->frame_size, req, 0)))
        return false;           //  an empty record is dropped by parking_run
    if (!held->parked) {
        held->parked = true;
        held->park_seq = ++p->park_seq;
        self->counters.sends_parked++;
    }
    rec->send = held;
    rec->sender = req->agent;
    rec->blocked_on = on;
    rec->deadline_ms = deadline_ms;
    rec->ready = false;
    p->waiting++;
    return true;
}

//  ---------------------------------------------------------------------
//  Going on

void
parking_inbox_room (broker_t *self, agent_t *agent)
{
    parking_t *p = self->parking;
    if (!p || p->waiting == 0)
        return;
    for (size_t i = 0; i < p->count; i++) {
        parked_t *rec = p->list [i];
        if (rec->send && rec->blocked_on == agent) {
            rec->ready = true;
            p->any_ready = true;
        }
    }
}

//  Handles a held frame as the dispatcher would have. False when it was
//  a SEND that parked again (the frame is then the record's `send`).
static bool
s_process_held (broker_t *self, parked_t *rec, held_t *held)
{
    parking_t *p = self->parking;
    request_t req = { .conn_fd = held->conn_fd, .serial = held->serial,
                      .envelope = held->envelope, .arrived_ms = held->arrived_ms,
                      .retry = held->parked };
    memcpy (req.key, held->key, sizeof req.key);
    p->current = held;
    p->current_rec = rec;
    dispatch_process (self, &rec->conn, held->data, held->size, held->extra, &req);
    bool moved = p->current == NULL;
    p->current = NULL;
    p->current_rec = NULL;
    if (!moved)
        free (held);
    return !moved;
}

//  The sender went offline: its SEND is applied now, as with wait_ms 0,
//  and answered on its connection if that still reads.
static void
s_force (broker_t *self, parked_t *rec, agent_t *sender)
{
    parking_t *p = self->parking;
    held_t *held = rec->send;
    rec->send = NULL;
    p->waiting--;
    perr_t code, saved = self->reply_error;
    uint64_t id = 0;
    char why [64];
    pmsg_t *msg = pmsg_decode (held->data, held->size, pwire_default_limits (), &code, &id,
                               why, sizeof why);
    if (msg) {
        request_t req = { .msg = msg, .type = PMSG_SEND, .id = pmsg_id (msg), .agent = sender,
                          .conn = &rec->conn, .serial = held->serial, .conn_fd = held->conn_fd,
                          .frame = held->data, .frame_size = held->size,
                          .envelope = held->envelope, .arrived_ms = held->arrived_ms,
                          .pipelined = pmsg_bool (msg, "pipelined", false) };
        memcpy (req.key, held->key, sizeof req.key);
        p->forced = true;
        self->reply_error = PERR_NONE;
        handle_send (self, &req);
        dispatch_answer (self, &req);
        p->forced = false;
        pmsg_destroy (&msg);
    }
    self->reply_error = saved;
    free (held);
    rec->ready = true;          //  its held requests go on at the end of the turn
    p->any_ready = true;
}

void
parking_agent_gone (broker_t *self, agent_t *agent)
{
    parking_t *p = self->parking;
    if (!p || p->waiting == 0)
        return;
    for (size_t i = 0; i < p->count; i++) {
        parked_t *rec = p->list [i];
        if (rec->send && rec->blocked_on == agent) {
            rec->blocked_on = NULL;
            rec->ready = true;
            p->any_ready = true;
        }
        if (rec->send && rec->sender == agent)
            s_force (self, rec, agent);
    }
}

//  The ready record whose SEND parked first (records with held requests
//  only come first: nothing of theirs waits for room).
static parked_t *
s_next_ready (parking_t *p)
{
    parked_t *best = NULL;
    for (size_t i = 0; i < p->count; i++) {
        parked_t *rec = p->list [i];
        if (!rec->ready)
            continue;
        if (!rec->send)
            return rec;
        if (!best || rec->send->park_seq < best->send->park_seq)
            best = rec;
    }
    return best;
}

//  A SEND left the queue: those parked after it may go now.
static void
s_ready_behind (parking_t *p)
{
    for (size_t i = 0; i < p->count; i++)
        if (p->list [i]->send) {
            p->list [i]->ready = true;
            p->any_ready = true;
        }
}

//  Retries the record's SEND, then hands its held requests on until one
//  of them parks again, or the turn's budget is spent (the record stays
//  ready: the next turn, or the timer's, goes on with it).
static void
s_resume (broker_t *self, parked_t *rec)
{
    parking_t *p = self->parking;
    if (rec->send) {
        held_t *held = rec->send;
        rec->send = NULL;
        p->waiting--;
        p->budget--;
        if (!s_process_held (self, rec, held))
            return;
    }
    while (rec->head && !rec->send) {
        if (p->budget == 0) {
            rec->ready = true;
            p->any_ready = true;
            return;
        }
        p->budget--;
        held_t *held = rec->head;
        rec->head = held->next;
        if (!rec->head)
            rec->tail = NULL;
        held->next = NULL;
        rec->held--;
        rec->held_bytes -= held->size;
        p->held--;
        p->held_bytes -= held->size;
        s_process_held (self, rec, held);
    }
}

void
parking_run (broker_t *self)
{
    parking_t *p = self->parking;
    if (p->count == 0)
        return;
    //  A slice per turn: a connection with thousands of requests held
    //  behind a SEND whose wait ran out hands them on a turn's worth at a
    //  time, between everyone else's requests, not in one long turn.
    p->budget = BROKER_DRAIN_BATCH;
    //  A retry may free room for another (a held ACK) or park again; a
    //  few rounds settle it, and the timer comes back for the rest.
    for (int round = 0; round < 8; round++) {
        p->any_ready = false;
        for (size_t i = 0; i < p->count; i++) {
            parked_t *rec = p->list [i];
            if ((rec->send && self->now_ms >= rec->deadline_ms) || !rec->send)
                rec->ready = true;      //  due, or held requests only: hand them on
            //  A sender waiting for room is not silent: the broker holds
            //  its requests (and its heartbeats), so it is not expired.
            if (rec->send && rec->sender && rec->sender->online)
                rec->sender->last_seen_ms = self->now_ms;
        }
        //  Oldest parked SEND first (a record's place in the list is when
        //  its connection first parked, not when this SEND did).
        parked_t *rec;
        while (p->budget > 0 && (rec = s_next_ready (p))) {
            rec->ready = false;
            held_t *before = rec->send;
            s_resume (self, rec);
            //  One that went on may have been what others queued behind.
            if (before && rec->send != before)
                s_ready_behind (p);
        }
        if (!p->any_ready || p->budget == 0)
            break;
    }
    //  Drop the records with nothing left, keeping the order of the rest.
    size_t kept = 0;
    for (size_t i = 0; i < p->count; i++) {
        parked_t *rec = p->list [i];
        if (rec->send || rec->head)
            p->list [kept++] = rec;
        else {
            zhashx_delete (p->by_conn, &rec->conn);
            s_record_free (rec);
        }
    }
    p->count = kept;
    if (p->count == 0 && p->timer_id >= 0) {
        zloop_timer_end (self->loop, p->timer_id);
        p->timer_id = -1;
    }
}

int
parking_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void) loop;
    (void) timer_id;
    broker_t *self = arg;
    self->now_ms = pclock_mono_ms ();
    return dispatch_turn_end (self);
}
