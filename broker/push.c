// SPDX-License-Identifier: MIT
/*  push - MAIL_PUSH frames to the consumers (CONSUME) at the end of a loop
    turn.

    Every consumer that got mail, had credit returned or opened its
    subscription during the turn was marked once (mailroom_mark_push); at
    the end of the turn, after the replies, each gets as many frames as its
    credit allows. So a burst of SENDs read in one turn leaves in few
    frames, and a broker with nothing else to do pushes at once: one
    message when one came, many under load.

    A push frame holds at most BROKER_PUSH_FRAME_BUDGET bytes (and
    max_batch messages; one message always goes, however big): a consumer
    far behind gets its backlog in frames of tens of kilobytes rather than
    megabytes, which are cheap to allocate (below malloc's mmap threshold)
    and to copy, and interleave with everyone else's traffic.

    What was handed out (the agent's `delivered` position) is journaled
    once per consumer per flush, however many frames went (OP_DELIVER).

    A frame is handed out only once libzmq took it: the consumer's pipe
    may be full (ROUTER high-water mark: it does not read), and then the
    send fails with EAGAIN, nothing moves, the consumer is marked blocked
    and tried again on a short timer (and at its next ack). Its mail stays
    queued within the inbox bounds; nothing is lost or skipped. A consumer
    whose connection is gone (EHOSTUNREACH) is expired as for a reply.
*/
#include <errno.h>

#include "broker_internal.h"
#include "plog.h"

static plog_limit_t s_push_limit;

typedef enum { PUSH_SENT, PUSH_FULL, PUSH_GONE } push_outcome_t;

static push_outcome_t
s_send (broker_t *self, agent_t *agent, const void *data, size_t size)
{
    const conn_id_t *conn = &agent->conn;
    if (zmq_send (self->router_handle, conn->bytes, conn->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) == -1)
        return zmq_errno () == EAGAIN ? PUSH_FULL : PUSH_GONE;
    //  The routing-id frame is queued: libzmq takes the rest whole.
    if (zmq_send (self->router_handle, data, size, ZMQ_DONTWAIT) == -1) {
        plog_limited (&s_push_limit, 5, PLOG_WARN, "push to %s not sent whole: %s",
                      agent->id, zmq_strerror (zmq_errno ()));
        return PUSH_GONE;
    }
    if (tap_active (self->tap))
        tap_frame (self->tap, "out", agent->id, agent->id_len, data, size);
    return PUSH_SENT;
}

static int
s_on_retry (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *self = arg;
    self->push_timer = 0;
    for (size_t i = 0; i < agents_size (self->agents); i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (agent->push_blocked) {
            agent->push_blocked = false;
            mailroom_mark_push (self->mailroom, agent);
        }
    }
    push_flush (self);
    return 0;
}

//  What the agent was handed out (the ack clamp), journaled: an ack of
//  pushed mail after a restart still counts.
static void
s_delivered (broker_t *self, agent_t *agent, uint64_t through)
{
    if (through <= agent->delivered)
        return;
    op_t op = { .kind = OP_DELIVER, .u = through };
    if (call_one (self, agent->id, &op, NULL) != PERR_NONE)
        plog_limited (&s_push_limit, 5, PLOG_WARN, "push to %s: its position is not "
                      "journaled (it may come again after a restart)", agent->id);
}

//  Pushes what the agent's credit allows, frame by frame.
static void
s_push_agent (broker_t *self, agent_t *agent)
{
    mailroom_t *room = self->mailroom;
    uint64_t through = 0;
    while (agent->online && agent->credit) {
        size_t count = mailroom_push_begin (room, agent, self->config.max_batch,
                                            BROKER_PUSH_FRAME_BUDGET);
        if (count == 0)
            break;
        mail_encode (self, &self->push, PMSG_MAIL_PUSH, 0, count, agent);
        push_outcome_t outcome = s_send (self, agent, penc_data (&self->push),
                                         penc_size (&self->push));
        if (outcome == PUSH_SENT) {
            mailroom_push_commit (room);
            through = mailroom_fetch_through (room);
            agent->push_blocked = false;
            self->counters.push_frames++;
            continue;
        }
        if (outcome == PUSH_FULL) {
            self->counters.push_deferred++;
            agent->push_blocked = true;
            if (!self->push_timer && self->loop)
                self->push_timer = zloop_timer (self->loop, BROKER_PUSH_RETRY_MS, 1,
                                                s_on_retry, self);
        }
        else {
            self->counters.unroutable++;
            plog_limited (&s_push_limit, 5, PLOG_WARN, "push to %s not sent: %s",
                          agent->id, zmq_strerror (zmq_errno ()));
            //  What went before this frame was handed out all the same.
            s_delivered (self, agent, through);
            session_detach (self, agent, "expired");
            return;
        }
        break;
    }
    s_delivered (self, agent, through);
}

void
push_flush (broker_t *self)
{
    //  Called after the turn's release: the mail a push hands out is in
    //  the journal. The pushes' own records (OP_DELIVER) go with the next
    //  turn's write, or the one-second tick's.
    if (self->failed)
        return;
    agent_t *agent;
    while ((agent = mailroom_next_push (self->mailroom)))
        if (!self->replaying)
            s_push_agent (self, agent);
}

size_t
push_consumers (broker_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < agents_size (self->agents); i++)
        if (agents_at (self->agents, i)->credit)
            count++;
    return count;
}
