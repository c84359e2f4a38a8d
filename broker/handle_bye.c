// SPDX-License-Identifier: MIT
/*  BYE -> OK: the connection stops speaking for its agent.

    Default: the registration and queued mail stay, so the agent can come
    back (HELLO takes its id over, mail included) and others can still send
    to it. `forget`: the registration, its mail and its channel memberships
    are deleted, and it leaves the world (OP_FORGET). Either way the id's
    resume token is void (OP_BYE: the next HELLO needs none). The OK goes
    to the connection even though it no longer has an agent.
*/
#include "broker_internal.h"

void
handle_bye (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    bool forget = pmsg_bool (req->msg, "forget", false);
    //  Outside the call: ending the session applies a SEND it had parked,
    //  a call of its own (parking.h).
    session_detach (self, agent, "left");
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size, 0);
    if (!call_reserve (self, req->id)) {
        call_end (self);
        return;
    }
    op_t bye = { .kind = OP_BYE };
    call_apply (self, &bye, NULL);
    req->agent = NULL;
    if (forget) {
        //  As when the timer forgets it: watchers drop the id.
        publish_agent_event (self, agent, "forgotten");
        session_forget (self, &agent);
    }
    call_end (self);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
