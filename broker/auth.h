// SPDX-License-Identifier: MIT
/*  auth - who is on each connection: the broker's ZAP handler and its key
    allowlist.

    libzmq asks a ZAP handler (a REP socket on inproc://zeromq.zap.01, in
    the broker's own loop) about every new connection of a socket that has
    a ZAP domain. This one answers two things:

    - Who: in CURVE mode the client's public key must be in the allowlist
      (--curve-allow DIR, CZMQ public certificates); the tap socket also
      wants the key to carry the tap right. Anything else is refused (400)
      and counted (auth_denied), and the handshake fails.
    - Which connection: every accepted handshake gets a serial number,
      never reused. It travels as the connection's ZAP User-Id and libzmq
      stamps it on every frame that connection sends (zmq_msg_gets
      "User-Id"), so the broker can tell a new connection from an old one
      that presented the same ROUTER routing id. Plain mode uses ZAP for
      this alone (NULL mechanism with a ZAP domain).

    User-Id is "SERIAL" in plain mode and "SERIAL KEY" (KEY: the Z85 public
    key) in CURVE mode; auth_parse reads it back. The allowlist is read
    again when its files change (checked at each handshake and once a
    second: auth_tick), so keys are added, revoked and their rights edited
    without a restart: rights are looked up at every request (rights.h),
    and the broker cuts the open connections of a key that lost them
    (peers.h).
*/
#ifndef PARLEY_BROKER_AUTH_H
#define PARLEY_BROKER_AUTH_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#define AUTH_DOMAIN_ROUTER "parley.router"
#define AUTH_DOMAIN_PUB "parley.pub"
#define AUTH_DOMAIN_TAP "parley.tap"

typedef struct _auth_t auth_t;

//  Binds the ZAP endpoint. `allow_dir` NULL: plain mode (every connection
//  accepted, serials only). NULL with `why` on failure.
auth_t *auth_new (const char *allow_dir, char *why, size_t why_size);
void auth_destroy (auth_t **self_p);

//  The REP socket, for zloop; auth_on_request answers one request.
zsock_t *auth_sock (auth_t *self);
int auth_on_request (zloop_t *loop, zsock_t *reader, void *arg);

bool auth_curve (auth_t *self);
//  Reads the allowlist again if its files changed: true when the list
//  was replaced (the caller checks the open connections' keys).
bool auth_tick (auth_t *self);
uint64_t auth_denied (auth_t *self);
size_t auth_keys (auth_t *self);

//  Reads a User-Id: the serial, and (CURVE) the key's Z85 text into
//  key [41] ("" without one). False if `user_id` is NULL or malformed.
bool auth_parse (const char *user_id, uint64_t *serial, char key [41]);

//  What the key may do and which ids it may be (its "agents" metadata,
//  NULL if none). In plain mode every right and any id. A key no longer
//  in the allowlist has no rights.
unsigned auth_rights (auth_t *self, const char *key);
const char *auth_agents (auth_t *self, const char *key);

#endif
