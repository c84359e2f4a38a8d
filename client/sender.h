// SPDX-License-Identifier: MIT
/*  sender - pipelined SENDs on their way out (parley/mail.h): the posts
    held back to go together as one SEND frame, the frame built and
    recorded in the flight, the window waited for, the SENDs in flight sent
    again on a new session, and the acknowledgement that rides on the next
    SEND instead of going as an ACK frame.

    Coalescing. A post made while earlier SENDs are in flight is held in a
    buffer (its items encoded once, with its own ticket) and goes with the
    posts after it as one multi-item SEND: one frame, one system call, one
    request for the broker to read and journal instead of one per message.
    The buffer goes when
      - nothing is in flight (a post to an idle pipe goes at once: holding
        it would add latency and save nothing);
      - it is full: `messages` messages or `bytes` bytes of items (within
        the window and WELCOME's max_batch);
      - its oldest post has waited `linger` (the timer: a post is never
        held longer than that while the caller keeps calling, waiting or
        polling, and parley_client_fd fires for it);
      - the caller waits or polls (parley_client_wait, _process), flushes
        (parley_client_send_flush), makes any other request (the buffer
        goes first, so the broker sees requests in the order they were
        made), or destroys the client.
    Confirms, failures (named by each post's ticket and its own index),
    order and the resends after a reconnect are the flight's, per frame.
    A linger of 0 turns coalescing off: every post is its own frame.

    Acknowledgements that ride. When WELCOME's features list send_ack, an
    acknowledgement made without waiting (parley_client_ack_nowait, the
    takes of PARLEY_ACK_ON_TAKE) is held and carried as `ack` by the next
    SEND frame that goes (pipelined, coalesced, posted or blocking) instead
    of an ACK frame and its OK. When no SEND goes within the linger, or the
    caller waits or polls, or another request goes, it goes as an ACK frame
    after all. A SEND refused whole did not apply its ack: it is held again.
    Without send_ack every acknowledgement goes as an ACK frame at once.
*/
#ifndef PARLEY_CLIENT_SENDER_H
#define PARLEY_CLIENT_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"
#include "conn.h"
#include "flight.h"
#include "pmsg.h"

typedef struct _client_sender_t client_sender_t;

//  The connection and the flight are borrowed. NULL when memory ran out.
client_sender_t *client_sender_new (client_conn_t *conn, client_flight_t *flight);
void client_sender_destroy (client_sender_t **self_p);
//  Options: see parley_client_set_coalesce and parley_client_set_send_wait.
void client_sender_set_coalesce (client_sender_t *self, size_t messages, size_t bytes,
                                 int64_t linger_us);
void client_sender_set_wait (client_sender_t *self, int64_t wait_ms);
//  The wait_ms every SEND carries: the one set, at most three quarters of
//  the request timeout.
uint64_t client_sender_wait_ms (const client_sender_t *self);

//  A session (HELLO when there is none) and, on a new one, every SEND in
//  flight sent again in order. PARLEY_OK, or as client_conn_ensure.
parley_err_t client_sender_session (client_sender_t *self);
//  One pipelined post of a checked outbox (its items encoded once, bodies
//  cut to WELCOME's max_body). Held, or sent, as above; blocks while the
//  window has no room for what must go first. PARLEY_OK with the post's
//  ticket; _NOMEM (nothing taken), _STOPPED, _TIMEOUT, _LOST.
parley_err_t client_sender_post (client_sender_t *self, const parley_outbox_t *messages,
                                 parley_ticket_t *ticket);
//  Waits until nothing is held and every SEND is confirmed.
parley_err_t client_sender_flush (client_sender_t *self);
//  Before a request of another kind: what is held goes first (waiting
//  for the window), then a held acknowledgement. PARLEY_OK or the error.
parley_err_t client_sender_before (client_sender_t *self);
//  Takes the replies that came and sends what is due, without blocking:
//  when `idle` (the caller waits or polls) everything held goes (window
//  permitting), else only what the pipe, the bounds or the timer let go.
void client_sender_service (client_sender_t *self, bool idle);
//  When service is next due (monotonic microseconds); 0 when nothing is
//  held.
int64_t client_sender_due (const client_sender_t *self);
//  Something is in flight or held: the request socket must be read.
bool client_sender_active (const client_sender_t *self);
//  Sends what is held without waiting for anything (the client goes).
void client_sender_farewell (client_sender_t *self);

//  An acknowledgement up to `seq`, without waiting: held to ride on the
//  next SEND when the broker takes one there, else sent as an ACK frame
//  now. PARLEY_OK, or the error of that send.
parley_err_t client_sender_ack (client_sender_t *self, uint64_t seq);
//  For a SEND being encoded: the held acknowledgement it carries (0:
//  none), no longer held.
uint64_t client_sender_take_ack (client_sender_t *self);
//  A SEND that may have carried an acknowledgement was refused whole:
//  the last one that rode is held again.
void client_sender_ack_refused (client_sender_t *self);
//  An ACK up to `seq` went another way (after a HELLO): nothing up to it
//  is held any more.
void client_sender_acked (client_sender_t *self, uint64_t seq);

//  PARLEY_COUNTER_SEND_FRAMES and the other coalescing and riding
//  counters; 0 for others.
uint64_t client_sender_counter (const client_sender_t *self, parley_counter_t counter);

#endif
