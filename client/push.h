// SPDX-License-Identifier: MIT
/*  push - pushed mail (parley/mail.h, CONSUME): the MAIL_PUSH frames not
    yet taken, oldest first; the window asked for; the highest
    acknowledgement sent and the broker lifetime it belongs to; the
    acknowledgement policy.

    The queue is sized for the window when CONSUME is made: the broker
    pushes at most `credit` messages that nobody acknowledged, so at most
    that many frames wait here, and queueing one never allocates (a frame
    that could not be queued would hold its credit until a reconnect). A
    reconnect drops the frames of the old connection: their mail is pushed
    again on the new one.
*/
#ifndef PARLEY_CLIENT_PUSH_H
#define PARLEY_CLIENT_PUSH_H

#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"

typedef struct _client_push_t client_push_t;

client_push_t *client_push_new (void);
void client_push_destroy (client_push_t **self_p);
//  The window of a CONSUME that succeeded (credit 0: pulling again).
//  0, or -1 when the queue could not be sized for it.
int client_push_reserve (client_push_t *self, uint32_t credit);
void client_push_set_window (client_push_t *self, uint32_t credit, uint64_t credit_bytes);
uint32_t client_push_credit (const client_push_t *self);
uint64_t client_push_credit_bytes (const client_push_t *self);
//  The router's claim: MAIL_PUSH frames are queued.
bool client_push_claim (void *self, pmsg_t **msg_p);
bool client_push_pending (const client_push_t *self);
//  The oldest frame, left queued; and taken out.
pmsg_t *client_push_peek (client_push_t *self);
void client_push_drop_oldest (client_push_t *self);
pmsg_t *client_push_pop (client_push_t *self);
void client_push_purge (client_push_t *self);
//  The highest acknowledgement sent, and the broker lifetime (WELCOME's
//  origin) it belongs to.
uint64_t client_push_acked (const client_push_t *self);
uint64_t client_push_acked_origin (const client_push_t *self);
void client_push_set_acked (client_push_t *self, uint64_t seq, uint64_t origin);
parley_ack_policy_t client_push_policy (const client_push_t *self);
void client_push_set_policy (client_push_t *self, parley_ack_policy_t policy);
//  Frames dropped because they could not be queued.
uint64_t client_push_nomem (const client_push_t *self);

#endif
