// SPDX-License-Identifier: MIT
/*  tap - mirrors every frame the broker receives, sends and publishes.

    The zguide's Espresso pattern: a second PUB-style socket on which each
    frame appears as topic "tap.in", "tap.out" or "tap.pub" plus a TAP map
    {tseq, ts, dir, peer, body}. parley-tap subscribes to it.

    Costs, honestly: when someone listens, each frame is copied once into a
    TAP map (plus libzmq's copy). To pay nothing when nobody listens, the
    socket is an XPUB: it receives the subscriptions, so the tap knows whether
    anyone is subscribed and skips the encoding entirely otherwise. Its send
    HWM is small (--tap-hwm, default 1000) and sends never block: a slow tap
    client loses frames, never the broker's time. tseq increases by one per
    frame mirrored, so a gap tells the viewer it missed frames.
*/
#ifndef PARLEY_BROKER_TAP_H
#define PARLEY_BROKER_TAP_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _tap_t tap_t;

//  Binds the tap on `endpoint` (ask the socket for ZMQ_LAST_ENDPOINT to
//  resolve an ephemeral port). With `cert` (may be NULL) the tap is a CURVE
//  server authenticated under ZAP domain `zap_domain`. NULL with `why` on
//  failure.
tap_t *tap_new (const char *endpoint, int hwm, zcert_t *cert, const char *zap_domain,
                char *why, size_t why_size);
void tap_destroy (tap_t **self_p);

//  The socket, for the loop: call tap_on_subscription when it is readable.
//  `peer` (may be NULL) is told of every subscribing frame (its descriptor
//  and key tell who subscribes: peers.h).
zsock_t *tap_sock (tap_t *self);
typedef void (tap_peer_fn) (zmq_msg_t *frame, void *arg);
void tap_on_subscription (tap_t *self, tap_peer_fn *peer, void *arg);

//  True while at least one subscription is active.
bool tap_active (tap_t *self);
//  Mirrors one frame: dir "in", "out" or "pub"; peer is the agent id, the
//  hex connection id, or the topic. No-op when nobody listens.
void tap_frame (tap_t *self, const char *dir, const char *peer, size_t peer_len,
                const void *data, size_t size);
uint64_t tap_seq (tap_t *self);

#endif
