/*  HEARTBEAT -> OK. The dispatcher already refreshed the agent's liveness
    (every request does); this request exists for agents with nothing else
    to say. */
#include "broker_internal.h"

void
handle_heartbeat (broker_t *self, request_t *req)
{
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
