// SPDX-License-Identifier: MIT
/*  LISTEN / UNLISTEN -> OK.

    LISTEN creates the channel on first use and is idempotent. From then on
    every post to the channel lands in the agent's inbox at the moment it is
    made, so the agent sees each post made while it listens exactly once,
    however late it fetches. UNLISTEN stops new posts; what is already queued
    stays queued (NOT_LISTENING if it was not listening). Both are
    operations of the core (OP_LISTEN, OP_UNLISTEN).
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

static void
s_listen (broker_t *self, request_t *req, op_kind_t kind)
{
    char name [PROTO_MAX_NAME + 1];
    if (!s_channel_name (self, req, name, sizeof name))
        return;
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, 0);
    op_t op = { .kind = kind, .text = name, .text_len = strlen (name) };
    core_outcome_t out;
    perr_t err = call_apply (self, &op, &out);
    call_end (self);
    if (err)
        dispatch_error (self, req->id, err, "%s", out.why);
    else
        penc_begin (&self->reply, PMSG_OK, req->id, 0);
}

void
handle_listen (broker_t *self, request_t *req)
{
    s_listen (self, req, OP_LISTEN);
}

void
handle_unlisten (broker_t *self, request_t *req)
{
    s_listen (self, req, OP_UNLISTEN);
}
