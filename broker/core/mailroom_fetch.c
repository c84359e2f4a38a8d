// SPDX-License-Identifier: MIT
/*  mailroom_fetch - acknowledgement, FETCH and pushed delivery: what an
    agent is handed out and when it is released. See mailroom.h.

    FETCH and push share one selection (s_select) and one commit
    (s_commit): a selection picks inbox entries without changing anything,
    the caller encodes them (mailroom_fetch_next), and the commit moves the
    agent's cursor, its `delivered` clamp and its out counts past them. A
    FETCH commits at once; a push commits only once its frame is on the
    wire, so a send the consumer's full pipe refuses hands nothing out and
    the same mail is tried again later.

    Credit (PROTOCOL.md, CONSUME): a push takes an entry only while the
    entries handed out and not acknowledged stay within the agent's window
    in messages and body bytes (one message always fits when nothing is
    out, so a body larger than the byte window still moves). Those counts
    are kept as the cursor moves and as pops release entries
    (mailroom_pop), never recounted: the check is two compares an entry.
*/
#include <assert.h>
#include <string.h>

#include "mailroom_int.h"

void
mailroom_ack (mailroom_t *self, agent_t *agent, uint64_t ack)
{
    assert (agent);
    if (ack > agent->delivered)
        ack = agent->delivered;
    if (ack <= agent->acked)
        return;
    //  Journal hook: a durable broker records the agent's new position here.
    agent->acked = ack;
    mail_t *head;
    while ((head = mailbox_head (agent->inbox)) && head->seq <= ack)
        mailroom_release (self, mailroom_pop (agent));
}

//  Picks what a FETCH or a push hands out, from inbox index `start`: at
//  most `max` live messages and about `max_bytes` encoded (at least one),
//  within the agent's credit when `window`. Tombstones (posts their
//  channel dropped) are skipped but counted as handed out when a live
//  message follows them, so the ack of that message releases them too;
//  the selection never ends on one. Changes nothing but the walk's state.
static size_t
s_select (mailroom_t *self, agent_t *agent, size_t start, size_t max, size_t max_bytes,
          bool window)
{
    mailbox_t *box = agent->inbox;
    size_t count = mailbox_count (box), scan = start, end = start, live = 0, bytes = 0;
    uint64_t body = 0, end_body = 0;
    while (scan < count && live < max) {
        mail_t *mail = mailbox_at (box, scan);
        body += mail->body_len;
        if (!mail->dropped) {
            //  Keys, seq, ts and headers: under 64 bytes an item.
            size_t cost = 64 + mail->from_len + mail->to_len + mail->body_len;
            if (live > 0 && bytes + cost > max_bytes)
                break;
            if (window) {
                size_t out_before = agent->out_count + (scan - start);
                if (out_before + 1 > agent->credit)
                    break;
                if (out_before > 0 && agent->out_bytes + body > agent->credit_bytes)
                    break;
            }
            bytes += cost;
            live++;
            end = scan + 1;
            end_body = body;
        }
        scan++;
    }
    self->fetch_agent = agent;
    self->fetch_start = self->fetch_pos = start;
    self->fetch_scan = end;
    self->fetch_left = self->fetch_live = live;
    self->fetch_bytes = end_body;
    return live;
}

//  The selection is handed out. `restart`: a plain FETCH, which re-reads
//  from the head, so the out counts are exactly the selection.
static void
s_commit (mailroom_t *self, bool restart)
{
    agent_t *agent = self->fetch_agent;
    size_t taken = self->fetch_scan - self->fetch_start;
    self->fetch_through = 0;
    if (taken) {
        agent->cursor = mailbox_at (agent->inbox, self->fetch_scan - 1)->seq;
        //  `delivered` (the ack clamp) is the core's: the edge moves it
        //  with OP_DELIVER (mailroom_deliver) once this is handed out.
        self->fetch_through = agent->cursor;
    }
    else
    if (restart || agent->cursor < agent->acked)
        agent->cursor = agent->acked;
    if (restart) {
        agent->out_count = taken;
        agent->out_bytes = self->fetch_bytes;
    }
    else {
        agent->out_count += taken;
        agent->out_bytes += self->fetch_bytes;
    }
    self->counters.fetched += self->fetch_live;
}

//  Where a walk that continues after the cursor starts. The cursor is a
//  seq, not an index, so acks and drop-oldest popping the head cannot move
//  it; finding it is a binary search.
static size_t
s_after_cursor (agent_t *agent)
{
    return agent->cursor > agent->acked ? mailbox_find_after (agent->inbox, agent->cursor) : 0;
}

size_t
mailroom_fetch_begin (mailroom_t *self, agent_t *agent, size_t max, size_t max_bytes,
                      bool stream)
{
    assert (agent);
    //  Plain FETCH reads from the head (everything there is > acked), and
    //  so hands the unacknowledged mail out again after a lost reply; a
    //  streaming one continues after what was handed out before.
    size_t live = s_select (self, agent, stream ? s_after_cursor (agent) : 0, max, max_bytes,
                            false);
    s_commit (self, !stream);
    return live;
}

size_t
mailroom_push_begin (mailroom_t *self, agent_t *agent, size_t max, size_t max_bytes)
{
    assert (agent);
    if (!agent->credit || agent->out_count >= agent->credit) {
        self->fetch_agent = agent;
        self->fetch_left = self->fetch_live = 0;
        self->fetch_start = self->fetch_pos = self->fetch_scan = 0;
        return 0;
    }
    return s_select (self, agent, s_after_cursor (agent), max, max_bytes, true);
}

void
mailroom_push_commit (mailroom_t *self)
{
    assert (self->fetch_agent);
    s_commit (self, false);
    self->counters.pushed += self->fetch_live;
}

const mail_t *
mailroom_fetch_next (mailroom_t *self)
{
    while (self->fetch_left && self->fetch_pos < self->fetch_scan) {
        mail_t *mail = mailbox_at (self->fetch_agent->inbox, self->fetch_pos++);
        if (!mail->dropped) {
            self->fetch_left--;
            return mail;
        }
    }
    return NULL;
}

size_t
mailroom_fetch_remaining (mailroom_t *self)
{
    assert (self->fetch_agent);
    mailbox_t *box = self->fetch_agent->inbox;
    size_t count = mailbox_count (box), scan = self->fetch_scan;
    if (scan < self->fetch_start)
        scan = self->fetch_start;
    size_t pending = count - scan;
    //  Mail its channel dropped (drop-oldest) stays in the inbox until
    //  acknowledged but will never be handed out: not pending. Counting
    //  them means a walk over the rest of the inbox, done only while such
    //  tombstones exist anywhere (never under the default reject policy).
    if (self->tombstones)
        for (size_t i = scan; i < count; i++)
            if (mailbox_at (box, i)->dropped)
                pending--;
    return pending;
}

//  ---------------------------------------------------------------------
//  Consumers due a push this turn

uint64_t
mailroom_fetch_through (mailroom_t *self)
{
    return self->fetch_through;
}

void
mailroom_deliver (mailroom_t *self, agent_t *agent, uint64_t seq)
{
    assert (agent);
    if (seq > agent->delivered && seq <= self->counters.mail_seq)
        agent->delivered = seq;
}

void
mailroom_mark_push (mailroom_t *self, agent_t *agent)
{
    if (agent->push_pending)
        return;
    if (self->push_count == self->push_cap) {
        size_t cap = self->push_cap ? 2 * self->push_cap : 16;
        agent_t **grown = realloc (self->push, cap * sizeof (agent_t *));
        if (!grown)
            mailroom_oom ("marking a push");
        self->push = grown;
        self->push_cap = cap;
    }
    agent->push_pending = true;
    self->push [self->push_count++] = agent;
}

agent_t *
mailroom_next_push (mailroom_t *self)
{
    if (self->push_next == self->push_count) {
        self->push_next = self->push_count = 0;
        return NULL;
    }
    agent_t *agent = self->push [self->push_next++];
    agent->push_pending = false;
    return agent;
}

void
mailroom_unmark_push (mailroom_t *self, agent_t *agent)
{
    if (!agent->push_pending)
        return;
    for (size_t i = self->push_next; i < self->push_count; i++)
        if (self->push [i] == agent) {
            memmove (&self->push [i], &self->push [i + 1],
                     (self->push_count - i - 1) * sizeof (agent_t *));
            self->push_count--;
            break;
        }
    agent->push_pending = false;
}
