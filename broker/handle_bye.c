// SPDX-License-Identifier: MIT
/*  BYE -> OK: the connection stops speaking for its agent.

    Default: the registration and queued mail stay, so the agent can come
    back (HELLO takes its id over, mail included) and others can still send
    to it. `forget`: the registration, its mail and its channel memberships
    are deleted, and it leaves the world. Either way the id's resume token
    is void (handle_hello.c). The OK goes to the connection even
    though it no longer has an agent.
*/
#include "broker_internal.h"

void
handle_bye (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    bool forget = pmsg_bool (req->msg, "forget", false);
    session_detach (self, agent, "left");
    //  A clean leave gives the id up: the next HELLO needs no resume token.
    agent->token [0] = 0;
    req->agent = NULL;
    if (forget)
        session_forget (self, &agent);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
