// SPDX-License-Identifier: MIT
/*  ACK -> OK: release everything up to `seq` (clamped to what FETCH has
    returned; lower than the current position is ignored). The same as a
    FETCH's `ack`, for an agent that wants to acknowledge without reading. */
#include "broker_internal.h"

void
ack_apply (broker_t *self, agent_t *agent, uint64_t seq)
{
    mailroom_ack (self->mailroom, agent, seq);
    //  Room in the inbox: SENDs parked on it may go on at the turn's end.
    parking_inbox_room (self, agent);
}

void
handle_ack (broker_t *self, request_t *req)
{
    ack_apply (self, req->agent, pmsg_uint (req->msg, "seq", 0));
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
