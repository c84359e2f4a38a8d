// SPDX-License-Identifier: MIT
/*  parking_fit - would this SEND wait? (parking.h)

    Walks the SEND's items once before they are posted (a name compare per
    item, a lookup when the recipient changes) and sums what each online
    recipient would get, in scratch arrays indexed by the agent's dense
    index, so nothing is allocated per SEND. Then, first come first
    served: a SEND parked earlier for one of those inboxes goes first.
*/
#include <string.h>

#include "broker_internal.h"
#include "parking_int.h"
#include "core/send_item.h"

static bool
s_scratch (parking_t *self, size_t agents)
{
    if (agents <= self->scratch_cap)
        return true;
    size_t cap = self->scratch_cap ? self->scratch_cap : 64;
    while (cap < agents)
        cap *= 2;
    uint64_t *count = realloc (self->need_count, cap * sizeof *count);
    if (count)
        self->need_count = count;
    uint64_t *bytes = realloc (self->need_bytes, cap * sizeof *bytes);
    if (bytes)
        self->need_bytes = bytes;
    uint32_t *stamp = realloc (self->stamp, cap * sizeof *stamp);
    if (stamp)
        self->stamp = stamp;
    agent_t **touched = realloc (self->touched, cap * sizeof *touched);
    if (touched)
        self->touched = touched;
    if (!count || !bytes || !stamp || !touched)
        return false;
    memset (self->stamp + self->scratch_cap, 0, (cap - self->scratch_cap) * sizeof *stamp);
    self->scratch_cap = cap;
    return true;
}

//  Adds a message of `size` bytes to what `agent` would get, if it is
//  online (an offline inbox is not waited for).
static void
s_need_n (parking_t *self, size_t *touched, agent_t *agent, uint64_t count, uint64_t size)
{
    if (!agent->online)
        return;
    size_t i = agent->index;
    if (self->stamp [i] != self->epoch) {
        self->stamp [i] = self->epoch;
        self->need_count [i] = 0;
        self->need_bytes [i] = 0;
        self->touched [(*touched)++] = agent;
    }
    self->need_count [i] += count;
    self->need_bytes [i] += size;
}

static void
s_need (parking_t *self, size_t *touched, agent_t *agent, size_t size)
{
    s_need_n (self, touched, agent, 1, size);
}

static void
s_need_list (parking_t *self, size_t *touched, agent_t *const *list, size_t count,
             const agent_t *skip, uint64_t messages, uint64_t size)
{
    for (size_t i = 0; i < count; i++)
        if (list [i] != skip)
            s_need_n (self, touched, list [i], messages, size);
}

agent_t *
parking_blocked (broker_t *self, agent_t *sender, const msgpack_object *items)
{
    parking_t *p = self->parking;
    size_t agents = agents_size (self->agents);
    if (!s_scratch (p, agents))
        return NULL;            //  out of memory: no waiting, the old behaviour
    if (++p->epoch == 0) {
        memset (p->stamp, 0, p->scratch_cap * sizeof *p->stamp);
        p->epoch = 1;
    }
    size_t touched = 0;
    const char *last = NULL;    //  the last `to` looked up, and what it named
    size_t last_len = 0;
    agent_t *last_agent = NULL;
    char name [PROTO_MAX_NAME + 1];
    //  Items to "all", and runs of items to one channel, are summed first
    //  and added to each recipient once: a batch of posts costs one pass
    //  over the recipients, not one per item.
    uint64_t all_count = 0, all_bytes = 0;
    channel_t *run = NULL;
    uint64_t run_count = 0, run_bytes = 0;
    for (uint32_t i = 0; i < items->via.array.size; i++) {
        send_item_t fields;
        send_item_read (&items->via.array.ptr [i], &fields);
        const msgpack_object *body = fields.body;
        if (!body || (body->type != MSGPACK_OBJECT_STR && body->type != MSGPACK_OBJECT_BIN))
            continue;
        size_t size = body->type == MSGPACK_OBJECT_BIN ? body->via.bin.size : body->via.str.size;
        if (size > self->config.max_body)
            continue;           //  refused whatever the inbox holds
        size_t to_len = fields.to_len, channel_len = fields.channel_len;
        const char *to = fields.to;
        const char *channel = fields.channel;
        if ((to == NULL) == (channel == NULL))
            continue;
        const char *target = to ? to : channel;
        size_t len = to ? to_len : channel_len;
        if (len > PROTO_MAX_NAME)
            continue;
        if (to && len == 3 && memcmp (to, "all", 3) == 0) {
            all_count++;
            all_bytes += size;
            continue;
        }
        if (channel && channel_name_reserved (channel, channel_len))
            continue;
        if (!last || len != last_len || memcmp (target, last, len) != 0) {
            memcpy (name, target, len);
            name [len] = 0;
            last = target;
            last_len = len;
            last_agent = agents_lookup (self->agents, name);
        }
        if (to || (last_agent && fields.resolve)) {
            if (last_agent)
                s_need (p, &touched, last_agent, size);
            continue;
        }
        channel_t *listened = run;
        if (!run || run->name_len != channel_len || memcmp (run->name, channel, channel_len)) {
            memcpy (name, channel, channel_len);
            name [channel_len] = 0;
            listened = channels_lookup (mailroom_channels (self->mailroom), name);
        }
        if (listened != run && run)
            s_need_list (p, &touched, run->listeners, run->listener_count, NULL,
                         run_count, run_bytes);
        if (listened != run)
            run_count = run_bytes = 0;
        run = listened;
        run_count++;
        run_bytes += size;
    }
    if (run)
        s_need_list (p, &touched, run->listeners, run->listener_count, NULL, run_count, run_bytes);
    if (all_count)
        s_need_list (p, &touched, agents_array (self->agents), agents, sender, all_count,
                     all_bytes);
    const mailroom_limits_t *lim = mailroom_limits (self->mailroom);
    //  First come, first served: SENDs parked earlier for an inbox go
    //  first, or a stream of small SENDs could take every bit of room a
    //  big one waits for until its deadline.
    uint64_t mine = p->current && p->current->parked ? p->current->park_seq : UINT64_MAX;
    for (size_t i = 0; i < touched && p->waiting; i++)
        for (size_t r = 0; r < p->count; r++) {
            parked_t *rec = p->list [r];
            if (rec->send && rec->blocked_on == p->touched [i] && rec->send->park_seq < mine)
                return p->touched [i];
        }
    for (size_t i = 0; i < touched; i++) {
        agent_t *agent = p->touched [i];
        size_t count = mailbox_count (agent->inbox);
        uint64_t bytes = mailbox_bytes (agent->inbox);
        bool fits = count + p->need_count [agent->index] <= lim->max_inbox
                 && bytes + p->need_bytes [agent->index] <= lim->max_inbox_bytes;
        //  An inbox that cannot take its share even empty is waited for
        //  until it is empty; then what fits goes in, the rest fails.
        if (!fits && count > 0)
            return agent;
    }
    return NULL;
}
