// SPDX-License-Identifier: MIT
/*  conn_mailbox - the "mailbox" connector: messages received.

    Captures with FETCH, taking at most MAILBOX_MAX_BATCH messages (the
    rest stays queued for the next steps) and acknowledging only what the
    agent committed with conn_mailbox_commit: mail is acknowledged once the
    memory holding it is saved, so a kill at any point loses none
    (at-least-once). A message delivered twice (a lost reply, a reconnect,
    a restarted broker) is recognised by its seq and left out, by the
    client and again here. When the link starts a new session and the
    broker's mail_seq is below our last seq, the broker was restarted with
    a fresh counter: the positions are reset to what WELCOME says we
    acknowledged.

    The current state is the batch received by the latest capture, rendered
    as this block:

        Communication information:
        From Agent2:
            I found a lamp at position 3.
        In explorers:
            From Agent3: heading backward
            From Agent1: at the east end

    Point-to-point and "all" messages come first as "From <sender>:" and
    the text on the next line; channel posts are grouped under
    "In <channel>:". With no messages: "No messages from other agents."

    Each message is also an observation of type mail.message.
*/
#ifndef PARLEY_CONN_MAILBOX_H
#define PARLEY_CONN_MAILBOX_H

#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"
#include "connector.h"

//  Messages one step's view takes; more stay queued at the broker for the
//  following steps, so a flood cannot blow up the prompt and loses nothing.
#define MAILBOX_MAX_BATCH 64
//  Longest text kept per message (the rest is cut, with "...").
#define MAILBOX_MAX_TEXT 2048

typedef struct {
    uint64_t seq;
    char from[PROTO_MAX_NAME + 1];
    char to[PROTO_MAX_NAME + 1];        //  agent id or "all"; "" for channels
    char channel[PROTO_MAX_NAME + 1];   //  "" for point-to-point
    char *text;
} mail_view_t;

connector_t *conn_mailbox_new (parley_client_t *link);

//  Starts a new batch (clears the current one); capture does this itself.
void conn_mailbox_begin (connector_t *self);
//  Adds one received message to the current batch. Returns 0 if added,
//  1 if it was a duplicate (seq already seen), 2 if over the batch limit.
int conn_mailbox_feed (connector_t *self, uint64_t seq, const char *from, const char *to,
                       const char *channel, const char *text, size_t len);

size_t conn_mailbox_count (connector_t *self);
const mail_view_t *conn_mailbox_at (connector_t *self, size_t index);
uint64_t conn_mailbox_last_seq (connector_t *self);
uint64_t conn_mailbox_received (connector_t *self);     //  total, duplicates aside
uint64_t conn_mailbox_duplicates (connector_t *self);
uint64_t conn_mailbox_dropped (connector_t *self);      //  fed over MAILBOX_MAX_BATCH
//  Declares every message handed to a step so far safe (saved with the
//  memory): the next FETCH acknowledges up to it.
void conn_mailbox_commit (connector_t *self);
//  The position the next FETCH acknowledges.
uint64_t conn_mailbox_committed (connector_t *self);
//  The mail a STEP brought (copied): the next capture takes it instead of
//  fetching. Duplicates are left out then, as for fetched mail.
void conn_mailbox_stage (connector_t *self, const parley_mail_t *mail);
//  The staged mail no capture has taken yet (a run that ends after its
//  last STEP brought some): count and items, duplicates still among them.
size_t conn_mailbox_staged (connector_t *self);
const mail_view_t *conn_mailbox_staged_at (connector_t *self, size_t index);

#endif
