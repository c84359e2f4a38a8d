/*  brokerlink - the agent's connection to parley-broker.

    A DEALER socket for requests (one msgpack frame each, replies matched by
    request id) and a SUB socket for events (mail.<id> wake-ups, world.*).
    The agent only needs the request endpoint: WELCOME gives the rest.

    The link never gives up on a lost broker. A request that gets no reply
    within the timeout closes the DEALER (dropping anything queued on it),
    and the link says HELLO again on a fresh socket, with exponential
    backoff, until the broker answers or the stop flag is raised. Then the
    request is sent again. ID_IN_USE on a re-HELLO (the broker still thinks
    our old connection is alive) is retried the same way; NOT_HELLO (the
    broker expired us, e.g. during a long model call) triggers a re-HELLO
    and a resend.

    The link is single-threaded. During a slow model call the HTTP client
    calls brokerlink_keepalive() from its progress callback: it sends a
    HEARTBEAT without waiting (when one is due) and takes its OK later by
    id, so the broker does not expire an agent that is only thinking. Were
    the broker to expire us anyway, the next request re-HELLOs (mail is
    kept).

    A request resent after a reconnect may execute twice if the first copy
    did reach the broker. For ACT that would be a second move: the agent
    puts its step number in ACT, and the broker answers a repeated (agent,
    step) with the OBSERVATION of the first copy without moving again.
    SEND has the same guard: the caller puts brokerlink_next_batch() in
    it as `batch`, the resend carries the very same frame, and the broker
    answers a repeated batch id with the first copy's SENT without posting
    again. Reads, HEARTBEAT and LISTEN are harmless twice.

    After every HELLO the link re-LISTENs to the channels it was told to
    listen to, since a restarted broker has forgotten them.
*/
#ifndef PARLEY_BROKERLINK_H
#define PARLEY_BROKERLINK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "pmsg.h"

typedef struct _brokerlink_t brokerlink_t;

//  What WELCOME said, as of the last HELLO.
typedef struct {
    char pub[256];
    char tap[256];
    uint64_t heartbeat_ms;
    uint64_t liveness_ms;
    uint64_t max_body;
    uint64_t max_batch;
    uint64_t acked;
    uint64_t mail_seq;
    uint64_t state_seq;
    char world_kind[16];        //  "line" or "grid"
    uint64_t world_width;
    uint64_t world_height;
    uint64_t objects_total;
    uint64_t explored;
    double coverage;
    bool done;
} brokerlink_welcome_t;

typedef struct {
    uint64_t requests;          //  requests sent (resends included)
    uint64_t timeouts;          //  requests that got no reply in time
    uint64_t hellos;            //  successful HELLOs (1 + reconnects)
    uint64_t hello_failures;    //  HELLO attempts that failed
    uint64_t mail_wakeups;      //  MAIL_READY events seen
    uint64_t world_events;      //  WORLD_EVENT events seen
    uint64_t bad_frames;        //  replies or events that did not decode
    uint64_t keepalives;        //  HEARTBEATs sent by brokerlink_keepalive
} brokerlink_stats_t;

#define BROKERLINK_MAX_CHANNELS 16

brokerlink_t *brokerlink_new (const char *endpoint, const char *agent_id);
void brokerlink_destroy (brokerlink_t **self_p);

//  Capabilities sent in HELLO (copied; at most 8).
void brokerlink_add_cap (brokerlink_t *self, const char *cap);
//  Reply timeout per request, default 3000 ms; backoff cap default 2000 ms.
void brokerlink_set_timeout (brokerlink_t *self, int64_t request_ms, int64_t backoff_max_ms);
//  Security (docs/SECURITY.md): CURVE key files (both or neither; the
//  caller checked them with pcurve_client), and the file that keeps the
//  broker's resume token between runs (NULL: kept in memory only).
void brokerlink_set_security (brokerlink_t *self, const char *curve_key,
                              const char *curve_server_key, const char *token_file);
//  Raised by a signal handler; every wait returns soon after it is set.
void brokerlink_set_stop (brokerlink_t *self, volatile sig_atomic_t *stop);

//  Says HELLO (retrying as above). 0 ok; -1 if stopped, or if the broker
//  refused the id for good (BAD_NAME, RESERVED_NAME, TOO_MANY_AGENTS):
//  then `err` says why.
int brokerlink_connect (brokerlink_t *self, char *err, size_t err_size);

//  Starts a request of `type` with `fields` own fields; write exactly that
//  many key/value pairs into the returned encoder, then brokerlink_call().
penc_t *brokerlink_begin (brokerlink_t *self, pmsg_type_t type, size_t fields);
//  Sends the request begun above and returns the reply (caller destroys):
//  the normal reply or an ERROR. NULL only if stopped or the request could
//  not be delivered after several reconnects (`err` says which).
pmsg_t *brokerlink_call (brokerlink_t *self, char *err, size_t err_size);

//  A new SEND batch id (PROTOCOL.md, idempotent SEND): larger than every
//  id this process handed out before, and than the last id of an earlier
//  run of the same agent (see brokerlink_new).
uint64_t brokerlink_next_batch (brokerlink_t *self);

//  After brokerlink_call returned NULL: true when there is no broker to
//  talk to (stopped, or the broker refused our HELLO for good); false when
//  the broker kept answering HELLO but not the request (timeouts), so
//  other requests may still get through.
bool brokerlink_lost (brokerlink_t *self);

//  Convenience for requests without fields (PERCEIVE, STATS, AGENTS, ...).
pmsg_t *brokerlink_simple (brokerlink_t *self, pmsg_type_t type, char *err, size_t err_size);

//  LISTEN to a channel and remember it for re-HELLOs. 0 ok, -1 on error.
int brokerlink_listen (brokerlink_t *self, const char *channel, char *err, size_t err_size);

//  Waits up to `ms` for events, sending a HEARTBEAT when one is due.
//  Returns true if mail was announced (during this or an earlier wait and
//  not yet taken with brokerlink_take_mail_flag).
bool brokerlink_wait (brokerlink_t *self, int64_t ms);
//  Reads and clears the "mail announced" flag (events are drained first).
bool brokerlink_take_mail_flag (brokerlink_t *self);
//  Sends a HEARTBEAT if nothing went out for heartbeat_ms / 2.
void brokerlink_tick (brokerlink_t *self);

//  Never blocks: drains events and stray replies, and sends a HEARTBEAT
//  (not waiting for its OK) if nothing went out for heartbeat_ms / 2. For
//  callers stuck in something else, e.g. http's tick during a model call.
//  Does nothing inside a request or without a session.
void brokerlink_keepalive (brokerlink_t *self);

//  Says BYE (mail stays queued); best effort, short timeout.
void brokerlink_bye (brokerlink_t *self);

const brokerlink_welcome_t *brokerlink_welcome (brokerlink_t *self);
//  Counts sessions: bumps on every successful HELLO. A connector that keeps
//  broker sequence numbers compares it to notice a new session.
uint64_t brokerlink_epoch (brokerlink_t *self);
void brokerlink_stats (brokerlink_t *self, brokerlink_stats_t *stats);
bool brokerlink_stopped (brokerlink_t *self);

//  Error code and name of an ERROR reply, for logs: "INBOX_FULL: text".
void brokerlink_error_text (const pmsg_t *reply, char *buf, size_t size);

#endif
