// SPDX-License-Identifier: MIT
/*  raw - libparley's transport without the session, for code that must put
    on the wire what the typed requests never would: the protocol's own
    tests (malformed frames, requests before HELLO, a REQ-style envelope,
    a reply id that does not match). In the tree only: not installed, not
    exported from libparley.so.

    The socket is made by the library's one socket function
    (transport.c), requests are built with the protocol's encoder, replies
    go through the strict decoder. Nothing is resent and no HELLO is said
    on the caller's behalf.
*/
#ifndef PARLEY_CLIENT_RAW_H
#define PARLEY_CLIENT_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"

typedef struct _client_raw_t client_raw_t;

//  A DEALER (or, for client_raw_sub_new, a SUB on `prefix` that keeps
//  every event) connected to `endpoint`; NULL if it cannot connect.
client_raw_t *client_raw_new (const char *endpoint);
client_raw_t *client_raw_sub_new (const char *endpoint, const char *prefix);
//  The same as CURVE clients (key pair file and the broker's public
//  certificate, both or neither); NULL also when a key file is unusable.
client_raw_t *client_raw_new_curve (const char *endpoint, const char *key,
                                    const char *server_key);
//  A DEALER that holds at most `rcvhwm` unread replies (0: no bound), so a
//  test can play a peer that really stops reading.
client_raw_t *client_raw_new_hwm (const char *endpoint, const char *key,
                                  const char *server_key, int rcvhwm);
client_raw_t *client_raw_sub_new_curve (const char *endpoint, const char *prefix,
                                        const char *key, const char *server_key);
void client_raw_destroy (client_raw_t **self_p);

//  Starts a request with a fresh id; write exactly `fields` pairs.
penc_t *client_raw_begin (client_raw_t *self, pmsg_type_t type, size_t fields);
uint64_t client_raw_last_id (client_raw_t *self);
//  Sends what client_raw_begin built. 0, or -1 if the socket refused it.
int client_raw_send_request (client_raw_t *self);
//  One frame as given; `more` sends it as part of a multi-frame message.
int client_raw_send (client_raw_t *self, const void *data, size_t size, bool more);
//  The next reply, decoded strictly (an empty delimiter frame before it,
//  as a REQ-style envelope gets, is skipped); NULL on timeout (`why`
//  says so) or if it does not decode (`why` says why).
pmsg_t *client_raw_recv (client_raw_t *self, int timeout_ms, char *why, size_t why_size);
//  The next event of a SUB: topic copied to `topic` (may be NULL), the
//  body decoded strictly. NULL on timeout, or if it does not decode.
pmsg_t *client_raw_event (client_raw_t *self, char *topic, size_t topic_size,
                          int timeout_ms, char *why, size_t why_size);
//  Adds or drops a topic prefix on a SUB.
void client_raw_subscribe (client_raw_t *self, const char *prefix);
void client_raw_unsubscribe (client_raw_t *self, const char *prefix);

#endif
