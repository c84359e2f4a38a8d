// SPDX-License-Identifier: MIT
/*  mailroom - the seeds' message queue, done right.

    Accepts mail (to one agent, to "all", to a channel), places a reference
    into every recipient's inbox at once, in broker-wide seq order, and
    releases it when each recipient acknowledges past it. Nothing is removed
    by reading: FETCH reads from the inbox head, ACK pops it. So "all" reaches
    every registered agent exactly once, and a lost FETCH reply is simply
    read again.

    Bounds (all explicit, all counted): max body; per inbox count and bytes;
    per channel pending count and bytes; number of channels. On a full inbox
    or channel the policy is either REJECT (the sender gets INBOX_FULL or
    CHANNEL_FULL for that item, per recipient in a fan-out) or DROP_OLDEST
    (the oldest unacknowledged mail makes room; every drop is counted).

    Durability: the journal logs the requests that reach the mailroom and
    replays them through it (durable.c); a snapshot puts queued messages
    back with mailroom_restore, in seq order, with their holders.

    Wake-ups: every agent that gets mail is marked once per loop turn; the
    broker drains the marks (mailroom_next_wakeup) and publishes MAIL_READY.
    An agent with a push subscription (CONSUME) is marked for a push
    instead (mailroom_next_push), and its acks mark it again: the broker
    pushes its mail at the end of the turn within its credit (push.c).
*/
#ifndef PARLEY_BROKER_MAILROOM_H
#define PARLEY_BROKER_MAILROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "perr.h"
#include "agents.h"
#include "channels.h"

typedef enum { OVERFLOW_REJECT = 0, OVERFLOW_DROP_OLDEST } overflow_t;

typedef struct {
    size_t max_inbox;               //  messages per inbox
    uint64_t max_inbox_bytes;       //  body bytes per inbox
    size_t max_channel;             //  pending posts per channel
    uint64_t max_channel_bytes;     //  pending body bytes per channel
    size_t max_channels;
    size_t max_body;
    uint64_t max_queued_bytes;      //  bound on counters.queued_memory
    overflow_t overflow;
} mailroom_limits_t;

//  One item error of a SEND: the item index, the code, and (for a fan-out)
//  the recipient that could not be reached.
typedef struct {
    uint32_t index;
    perr_t code;
    const agent_t *agent;       //  NULL when the whole item failed
} mail_error_t;

typedef struct {
    uint64_t mail_seq;          //  latest seq handed out
    uint64_t accepted;          //  messages accepted (msgs_in)
    uint64_t fetched;           //  mail items handed out, FETCH or push (msgs_out)
    uint64_t delivered;         //  inbox placements
    uint64_t dropped;           //  placements removed unread by drop-oldest
    uint64_t rejected;          //  items or placements refused (full, unknown...)
    uint64_t queued;            //  messages alive (not released by every recipient)
    uint64_t queued_bytes;
    uint64_t queued_memory;     //  their allocations (bodies + bookkeeping)
    uint64_t pushed;            //  of fetched, the items pushed (MAIL_PUSH)
} mailroom_counters_t;

typedef struct _mailroom_t mailroom_t;

mailroom_t *mailroom_new (agents_t *agents, const mailroom_limits_t *limits);
//  Releases every queued message (all inboxes are emptied).
void mailroom_destroy (mailroom_t **self_p);

//  Stops the process: an operation of the core could not get memory
//  (core.h: the live run and its replay must not differ).
void mailroom_oom (const char *what) __attribute__ ((noreturn));
const mailroom_limits_t *mailroom_limits (mailroom_t *self);
//  The limits from now on (OP_LIMITS).
void mailroom_set_limits (mailroom_t *self, const mailroom_limits_t *limits);
//  The time messages posted from now on carry (µs since the epoch): the
//  time of the operation being applied; the mailroom reads no clock.
void mailroom_set_time (mailroom_t *self, int64_t now_us);
const mailroom_counters_t *mailroom_counters (mailroom_t *self);
channels_t *mailroom_channels (mailroom_t *self);

//  Posting. Item errors are collected for the current SEND: reset before,
//  read after. Returns the seq given to the message, or 0 if rejected.
void mailroom_errors_reset (mailroom_t *self);
size_t mailroom_errors_count (mailroom_t *self);
const mail_error_t *mailroom_error_at (mailroom_t *self, size_t index);
//  Records (and counts) an item the handler itself rejects.
void mailroom_reject (mailroom_t *self, uint32_t index, perr_t code);

uint64_t mailroom_post_direct (mailroom_t *self, uint32_t index, agent_t *from,
                               const char *to, size_t to_len,
                               const void *body, size_t body_len, bool bin);
uint64_t mailroom_post_all (mailroom_t *self, uint32_t index, agent_t *from,
                            const void *body, size_t body_len, bool bin);
uint64_t mailroom_post_channel (mailroom_t *self, uint32_t index, agent_t *from,
                                const char *channel, size_t channel_len,
                                const void *body, size_t body_len, bool bin);

//  Moves the agent's acked position (ignored if lower, clamped to what was
//  handed out: `delivered`) and releases everything up to it.
void mailroom_ack (mailroom_t *self, agent_t *agent, uint64_t ack);
//  OP_DELIVER: the agent's mail up to `seq` was handed out (the ack
//  clamp moves up to it; never down, never past the last seq).
void mailroom_deliver (mailroom_t *self, agent_t *agent, uint64_t seq);
//  Count of mail items a FETCH returns: at most `max` items and about
//  `max_bytes` encoded (at least one item); the next `mailroom_fetch_next`
//  calls walk them. Marks them delivered (the ack clamp) and moves the
//  agent's stream cursor past them. `stream` false: from the head (seq >
//  acked); true: after the cursor (what earlier FETCHes handed out), so a
//  client may keep several FETCHes in flight.
size_t mailroom_fetch_begin (mailroom_t *self, agent_t *agent, size_t max, size_t max_bytes,
                             bool stream);
const mail_t *mailroom_fetch_next (mailroom_t *self);
//  Messages queued for the agent after the ones this fetch returns.
size_t mailroom_fetch_remaining (mailroom_t *self);
//  The last seq the last FETCH or push commit handed out (0: nothing):
//  what the edge's OP_DELIVER records.
uint64_t mailroom_fetch_through (mailroom_t *self);

//  Pushed delivery (CONSUME). A push is a selection like a streaming
//  FETCH's (after the cursor) that also stays within the agent's credit
//  window; it is walked with mailroom_fetch_next / _remaining like a FETCH,
//  and handed out only by mailroom_push_commit, once its frame is sent.
//  Returns the count of messages selected (0: nothing fits or is waiting).
size_t mailroom_push_begin (mailroom_t *self, agent_t *agent, size_t max, size_t max_bytes);
void mailroom_push_commit (mailroom_t *self);
//  Consumers due a push at the end of this turn (mail queued for them,
//  credit returned, a subscription opened), oldest first; NULL when none
//  are left. A consumer gets pushes instead of MAIL_READY wake-ups.
void mailroom_mark_push (mailroom_t *self, agent_t *agent);
agent_t *mailroom_next_push (mailroom_t *self);
void mailroom_unmark_push (mailroom_t *self, agent_t *agent);

//  LISTEN: PERR_NONE, or TOO_MANY_CHANNELS / INTERNAL.
perr_t mailroom_listen (mailroom_t *self, agent_t *agent, const char *channel);
//  UNLISTEN: PERR_NONE or NOT_LISTENING. Queued channel mail stays queued.
perr_t mailroom_unlisten (mailroom_t *self, agent_t *agent, const char *channel);

//  BYE forget: releases the agent's mail, leaves its channels, unregisters it.
void mailroom_forget (mailroom_t *self, agent_t **agent_p);

//  Wake-ups due this turn, oldest first; NULL when none are left.
agent_t *mailroom_next_wakeup (mailroom_t *self);

//  The journal's restore: queues a message as a snapshot recorded it, in
//  the inboxes of `holders` (and its channel's pending list), with its
//  original seq and time; `dropped`: a post its channel dropped, kept as
//  the tombstone it was (it holds its place in the inboxes, FETCH skips
//  it). Messages must come in seq order. Returns the seq, or 0 if it
//  could not be queued (out of memory, or no holder).
uint64_t mailroom_restore (mailroom_t *self, uint64_t seq, int64_t ts, mail_kind_t kind,
                           const char *from, size_t from_len, const char *to, size_t to_len,
                           const void *body, size_t body_len, bool bin, bool dropped,
                           agent_t *const *holders, size_t holder_count);
//  Moves mail_seq up to `mail_seq` (never back).
void mailroom_restore_seq (mailroom_t *self, uint64_t mail_seq);

#endif
