// SPDX-License-Identifier: MIT
/*  core_send - OP_SEND: the items of a SEND (or a STEP's `messages`)
    posted from one agent.

    Items are independent: each is posted on its own (mailroom.c), good
    ones are accepted even when others fail, and the outcome has one seq
    per item (0 if refused) while the mailroom keeps one error per refused
    item, or per recipient a fan-out could not reach. The sender is the
    operation's agent: there is no `from` to forge.

    An item with `channel` and `resolve` is addressed by a bare name: an
    agent if one is registered under it, else a channel with a listener,
    else NO_SUCH_TARGET (PROTOCOL.md, SEND). Only the core knows both
    registrations and channels at the moment of the post, so the sender
    does not guess from a team list that may be stale.

    Every accepted message takes the next mail seq and the operation's
    time, so the same operation on the same core posts the same messages
    with the same seqs, whatever the clock says at a replay.
*/
#include <string.h>

#include "core_int.h"
#include "send_item.h"

static uint64_t
s_post (core_t *self, agent_t *from, uint32_t index, const msgpack_object *item)
{
    mailroom_t *room = self->mailroom;
    send_item_t fields;
    send_item_read (item, &fields);
    const msgpack_object *body = fields.body;
    size_t to_len = fields.to_len, channel_len = fields.channel_len;
    const char *to = fields.to;
    const char *channel = fields.channel;
    if (!body || (body->type != MSGPACK_OBJECT_STR && body->type != MSGPACK_OBJECT_BIN)
    ||  (to == NULL) == (channel == NULL)) {
        mailroom_reject (room, index, PERR_BAD_FIELD);
        return 0;
    }
    //  str and bin share the layout of their {size, ptr} in msgpack_object.
    bool bin = body->type == MSGPACK_OBJECT_BIN;
    const char *data = bin ? body->via.bin.ptr : body->via.str.ptr;
    size_t size = bin ? body->via.bin.size : body->via.str.size;
    if (size > self->limits.mail.max_body) {
        mailroom_reject (room, index, PERR_TOO_LARGE);
        return 0;
    }
    if (to) {
        if (to_len == 3 && memcmp (to, "all", 3) == 0)
            return mailroom_post_all (room, index, from, data, size, bin);
        return mailroom_post_direct (room, index, from, to, to_len, data, size, bin);
    }
    if (channel_name_reserved (channel, channel_len)) {
        mailroom_reject (room, index, PERR_RESERVED_NAME);
        return 0;
    }
    if (fields.resolve) {
        //  The schema bounds names to PROTO_MAX_NAME bytes.
        char name [PROTO_MAX_NAME + 1];
        snprintf (name, sizeof name, "%.*s", (int) channel_len, channel);
        if (agents_lookup (self->agents, name))
            return mailroom_post_direct (room, index, from, channel, channel_len, data, size, bin);
        channel_t *listened = channels_lookup (mailroom_channels (room), name);
        if (!listened || listened->listener_count == 0) {
            mailroom_reject (room, index, PERR_NO_SUCH_TARGET);
            return 0;
        }
    }
    return mailroom_post_channel (room, index, from, channel, channel_len, data, size, bin);
}

perr_t
core_send (core_t *self, agent_t *from, const op_t *op, core_outcome_t *out)
{
    const msgpack_object *items = op->frame ? pmsg_field (op->frame, "messages") : NULL;
    if (!items || items->type != MSGPACK_OBJECT_ARRAY) {
        snprintf (out->why, sizeof out->why, "SEND without messages");
        return out->err = PERR_BAD_FIELD;
    }
    uint32_t count = items->via.array.size;
    mailroom_errors_reset (self->mailroom);
    out->accepted = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t seq = s_post (self, from, i, &items->via.array.ptr [i]);
        if (seq)
            out->accepted++;
        if (out->seqs && i < out->seq_room)
            out->seqs [i] = seq;
    }
    return PERR_NONE;
}
