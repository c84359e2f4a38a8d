// SPDX-License-Identifier: MIT
/*  flight - pipelined SENDs not yet confirmed (parley/mail.h): a ring in
    id order (the broker confirms them in that order: a CONFIRM's
    `through` pops every entry up to it), each with its frame, kept for
    the resend after a reconnect; the window they must stay within; the
    failures the confirms named, queued for the caller; and the counters.

    The flight does not send: the client sends, records each SEND here,
    and asks what to send again after a reconnect. A CONFIRM that says the
    broker forgot the session (a SEND refused NOT_HELLO) is noted for the
    client, which closes the connection after the routing.
*/
#ifndef PARLEY_CLIENT_FLIGHT_H
#define PARLEY_CLIENT_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"

typedef struct _client_flight_t client_flight_t;

client_flight_t *client_flight_new (void);
void client_flight_destroy (client_flight_t **self_p);
void client_flight_set_window (client_flight_t *self, size_t messages, size_t bytes);
//  A SEND of `messages` and `bytes` must wait for room (one always goes).
bool client_flight_full (const client_flight_t *self, size_t messages, size_t bytes);
//  Records a SEND about to be sent (its frame copied), so that running
//  out of memory is known before it goes. 0, or -1 when memory ran out.
int client_flight_push (client_flight_t *self, uint64_t id, size_t messages, const void *frame,
                        size_t size, int64_t sent_ms);
//  Forgets the newest SEND (the socket would not take it).
void client_flight_unpush (client_flight_t *self);
size_t client_flight_count (const client_flight_t *self);
//  When the oldest SEND went out (monotonic ms); 0 when none.
int64_t client_flight_oldest_sent (const client_flight_t *self);
//  The oldest SEND whose id is above `after`, for the resend: false when
//  none. By id, because confirms taken while one is resent pop others.
bool client_flight_next (const client_flight_t *self, uint64_t after, uint64_t *id,
                         const void **data, size_t *size);
//  SEND `id` went again (counted as resent).
void client_flight_resent (client_flight_t *self, uint64_t id, int64_t sent_ms);
//  The session the SENDs went out on.
uint64_t client_flight_epoch (const client_flight_t *self);
void client_flight_set_epoch (client_flight_t *self, uint64_t epoch);
//  One more round of resends without a confirm in between: their number.
int client_flight_round (client_flight_t *self);
//  Every SEND left fails whole with PARLEY_ERR_TIMEOUT.
void client_flight_give_up (client_flight_t *self);
//  The router's claims: a CONFIRM, and an ERROR answering a pipelined SEND.
bool client_flight_claim_confirm (void *self, pmsg_t **msg_p);
bool client_flight_claim_error (void *self, pmsg_t **msg_p);
//  True once after a CONFIRM said the broker forgot the session.
bool client_flight_take_lost (client_flight_t *self);
//  The oldest failure, into *failure_p (replacing what it held); false when none.
bool client_flight_take_failure (client_flight_t *self, parley_failure_t **failure_p);
//  PARLEY_COUNTER_POSTED and the pipeline's other counters, and the
//  allocations that failed here; 0 for others.
uint64_t client_flight_counter (const client_flight_t *self, parley_counter_t counter);
void client_flight_count_post (client_flight_t *self, bool waited);

#endif
