// SPDX-License-Identifier: MIT
/*  conn - the connection the client keeps with the broker: the transport,
    the router that hands every reply to its owner, and the session, kept
    up (HELLO again with backoff after a lost or expired session); one
    request sent with its resends; the error text of the last call.

    What a new session must be told again (the channels, the push
    subscription, the event socket's subscriptions) is the client's: the
    connection calls its restore function after every WELCOME, and the
    client restores with client_conn_exchange on the handshake's encoder,
    while the caller's request waits in the request encoder for its resend.

    The connection borrows the posted requests (failed when it closes)
    and the pipelined SENDs (whose confirms may say the broker forgot us).
*/
#ifndef PARLEY_CLIENT_CONN_H
#define PARLEY_CLIENT_CONN_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "flight.h"
#include "pmsg.h"
#include "router.h"
#include "session.h"
#include "tickets.h"
#include "transport.h"

typedef struct _client_conn_t client_conn_t;
//  Called after every WELCOME, before the request that needed the session.
typedef void (client_conn_restore_fn) (void *arg);
//  Called before a request goes (client_conn_call): what must reach the
//  broker before it (held pipelined SENDs) goes first. PARLEY_OK, or the
//  error the request then returns.
typedef parley_err_t (client_conn_before_fn) (void *arg);

//  NULL when memory ran out (or an argument is too long).
client_conn_t *client_conn_new (const char *endpoint, const char *agent,
                                client_tickets_t *tickets, client_flight_t *flight);
void client_conn_destroy (client_conn_t **self_p);
//  The client's hooks, both called with `arg`.
void client_conn_set_hooks (client_conn_t *self, client_conn_restore_fn *restore,
                            client_conn_before_fn *before, void *arg);
client_transport_t *client_conn_transport (client_conn_t *self);
client_router_t *client_conn_router (client_conn_t *self);
client_session_t *client_conn_session (client_conn_t *self);

//  Options: see parley_client_set_timeout and the others.
void client_conn_set_timeout (client_conn_t *self, int64_t request_ms, int64_t backoff_max_ms);
void client_conn_set_attempts (client_conn_t *self, int attempts);
void client_conn_set_connect_attempts (client_conn_t *self, int attempts);
void client_conn_set_stop (client_conn_t *self, volatile sig_atomic_t *stop);
bool client_conn_stopped (const client_conn_t *self);
int64_t client_conn_request_ms (const client_conn_t *self);
int client_conn_attempts (const client_conn_t *self);

//  Errors: records why a call failed and returns `code`.
parley_err_t client_conn_fail (client_conn_t *self, parley_err_t code, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));
parley_err_t client_conn_vfail (client_conn_t *self, parley_err_t code, const char *format,
                                va_list args);
//  PARLEY_ERR_NOMEM, recorded and counted.
parley_err_t client_conn_nomem (client_conn_t *self);
void client_conn_clear_error (client_conn_t *self);
const char *client_conn_error (const client_conn_t *self);
//  An ERROR reply as its code (and the broker's sentence).
parley_err_t client_conn_error_reply (client_conn_t *self, const pmsg_t *reply);

//  Encoders: the caller's request (kept for its resend), the handshake's
//  (which may run in the middle of that resend), and requests sent
//  without waiting (keepalive, ACK).
penc_t *client_conn_begin (client_conn_t *self, pmsg_type_t type, size_t fields);
penc_t *client_conn_encoder (client_conn_t *self);
penc_t *client_conn_hello_encoder (client_conn_t *self);
penc_t *client_conn_aside_encoder (client_conn_t *self);
//  The id the request encoder's request carries.
uint64_t client_conn_request_id (const client_conn_t *self);
//  A fresh id for a request built elsewhere into the request encoder.
uint64_t client_conn_begin_id (client_conn_t *self);
//  A fresh id for a request on another encoder.
uint64_t client_conn_next_id (client_conn_t *self);

//  A session: HELLO (with backoff) when there is none. PARLEY_OK; or, as
//  parley_client_connect returns it, _STOPPED, _TIMEOUT, _NOMEM, a
//  refusal for good.
parley_err_t client_conn_connect (client_conn_t *self);
//  The same, with the failure as a request reports it (_TIMEOUT, _LOST,
//  _STOPPED, _NOMEM) and the reason.
parley_err_t client_conn_ensure (client_conn_t *self);
bool client_conn_up (const client_conn_t *self);
//  The connection is given up: posted requests fail with `code`, and the
//  next request says HELLO again.
void client_conn_close (client_conn_t *self, parley_err_t code);

//  Sends the request encoder's frame and awaits its reply, with the
//  resends (see conn.c). PARLEY_OK with a reply of type `expect` in
//  *reply_p (the caller's); an ERROR reply's code; _BAD_REPLY, _TIMEOUT,
//  _LOST, _STOPPED, _NOMEM, with the reason.
parley_err_t client_conn_call (client_conn_t *self, pmsg_type_t expect, pmsg_t **reply_p);
//  One send of `enc` (request `id`) and its reply, no resend: PARLEY_OK,
//  _TIMEOUT, _STOPPED, _NOMEM.
parley_err_t client_conn_exchange (client_conn_t *self, penc_t *enc, uint64_t id,
                                   pmsg_t **reply_p);
//  One frame on the request socket, counted as a request; with `wait`,
//  waits (up to the request timeout, routing replies) while its send
//  queue is full. 0, or -1 (the connection may have closed).
int client_conn_send (client_conn_t *self, const void *data, size_t size, bool wait);
//  Waits until `until` (monotonic ms) for the reply to `id`, routing the
//  others. PARLEY_OK with the reply (the caller's), _TIMEOUT, _STOPPED,
//  _NOMEM.
parley_err_t client_conn_await (client_conn_t *self, uint64_t id, int64_t until,
                                pmsg_t **reply_p);
//  Routes what the request socket holds, without waiting.
void client_conn_drain (client_conn_t *self);
//  Waits up to `ms` for a reply and routes what came. False when the
//  connection is closed.
bool client_conn_pump (client_conn_t *self, int64_t ms);
//  The keepalive HEARTBEAT's id: its reply is the connection's.
void client_conn_set_keepalive (client_conn_t *self, uint64_t id);

//  Inside a request: the keepalive and the replica's refresh stay out.
bool client_conn_busy (const client_conn_t *self);
void client_conn_set_busy (client_conn_t *self, bool busy);
int64_t client_conn_last_send (const client_conn_t *self);
//  PARLEY_COUNTER_REQUESTS, _TIMEOUTS, _KEEPALIVES, _NOMEM, the session's
//  and the transport's bad frames; 0 for others.
uint64_t client_conn_counter (const client_conn_t *self, parley_counter_t counter);
void client_conn_count (client_conn_t *self, parley_counter_t counter);

#endif
