// SPDX-License-Identifier: MIT
/*  router - the one place where a frame read from the request socket
    finds its owner. Owners register a claim function per route; the
    router reads replies (through the transport) and hands each to the
    first owner that claims it, in this order:

      by type  MAIL_PUSH      pushed mail (id 0)            push
               CONFIRM        pipelined SENDs (id 0)        flight
      by id    the id a blocking request awaits             the caller of
               (or an ERROR with id 0 while one waits:      client_router_await
               a frame whose id the broker could not read)
               a pipelined SEND refused with ERROR          flight
               a posted request's reply                     tickets
               the keepalive HEARTBEAT's reply              the client
               a late reply to an earlier HELLO on the      session
               socket (its WELCOME's resume token is kept)
      anything else: a late reply to a request given up on, dropped.

    A claim function takes the frame (sets *msg_p to NULL) when it is its
    owner's, and must not close the socket: an owner that learns the
    session is gone (NOT_HELLO) says so to the client, which closes it
    after the routing.
*/
#ifndef PARLEY_CLIENT_ROUTER_H
#define PARLEY_CLIENT_ROUTER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "parley/base.h"
#include "pmsg.h"
#include "transport.h"

typedef struct _client_router_t client_router_t;

typedef enum {
    CLIENT_ROUTE_PUSH,          //  MAIL_PUSH frames
    CLIENT_ROUTE_CONFIRM,       //  CONFIRM frames
    CLIENT_ROUTE_FLIGHT,        //  replies by id: pipelined SENDs
    CLIENT_ROUTE_TICKET,        //  replies by id: posted requests
    CLIENT_ROUTE_KEEPALIVE,     //  replies by id: the keepalive
    CLIENT_ROUTE_SESSION,       //  replies by id: earlier HELLOs
    CLIENT_ROUTES
} client_route_t;

typedef bool (client_router_claim_fn) (void *owner, pmsg_t **msg_p);

//  NULL when memory ran out. The transport is borrowed.
client_router_t *client_router_new (client_transport_t *transport);
void client_router_destroy (client_router_t **self_p);
void client_router_set_owner (client_router_t *self, client_route_t route,
                              client_router_claim_fn *claim, void *owner);
//  Hands `msg` to its owner, or destroys it.
void client_router_route (client_router_t *self, pmsg_t *msg);
//  Reads and routes every reply waiting, without blocking. PARLEY_OK, or
//  PARLEY_ERR_NOMEM when one could not be read (it stays queued).
parley_err_t client_router_drain (client_router_t *self);
//  Waits until `until` (monotonic ms) for the reply to `id`, routing the
//  others, looking at `stop` every CLIENT_ROUTER_SLICE_MS. PARLEY_OK with
//  the reply in *reply_p (the caller's), _TIMEOUT, _STOPPED, _NOMEM.
#define CLIENT_ROUTER_SLICE_MS 100
parley_err_t client_router_await (client_router_t *self, uint64_t id, int64_t until,
                                  volatile sig_atomic_t *stop, pmsg_t **reply_p);
//  Replies nobody claimed.
uint64_t client_router_dropped (const client_router_t *self);

#endif
