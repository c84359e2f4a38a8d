// SPDX-License-Identifier: MIT
/*  conn_watch - learns when a ROUTER connection closes.

    libzmq hides connections behind the ROUTER: a peer that disconnects, or
    that libzmq drops itself (a frame over ZMQ_MAXMSGSIZE, a failed
    handshake), leaves no trace in the message stream. Without this the
    agent bound to that connection stays "online" until --liveness-ms runs
    out and its id cannot be taken by the restarted agent meanwhile.

    Why a socket monitor: ZMQ_ROUTER_NOTIFY (an empty message on connect
    and disconnect) would be simpler, but it is a draft option, and the
    Debian libzmq5 build refuses it (EINVAL). The monitor is stable API; its
    ZMQ_EVENT_DISCONNECTED carries the connection's file descriptor, and
    each received frame tells which descriptor it came from (zmq_msg_get
    ZMQ_SRCFD), so the broker notes the descriptor at HELLO and ends that
    session when the descriptor's disconnect arrives.

    Descriptors are reused by the kernel. A disconnect event is queued
    before libzmq closes the descriptor, so it is always in the monitor's
    pipe before any frame of a later connection that got the same number;
    the broker therefore drains every pending event before it binds a
    descriptor to an agent (HELLO), and an event it reads afterwards can
    only concern the connection bound last.
*/
#ifndef PARLEY_BROKER_CONN_WATCH_H
#define PARLEY_BROKER_CONN_WATCH_H

#include <czmq.h>

typedef struct _conn_watch_t conn_watch_t;

//  Starts monitoring `router` (a zsock ROUTER). NULL if libzmq refuses.
conn_watch_t *conn_watch_new (zsock_t *router);
//  Stops the monitor and closes its socket.
void conn_watch_destroy (conn_watch_t **self_p);
//  The socket events arrive on (for a zloop reader).
zsock_t *conn_watch_sock (conn_watch_t *self);
//  The descriptor of the next closed connection, or -1 when no event is
//  waiting. Never blocks.
int conn_watch_next (conn_watch_t *self);
//  The descriptor of the connection a received frame came on (-1 if not
//  known, e.g. inproc).
int conn_watch_fd (zmq_msg_t *frame);
//  Connections accepted and not yet closed (metrics), as far as the
//  events read so far tell.
uint64_t conn_watch_open (conn_watch_t *self);

#endif
