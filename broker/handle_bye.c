/*  BYE -> OK: the connection stops speaking for its agent.

    Default: the registration and queued mail stay, so the agent can come
    back (HELLO takes its id over, mail included) and others can still send
    to it. `forget`: the registration, its mail and its channel memberships
    are deleted, and it leaves the world. The OK goes to the connection even
    though it no longer has an agent.
*/
#include "broker_internal.h"
#include "plog.h"

void
handle_bye (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    bool forget = pmsg_bool (req->msg, "forget", false);
    session_detach (self, agent, "left");
    req->agent = NULL;
    if (forget) {
        char why [256];
        uint64_t before = state_seq (self->state);
        if (world_leave (self->world, agent->id, why, sizeof why))
            publish_state_changes (self, before);
        plog_info ("agent %s forgotten", agent->id);
        mailroom_forget (self->mailroom, &agent);
    }
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
