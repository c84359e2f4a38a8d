// SPDX-License-Identifier: MIT
/*  LISTEN / UNLISTEN -> OK.

    LISTEN creates the channel on first use and is idempotent. From then on
    every post to the channel lands in the agent's inbox at the moment it is
    made, so the agent sees each post made while it listens exactly once,
    however late it fetches. UNLISTEN stops new posts; what is already queued
    stays queued (NOT_LISTENING if it was not listening).
*/
#include <string.h>

#include "broker_internal.h"

static bool
s_channel_name (broker_t *self, request_t *req, char *name, size_t size)
{
    if (!pmsg_strcpy (req->msg, "channel", name, size)) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "%s needs a channel name",
                        pmsg_type_name (req->type));
        return false;
    }
    if (channel_name_reserved (name, strlen (name))) {
        dispatch_error (self, req->id, PERR_RESERVED_NAME,
                        "\"%s\" is reserved and cannot name a channel", name);
        return false;
    }
    return true;
}

void
handle_listen (broker_t *self, request_t *req)
{
    char name [PROTO_MAX_NAME + 1];
    if (!s_channel_name (self, req, name, sizeof name))
        return;
    perr_t err = mailroom_listen (self->mailroom, req->agent, name);
    if (err == PERR_TOO_MANY_CHANNELS)
        dispatch_error (self, req->id, err, "the broker's limit of %zu channels is reached",
                        mailroom_limits (self->mailroom)->max_channels);
    else
    if (err)
        dispatch_error (self, req->id, err, "out of memory adding a listener to %s", name);
    else
        penc_begin (&self->reply, PMSG_OK, req->id, 0);
}

void
handle_unlisten (broker_t *self, request_t *req)
{
    char name [PROTO_MAX_NAME + 1];
    if (!s_channel_name (self, req, name, sizeof name))
        return;
    if (mailroom_unlisten (self->mailroom, req->agent, name))
        dispatch_error (self, req->id, PERR_NOT_LISTENING,
                        "%s does not listen to channel %s", req->agent->id, name);
    else
        penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
