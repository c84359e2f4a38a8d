// SPDX-License-Identifier: MIT
/*  ACK -> OK: release everything up to `seq` (clamped to what FETCH has
    returned; lower than the current position is ignored). The same as a
    FETCH's `ack`, for an agent that wants to acknowledge without reading. */
#include "broker_internal.h"

void
handle_ack (broker_t *self, request_t *req)
{
    mailroom_ack (self->mailroom, req->agent, pmsg_uint (req->msg, "seq", 0));
    parking_inbox_room (self, req->agent);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
