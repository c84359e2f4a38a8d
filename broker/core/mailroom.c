// SPDX-License-Identifier: MIT
/*  mailroom - posting, fan-out, bounds, channels, restore. See mailroom.h.

    Cost per message: one malloc (mail_new), one pointer store per
    recipient, and a hash lookup for a named recipient or channel. No scan
    over queued mail anywhere: inboxes are rings read from the head, channel
    pending lists are intrusive. Ack, FETCH and push are in mailroom_fetch.c.
*/
#include <assert.h>
#include <string.h>

#include "mailroom_int.h"

mailroom_t *
mailroom_new (agents_t *agents, const mailroom_limits_t *limits)
{
    assert (agents && limits);
    mailroom_t *self = calloc (1, sizeof (mailroom_t));
    if (!self)
        return NULL;
    self->agents = agents;
    self->limits = *limits;
    self->channels = channels_new (limits->max_channels);
    self->wake_cap = agents_max (agents);
    self->wake = calloc (self->wake_cap, sizeof (agent_t *));
    self->push = calloc (self->wake_cap, sizeof (agent_t *));
    self->push_cap = self->wake_cap;
    if (!self->channels || !self->wake || !self->push) {
        channels_destroy (&self->channels);
        free (self->wake);
        free (self->push);
        free (self);
        return NULL;
    }
    return self;
}

void
mailroom_destroy (mailroom_t **self_p)
{
    assert (self_p);
    mailroom_t *self = *self_p;
    if (self) {
        for (size_t i = 0; i < agents_size (self->agents); i++) {
            agent_t *agent = agents_at (self->agents, i);
            mail_t *mail;
            while ((mail = mailroom_pop (agent)))
                mailroom_release (self, mail);
            zlistx_purge (agent->channels);
        }
        channels_destroy (&self->channels);
        free (self->errors);
        free (self->wake);
        free (self->push);
        free (self);
        *self_p = NULL;
    }
}

const mailroom_limits_t *
mailroom_limits (mailroom_t *self)
{
    return &self->limits;
}

void
mailroom_set_limits (mailroom_t *self, const mailroom_limits_t *limits)
{
    assert (self && limits);
    self->limits = *limits;
    channels_set_max (self->channels, limits->max_channels);
}

void
mailroom_set_time (mailroom_t *self, int64_t now_us)
{
    assert (self);
    self->now_us = now_us;
}

void
mailroom_oom (const char *what)
{
    //  The core's operations do not fail for memory (core.h): the live run
    //  and its replay must not differ, and the journal has everything
    //  acknowledged.
    fprintf (stderr, "parley-broker: out of memory %s; stopping (the journal has every "
             "acknowledged change)\n", what);
    abort ();
}

const mailroom_counters_t *
mailroom_counters (mailroom_t *self)
{
    return &self->counters;
}

channels_t *
mailroom_channels (mailroom_t *self)
{
    return self->channels;
}

//  ---------------------------------------------------------------------
//  Item errors

void
mailroom_errors_reset (mailroom_t *self)
{
    self->error_count = 0;
}

size_t
mailroom_errors_count (mailroom_t *self)
{
    return self->error_count;
}

const mail_error_t *
mailroom_error_at (mailroom_t *self, size_t index)
{
    assert (index < self->error_count);
    return &self->errors [index];
}

static void
s_error (mailroom_t *self, uint32_t index, perr_t code, const agent_t *agent)
{
    self->counters.rejected++;
    if (self->error_count == self->error_cap) {
        size_t cap = self->error_cap ? self->error_cap * 2 : 16;
        mail_error_t *grown = realloc (self->errors, cap * sizeof (mail_error_t));
        if (!grown)
            return;             //  the error is still counted; SENT shows seq 0
        self->errors = grown;
        self->error_cap = cap;
    }
    self->errors [self->error_count++] = (mail_error_t) { index, code, agent };
}

void
mailroom_reject (mailroom_t *self, uint32_t index, perr_t code)
{
    s_error (self, index, code, NULL);
}

//  ---------------------------------------------------------------------
//  References

void
mailroom_release (mailroom_t *self, mail_t *mail)
{
    assert (mail->refs > 0);
    if (--mail->refs)
        return;
    if (mail->channel && !mail->dropped)
        channel_unlink (mail->channel, mail);
    if (mail->dropped)
        self->tombstones--;
    self->counters.queued--;
    self->counters.queued_bytes -= mail->body_len;
    self->counters.queued_memory -= mail_footprint (mail);
    mail_free (&mail);
}

//  The agent has new mail: the edge tells it at the end of the turn
//  (MAIL_READY, or a push to a consumer).
static void
s_wake (mailroom_t *self, agent_t *agent, uint64_t seq)
{
    agent->wake_seq = seq;
    if (agent->wake_pending)
        return;
    if (self->wake_count == self->wake_cap) {
        size_t cap = self->wake_cap ? 2 * self->wake_cap : 16;
        agent_t **grown = realloc (self->wake, cap * sizeof (agent_t *));
        if (!grown)
            mailroom_oom ("marking a wake-up");
        self->wake = grown;
        self->wake_cap = cap;
    }
    agent->wake_pending = true;
    self->wake [self->wake_count++] = agent;
}

agent_t *
mailroom_next_wakeup (mailroom_t *self)
{
    if (self->wake_next == self->wake_count) {
        self->wake_next = self->wake_count = 0;
        return NULL;
    }
    agent_t *agent = self->wake [self->wake_next++];
    agent->wake_pending = false;
    return agent;
}

//  True when the inbox can take `bytes` more (after dropping the oldest
//  under DROP_OLDEST).
static bool
s_make_room (mailroom_t *self, agent_t *agent, size_t bytes)
{
    const mailroom_limits_t *lim = &self->limits;
    if (bytes > lim->max_inbox_bytes)
        return false;           //  could never fit
    mailbox_t *box = agent->inbox;
    if (mailbox_count (box) < lim->max_inbox
    &&  mailbox_bytes (box) + bytes <= lim->max_inbox_bytes)
        return true;
    if (lim->overflow != OVERFLOW_DROP_OLDEST)
        return false;
    while (mailbox_count (box) >= lim->max_inbox
    ||     mailbox_bytes (box) + bytes > lim->max_inbox_bytes) {
        mail_t *oldest = mailroom_pop (agent);
        assert (oldest);
        //  A post its channel already dropped was counted then.
        if (!oldest->dropped)
            self->counters.dropped++;
        //  The agent never acknowledged it; moving its acked position
        //  keeps "FETCH returns seq > acked" true without a gap.
        if (oldest->seq > agent->acked)
            agent->acked = oldest->seq;
        if (oldest->seq > agent->delivered)
            agent->delivered = oldest->seq;
        mailroom_release (self, oldest);
    }
    return true;
}

static bool
s_fits (mailroom_t *self, agent_t *agent, size_t bytes)
{
    const mailroom_limits_t *lim = &self->limits;
    if (self->limits.overflow == OVERFLOW_DROP_OLDEST)
        return bytes <= lim->max_inbox_bytes;
    return mailbox_count (agent->inbox) < lim->max_inbox
        && mailbox_bytes (agent->inbox) + bytes <= lim->max_inbox_bytes;
}

static mail_t *
s_new_mail (mailroom_t *self, mail_kind_t kind, agent_t *from,
            const char *to, size_t to_len, const void *body, size_t body_len, bool bin)
{
    mail_t *mail = mail_new (self->counters.mail_seq + 1, self->now_us, kind,
                             from->id, from->id_len, to, to_len, body, body_len, bin);
    if (!mail)
        mailroom_oom ("storing a message");
    self->counters.mail_seq++;
    self->counters.accepted++;
    self->counters.queued++;
    self->counters.queued_bytes += body_len;
    self->counters.queued_memory += mail_footprint (mail);
    return mail;
}

//  Queues the mail in the agent's inbox. False when the inbox could not
//  grow (out of memory): then item `index` gets an INTERNAL error naming
//  the agent, so the sender learns this recipient did not get it.
static bool
s_place (mailroom_t *self, uint32_t index, agent_t *agent, mail_t *mail)
{
    if (!s_make_room (self, agent, mail->body_len))
        return false;           //  checked by the caller already
    if (!mailbox_push (agent->inbox, mail))
        mailroom_oom ("queueing a message");
    mail->refs++;
    self->counters.delivered++;
    s_wake (self, agent, mail->seq);
    return true;
}

//  A message that ended with no holder (no recipients) is released at once.
static void
s_settle (mailroom_t *self, mail_t *mail)
{
    if (mail->refs == 0) {
        mail->refs = 1;
        mailroom_release (self, mail);
    }
}

//  ---------------------------------------------------------------------
//  Posting

//  A recipient or channel name from the wire as a C string in `buf`
//  (PROTO_MAX_NAME + 1 bytes); false, with a BAD_NAME item error, if too long.
static bool
s_name_copy (mailroom_t *self, uint32_t index, const char *name, size_t len, char *buf)
{
    if (len > PROTO_MAX_NAME) {
        s_error (self, index, PERR_BAD_NAME, NULL);
        return false;
    }
    memcpy (buf, name, len);
    buf [len] = 0;
    return true;
}

//  The global bound: the memory of every queued message together (a
//  fan-out message is stored once, so counted once). Refused under either
//  overflow policy: dropping someone else's mail to make room would be a
//  surprise.
static bool
s_room_overall (mailroom_t *self, uint32_t index, size_t body_len)
{
    if (self->counters.queued_memory + MAIL_FOOTPRINT_MAX (body_len) <= self->limits.max_queued_bytes)
        return true;
    s_error (self, index, PERR_QUEUES_FULL, NULL);
    return false;
}

uint64_t
mailroom_post_direct (mailroom_t *self, uint32_t index, agent_t *from,
                      const char *to, size_t to_len, const void *body, size_t body_len, bool bin)
{
    char name [PROTO_MAX_NAME + 1];
    if (!s_name_copy (self, index, to, to_len, name))
        return 0;
    if (!s_room_overall (self, index, body_len))
        return 0;
    agent_t *agent = agents_lookup (self->agents, name);
    if (!agent) {
        s_error (self, index, PERR_UNKNOWN_RECIPIENT, NULL);
        return 0;
    }
    if (!s_fits (self, agent, body_len)) {
        s_error (self, index, PERR_INBOX_FULL, agent);
        return 0;
    }
    mail_t *mail = s_new_mail (self, MAIL_DIRECT, from, agent->id, agent->id_len,
                               body, body_len, bin);
    uint64_t seq = mail->seq;
    bool placed = s_place (self, index, agent, mail);
    s_settle (self, mail);
    if (!placed) {
        self->counters.accepted--;      //  it reached nobody: a rejected item
        return 0;
    }
    return seq;
}

//  Fan-out pass 1 ("all" and channels): who among `count` recipients
//  (`skip` aside, may be NULL) can take `body_len` bytes. Under REJECT
//  each full inbox is an item error naming that agent, and the others
//  still get the message. False when nobody can take it but someone was
//  refused (the item is then rejected); with no recipient at all the
//  message is still accepted (sequenced, held by nobody).
static bool
s_fan_out_check (mailroom_t *self, uint32_t index, agent_t *const *list, size_t count,
                 const agent_t *skip, size_t body_len)
{
    size_t reachable = 0, refused = 0;
    for (size_t i = 0; i < count; i++) {
        if (list [i] == skip)
            continue;
        if (s_fits (self, list [i], body_len))
            reachable++;
        else {
            s_error (self, index, PERR_INBOX_FULL, list [i]);
            refused++;
        }
    }
    return reachable > 0 || refused == 0;
}

//  Fan-out pass 2: queue the mail for every recipient pass 1 found room for.
static void
s_fan_out_place (mailroom_t *self, uint32_t index, agent_t *const *list, size_t count,
                 const agent_t *skip, mail_t *mail)
{
    for (size_t i = 0; i < count; i++)
        if (list [i] != skip && s_fits (self, list [i], mail->body_len))
            s_place (self, index, list [i], mail);
}

uint64_t
mailroom_post_all (mailroom_t *self, uint32_t index, agent_t *from,
                   const void *body, size_t body_len, bool bin)
{
    agent_t *const *agents = agents_array (self->agents);
    size_t count = agents_size (self->agents);
    if (!s_room_overall (self, index, body_len))
        return 0;
    if (!s_fan_out_check (self, index, agents, count, from, body_len))
        return 0;
    mail_t *mail = s_new_mail (self, MAIL_ALL, from, "all", 3, body, body_len, bin);
    uint64_t seq = mail->seq;
    s_fan_out_place (self, index, agents, count, from, mail);
    s_settle (self, mail);
    return seq;
}

//  Drops the channel's oldest pending post: it stays in inboxes as a
//  tombstone that FETCH skips and ACK releases.
static void
s_channel_drop_oldest (mailroom_t *self, channel_t *channel)
{
    mail_t *oldest = channel->oldest;
    assert (oldest);
    channel_unlink (channel, oldest);
    oldest->dropped = true;
    self->tombstones++;
    channel->dropped++;
    self->counters.dropped += oldest->refs;
}

uint64_t
mailroom_post_channel (mailroom_t *self, uint32_t index, agent_t *from,
                       const char *name, size_t name_len, const void *body, size_t body_len, bool bin)
{
    char cname [PROTO_MAX_NAME + 1];
    if (!s_name_copy (self, index, name, name_len, cname))
        return 0;
    if (!s_room_overall (self, index, body_len))
        return 0;
    channel_t *channel = channels_ensure (self->channels, cname, NULL);
    if (!channel) {
        s_error (self, index, PERR_TOO_MANY_CHANNELS, NULL);
        return 0;
    }
    const mailroom_limits_t *lim = &self->limits;
    if (body_len > lim->max_channel_bytes || lim->max_channel == 0) {
        s_error (self, index, PERR_CHANNEL_FULL, NULL);
        return 0;
    }
    bool full = channel->pending >= lim->max_channel
             || channel->pending_bytes + body_len > lim->max_channel_bytes;
    if (full && lim->overflow != OVERFLOW_DROP_OLDEST) {
        s_error (self, index, PERR_CHANNEL_FULL, NULL);
        return 0;
    }
    while (channel->pending >= lim->max_channel
    ||     channel->pending_bytes + body_len > lim->max_channel_bytes)
        s_channel_drop_oldest (self, channel);

    //  The sender gets its own post when it listens: no one is skipped.
    if (!s_fan_out_check (self, index, channel->listeners, channel->listener_count,
                          NULL, body_len))
        return 0;
    mail_t *mail = s_new_mail (self, MAIL_CHANNEL, from, channel->name, channel->name_len,
                               body, body_len, bin);
    uint64_t seq = mail->seq;
    channel->posts++;
    channel_link (channel, mail);
    s_fan_out_place (self, index, channel->listeners, channel->listener_count, NULL, mail);
    s_settle (self, mail);
    return seq;
}

//  ---------------------------------------------------------------------
//  Channels and forgetting

perr_t
mailroom_listen (mailroom_t *self, agent_t *agent, const char *name)
{
    channel_t *channel = channels_ensure (self->channels, name, NULL);
    if (!channel)
        return PERR_TOO_MANY_CHANNELS;
    bool oom;
    if (channel_listen (channel, agent, &oom))
        zlistx_add_end (agent->channels, channel);
    if (oom)
        mailroom_oom ("adding a listener");
    return PERR_NONE;
}

perr_t
mailroom_unlisten (mailroom_t *self, agent_t *agent, const char *name)
{
    channel_t *channel = channels_lookup (self->channels, name);
    if (!channel || !channel_unlisten (channel, agent))
        return PERR_NOT_LISTENING;
    void *handle = zlistx_find (agent->channels, channel);
    if (handle)
        zlistx_delete (agent->channels, handle);
    return PERR_NONE;
}

void
mailroom_forget (mailroom_t *self, agent_t **agent_p)
{
    assert (agent_p && *agent_p);
    agent_t *agent = *agent_p;
    mail_t *mail;
    while ((mail = mailroom_pop (agent)))
        mailroom_release (self, mail);
    channel_t *channel;
    while ((channel = zlistx_first (agent->channels))) {
        channel_unlisten (channel, agent);
        zlistx_delete (agent->channels, zlistx_cursor (agent->channels));
    }
    if (agent->wake_pending) {
        for (size_t i = self->wake_next; i < self->wake_count; i++)
            if (self->wake [i] == agent) {
                memmove (&self->wake [i], &self->wake [i + 1],
                         (self->wake_count - i - 1) * sizeof (agent_t *));
                self->wake_count--;
                break;
            }
        agent->wake_pending = false;
    }
    mailroom_unmark_push (self, agent);
    agents_remove (self->agents, agent_p);
}

//  ---------------------------------------------------------------------
//  Restore (the journal's snapshot)

uint64_t
mailroom_restore (mailroom_t *self, uint64_t seq, int64_t ts, mail_kind_t kind,
                  const char *from, size_t from_len, const char *to, size_t to_len,
                  const void *body, size_t body_len, bool bin, bool dropped,
                  agent_t *const *holders, size_t holder_count)
{
    assert (self);
    if (holder_count == 0)
        return 0;
    mail_t *mail = mail_new (seq, ts, kind, from, from_len, to, to_len, body, body_len, bin);
    if (!mail)
        return 0;
    self->counters.queued++;
    self->counters.queued_bytes += body_len;
    self->counters.queued_memory += mail_footprint (mail);
    if (seq > self->counters.mail_seq)
        self->counters.mail_seq = seq;
    //  Snapshots list messages in seq order, so each inbox and channel
    //  receives them in order, as the rings and channel lists require.
    for (size_t i = 0; i < holder_count; i++)
        if (mailbox_push (holders [i]->inbox, mail)) {
            mail->refs++;
            if (seq > holders [i]->wake_seq)
                holders [i]->wake_seq = seq;
        }
    if (dropped && mail->refs) {
        //  A tombstone is in no channel's pending list (s_channel_drop_oldest).
        mail->dropped = true;
        self->tombstones++;
    }
    else
    if (kind == MAIL_CHANNEL) {
        char name [PROTO_MAX_NAME + 1];
        size_t len = to_len > PROTO_MAX_NAME ? PROTO_MAX_NAME : to_len;
        memcpy (name, to, len);
        name [len] = 0;
        channel_t *channel = channels_ensure (self->channels, name, NULL);
        if (channel)
            channel_link (channel, mail);
    }
    s_settle (self, mail);
    return seq;
}

void
mailroom_restore_seq (mailroom_t *self, uint64_t mail_seq)
{
    assert (self);
    if (mail_seq > self->counters.mail_seq)
        self->counters.mail_seq = mail_seq;
}
