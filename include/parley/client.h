// SPDX-License-Identifier: MIT
/*  parley/client.h - libparley, the C client of the Parley broker. The one
    header a program includes; it includes the rest:

      parley/base.h       version, outcomes (parley_err_t), the opaque types
      parley/client.h     the client: life cycle, options, session, waiting
      parley/mail.h       SEND, FETCH, ACK, LISTEN, pushed mail, pipelined SENDs
      parley/state.h      WRITE, GET, SNAPSHOT, the state replica, values
      parley/world.h      PERCEIVE, ACT, WORLD_RESET, STEP
      parley/broker.h     AGENTS, STATS, HEARTBEAT, BYE, events by topic
      parley/workflow.h   turns, hand-over, checkpoints
      parley/pipeline.h   requests posted without waiting, collected by ticket

    The client keeps one session with the broker: a DEALER socket for
    requests (replies matched by request id), a SUB socket for events,
    HELLO again with backoff after a lost or expired session, and the
    channels, subscriptions and replica it had restored on the new one. A
    request whose reply did not come is sent again on the new session;
    SEND carries a batch id and ACT and STEP the caller's step number, so
    the broker answers a repeat without acting twice.

    Results. A request's result is an object the caller owns, passed by
    the address of a pointer:

        parley_mail_t *mail = NULL;
        while (parley_client_fetch (client, ack, 100, true, &mail) == PARLEY_OK)
            ...                                 //  the same object, filled again
        parley_mail_destroy (&mail);

    NULL asks the request to make one; an object from an earlier call is
    filled again, reusing its memory. What a result hands out (strings,
    bodies, records) stays valid until it is filled again or destroyed.
    A request that fails makes nothing (*result_p stays NULL if it was);
    an object the caller passed is then not to be read until a request
    fills it again, only destroyed or reused. Requests whose result is
    optional accept a NULL result_p.

    Builders (parley_outbox_t, parley_ops_t, parley_step_t,
    parley_handover_t) are made with _new, filled, used by any number of
    requests, emptied with _reset and destroyed by the caller. A builder
    remembers the first thing it refused (a bad argument, or memory) and
    a request given it fails with that error: add everything, check once.

    Memory. No function aborts: when memory runs out, a request fails with
    PARLEY_ERR_NOMEM (nothing was sent if it ran out before sending; see
    docs/CLIENT.md for the rest), a _new returns NULL, a take returns false
    and leaves what it would have taken queued.

    A client is used from one thread. Events (mail wake-ups, the replica's
    updates) are taken by parley_client_wait, or by the caller's own event
    loop through parley_client_fd: see there for its edge-triggered caveat.

    Minimal use (examples/c/example.c and docs/CLIENT.md have more):

        parley_client_t *client = parley_client_new ("tcp://127.0.0.1:5555", "Agent1");
        if (client && parley_client_connect (client) == PARLEY_OK) {
            parley_mail_t *mail = NULL;
            if (parley_client_fetch (client, 0, 10, false, &mail) == PARLEY_OK)
                for (size_t i = 0; i < parley_mail_count (mail); i++)
                    puts (parley_message_from (parley_mail_at (mail, i)));
            parley_mail_destroy (&mail);
        }
        parley_client_destroy (&client);
*/
#ifndef PARLEY_CLIENT_H
#define PARLEY_CLIENT_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

//  ---------------------------------------------------------------------
//  Life cycle and options

//  A client for `agent_id` at the broker's request endpoint. Nothing is
//  sent until parley_client_connect. NULL when memory ran out, or when an
//  argument is NULL or longer than the protocol allows (256 bytes for the
//  endpoint, PARLEY_NAME_MAX for the id).
parley_client_t *parley_client_new (const char *endpoint, const char *agent_id);
void parley_client_destroy (parley_client_t **self_p);

//  A capability sent in HELLO (copied; at most 8: PARLEY_ERR_INVALID beyond).
parley_err_t parley_client_add_cap (parley_client_t *self, const char *cap);
//  Reply timeout per request (default 3000 ms) and the longest pause
//  between HELLO attempts (default 2000 ms); 0 or less keeps the default.
void parley_client_set_timeout (parley_client_t *self, int64_t request_ms, int64_t backoff_max_ms);
//  How many times one request is sent before PARLEY_ERR_TIMEOUT (default 5).
void parley_client_set_attempts (parley_client_t *self, int attempts);
//  HELLO attempts connect and reconnects make before PARLEY_ERR_TIMEOUT
//  (default 0: until the broker answers or the stop flag is raised).
void parley_client_set_connect_attempts (parley_client_t *self, int attempts);
//  A flag a signal handler raises: every wait returns soon after.
void parley_client_set_stop (parley_client_t *self, volatile sig_atomic_t *stop);
//  Security (docs/SECURITY.md). `curve_key` is this client's certificate
//  (with its _secret file) and `curve_server_key` the broker's public one:
//  both or neither (plain). `token_file` keeps the resume token a plain
//  broker issues at WELCOME, so a restarted client takes its id over at
//  once (NULL: kept in memory only). PARLEY_OK, or PARLEY_ERR_INVALID with
//  the reason in parley_client_error_text when a key file is unusable.
parley_err_t parley_client_set_security (parley_client_t *self, const char *curve_key,
                                         const char *curve_server_key, const char *token_file);
//  An observer (the tap, operator tools) says HELLO with `observe`: it
//  learns the endpoints but is not registered as an agent and gets no mail.
//  It may read (GET, SNAPSHOT, AGENTS, STATS, the workflow); anything else
//  is refused by the broker with NOT_HELLO.
void parley_client_set_observe (parley_client_t *self, bool observe);

//  ---------------------------------------------------------------------
//  Session

//  Says HELLO, retrying with backoff until the broker answers or the stop
//  flag is raised. PARLEY_OK; PARLEY_ERR_STOPPED; PARLEY_ERR_TIMEOUT after
//  the connect attempts; or the code of a refusal for good (BAD_NAME,
//  RESERVED_NAME, TOO_MANY_AGENTS, BAD_FIELD, UNAUTHORIZED).
parley_err_t parley_client_connect (parley_client_t *self);
//  Counts sessions: 1 after connect, +1 for every HELLO after a reconnect.
uint64_t parley_client_epoch (parley_client_t *self);
bool parley_client_stopped (parley_client_t *self);
//  The broker's sentence (or the client's) for the last error.
const char *parley_client_error_text (parley_client_t *self);

//  What WELCOME said, as of the last HELLO. The object belongs to the
//  client and lives as long as it; each HELLO updates it. Before the first
//  session its numbers are 0 and its strings "".
const parley_welcome_t *parley_client_welcome (parley_client_t *self);
const char *parley_welcome_pub (const parley_welcome_t *self);     //  the event endpoint
const char *parley_welcome_tap (const parley_welcome_t *self);     //  the tap endpoint
uint64_t parley_welcome_heartbeat_ms (const parley_welcome_t *self);
uint64_t parley_welcome_liveness_ms (const parley_welcome_t *self);
uint64_t parley_welcome_max_body (const parley_welcome_t *self);
uint64_t parley_welcome_max_batch (const parley_welcome_t *self);
uint64_t parley_welcome_acked (const parley_welcome_t *self);
uint64_t parley_welcome_mail_seq (const parley_welcome_t *self);
uint64_t parley_welcome_state_seq (const parley_welcome_t *self);
//  Changes when the broker's counters restart (0: not sent).
uint64_t parley_welcome_origin (const parley_welcome_t *self);
//  The world: "line" or "grid", its size, and how far it is explored.
const char *parley_welcome_world_kind (const parley_welcome_t *self);
uint64_t parley_welcome_world_width (const parley_welcome_t *self);
uint64_t parley_welcome_world_height (const parley_welcome_t *self);
uint64_t parley_welcome_objects_total (const parley_welcome_t *self);
uint64_t parley_welcome_explored (const parley_welcome_t *self);
double parley_welcome_coverage (const parley_welcome_t *self);
bool parley_welcome_done (const parley_welcome_t *self);
//  WELCOME's `features` lists `name` (2.1): an optional behaviour of this
//  broker, such as "send_ack" (SEND takes `ack`, PROTOCOL.md).
bool parley_welcome_feature (const parley_welcome_t *self, const char *name);

//  ---------------------------------------------------------------------
//  Events and liveness

//  Waits up to `ms` for events, sending a HEARTBEAT when one is due, and
//  what the client holds back (pipelined SENDs, an acknowledgement:
//  parley/mail.h), reading confirms meanwhile. Returns true when mail was
//  announced (or pushed) and not yet taken; returns at once when an event
//  (parley/broker.h), a workflow event or pushed mail is queued.
bool parley_client_wait (parley_client_t *self, int64_t ms);
//  Reads and clears the "mail announced" flag.
bool parley_client_take_mail (parley_client_t *self);
//  Never blocks: takes pending events, and sends a HEARTBEAT without
//  waiting for its reply when one is due. For callers busy with something
//  else (a model call's progress callback). Does nothing inside a request,
//  and leaves held pipelined SENDs held (sending them could block).
void parley_client_keepalive (parley_client_t *self);

//  A file descriptor for poll/epoll in the caller's loop, or -1 before
//  the first session: an epoll descriptor over the event socket, the
//  request socket (which carries pushed mail and confirms) and a timer for
//  what the client holds back (parley/mail.h: it fires when a held SEND
//  or acknowledgement falls due). Like ZMQ_FD it signals "look", not
//  "readable": when it fires, call parley_client_process (which drains
//  every event and pushed frame and clears the timer) and do not wait on
//  the fd again before it returned. It stays the same over reconnects.
int parley_client_fd (parley_client_t *self);
//  Takes every pending event without waiting, sends a HEARTBEAT when
//  one is due and what the client holds back (window permitting); returns
//  true when mail was announced and not yet taken.
bool parley_client_process (parley_client_t *self);

//  ---------------------------------------------------------------------
//  Counters, read one at a time: a later version adds counters at the end
//  of this list, and an unknown number reads 0.
typedef enum {
    PARLEY_COUNTER_REQUESTS,            //  requests sent, resends included
    PARLEY_COUNTER_TIMEOUTS,            //  requests that got no reply in time
    PARLEY_COUNTER_HELLOS,              //  successful HELLOs
    PARLEY_COUNTER_HELLO_FAILURES,
    PARLEY_COUNTER_MAIL_WAKEUPS,        //  MAIL_READY events
    PARLEY_COUNTER_WORLD_EVENTS,
    PARLEY_COUNTER_STATE_UPDATES,       //  STATE_UPDATE events applied to the replica
    PARLEY_COUNTER_RESNAPSHOTS,         //  snapshots taken after a gap or reconnect
    PARLEY_COUNTER_DUPLICATES,          //  redelivered mail left out (FETCH, pushes, STEP)
    PARLEY_COUNTER_BAD_FRAMES,          //  replies and events that did not decode
    PARLEY_COUNTER_KEEPALIVES,          //  HEARTBEATs sent by parley_client_keepalive
    PARLEY_COUNTER_WORKFLOW_EVENTS,     //  WORKFLOW_EVENTs queued
    PARLEY_COUNTER_WORKFLOW_DROPPED,    //  WORKFLOW_EVENTs dropped from a full queue
    PARLEY_COUNTER_EVENTS,              //  events queued for parley_client_event
    PARLEY_COUNTER_EVENTS_DROPPED,      //  events dropped from its full queue
    //  Pipelined SENDs (parley/mail.h)
    PARLEY_COUNTER_POSTED,              //  pipelined SENDs posted (resends not counted)
    PARLEY_COUNTER_CONFIRMED,           //  covered by a CONFIRM
    PARLEY_COUNTER_ACCEPTED,            //  messages the broker accepted
    PARLEY_COUNTER_FAILED_MESSAGES,     //  message failures (item errors)
    PARLEY_COUNTER_FAILED_SENDS,        //  SENDs refused whole, or given up after timeouts
    PARLEY_COUNTER_ERRORS_OMITTED,      //  failures the broker only counted
    PARLEY_COUNTER_FAILURES_DROPPED,    //  failures dropped from the full queue
    PARLEY_COUNTER_RESENT,              //  SENDs sent again after a reconnect
    PARLEY_COUNTER_WINDOW_WAITS,        //  posts that blocked on a full window
    PARLEY_COUNTER_IN_FLIGHT,           //  SENDs not yet confirmed (a level, not a count)
    PARLEY_COUNTER_IN_FLIGHT_MESSAGES,
    PARLEY_COUNTER_IN_FLIGHT_BYTES,
    //  Memory
    PARLEY_COUNTER_NOMEM,               //  allocations that failed
    //  Coalescing and acknowledgements riding on SEND (2.1; parley/mail.h)
    PARLEY_COUNTER_SEND_FRAMES,         //  pipelined SEND frames sent (resends not counted)
    PARLEY_COUNTER_FLUSH_FULL,          //  frames that went full (count or bytes)
    PARLEY_COUNTER_FLUSH_TIMER,         //  frames that went at the linger's end (in a post, wait or poll)
    PARLEY_COUNTER_FLUSH_WAIT,          //  frames a wait or a poll sent before they were due
    PARLEY_COUNTER_FLUSH_IDLE,          //  frames sent because nothing was in flight
    PARLEY_COUNTER_FLUSH_CALL,          //  frames sent by a flush, another request, or destroy
    PARLEY_COUNTER_HELD,                //  posts held now (a level, not a count)
    PARLEY_COUNTER_ACKS_RIDDEN,         //  acknowledgements carried by a SEND
    PARLEY_COUNTER_ACKS_SENT,           //  ACK frames sent without waiting
    PARLEY_COUNTERS                     //  how many this header knows
} parley_counter_t;

uint64_t parley_client_counter (parley_client_t *self, parley_counter_t counter);

#ifdef __cplusplus
}
#endif

#include "parley/mail.h"
#include "parley/state.h"
#include "parley/world.h"
#include "parley/broker.h"
#include "parley/workflow.h"
#include "parley/pipeline.h"

#endif
