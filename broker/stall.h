// SPDX-License-Identifier: MIT
/*  stall - a reply is never dropped: replies a connection's full pipe
    refused, and the requests it sends meanwhile.

    The ROUTER holds at most --router-hwm replies for a connection that
    does not read them. When a reply meets that full pipe (EAGAIN), it is
    kept here instead of being dropped, with every later reply to the same
    connection behind it (the order stays), and the connection's next
    requests are held unread-as-it-were: not handled until its replies
    have left. That is backpressure on the request side: a client that
    sends faster than it reads slows down to its own reading speed, and
    one that never reads stops being served, without costing anyone else.
    A timer tries the refused replies again every STALL_RETRY_MS while any
    are kept.

    Bounds (--max-client-backlog per connection, --max-backlog for all,
    in bytes of replies and held requests), counted in STATS. A connection
    past its bound is cut (its socket shut down: libzmq closes it and the
    session ends as for any closed connection), logged and counted
    (connections_cut): a client that never reads cannot grow the broker.
*/
#ifndef PARLEY_BROKER_STALL_H
#define PARLEY_BROKER_STALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/agents.h"

#define STALL_CONN_BYTES_DEFAULT (64u * 1024 * 1024)
#define STALL_TOTAL_BYTES_DEFAULT (512u * 1024 * 1024)
#define STALL_RETRY_MS 2

typedef struct _stall_t stall_t;
typedef struct _broker_t broker_t;
typedef struct _request_t request_t;

stall_t *stall_new (uint64_t conn_bytes, uint64_t total_bytes);
void stall_destroy (stall_t **self_p);

//  Kept now: replies, held requests, and connections with either.
size_t stall_replies (stall_t *self);
size_t stall_held (stall_t *self);
size_t stall_conns (stall_t *self);
uint64_t stall_bytes (stall_t *self);

//  True when `conn` has replies waiting: a reply to it must queue behind
//  them (stall_reply) rather than be sent.
bool stall_blocked (stall_t *self, const conn_id_t *conn);

//  Keeps a reply the pipe refused (or one queued behind those). The
//  broker's retry timer starts if it is not running.
void stall_reply (broker_t *broker, const conn_id_t *conn, uint64_t serial, bool envelope,
                  const char *agent, const void *data, size_t size);

//  A request frame from a connection with replies waiting: held (true),
//  or, past the bound, the connection is cut (also true: nothing to do).
//  False when the connection has nothing waiting.
bool stall_hold (broker_t *broker, const conn_id_t *conn, const void *data, size_t size,
                 size_t extra_frames, const request_t *req);

//  Forgets a connection that closed (conn_watch): its replies can never
//  leave.
void stall_drop_fd (broker_t *broker, int fd);

#endif
