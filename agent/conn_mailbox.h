/*  conn_mailbox - the "mailbox" connector: messages received.

    Captures with FETCH, acknowledging everything it has already taken in
    (ack = last seq seen), so the broker releases it. A message delivered
    twice (a lost reply, redelivered) is recognised by its seq and dropped.
    When the link starts a new session and the broker's mail_seq is below
    our last seq, the broker was restarted with a fresh counter: the
    watermark is reset to what WELCOME says we acknowledged.

    The current state is the batch received by the latest capture, rendered
    as seed 003's block:

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
#include "brokerlink.h"
#include "connector.h"

//  Messages kept for one step's view; more are still acknowledged and
//  counted (dropped_from_view), so a flood cannot blow up the prompt.
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

connector_t *conn_mailbox_new (brokerlink_t *link);

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
uint64_t conn_mailbox_dropped (connector_t *self);      //  over MAILBOX_MAX_BATCH

#endif
