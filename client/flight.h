// SPDX-License-Identifier: MIT
/*  flight - pipelined SENDs not yet confirmed (parley/mail.h): a ring in
    id order (the broker confirms them in that order: a CONFIRM's
    `through` pops every entry up to it), each with its frame, kept for
    the resend after a reconnect; the window they must stay within; the
    failures the confirms named, queued for the caller; and the counters.

    One frame may carry several posts (the sender coalesces them): each
    entry keeps its posts as (ticket, message count) pairs in frame order,
    so a failure the broker names by frame id and item index reaches the
    caller as the post's own ticket and its index in that post, and a
    frame refused whole fails each of its posts. The counters count posts,
    the caller's SENDs, not frames.

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
void client_flight_window (const client_flight_t *self, size_t *messages, size_t *bytes);
//  A SEND of `messages` and `bytes` must wait for room (one always goes).
bool client_flight_full (const client_flight_t *self, size_t messages, size_t bytes);
//  Records a SEND about to be sent, so that running out of memory is
//  known before it goes: its frame (`size` bytes at `frame`, inside the
//  allocation `block`), `posts` pairs of (ticket, message count) in
//  `spans`, in frame order, and the acknowledgement the frame carries (0:
//  none). 0, the flight then owning `block` and `spans` (kept for the
//  resend, freed when confirmed); or -1 when memory ran out, nothing
//  taken.
int client_flight_push (client_flight_t *self, uint64_t id, size_t messages, void *block,
                        const void *frame, size_t size, uint64_t *spans, size_t posts,
                        uint64_t ack, int64_t sent_ms);
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
//  The highest acknowledgement a frame refused whole had carried (it was
//  not applied), once; 0 when none.
uint64_t client_flight_take_unacked (client_flight_t *self);
//  The oldest failure, into *failure_p (replacing what it held); false when none.
bool client_flight_take_failure (client_flight_t *self, parley_failure_t **failure_p);
//  PARLEY_COUNTER_POSTED and the pipeline's other counters, and the
//  allocations that failed here; 0 for others.
uint64_t client_flight_counter (const client_flight_t *self, parley_counter_t counter);
//  Posts: counted as posted, and as waiting for the window.
void client_flight_count_post (client_flight_t *self, bool waited);
void client_flight_count_wait (client_flight_t *self);

#endif
