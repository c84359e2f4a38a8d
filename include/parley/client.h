// SPDX-License-Identifier: MIT
/*  parley/client.h - libparley, the C client of the Parley broker.

    One typed client, layered as transport -> session -> request:

      - transport: a DEALER socket for requests (one msgpack frame each,
        replies matched by request id) and a SUB socket for events; both
        are made by one function inside the library;
      - session: HELLO / WELCOME, heartbeats when idle, and on a lost or
        expired session a fresh socket, HELLO again with exponential
        backoff, and LISTEN again to every channel listened to before;
      - requests: one function each, with a typed result and a typed error
        (parley_err_t). A request whose reply did not come is sent again on
        the new session; SEND carries a batch id and ACT the caller's step
        number, so the broker answers a repeat without acting twice.

    Results hold pointers (strings, bodies, values) into the client: they
    stay valid until the next call that talks to the broker (a request,
    parley_client_wait, _process, _replica). Copy what you keep. Values in the shared state are msgpack bytes; parley_pack_* and
    parley_value_* cover the scalars, any msgpack library does the rest.

    A client is used from one thread. Events (mail wake-ups, the state
    replica's updates) are taken by parley_client_wait, or by the caller's
    own event loop through parley_client_fd: see there for its
    edge-triggered caveat.

    Minimal use (see examples/c/example.c and docs/CLIENT.md):

        parley_client_t *client = parley_client_new ("tcp://127.0.0.1:5555", "Agent1");
        if (parley_client_connect (client) == PARLEY_OK) {
            parley_mail_batch_t mail;
            if (parley_client_fetch (client, 0, 10, false, &mail) == PARLEY_OK)
                ...
        }
        parley_client_destroy (&client);
*/
#ifndef PARLEY_CLIENT_H
#define PARLEY_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARLEY_CLIENT_VERSION_MAJOR 1
#define PARLEY_CLIENT_VERSION_MINOR 0
#define PARLEY_NAME_MAX 64              //  agent and channel names, bytes
#define PARLEY_MAX_CHANNELS 16          //  channels one client re-LISTENs to

//  Outcomes. The protocol's ERROR codes keep their wire numbers (1..99);
//  what the client itself met is numbered from 1000.
typedef enum {
    PARLEY_OK = 0,
    PARLEY_ERR_MALFORMED = 1,
    PARLEY_ERR_TOO_LARGE = 2,
    PARLEY_ERR_UNKNOWN_TYPE = 3,
    PARLEY_ERR_BAD_FIELD = 4,
    PARLEY_ERR_VERSION = 5,
    PARLEY_ERR_NOT_REQUEST = 6,
    PARLEY_ERR_NOT_HELLO = 10,
    PARLEY_ERR_ID_IN_USE = 11,
    PARLEY_ERR_BAD_NAME = 12,
    PARLEY_ERR_RESERVED_NAME = 13,
    PARLEY_ERR_TOO_MANY_AGENTS = 14,
    PARLEY_ERR_UNKNOWN_RECIPIENT = 20,
    PARLEY_ERR_INBOX_FULL = 21,
    PARLEY_ERR_CHANNEL_FULL = 22,
    PARLEY_ERR_TOO_MANY_CHANNELS = 23,
    PARLEY_ERR_NOT_LISTENING = 24,
    PARLEY_ERR_NO_SUCH_TARGET = 25, //  a `resolve` item names no agent and no listened channel
    PARLEY_ERR_BAD_REDUCER = 30,
    PARLEY_ERR_REDUCER_MISMATCH = 31,
    PARLEY_ERR_REDUCER_CONFLICT = 32,
    PARLEY_ERR_STATE_FULL = 33,
    PARLEY_ERR_NO_SUCH_KEY = 34,
    PARLEY_ERR_BAD_ACTION = 40,
    PARLEY_ERR_NOT_IN_WORLD = 41,
    PARLEY_ERR_INTERNAL = 50,
    PARLEY_ERR_SHUTTING_DOWN = 51,
    PARLEY_ERR_UNAUTHORIZED = 52,    //  the key or token does not allow it
    PARLEY_ERR_QUEUES_FULL = 53,     //  the broker's memory bound for queued mail is reached
    PARLEY_ERR_STORAGE = 54,         //  the broker cannot write its journal; nothing changed
    PARLEY_ERR_NOT_TURN_HOLDER = 60, //  HANDOVER from an agent not holding the turn
    PARLEY_ERR_NO_WORKFLOW = 61,     //  the broker runs no workflow
    PARLEY_ERR_WORKFLOW_ENDED = 62,  //  HANDOVER after done or failed
    PARLEY_ERR_NO_SUCH_CHECKPOINT = 63, //  a checkpoint never recorded or no longer kept
    //  Client side
    PARLEY_ERR_TIMEOUT = 1000,      //  the broker answers HELLO but not this request
    PARLEY_ERR_STOPPED,             //  the stop flag was raised
    PARLEY_ERR_LOST,                //  no session: the broker refused our HELLO for good
    PARLEY_ERR_BAD_REPLY,           //  a reply of the wrong type, or one that did not decode
    PARLEY_ERR_INVALID,             //  a bad argument, caught before anything was sent
    PARLEY_ERR_SOCKET               //  a socket could not be made or connected
} parley_err_t;

//  "INBOX_FULL", "TIMEOUT", ...; "UNKNOWN" for other numbers (a newer broker).
const char *parley_strerror (int code);

typedef struct _parley_client_t parley_client_t;

//  ---------------------------------------------------------------------
//  Life cycle and options

//  A client for `agent_id` at the broker's request endpoint. Nothing is
//  sent until parley_client_connect.
parley_client_t *parley_client_new (const char *endpoint, const char *agent_id);
void parley_client_destroy (parley_client_t **self_p);

//  Capabilities sent in HELLO (copied; at most 8).
void parley_client_add_cap (parley_client_t *self, const char *cap);
//  Reply timeout per request (default 3000 ms) and the longest pause
//  between HELLO attempts (default 2000 ms).
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
//  It may read (parley_client_get, _snapshot, _agents, _stats); anything
//  else is refused by the broker with NOT_HELLO.
void parley_client_set_observe (parley_client_t *self, bool observe);

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
    uint64_t origin;            //  changes when the broker's counters restart (0: not sent)
} parley_welcome_t;

//  Says HELLO, retrying with backoff until the broker answers or the stop
//  flag is raised. PARLEY_OK; PARLEY_ERR_STOPPED; or the code of a refusal for
//  good (BAD_NAME, RESERVED_NAME, TOO_MANY_AGENTS, BAD_FIELD).
parley_err_t parley_client_connect (parley_client_t *self);
const parley_welcome_t *parley_client_welcome (parley_client_t *self);
//  Counts sessions: 1 after connect, +1 for every HELLO after a reconnect.
uint64_t parley_client_epoch (parley_client_t *self);
bool parley_client_stopped (parley_client_t *self);
//  The broker's sentence (or the client's) for the last error.
const char *parley_client_error_text (parley_client_t *self);

//  ---------------------------------------------------------------------
//  Requests. Each returns PARLEY_OK and fills its result, or an error.

//  SEND. One message: exactly one of `to` (agent id or "all") and
//  `channel` is set. With `resolve` (and `channel`), the broker decides
//  what the name is: a registered agent gets it as if `to` had been set, a
//  channel someone listens to gets the post, anything else is refused for
//  that item with PARLEY_ERR_NO_SUCH_TARGET (for a name a model wrote).
typedef struct {
    const char *to;
    const char *channel;
    const void *body;
    size_t body_len;
    bool resolve;
} parley_outgoing_t;

typedef struct {
    size_t index;               //  the item in the SEND
    int code;                   //  parley_err_t
    char agent[PARLEY_NAME_MAX + 1];    //  the recipient a fan-out missed, or ""
    char message[256];          //  the broker's sentence, cut to fit
} parley_item_error_t;

typedef struct {
    uint64_t batch;             //  the batch id the SEND carried
    size_t accepted;
    size_t count;               //  items sent
    const uint64_t *seqs;       //  count seqs, 0 for a refused item
    const parley_item_error_t *errors;
    size_t error_count;
} parley_sent_t;

//  Bodies longer than WELCOME.max_body are cut at a UTF-8 character
//  boundary. `result` may be NULL.
parley_err_t parley_client_send (parley_client_t *self, const parley_outgoing_t *items,
                                 size_t count, parley_sent_t *result);

typedef struct {
    uint64_t seq;
    uint64_t ts;                //  microseconds since the epoch, broker clock
    char from[PARLEY_NAME_MAX + 1];
    char to[PARLEY_NAME_MAX + 1];           //  agent, "all", or "" for a channel
    char channel[PARLEY_NAME_MAX + 1];      //  "" for point-to-point
    const char *body;           //  body_len bytes, not NUL-terminated
    size_t body_len;
} parley_mail_t;

typedef struct {
    const parley_mail_t *messages;
    size_t count;
    uint64_t pending;           //  still queued after these
    uint64_t acked;
} parley_mail_batch_t;

//  FETCH: acknowledges everything up to `ack` (0: nothing), then takes at
//  most `max` (0: the broker's default). `stream` continues after what
//  earlier FETCHes handed out. Messages whose seq this client has handed
//  out before in this process (a redelivery after a lost reply or a
//  broker restart) are left out of the batch: see parley_client_dedup.
//  So a plain FETCH that acknowledges nothing returns the same head again
//  and comes back empty while `pending` says there is more: acknowledge
//  what you took, or fetch with `stream`.
parley_err_t parley_client_fetch (parley_client_t *self, uint64_t ack, size_t max,
                                  bool stream, parley_mail_batch_t *result);
//  Turns the duplicate filter of FETCH on (default) or off.
void parley_client_dedup (parley_client_t *self, bool on);
//  ACK: acknowledges everything up to seq.
parley_err_t parley_client_ack (parley_client_t *self, uint64_t seq);
//  ---------------------------------------------------------------------
//  Pushed mail (PROTOCOL.md, CONSUME): instead of FETCH after a wake-up,
//  the broker pushes the agent's mail on the request connection as it is
//  queued, while what it pushed and nobody acknowledged stays within a
//  window of `credit` messages and `credit_bytes` body bytes (0: the
//  broker's default, 8 MiB). Acknowledging returns credit. credit 0 stops
//  the pushes. The subscription is opened again after every reconnect
//  (the mail pushed and not acknowledged then comes again; the duplicate
//  filter of parley_client_dedup leaves out what was taken before).
//
//  Pushed mail wakes parley_client_wait (it returns at once), makes
//  parley_client_process and _take_mail return true, and fires
//  parley_client_fd. Take it with parley_client_take_pushed, one pushed
//  frame at a time, until it returns false.
#define PARLEY_MAX_CREDIT 65536

typedef enum {
    PARLEY_ACK_EXPLICIT = 0,    //  the caller acknowledges (parley_client_ack,
                                //  _ack_nowait, a FETCH's ack): the default
    PARLEY_ACK_ON_TAKE          //  each take acknowledges everything the takes
                                //  before it handed out (cumulative, no round trip)
} parley_ack_policy_t;

//  CONSUME. PARLEY_ERR_INVALID for credit over PARLEY_MAX_CREDIT; the
//  broker's BAD_FIELD for a credit_bytes over its limit (64 MiB).
parley_err_t parley_client_consume (parley_client_t *self, uint32_t credit,
                                    uint64_t credit_bytes);
void parley_client_ack_policy (parley_client_t *self, parley_ack_policy_t policy);
//  The oldest pushed mail not yet taken, without waiting; false when none.
//  Like a FETCH's result, it points into the client until the next call.
//  Under PARLEY_ACK_ON_TAKE it first acknowledges what earlier takes
//  handed out, so call it again after processing a batch, even when you
//  expect nothing: that returns the credit.
bool parley_client_take_pushed (parley_client_t *self, parley_mail_batch_t *result);
//  ACK without waiting for the reply (cumulative: everything up to seq).
//  An ack lost with a connection is sent again with the next HELLO.
parley_err_t parley_client_ack_nowait (parley_client_t *self, uint64_t seq);

//  LISTEN / UNLISTEN; a channel listened to is listened to again after
//  every reconnect.
parley_err_t parley_client_listen (parley_client_t *self, const char *channel);
parley_err_t parley_client_unlisten (parley_client_t *self, const char *channel);

//  Shared state. Values are msgpack bytes.
typedef enum {
    PARLEY_OP_DECLARE, PARLEY_OP_UPDATE, PARLEY_OP_SET, PARLEY_OP_CLEAR, PARLEY_OP_DELETE
} parley_op_kind_t;

typedef struct {
    parley_op_kind_t op;
    const char *key;
    const void *value;          //  msgpack, for update and set
    size_t value_size;
    const char *reducer;        //  for declare
} parley_op_t;

typedef struct {
    uint64_t seq;               //  state seq after the write
    uint64_t changed;           //  keys changed
} parley_written_t;

typedef struct {
    const char *key;
    const char *reducer;
    uint64_t seq;
    const void *value;          //  msgpack; NULL when absent
    size_t value_size;
} parley_entry_t;

typedef struct {
    uint64_t seq;
    const parley_entry_t *entries;
    size_t count;
    bool more;                  //  a page of SNAPSHOT: ask again after the last key
} parley_state_t;

//  WRITE: the ops are applied atomically. `result` may be NULL.
parley_err_t parley_client_write (parley_client_t *self, const parley_op_t *ops, size_t count,
                                  parley_written_t *result);
parley_err_t parley_client_get (parley_client_t *self, const char *const *keys, size_t count,
                                parley_state_t *result);
//  SNAPSHOT: `prefix`, `after_key` may be NULL, `limit` 0 (no paging).
parley_err_t parley_client_snapshot (parley_client_t *self, const char *prefix,
                                     const char *after_key, size_t limit,
                                     parley_state_t *result);

//  The world.
typedef struct {
    uint64_t position;
    uint64_t x, y;
    const char *const *objects;
    size_t object_count;
    char outcome[PARLEY_NAME_MAX + 1];  //  perceived, moved, edge, stayed
    const char *const *new_objects;
    size_t new_count;
    uint64_t explored;
    uint64_t objects_total;
    double coverage;
    bool done;
    const void *image;          //  the position's image (PNG or JPEG bytes), or NULL
    size_t image_size;
    char image_type[8];         //  "png" or "jpeg" with an image, else ""
} parley_observation_t;

parley_err_t parley_client_perceive (parley_client_t *self, parley_observation_t *result);
//  ACT with the caller's step number (0: none): a repeat of (agent, step)
//  is answered with the first OBSERVATION and does not move again.
parley_err_t parley_client_act (parley_client_t *self, const char *action, uint64_t step,
                                parley_observation_t *result);
//  WORLD_RESET; a seed of zero keeps the broker's choice.
parley_err_t parley_client_world_reset (parley_client_t *self, uint64_t seed);

//  STEP: an agent's whole step in one request (PROTOCOL.md, STEP). The
//  broker applies, in this order: the ack, the messages (as SEND), the ops
//  (as WRITE: all or none), the action (as ACT; or, without one, a
//  PERCEIVE when `perceive` is set), then reads up to `fetch` messages of
//  mail. Every part is optional. With a `step` (non-zero) the request is
//  idempotent: the client resends it after a lost reply or a reconnect
//  and the broker answers a repeated step from memory without applying
//  anything twice (its mail is read afresh). A step of 0 sends none: the
//  STEP is always applied (and forgets the remembered one), so a resend
//  could apply messages and ops twice. Give a step with those; a run's
//  first STEP goes without one, so that a step number the previous run
//  used is not taken for a resend.
typedef struct {
    uint64_t step;              //  the agent's step number; 0: none
    uint64_t ack;               //  acknowledge everything up to it first; 0: nothing
    const parley_outgoing_t *messages;  //  as parley_client_send's; may be NULL
    size_t message_count;
    const parley_op_t *ops;     //  as parley_client_write's; may be NULL
    size_t op_count;
    const char *action;         //  a move, as parley_client_act's; NULL: none
    bool perceive;              //  without action: the observation of a PERCEIVE
    size_t fetch;               //  return up to this many mail messages; 0: none
    bool stream;                //  with fetch: continue after the mail handed out before
} parley_step_t;

//  What one part of a STEP was refused with: code 0 when it was not.
typedef struct {
    int code;                   //  parley_err_t
    char message[256];          //  the broker's sentence, cut to fit
} parley_part_error_t;

typedef struct {
    uint64_t step;
    bool replayed;              //  a repeated step, answered from memory
    bool has_sent;              //  the messages' result, as SEND's
    parley_sent_t sent;
    bool has_written;           //  the ops applied, as WRITE's
    parley_written_t written;
    parley_part_error_t ops_error;      //  the ops were refused: none applied
    bool has_observation;       //  after the action (or PERCEIVE)
    parley_observation_t observation;
    parley_part_error_t action_error;   //  the action was refused
    bool has_mail;              //  with fetch: the mail, duplicates left out as FETCH does
    parley_mail_batch_t mail;
    uint64_t acked;             //  the acknowledged position after the ack
} parley_stepped_t;

//  PARLEY_OK when the broker answered STEPPED (each part then says how it
//  went); an error code when the whole STEP was refused (nothing applied:
//  TOO_LARGE, STORAGE, ...) or not answered; PARLEY_ERR_INVALID for
//  arguments refused before sending.
parley_err_t parley_client_step (parley_client_t *self, const parley_step_t *step,
                                 parley_stepped_t *result);

//  The broker.

//  What an agent's model calls cost so far (totals since it started), as
//  HEARTBEAT's model_* fields carry them and AGENT_LIST lists them.
typedef struct {
    uint64_t calls;             //  model calls made
    uint64_t ok;                //  calls that got an answer
    uint64_t failed;            //  calls that got none
    uint64_t skipped;           //  decisions not sent: circuit open
    uint64_t retries;           //  HTTP retries
    uint64_t prompt_tokens;     //  as the server reported them
    uint64_t completion_tokens;
    uint64_t latency_ms;        //  sum of call latencies
    uint64_t latency_max_ms;    //  slowest call
} parley_model_report_t;

typedef struct {
    char agent[PARLEY_NAME_MAX + 1];
    bool online;
    uint64_t idle_ms;
    uint64_t pending;
    const char *const *caps;
    size_t cap_count;
    bool model_reported;        //  the agent sent a model report (fields it left out are 0)
    parley_model_report_t model;
    uint64_t unacked;           //  of pending: handed out by FETCH, not acknowledged
    uint64_t inbox_bytes;       //  body bytes of the pending messages
    uint64_t step;              //  the step of its last ACT that moved (0: none)
    uint64_t acts;              //  ACTs that moved
} parley_agent_info_t;

typedef struct {
    const parley_agent_info_t *agents;
    size_t count;
} parley_agent_list_t;

parley_err_t parley_client_agents (parley_client_t *self, parley_agent_list_t *result);

//  STATS_REPLY; PROTOCOL.md says what each counts.
typedef struct {
    uint64_t uptime_ms, agents, online, channels, queued, queued_bytes, delivered,
             dropped, rejected, msgs_in, msgs_out, state_keys, state_bytes,
             state_seq, mail_seq, errors, bad_frames, unroutable, requests,
             tap_seq, forgotten;
    double rate_in, rate_out;
} parley_stats_t;

parley_err_t parley_client_stats (parley_client_t *self, parley_stats_t *result);

//  STATS as a list of every field the broker sent, known to this library
//  or not, so an operator tool shows a newer broker's counters without a
//  new release. The kind is the value's msgpack type; the unit comes from
//  the protocol's naming rule (PROTOCOL.md, STATS): *_ms "ms", *_us "us",
//  *bytes* "bytes", rate_* "messages/s", *_seq "seq", else "count" (and ""
//  for text and bool); `help` is the protocol table's sentence, "" for a
//  field this library does not know. Order: as the broker sent them.
typedef enum {
    PARLEY_STAT_UINT,
    PARLEY_STAT_INT,
    PARLEY_STAT_NUM,
    PARLEY_STAT_BOOL,
    PARLEY_STAT_TEXT,
    PARLEY_STAT_OTHER           //  an array or map: see parley_client_stats_fields' value
} parley_stat_kind_t;

typedef struct {
    const char *name;
    parley_stat_kind_t kind;
    uint64_t uint_value;        //  UINT, and BOOL as 0/1
    int64_t int_value;          //  INT
    double num_value;           //  NUM, and every number kind converted
    const char *text;           //  TEXT; "" otherwise
    const void *value;          //  the value as msgpack bytes, every kind
    size_t value_size;
    const char *unit;
    const char *help;
} parley_stat_field_t;

typedef struct {
    const parley_stat_field_t *fields;
    size_t count;
} parley_stat_list_t;

parley_err_t parley_client_stats_fields (parley_client_t *self, parley_stat_list_t *result);
//  The unit of a STATS field named `name`, by the rule above.
const char *parley_stat_unit (const char *name, parley_stat_kind_t kind);
parley_err_t parley_client_heartbeat (parley_client_t *self);
//  The model report every HEARTBEAT carries from now on (copied; NULL:
//  none). The broker keeps the last one it got; call
//  parley_client_heartbeat to deliver a new one at once.
void parley_client_set_report (parley_client_t *self, const parley_model_report_t *report);
//  BYE (best effort, short timeout); `forget` also deletes the
//  registration and its mail. The client can connect again afterwards.
parley_err_t parley_client_bye (parley_client_t *self, bool forget);

//  ---------------------------------------------------------------------
//  Pipelining: several requests in flight on one client.
//
//  parley_client_post_* checks and sends a request without waiting for its
//  reply and gives its ticket; parley_client_collect_* waits for the reply
//  of one ticket (up to the request timeout from the collect) and fills
//  the same typed result, with the same errors, as the blocking function.
//  Replies are matched by request id: those that come for other tickets
//  are kept until collected, so tickets may be collected in any order.
//  Every ticket must be collected (its reply is held until then). Blocking
//  requests may be made while tickets are out.
//
//  A posted request is sent once and never again: the broker remembers
//  only the last SEND batch, so a resend of an earlier SEND still in
//  flight would post it twice. When a reply does not come in time, or the
//  broker has forgotten the session (NOT_HELLO), the connection is closed:
//  that ticket and every other one without a reply fail with
//  PARLEY_ERR_TIMEOUT (PARLEY_ERR_NOT_HELLO), and the next request says
//  HELLO again. Whether to post again is the caller's choice.

#define PARLEY_MAX_IN_FLIGHT 256        //  posted and not yet collected

typedef uint64_t parley_ticket_t;

//  PARLEY_ERR_INVALID when PARLEY_MAX_IN_FLIGHT tickets are out.
parley_err_t parley_client_post_send (parley_client_t *self, const parley_outgoing_t *items,
                                      size_t count, parley_ticket_t *ticket);
parley_err_t parley_client_post_fetch (parley_client_t *self, uint64_t ack, size_t max,
                                       bool stream, parley_ticket_t *ticket);
parley_err_t parley_client_post_write (parley_client_t *self, const parley_op_t *ops,
                                       size_t count, parley_ticket_t *ticket);
//  PARLEY_ERR_INVALID for a ticket that is not out or of another request.
//  `result` may be NULL for SENT and WRITTEN.
parley_err_t parley_client_collect_sent (parley_client_t *self, parley_ticket_t ticket,
                                         parley_sent_t *result);
parley_err_t parley_client_collect_mail (parley_client_t *self, parley_ticket_t ticket,
                                         parley_mail_batch_t *result);
parley_err_t parley_client_collect_written (parley_client_t *self, parley_ticket_t ticket,
                                            parley_written_t *result);
//  Tickets posted and not yet collected.
size_t parley_client_in_flight (parley_client_t *self);

//  ---------------------------------------------------------------------
//  Pipelined sends with cumulative confirms (docs/CLIENT.md).
//
//  parley_client_send_pipelined posts a SEND that gets no SENT: the
//  broker confirms the pipelined SENDs of a connection together (CONFIRM,
//  proto/PROTOCOL.md), naming only the messages that failed. The client
//  keeps a window of SENDs in flight, bounded in messages and in bytes;
//  a post that would pass it blocks the caller, taking confirms, until
//  there is room: that is the backpressure a slow receiver puts on a
//  fast sender (the broker also parks a SEND whose recipient's inbox is
//  full, up to the SEND's wait, below).
//
//  Delivery is at-least-once: after a reconnect (no confirm within the
//  request timeout, or the broker forgot the session) every SEND not yet
//  confirmed is sent again, in order, on the new session; some may have
//  been applied already. A SEND still unconfirmed after `attempts` rounds
//  fails with its messages as PARLEY_ERR_TIMEOUT failures.
//
//  Failures (a refused SEND, a message that could not be queued) are kept
//  in a queue of PARLEY_SEND_FAILURES (older ones beyond are dropped and
//  counted) and taken with parley_client_send_failure.

#define PARLEY_SEND_FAILURES 1024

//  Posts one pipelined SEND (checked as parley_client_send does). Blocks
//  while the window is full. `ticket`, if not NULL, gets the SEND's id,
//  which its failures name. PARLEY_OK once sent; PARLEY_ERR_INVALID,
//  _STOPPED, _TIMEOUT (the broker stopped confirming: see above), _LOST.
parley_err_t parley_client_send_pipelined (parley_client_t *self, const parley_outgoing_t *items,
                                           size_t count, parley_ticket_t *ticket);
//  Waits until every pipelined SEND is confirmed. PARLEY_OK, or as above.
parley_err_t parley_client_send_flush (parley_client_t *self);
//  The window: at most `messages` messages and `bytes` frame bytes in
//  unconfirmed SENDs (one SEND always goes, whatever its size). Defaults
//  16384 messages and 16 MiB, within what the broker holds behind a
//  parked SEND (16384 requests, 32 MiB).
void parley_client_set_send_window (parley_client_t *self, size_t messages, size_t bytes);
//  How long a SEND (pipelined or not) may wait in the broker for room in
//  an online recipient's full inbox, sent as its wait_ms. Always at most
//  three quarters of the request timeout, so the reply comes before the
//  client gives up; that is also the default. 0: INBOX_FULL at once.
void parley_client_set_send_wait (parley_client_t *self, int64_t wait_ms);

typedef struct {
    parley_ticket_t ticket;     //  the SEND's id (parley_client_send_pipelined)
    bool whole;                 //  the whole SEND was refused (`index` is 0)
    size_t index;               //  the message in the SEND
    int code;                   //  parley_err_t
    char agent[PARLEY_NAME_MAX + 1];    //  the recipient a fan-out missed, or ""
    char message[256];          //  the broker's sentence, cut to fit
} parley_send_failure_t;

//  The oldest failure not yet taken; false when none.
bool parley_client_send_failure (parley_client_t *self, parley_send_failure_t *failure);

typedef struct {
    uint64_t posted;            //  pipelined SENDs posted (resends not counted)
    uint64_t confirmed;         //  covered by a CONFIRM
    uint64_t accepted;          //  messages the broker accepted
    uint64_t failed_messages;   //  message failures (item errors)
    uint64_t failed_sends;      //  SENDs refused whole, or given up after timeouts
    uint64_t errors_omitted;    //  failures the broker only counted
    uint64_t failures_dropped;  //  failures dropped from the full queue
    uint64_t resent;            //  SENDs sent again after a reconnect
    uint64_t window_waits;      //  posts that blocked on a full window
    size_t in_flight;           //  SENDs not yet confirmed
    size_t in_flight_messages;
    size_t in_flight_bytes;
} parley_pipeline_stats_t;

void parley_client_pipeline_stats (parley_client_t *self, parley_pipeline_stats_t *stats);

//  Workflow: turns, hand-over, checkpoints (proto/PROTOCOL.md 4.1,
//  docs/SCENARIOS.md). A client plays a role by saying HELLO with the
//  capability "role:<name>" (parley_client_add_cap).

typedef enum {
    PARLEY_WF_UNSET = 0,        //  HANDOVER: leave the status; results: a status this client does not know
    PARLEY_WF_PENDING,
    PARLEY_WF_IN_PROGRESS,
    PARLEY_WF_REVISION,
    PARLEY_WF_DONE,
    PARLEY_WF_FAILED
} parley_wf_status_t;

//  "pending", "in_progress", ...; "" for PARLEY_WF_UNSET.
const char *parley_wf_status_name (parley_wf_status_t status);
//  The status named `name`; PARLEY_WF_UNSET for any other text.
parley_wf_status_t parley_wf_status_parse (const char *name);

//  WORKFLOW_INFO: the reply to WORKFLOW, HANDOVER and RESUME.
typedef struct {
    parley_wf_status_t status;
    char status_name[PARLEY_NAME_MAX + 1];  //  as sent (a newer broker's status too)
    uint64_t turn;              //  turns started so far
    uint64_t revisions;         //  revisions made so far
    char holder[PARLEY_NAME_MAX + 1];       //  the role holding the turn, or ""
    char agent[PARLEY_NAME_MAX + 1];        //  the agent acting for it, or ""
    bool paused;                //  the holder is a human role
    uint64_t max_revisions;     //  0: not sent
    uint64_t max_turns;         //  0: not sent
    const char *reason;         //  "" when none
    uint64_t checkpoint;        //  the latest checkpoint (0 also when not sent)
    uint64_t seq;               //  state seq after the request (0: not sent)
} parley_workflow_t;

//  WORKFLOW: where the workflow stands.
parley_err_t parley_client_workflow (parley_client_t *self, parley_workflow_t *result);

//  HANDOVER: this turn's writes and the next role, one atomic request.
typedef struct {
    const parley_op_t *ops;     //  as WRITE's; may be NULL with op_count 0
    size_t op_count;
    const char *next;           //  the role that takes the turn; NULL with status done/failed
    parley_wf_status_t status;  //  PARLEY_WF_UNSET: unchanged
    const char *reason;         //  NULL: none
} parley_handover_t;

//  `result` may be NULL. NOT_TURN_HOLDER, WORKFLOW_ENDED, NO_WORKFLOW,
//  BAD_FIELD and every WRITE error come back as their codes.
parley_err_t parley_client_handover (parley_client_t *self, const parley_handover_t *handover,
                                     parley_workflow_t *result);

//  One checkpoint's workflow fields (checkpoint_info).
typedef struct {
    uint64_t number;            //  0 is the workflow's start
    uint64_t turn;
    parley_wf_status_t status;
    char status_name[PARLEY_NAME_MAX + 1];
    char holder[PARLEY_NAME_MAX + 1];       //  "" when none
    uint64_t revisions;
    uint64_t changed;           //  keys changed since the previous checkpoint
    uint64_t bytes;             //  bytes stored for it
} parley_checkpoint_info_t;

typedef struct {
    const parley_checkpoint_info_t *checkpoints;    //  oldest first
    size_t count;
    uint64_t dropped;           //  folded away by the broker's retention bound
} parley_checkpoint_list_t;

//  CHECKPOINTS: every checkpoint kept.
parley_err_t parley_client_checkpoints (parley_client_t *self, parley_checkpoint_list_t *result);

typedef struct {
    const char *key;
    const char *reducer;        //  "" when removed
    const void *value;          //  msgpack; NULL when removed
    size_t value_size;
    bool removed;               //  the key does not exist at the checkpoint
} parley_checkpoint_entry_t;

typedef struct {
    uint64_t number;
    bool has_since;
    uint64_t since;             //  with has_since: the entries are what differs from it
    parley_checkpoint_info_t info;
    const parley_checkpoint_entry_t *entries;
    size_t count;
} parley_checkpoint_state_t;

//  CHECKPOINT: the whole state at checkpoint `number`.
parley_err_t parley_client_checkpoint (parley_client_t *self, uint64_t number,
                                       parley_checkpoint_state_t *result);
//  CHECKPOINT with `since`: the keys that differ between `since` and `number`.
parley_err_t parley_client_checkpoint_diff (parley_client_t *self, uint64_t number, uint64_t since,
                                            parley_checkpoint_state_t *result);
//  RESUME: forks the run from checkpoint `number`. An operator request: a
//  CURVE broker wants the admin right (docs/SECURITY.md). `result` may be NULL.
parley_err_t parley_client_resume (parley_client_t *self, uint64_t number,
                                   parley_workflow_t *result);

//  WORKFLOW_EVENT, taken from the event socket once
//  parley_client_workflow_events is on.
typedef enum {
    PARLEY_WF_EVENT_OTHER = 0,  //  an event this client does not know
    PARLEY_WF_EVENT_TURN,
    PARLEY_WF_EVENT_PAUSED,
    PARLEY_WF_EVENT_DONE,
    PARLEY_WF_EVENT_FAILED,
    PARLEY_WF_EVENT_RESUMED
} parley_wf_event_kind_t;

typedef struct {
    parley_wf_event_kind_t kind;
    char name[PARLEY_NAME_MAX + 1];         //  the event as sent
    parley_wf_status_t status;
    char status_name[PARLEY_NAME_MAX + 1];
    uint64_t turn;
    uint64_t revisions;
    char holder[PARLEY_NAME_MAX + 1];
    char agent[PARLEY_NAME_MAX + 1];
    const char *reason;         //  "" when none; valid until the next call on the client
    bool has_checkpoint;
    uint64_t checkpoint;        //  the checkpoint recorded at this boundary
} parley_workflow_event_t;

//  Subscribes to (or leaves) the workflow's events, kept over reconnects.
//  Events are queued (at most PARLEY_WF_EVENT_QUEUE; the oldest is dropped
//  and counted beyond that) and parley_client_wait returns as soon as one
//  is queued.
#define PARLEY_WF_EVENT_QUEUE 64
void parley_client_workflow_events (parley_client_t *self, bool on);
//  The oldest queued event, without waiting; false when none.
bool parley_client_workflow_event (parley_client_t *self, parley_workflow_event_t *event);

//  ---------------------------------------------------------------------
//  Events and liveness

//  Waits up to `ms` for events, sending a HEARTBEAT when one is due.
//  Returns true when mail was announced and not yet taken.
bool parley_client_wait (parley_client_t *self, int64_t ms);
//  Reads and clears the "mail announced" flag.
bool parley_client_take_mail (parley_client_t *self);
//  Never blocks: takes pending events, and sends a HEARTBEAT without
//  waiting for its reply when one is due. For callers busy with something
//  else (a model call's progress callback). Does nothing inside a request.
void parley_client_keepalive (parley_client_t *self);

//  A file descriptor for poll/epoll in the caller's loop, or -1 before
//  the first session: an epoll descriptor over the event socket and the
//  request socket (which carries pushed mail). Like ZMQ_FD it signals
//  "look", not "readable": when it fires, call parley_client_process
//  (which drains every event and pushed frame) and do not wait on the fd
//  again before it returned. It stays the same over reconnects.
int parley_client_fd (parley_client_t *self);
//  Takes every pending event without waiting and sends a HEARTBEAT when
//  one is due; returns true when mail was announced and not yet taken.
bool parley_client_process (parley_client_t *self);

//  State replica: keys under `prefix` ("" for all) kept up to date from
//  a SNAPSHOT and the STATE_UPDATE events after it. A gap in the state
//  seq (an update lost) or a new session takes a fresh snapshot.
parley_err_t parley_client_replica (parley_client_t *self, const char *prefix);
//  The replica's copy of `key`; false if absent. Pointers valid until the
//  next call on the client.
bool parley_client_replica_get (parley_client_t *self, const char *key,
                                const void **value, size_t *value_size, uint64_t *seq);
size_t parley_client_replica_size (parley_client_t *self);
//  Adds a prefix to the replica (after parley_client_replica; at most
//  PARLEY_REPLICA_PREFIXES in all): its keys are copied (SNAPSHOT with
//  that prefix) and followed too. A replica of several prefixes, like one
//  of a prefix other than "", cannot tell a lost update by a seq gap: a
//  key it missed is current again with its next update (which carries the
//  whole value) or the snapshot a new session takes. So an agent follows
//  just the keys it reads, and only their updates reach it.
#define PARLEY_REPLICA_PREFIXES 8
parley_err_t parley_client_replica_add (parley_client_t *self, const char *prefix);

//  Any event, by topic prefix (PROTOCOL.md, event frames): "agent.",
//  "world.", "state.<key prefix>", "workflow.", "mail.<agent>", "" for
//  all. Subscriptions are kept over reconnects (at most
//  PARLEY_MAX_EVENT_TOPICS). Events are queued (at most
//  PARLEY_EVENT_QUEUE; beyond that the oldest is dropped and counted in
//  parley_client_stats_t.events_dropped) and parley_client_wait returns
//  as soon as one is queued. Independent of the typed workflow events and
//  the replica, which see their events too.
#define PARLEY_EVENT_QUEUE 256
#define PARLEY_MAX_EVENT_TOPICS 8
//  PARLEY_ERR_INVALID for too many topics or one longer than a state key + 16.
parley_err_t parley_client_subscribe (parley_client_t *self, const char *prefix);
void parley_client_unsubscribe (parley_client_t *self, const char *prefix);

typedef struct {
    const char *topic;          //  as published, e.g. "agent.Agent1"
    const char *type;           //  the message type: "AGENT_EVENT", "STATE_UPDATE", ...
    const void *body;           //  the event map, msgpack
    size_t body_size;
    uint64_t received_us;       //  when this client took it (wall clock)
} parley_event_t;

//  The oldest queued event, without waiting; false when none. Valid until
//  the next call on the client.
bool parley_client_event (parley_client_t *self, parley_event_t *event);

typedef struct {
    uint64_t requests;          //  requests sent, resends included
    uint64_t timeouts;          //  requests that got no reply in time
    uint64_t hellos;            //  successful HELLOs
    uint64_t hello_failures;
    uint64_t mail_wakeups;      //  MAIL_READY events
    uint64_t world_events;
    uint64_t state_updates;     //  STATE_UPDATE events applied to the replica
    uint64_t resnapshots;       //  snapshots taken after a gap or reconnect
    uint64_t duplicates;        //  redelivered mail left out by FETCH
    uint64_t bad_frames;
    uint64_t keepalives;
    uint64_t workflow_events;   //  WORKFLOW_EVENTs queued
    uint64_t workflow_dropped;  //  WORKFLOW_EVENTs dropped from a full queue
    uint64_t events;            //  events queued for parley_client_event
    uint64_t events_dropped;    //  events dropped from its full queue
} parley_client_stats_t;

void parley_client_counters (parley_client_t *self, parley_client_stats_t *stats);

//  ---------------------------------------------------------------------
//  Scalar msgpack values for WRITE and the replica. Each pack returns the
//  bytes written, 0 if `size` is too small (9 bytes always suffice for
//  numbers, 5 + strlen for strings).
size_t parley_pack_str (void *buf, size_t size, const char *text);
size_t parley_pack_int (void *buf, size_t size, int64_t value);
size_t parley_pack_bool (void *buf, size_t size, bool value);
//  Reads a value packed as a str / an integer; false for other types.
bool parley_value_str (const void *value, size_t size, char *out, size_t out_size);
bool parley_value_int (const void *value, size_t size, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
