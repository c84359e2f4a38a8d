// SPDX-License-Identifier: MIT
/*  ACK -> OK: release everything up to `seq` (clamped to what was handed
    out; lower than the current position is ignored). The same as a
    FETCH's `ack`, for an agent that wants to acknowledge without reading. */
#include "broker_internal.h"

void
ack_apply (broker_t *self, agent_t *agent, uint64_t seq)
{
    //  Only a move is an operation: an ack at or below the position (a
    //  client repeating its cumulative ack) changes nothing.
    uint64_t clamped = seq < agent->delivered ? seq : agent->delivered;
    if (clamped <= agent->acked)
        return;
    op_t op = { .kind = OP_ACK, .u = clamped };
    call_apply (self, &op, NULL);
    //  Room in the inbox: SENDs parked on it may go on at the turn's end;
    //  a consumer's window has room again.
    parking_inbox_room (self, agent);
    if (agent->credit)
        mailroom_mark_push (self->mailroom, agent);
}

void
handle_ack (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size, 0);
    ack_apply (self, agent, pmsg_uint (req->msg, "seq", 0));
    call_end (self);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
