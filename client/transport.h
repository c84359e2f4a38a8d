// SPDX-License-Identifier: MIT
/*  transport - libparley's sockets: the DEALER that carries requests and
    their replies (and pushed mail), the SUB that carries events, the
    monitor that tells a refused CURVE handshake from silence, and one
    epoll descriptor over both for the caller's loop. Every socket of the
    client is made here, the one place for socket options and security.

    The sockets live on one libzmq context that libparley shares between
    its clients and ends when the last one goes (so a program that never
    uses czmq needs none, and valgrind sees nothing left behind).

    Replies are decoded in place by the protocol's strict decoder (a MAIL
    reply is the bulk of what a client receives, and is never copied).
    The small block that keeps a frame alive under its decoded message is
    allocated before the frame is read, so running out of memory leaves
    the frame queued in the socket instead of losing it.
*/
#ifndef PARLEY_CLIENT_TRANSPORT_H
#define PARLEY_CLIENT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>
#include "parley/base.h"
#include "pmsg.h"

typedef struct _client_transport_t client_transport_t;

//  NULL when memory ran out. No socket is made yet.
client_transport_t *client_transport_new (void);
void client_transport_destroy (client_transport_t **self_p);
//  For the raw test client: no frame size cap, a receive high-water mark
//  of `rcvhwm` (0: none), no handshake monitor.
void client_transport_set_raw (client_transport_t *self, int rcvhwm);
//  The key pair and the broker's public certificate (both NULL: plain),
//  checked now. PARLEY_OK, PARLEY_ERR_INVALID (`why` says why), _NOMEM.
parley_err_t client_transport_set_curve (client_transport_t *self, const char *own_cert,
                                         const char *server_cert, char *why, size_t why_size);
bool client_transport_curve (const client_transport_t *self);

//  A fresh DEALER connected to `endpoint` (the old one closed first).
//  PARLEY_OK, or _SOCKET / _INVALID / _NOMEM with `why`.
parley_err_t client_transport_open (client_transport_t *self, const char *endpoint,
                                    char *why, size_t why_size);
void client_transport_close (client_transport_t *self);
bool client_transport_is_open (const client_transport_t *self);
//  One frame on the DEALER. 0, or -1 (zmq_errno says why: EAGAIN when
//  the send queue is full with `dontwait`).
int client_transport_send (client_transport_t *self, const void *data, size_t size, bool dontwait);
//  The next reply, decoded; NULL when none is there (or, waiting, when
//  the socket fails). A frame that does not decode is dropped and counted.
//  *nomem is set when memory ran out (the frame stays in the socket).
pmsg_t *client_transport_recv (client_transport_t *self, bool nowait, bool *nomem);
//  A reply is waiting on the DEALER.
bool client_transport_readable (client_transport_t *self);
//  Waits up to `ms` for the DEALER (`dealer`) and the SUB (`sub`) to have
//  something, or for the DEALER to take a frame (`writable`). >0 when one
//  is ready, 0 on timeout, -1 on error.
int client_transport_poll (client_transport_t *self, bool dealer, bool writable, bool sub,
                           int64_t ms);
//  After a timeout: whether the CURVE handshake failed, and why.
bool client_transport_handshake_failed (client_transport_t *self, char *why, size_t why_size);

//  The SUB socket on `endpoint` (kept when already there: *fresh false).
parley_err_t client_transport_sub_open (client_transport_t *self, const char *endpoint,
                                        bool *fresh, char *why, size_t why_size);
void client_transport_sub_close (client_transport_t *self);
bool client_transport_sub_is_open (const client_transport_t *self);
void client_transport_subscribe (client_transport_t *self, const char *prefix);
void client_transport_unsubscribe (client_transport_t *self, const char *prefix);
bool client_transport_sub_readable (client_transport_t *self);
//  The next event without waiting: its topic (cut to fit) and its body,
//  which the caller closes. 0, or -1 when none (a one-frame event is
//  dropped and counted).
int client_transport_sub_recv (client_transport_t *self, char *topic, size_t topic_size,
                               zmq_msg_t *body);

//  The caller's descriptor: an epoll set over both sockets, -1 before
//  either exists. The same over reconnects.
int client_transport_fd (client_transport_t *self);
//  Makes the caller's descriptor fire at `at_us` (monotonic microseconds)
//  for what the client holds back until then; nothing when the caller
//  never asked for the descriptor. Taking it clears a timer that fired
//  (an expired timer keeps the descriptor readable until then).
void client_transport_set_alarm (client_transport_t *self, int64_t at_us);
//  What was sent last may still go out for `ms` (at most
//  CLIENT_TRANSPORT_LINGER_MS) after the socket closes. Sockets are made
//  with no linger (a reconnect drops what the old one held: it is sent
//  again), so without this libzmq drops what its I/O thread has not
//  written yet; zmq_ctx_term waits for it when it was the last socket.
#define CLIENT_TRANSPORT_LINGER_MS 1000
void client_transport_linger (client_transport_t *self, int64_t ms);
void client_transport_take_alarm (client_transport_t *self);
//  Frames that did not decode.
uint64_t client_transport_bad_frames (const client_transport_t *self);
//  The bare libzmq sockets, for the raw test client (NULL when not open).
void *client_transport_dealer (client_transport_t *self);
void *client_transport_sub (client_transport_t *self);

#endif
