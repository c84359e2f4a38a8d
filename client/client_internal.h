// SPDX-License-Identifier: MIT
/*  client_internal - what the files that implement libparley's requests
    (api_*.c) ask of the client (client.c). Functions only: the client's
    fields are client.c's, and each part it holds is an object of its own
    with its own header.

    The parts, lowest first (scripts/client-graph.py checks that the
    files include each other in one direction only):

      mem, queue, hash, arena        memory: every allocation, checked
      curve, transport               sockets, keys, frames in and out
      router                         every reply to its owner
      session                        HELLO, WELCOME, the resume token
      tickets, flight, push          posted requests, pipelined SENDs,
                                     pushed mail: owners of replies
      events, replica, dedup         the event socket's traffic, the state
                                     copy, the duplicate filter
      outbox, ops, step, handover    what the caller builds
      welcome, sent, mail, state,    what the caller gets: one file per
      observation, stepped, agents,  result class
      stats, event, workflow,
      checkpoints
      conn                           the connection kept up; one request
                                     with its resends; the error text
      ackhold                        the acknowledgement held for a SEND
      sender                         pipelined SENDs going out: coalesced,
                                     windowed, resent; acks riding on SEND
      client                         the client: its parts, its options,
                                     what a new session is told again
      api_*                          the public requests, by family
*/
#ifndef PARLEY_CLIENT_INTERNAL_H
#define PARLEY_CLIENT_INTERNAL_H

#include "parley/client.h"
#include "conn.h"
#include "dedup.h"
#include "events.h"
#include "flight.h"
#include "pmsg.h"
#include "push.h"
#include "replica.h"
#include "sender.h"
#include "tickets.h"

//  A result ready to be filled: *result_p made when NULL, the caller's
//  object reused otherwise (result_p NULL: none wanted). PARLEY_OK, or
//  PARLEY_ERR_NOMEM recorded.
#define CLIENT_PREPARE(conn, result_p, make) \
    ((result_p) && !*(result_p) && !(*(result_p) = make ()) ? client_conn_nomem (conn) \
                                                            : PARLEY_OK)

//  A request that fails takes back the result it made: *result_p is NULL
//  again, as before the call (an object the caller passed is kept).
#define CLIENT_MAKES(result_p) ((result_p) != NULL && *(result_p) == NULL)
#define CLIENT_UNMAKE(rc, made, result_p, destroy) \
    do { \
        if ((rc) != PARLEY_OK && (made)) \
            destroy (result_p); \
    } while (0)

//  The parts.
client_conn_t *client_conn_of (parley_client_t *self);
client_tickets_t *client_tickets_of (parley_client_t *self);
client_flight_t *client_flight_of (parley_client_t *self);
client_sender_t *client_sender_of (parley_client_t *self);
client_push_t *client_push_of (parley_client_t *self);
client_events_t *client_events_of (parley_client_t *self);
client_replica_t *client_replica_of (parley_client_t *self);
client_dedup_t *client_dedup_of (parley_client_t *self);

//  A fresh SEND batch id.
uint64_t client_next_batch (parley_client_t *self);
//  The wait_ms every SEND carries.
uint64_t client_send_wait (parley_client_t *self);
//  WELCOME's max_body, for cutting bodies.
size_t client_max_body (parley_client_t *self);
//  A HEARTBEAT (with the model report, if one is set) as request `id`.
void client_encode_heartbeat (parley_client_t *self, penc_t *enc, uint64_t id);
//  Takes every event the event socket holds, without waiting.
void client_take_events (parley_client_t *self);
//  Opens the event socket on WELCOME's endpoint if it is not open.
void client_open_events (parley_client_t *self);
//  Subscribes the event socket to `prefix` now (when it is open), or not.
void client_subscribe_socket (parley_client_t *self, const char *prefix, bool on);

#endif
