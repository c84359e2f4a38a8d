// SPDX-License-Identifier: MIT
/*  parking - backpressure: SENDs that wait for room in a full inbox, and
    the requests of their connections held behind them.

    A SEND whose messages do not fit the inbox of an ONLINE recipient (one
    that is reading) waits for room instead of failing with INBOX_FULL, up
    to its `wait_ms` (default --send-wait-ms), counted from when the broker
    read it. It is parked whole: nothing of it is applied, journaled or
    answered until it fits, or its deadline passes (it is then applied as
    with wait_ms 0: what does not fit gets INBOX_FULL naming the wait), or
    its sender goes offline (applied the same way at once, so that a
    client that reconnects and resends the same `batch` gets that answer
    and nothing twice). A full inbox of an OFFLINE recipient fails at once:
    waiting would not empty it. An inbox that could never take the SEND's
    share even empty is waited for only until it is empty. First come,
    first served: a SEND for an inbox an earlier parked SEND waits for
    parks behind it, and retries go in the order the SENDs parked.

    While a connection has a parked SEND its later requests are held
    behind it, in order, so replies keep the request order; at most
    PARKING_HELD_MAX requests and PARKING_HELD_BYTES bytes per connection
    (and PARKING_HELD_TOTAL_BYTES for all): beyond, a request is refused at
    once with ERROR QUEUES_FULL, unapplied (STATS requests_refused_held).

    Acknowledgements that free room call parking_inbox_room; the broker
    retries the SENDs waiting for that inbox at the end of the loop turn
    (parking_run), oldest first, and a 10 ms timer, running only while
    something is parked, checks the deadlines. A turn hands on at most
    BROKER_DRAIN_BATCH requests this way; the rest go on at the next turn,
    between other clients' requests.
*/
#ifndef PARLEY_BROKER_PARKING_H
#define PARLEY_BROKER_PARKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include "core/agents.h"

#define PARKING_HELD_MAX 16384
#define PARKING_HELD_BYTES (32 * 1024 * 1024)
#define PARKING_HELD_TOTAL_BYTES (256 * 1024 * 1024)
#define PARKING_TIMER_MS 10

typedef struct _parking_t parking_t;
typedef struct _broker_t broker_t;

parking_t *parking_new (void);
//  Drops every parked SEND and held request unanswered (broker shutdown).
void parking_destroy (parking_t **self_p);

//  SENDs parked now, and requests held behind them.
size_t parking_waiting (parking_t *self);
size_t parking_held (parking_t *self);
//  True while a parked SEND is being applied because its sender went
//  offline: handle_send must not park it again.
bool parking_forced (parking_t *self);

//  The first online recipient of `items` (a SEND's messages from
//  `sender`) whose inbox cannot take its share of them now, or NULL.
agent_t *parking_blocked (broker_t *self, agent_t *sender, const msgpack_object *items);

//  The agent's inbox got room (an acknowledgement, a drop): the SENDs
//  waiting for it are retried at the end of this loop turn. Cheap when
//  nothing is parked. Every path that acknowledges mail calls it.
void parking_inbox_room (broker_t *self, agent_t *agent);
//  The agent went offline or is being forgotten: its own parked SEND is
//  applied now (see above; this may write self->reply, so callers detach
//  before writing their reply), and SENDs waiting for its inbox are
//  retried at the end of the turn.
void parking_agent_gone (broker_t *self, agent_t *agent);
//  End of a loop turn: retries what may go on and hands the held
//  requests of connections no longer parked to the dispatcher.
void parking_run (broker_t *self);

#endif
