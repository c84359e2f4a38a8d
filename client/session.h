// SPDX-License-Identifier: MIT
/*  session - who the client is to the broker and what the broker said:
    the agent id, its capabilities, observer mode, the resume token (and
    the file that keeps it), HELLO on a fresh connection, WELCOME decoded,
    and the session count. The client decides when to say HELLO and what
    to restore after it (client.c).
*/
#ifndef PARLEY_CLIENT_SESSION_H
#define PARLEY_CLIENT_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"
#include "router.h"
#include "transport.h"

#define CLIENT_MAX_CAPS 8

typedef struct _client_session_t client_session_t;

//  NULL when memory ran out.
client_session_t *client_session_new (const char *agent);
void client_session_destroy (client_session_t **self_p);
const char *client_session_agent (const client_session_t *self);
//  PARLEY_ERR_INVALID beyond CLIENT_MAX_CAPS, _NOMEM.
parley_err_t client_session_add_cap (client_session_t *self, const char *cap);
void client_session_set_observe (client_session_t *self, bool observe);
//  The file that keeps the resume token (NULL: memory only); a token kept
//  there by an earlier run is read now. PARLEY_OK or _NOMEM.
parley_err_t client_session_set_token_file (client_session_t *self, const char *path);

//  HELLO as request `id` to `endpoint`, its reply awaited up to
//  `timeout_ms`: on a fresh connection (the transport reopened), or on
//  the one an earlier HELLO went out on without an answer in time
//  (client_session_asking). A broker that answered that one late has registered the id on
//  this connection with the resume token of its WELCOME: asking again on
//  it gets that WELCOME (claimed here, its token kept) and a WELCOME to
//  this HELLO, where a new connection would carry the old token and be
//  refused. PARLEY_OK (the session is up: WELCOME decoded, the token kept,
//  the epoch counted); PARLEY_ERR_TIMEOUT to retry; _STOPPED; _NOMEM; or
//  the code of a refusal for good. `why` says why it failed.
parley_err_t client_session_hello (client_session_t *self, const char *endpoint,
                                   client_transport_t *transport, client_router_t *router,
                                   penc_t *enc, uint64_t id, int64_t timeout_ms,
                                   volatile sig_atomic_t *stop, char *why, size_t why_size);
//  The router's claim: a reply to an earlier HELLO on this connection
//  (a WELCOME's token is kept).
bool client_session_claim (void *self, pmsg_t **msg_p);
//  WELCOMEs that came after their HELLO was given up on.
uint64_t client_session_late_welcomes (const client_session_t *self);
bool client_session_up (const client_session_t *self);
//  A HELLO went out on this connection and got no WELCOME yet.
bool client_session_asking (const client_session_t *self);
//  The session is gone (the connection closed, or the broker forgot us).
void client_session_down (client_session_t *self);
//  Sessions so far: 1 after the first HELLO.
uint64_t client_session_epoch (const client_session_t *self);
const parley_welcome_t *client_session_welcome (const client_session_t *self);
void client_session_count_failure (client_session_t *self);
//  PARLEY_COUNTER_HELLOS and _HELLO_FAILURES; 0 for others.
uint64_t client_session_counter (const client_session_t *self, parley_counter_t counter);

#endif
