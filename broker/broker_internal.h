// SPDX-License-Identifier: MIT
/*  broker_internal - what the broker's own files share (not a public API).

    Like mosquitto_broker_internal.h: the broker object's fields, the request
    context the dispatcher hands to each handler, and the prototypes that
    join dispatch, handlers, publish, tap and stats. Only the broker's own .c files include
    this; everything outside uses broker.h.
*/
#ifndef PARLEY_BROKER_INTERNAL_H
#define PARLEY_BROKER_INTERNAL_H

#include <czmq.h>
#include "broker.h"
#include "pmsg.h"
#include "core/core.h"
#include "tap.h"
#include "auth.h"
#include "turns.h"
#include "call.h"
#include "outbox.h"
#include "stall.h"
#include "peers.h"
#include "conn_watch.h"
#include "observers.h"
#include "journal.h"
#include "metrics.h"
#include "metrics_http.h"
#include "parking.h"
#include "confirms.h"
#include "fdreader.h"

#define BROKER_ENDPOINT_MAX 512
//  The loop's descriptor readers (broker.c): ZAP, three monitors, two XPUBs.
#define BROKER_FDREADERS 6
//  MAIL replies stop adding messages at this many bytes so a reply always
//  fits the client's ZMQ_MAXMSGSIZE (PROTO_MAX_FRAME) with room to spare.
#define BROKER_MAIL_REPLY_BUDGET (PROTO_MAX_FRAME - 16 * 1024)
//  SENT lists item errors until they pass this many bytes (about 200-600
//  errors; each names its item, code and a sentence), then only counts
//  the rest in `errors_omitted`. Keeps SENT far below the frame limit
//  (4096 errors with long names came to ~1 MiB) and bounds what the
//  idempotent-SEND memory keeps per agent (agents.h).
#define BROKER_SENT_ERRORS_BUDGET (64 * 1024)
//  Requests handled per wake-up of the ROUTER before MAIL_READY wake-ups
//  are flushed and timers get a turn.
#define BROKER_DRAIN_BATCH 256
//  Bytes of one MAIL_PUSH frame at most (push.c): a backlog leaves in
//  frames of this size, never in megabyte ones.
#define BROKER_PUSH_FRAME_BUDGET (64 * 1024)
//  Pushed delivery (CONSUME): the largest credit window a consumer may
//  ask for, in messages and body bytes, and the byte window it gets when
//  it names none. What is out is also inbox mail, so the inbox bounds
//  hold it too; these bound what one consumer's pipe may hold.
#define BROKER_CREDIT_MAX 65536u
#define BROKER_CREDIT_BYTES_MAX (64ULL * 1024 * 1024)
#define BROKER_CREDIT_BYTES_DEFAULT (8ULL * 1024 * 1024)
//  A push refused by a full pipe is tried again after this long.
#define BROKER_PUSH_RETRY_MS 10
//  Pending TCP connections the ROUTER's listener queues (capped by the
//  kernel's net.core.somaxconn).
#define BROKER_ACCEPT_BACKLOG 4096

//  The error of one part of a STEP (handle_step.c): while the broker's
//  part_error points at one, dispatch_error fills it instead of writing
//  an ERROR reply.
typedef struct {
    perr_t code;                //  PERR_NONE: the part succeeded
    char text [PROTO_MAX_TEXT];
} part_error_t;

typedef struct {
    uint64_t requests;          //  request frames received
    uint64_t replies;           //  reply frames sent
    uint64_t errors;            //  ERROR replies sent
    uint64_t bad_frames;        //  frames that failed to decode
    uint64_t unroutable;        //  replies whose peer was gone or full
    uint64_t forgotten;         //  agents forgotten by --forget-after-ms
    uint64_t replies_dropped;   //  lost with a connection cut for not reading (stall.h)
    uint64_t replies_stalled;   //  kept because the peer's pipe was full, then sent
    uint64_t connections_cut;   //  cut for not reading their replies (stall.h)
    uint64_t closed;            //  connections closed (ROUTER, events, tap)
    uint64_t published;         //  PUB events
    uint64_t unauthorized;      //  requests refused: key or resume token
    uint64_t sends_parked;      //  SENDs that waited for room (parking.h)
    uint64_t send_wait_timeouts;    //  parked SENDs answered at their deadline
    uint64_t requests_refused_held; //  refused: too many behind a parked SEND
    uint64_t confirms;          //  CONFIRM frames sent
    uint64_t push_frames;       //  MAIL_PUSH frames sent
    uint64_t push_deferred;     //  MAIL_PUSH frames a full pipe refused (retried)
    //  Rates: counters at the last one-second tick.
    int64_t rate_tick_ms;
    uint64_t last_in, last_out;
    double rate_in, rate_out;
} broker_counters_t;

struct _broker_t {
    broker_config_t config;
    zloop_t *loop;

    zsock_t *router;
    zsock_t *pub;
    void *router_handle;        //  libzmq handles for zmq_msg_* on the hot path
    void *pub_handle;
    tap_t *tap;
    auth_t *auth;               //  ZAP handler: connection serials, CURVE keys
    zcert_t *cert;              //  own CURVE pair; NULL in plain mode
    conn_watch_t *conn_watch;   //  ROUTER disconnects (session.c ends those sessions)
    conn_watch_t *pub_watch;    //  event and tap subscribers' disconnects
    conn_watch_t *tap_watch;
    peers_t *router_peers;      //  connections and their keys (peers.h): CURVE only
    peers_t *pub_peers;         //  event subscribers (--max-subscribers)
    peers_t *tap_peers;
    struct _durable_t *durable; //  the journal (durable.c); NULL with --data-dir none
    bool replaying;             //  recovery: no events, no journal writes
    bool failed;                //  a journal write or sync failed: the loop stops
    char router_endpoint [BROKER_ENDPOINT_MAX];
    char pub_endpoint [BROKER_ENDPOINT_MAX];
    char tap_endpoint [BROKER_ENDPOINT_MAX];
    char pub_advertised [BROKER_ENDPOINT_MAX];
    char tap_advertised [BROKER_ENDPOINT_MAX];

    //  The state machine (core.h), changed only through call.h. The five
    //  pointers after it are the core's parts, borrowed for reading.
    core_t *core;
    agents_t *agents;
    mailroom_t *mailroom;
    state_t *state;
    world_t *world;             //  NULL when the scenario says world: none
    workflow_t *workflow;       //  NULL without a scenario workflow
    turns_t *turns;             //  who acts for the workflow's holder (turns.h)
    call_t *call;               //  the call being applied (call.h)
    outbox_t *outbox;           //  replies and events until the durability point
    stall_t *stall;             //  replies a full pipe refused (stall.h)
    observers_t *observers;     //  connections that said HELLO observe
    fdreader_t *readers [BROKER_FDREADERS];     //  the loop's descriptor readers
    size_t reader_count;
    fdreader_t *pub_reader;     //  of them, the two XPUBs (drained after sends)
    fdreader_t *tap_reader;
    uint64_t pub_drained_at;    //  counters.published at the last drain
    uint64_t tap_drained_at;    //  tap_seq at the last drain

    penc_t reply;               //  reused for every reply
    penc_t event;               //  reused for every PUB event
    penc_t push;                //  reused for every MAIL_PUSH
    int push_timer;             //  the retry of refused pushes (0: none due)
    uint64_t *seqs;             //  SENT seqs, max_batch long
    broker_counters_t counters;
    int64_t started_ms;
    int64_t now_ms;             //  monotonic, refreshed per loop turn
    int64_t turn_wall_us;       //  the wall clock at the turn's start (0: not in one)
    int64_t turn_mark_us;       //  the end of the turn's last request (0: not reading)
    //  Prometheus figures (metrics.h): counted by dispatch.c, rendered on
    //  the loop thread when metrics_http asks (metrics_render.c).
    metrics_t metrics;
    perr_t reply_error;         //  the ERROR code of the request being handled
    char reply_text [PROTO_MAX_TEXT];   //  and its sentence (a pipelined SEND's CONFIRM)
    parking_t *parking;         //  parked SENDs and the requests held behind them
    confirms_t *confirms;       //  CONFIRMs due, per connection
    penc_t confirm;             //  reused for every CONFIRM
    uint64_t send_waited_ms;    //  > 0 while a SEND is applied at its deadline
    uint64_t trimmed_at;        //  counters.closed at the last tick
    int trims_due;              //  ticks that still call malloc_trim
    metrics_http_t *metrics_http;   //  NULL with --metrics-bind off
    metrics_text_t metrics_page;    //  the render buffer, reused
    part_error_t *part_error;   //  a STEP part being applied (handle_step.c), or NULL
};

//  What the dispatcher knows about one request.
typedef struct _request_t {
    const pmsg_t *msg;
    pmsg_type_t type;
    uint64_t id;
    agent_t *agent;             //  NULL before HELLO
    const conn_id_t *conn;      //  the connection it came on
    uint64_t serial;            //  that connection's handshake serial (auth.h)
    char key [41];              //  its CURVE public key (Z85); "" in plain mode
    int conn_fd;                //  its descriptor (conn_watch.h), -1 if unknown,
                                //  REQUEST_FD_UNREAD: read it with request_fd
    zmq_msg_t *body;            //  the frame's message while it is handled, or NULL
    //  The frame as received (a parked SEND keeps a copy; the journal
    //  records a SEND when it is applied, not when it arrives).
    const void *frame;
    size_t frame_size;
    bool envelope;              //  REQ-style empty delimiter to echo
    int64_t arrived_ms;         //  when the broker read it (a SEND's wait counts from here)
    bool pipelined;             //  a SEND with `pipelined`: answered by CONFIRM
    bool no_reply;              //  set by a handler: nothing to send now
    bool retry;                 //  a parked SEND tried again: counted once, when it came
    const char *replay_token;   //  a legacy HELLO record's resume token (durable.c)
} request_t;

//  A request's descriptor is read from its message only when something
//  needs it (a HELLO, a CURVE key noted, a request held or kept): it is
//  a metadata lookup in libzmq, a few hundred instructions a request.
#define REQUEST_FD_UNREAD (-2)
int request_fd (const request_t *req);

//  True if the request's key carries `right` (always in plain mode);
//  otherwise writes ERROR UNAUTHORIZED naming `what` and counts it.
bool dispatch_may (broker_t *self, request_t *req, unsigned right, const char *what);

typedef void (handler_fn) (broker_t *self, request_t *req);
typedef struct _durable_t durable_t;

//  sockets.c
int sockets_open (broker_t *self, bool *network, char *why, size_t why_size);
void sockets_close (broker_t *self);
int sockets_write_ready_file (broker_t *self, const char *path);
//  ZMQ_LAST_ENDPOINT, with IPv4-mapped IPv6 addresses written as IPv4.
int sockets_last_endpoint (void *handle, char *buf, size_t size);

//  broker.c: drains the XPUBs sent on since their last drain (fdreader.h).
int broker_drain_sent (broker_t *self);

//  dispatch.c
int dispatch_on_router (zloop_t *loop, zsock_t *reader, void *arg);
//  The handler of a request type (replay).
handler_fn *dispatch_handler (pmsg_type_t type);
//  Sends a reply body now (tap, counters, unroutable handling); the
//  outbox's release calls it. `serial`: the connection's handshake
//  serial, so an unroutable reply ends only that connection's session.
void dispatch_send (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                    const char *agent, const void *data, size_t size);
//  Sends a reply body now: 0, EAGAIN when the connection's pipe is full
//  (nothing sent), or another errno when it could not leave at all
//  (counted and logged; a peer gone ends its session).
int dispatch_try_send (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                       const char *agent, const void *data, size_t size);
//  A request frame that may be handled now: behind a parked SEND of its
//  connection it is held (parking.h), else handled.
void dispatch_incoming (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
                        size_t extra_frames, request_t *req);
//  Queues a reply body for a connection in the outbox, after the CONFIRM
//  due to it, if any (replies stay in request order). Every reply goes
//  out through here.
void dispatch_reply (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                     const agent_t *agent, const void *data, size_t size);
//  The durability point: writes the journal (and syncs it under --fsync
//  always), then sends what the outbox holds; when the journal failed, the
//  outbox keeps waiting (durable_point). False only when the broker must
//  stop (a change that could not be journaled at all).
bool dispatch_release (broker_t *self);
//  Handles one request frame from `conn` as if it had just arrived
//  (parking.c drains the requests it held through here).
void dispatch_process (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
                       size_t extra_frames, request_t *req);
//  After a handler: sends its reply (a pipelined SEND's ERROR becomes an
//  entry of its connection's CONFIRM instead), unless it set no_reply.
void dispatch_answer (broker_t *self, request_t *req);
//  End of a loop turn: parked SENDs that may go on, CONFIRMs due, the
//  journal's sync, MAIL_READY wake-ups. -1 when the sync failed.
int dispatch_turn_end (broker_t *self);
//  Writes ERROR into self->reply and counts it.
void dispatch_error (broker_t *self, uint64_t id, perr_t code, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

//  parking.c (parking.h). A frame from a connection with a parked SEND is
//  held behind it (true; or refused QUEUES_FULL at once, over the bound).
bool parking_hold (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
                   size_t extra_frames, const request_t *req);
//  handle_send: parks the SEND `req` (its frame is copied, or kept when it
//  is the held one being retried), waiting for `on` until `deadline_ms`.
//  False when out of memory (the SEND is then applied at once).
bool parking_park (broker_t *self, request_t *req, agent_t *on, int64_t deadline_ms);
int parking_on_timer (zloop_t *loop, int timer_id, void *arg);

//  publish.c: events into the outbox (they leave with the replies; every
//  event also goes to the tap when it leaves)
void publish_mail_ready (broker_t *self);
void publish_agent_event (broker_t *self, const agent_t *agent, const char *event);
//  Publishes the state changes of the last write if state_seq moved past
//  `seq_before` (a failed or empty write leaves old change records).
void publish_state_changes (broker_t *self, uint64_t seq_before);
void publish_world_event (broker_t *self, const char *event);
//  Queues the event already encoded in self->event on `topic`.
void publish_encoded (broker_t *self, const char *topic, size_t topic_len);
//  Sends one event now (outbox release).
void publish_send (broker_t *self, const char *topic, size_t topic_len, const void *data,
                   size_t size);

//  metrics_render.c: the page, and the loop's reader of scrape requests.
void metrics_render (broker_t *self, metrics_text_t *text);
int metrics_on_wanted (zloop_t *loop, zmq_pollitem_t *item, void *arg);

//  model_usage.c: the agents' model reports summed per role (STATS'
//  model_roles, /metrics' parley_role_model_*).
void model_usage_encode (broker_t *self, penc_t *enc);
void model_usage_metrics (broker_t *self, metrics_text_t *text);

//  push.c: MAIL_PUSH frames to the consumers marked this turn.
void push_flush (broker_t *self);
//  Agents with an open push subscription.
size_t push_consumers (broker_t *self);
//  handle_fetch.c: the walk begun by mailroom_fetch_begin/_push_begin as
//  a MAIL or MAIL_PUSH body.
void mail_encode (broker_t *self, penc_t *enc, pmsg_type_t type, uint64_t id, size_t count,
                  const agent_t *agent);

//  stats.c
void stats_tick (broker_t *self);
void stats_encode (broker_t *self, uint64_t id);

//  session.c: liveness expiry and detaching an agent from its connection.
//  Detaching applies the agent's parked SEND (parking.h), which may write
//  self->reply: a handler detaches before it writes its own reply.
void session_detach (broker_t *self, agent_t *agent, const char *event);
//  Deletes an offline agent within the current call (OP_FORGET): leaves
//  the world, releases its mail and channels, unregisters it (*agent_p is
//  NULLed).
void session_forget (broker_t *self, agent_t **agent_p);
int session_on_sweep (zloop_t *loop, int timer_id, void *arg);
//  Ends the sessions whose connections closed (conn_watch events waiting).
void session_end_closed (broker_t *self);
int session_on_closed (zloop_t *loop, zsock_t *reader, void *arg);

//  durable.c: the journal (docs/DURABILITY.md)
int durable_open (broker_t *self, const core_limits_t *limits, char *why, size_t why_size);
void durable_close (broker_t *self);
//  call.c's: why changes are refused now (NULL: they are not), the room
//  for a record, a refusal counted, a record appended, and a change that
//  could not be written (nothing more is acknowledged).
const char *durable_refusal (broker_t *self);
int durable_reserve (broker_t *self, size_t size);
void durable_count_refusal (broker_t *self);
int durable_append (broker_t *self, const void *data, size_t size);
int durable_append_parts (broker_t *self, const jfile_part_t *parts, size_t count);
void durable_lost (broker_t *self, const char *what);
//  The turn's records into the file (false when the write failed).
bool durable_flush (broker_t *self);
//  The durability point of everything the core did so far: written, and
//  synced under --fsync always. False when it is not reached (a write or
//  sync failed, now or before and the journal has not healed since): the
//  outbox then waits.
bool durable_point (broker_t *self);
//  True while answers wait for the journal to heal.
bool durable_holding (broker_t *self);
//  False while the journal heals from a failed write or sync.
bool durable_healthy (broker_t *self);
int durable_on_tick (zloop_t *loop, int timer_id, void *arg);
int durable_compact (broker_t *self);
void durable_compact_wait (broker_t *self);
uint64_t durable_storage_errors (broker_t *self);
journal_t *durable_journal (broker_t *self);

//  Handlers, one file each (handle_<name>.c); each writes one reply.
handler_fn handle_hello;
handler_fn handle_heartbeat;
handler_fn handle_bye;
handler_fn handle_agents;
handler_fn handle_send;
handler_fn handle_fetch;
handler_fn handle_ack;
//  handle_ack.c: OP_ACK of the agent's mail up to `seq` (ACK, FETCH's
//  and STEP's ack), within the current call; lets SENDs parked on its
//  inbox go on and returns a consumer's credit.
void ack_apply (broker_t *self, agent_t *agent, uint64_t seq);
//  handle_fetch.c: OP_DELIVER of what the last FETCH or push handed out,
//  within the current call.
void deliver_apply (broker_t *self, agent_t *agent);
handler_fn handle_listen;
handler_fn handle_unlisten;
handler_fn handle_write;
handler_fn handle_get;
handler_fn handle_snapshot;
handler_fn handle_perceive;
handler_fn handle_act;
handler_fn handle_world_reset;
handler_fn handle_stats;
handler_fn handle_handover;
handler_fn handle_workflow;
handler_fn handle_checkpoints;
handler_fn handle_checkpoint;
handler_fn handle_resume;
handler_fn handle_step;

//  handle_send.c: SEND's posting, shared with STEP. send_post applies
//  OP_SEND (the request frame's `messages`) within the current call
//  (seqs in self->seqs, item errors encoded aside); send_fields is how
//  many SENT fields send_encode then writes into `enc` (after the
//  caller's map header), which also releases the outcome.
typedef struct {
    size_t count, accepted;
    size_t errors, listed;      //  item errors, and those encoded in list
    penc_t list;
} send_outcome_t;
void send_post (broker_t *self, agent_t *from, const msgpack_object *items,
                send_outcome_t *out);
//  handle_send.c: OP_REMEMBER of the reply being built in self->reply
//  (its fields after `head`) under `key` in the agent's `slot`, or the
//  slot forgotten (`keep` false), within the current call.
void remember (broker_t *self, agent_t *agent, slot_t slot, bool keep, uint64_t key,
               size_t head, size_t fields);
size_t send_fields (const send_outcome_t *out);
void send_encode (broker_t *self, send_outcome_t *out, penc_t *enc);
//  handle_write.c: WRITE's ops (the request frame's `ops`) applied as
//  OP_WRITE within the current call (workflow keys refused, the state
//  batch, the STATE_UPDATEs); false with the error reported through
//  dispatch_error. Rights are checked before (rights.h).
bool write_apply (broker_t *self, request_t *req, const msgpack_object *ops,
                  state_result_t *result);
//  handle_fetch.c: up to `max` of the agent's mail as a msgpack array
//  into `enc` (after the caller's key), read as FETCH reads it; returns
//  MAIL's `pending`.
uint64_t fetch_encode (broker_t *self, agent_t *agent, size_t max, bool stream, penc_t *enc);
//  handle_perceive.c: ACT's move (or PERCEIVE without `action`) as
//  OP_MOVE within the current call; false with the error reported
//  through dispatch_error.
bool world_step (broker_t *self, request_t *req, const char *action, size_t action_len,
                 const uint64_t *step, world_obs_t *obs);
handler_fn handle_consume;
//  handle_checkpoints.c: one checkpoint_info record.
void checkpoint_encode_info (const checkpoint_info_t *info, penc_t *enc);
//  A request for the world when the scenario has none: ERROR written, true.
bool broker_no_world (broker_t *self, request_t *req);

#endif
