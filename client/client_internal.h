// SPDX-License-Identifier: MIT
/*  client_internal - the parley_client_t internals shared by the files of
    libparley. Not installed: the public header keeps the type opaque.

    Layers and their files:
      client_transport.c   sockets (made in one function), frames, replies by id
      client_session.c     HELLO / WELCOME, backoff, re-LISTEN
      client_request.c     sending one request with resends over reconnects
      client_requests.c    one function per request, encoding
      client_pipeline.c    requests posted without waiting, collected by ticket
      client_results.c     replies decoded into the typed results
      client_events.c      SUB events, heartbeats, wait, fd, keepalive
      client_replica.c     the state replica
      client_workflow.c    the workflow's requests, results and events
      client.c             life cycle, options, errors, value helpers
*/
#ifndef PARLEY_CLIENT_INTERNAL_H
#define PARLEY_CLIENT_INTERNAL_H

#include <czmq.h>
#include "parley/client.h"
#include "pmsg.h"

#define CLIENT_MAX_CAPS 8
#define CLIENT_POLL_SLICE_MS 100        //  how often waits look at the stop flag

//  A growable byte buffer for result strings and values. Results store
//  offsets while they are built (the buffer may move) and pointers after.
typedef struct {
    char *data;
    size_t size, used;
} client_arena_t;

//  A request posted without waiting (client_pipeline.c). Its reply is
//  kept here when it arrives before the caller collects it; `code` is set
//  when it can no longer come (the socket it went out on was closed).
typedef struct {
    uint64_t id;                //  the request id, which is the ticket
    pmsg_type_t expect;         //  the reply type a success has
    uint64_t batch;             //  SEND: its batch id and item count
    size_t count;
    pmsg_t *reply;
    parley_err_t code;
} client_pending_t;

//  A pipelined SEND not yet confirmed (client_confirm.c): its frame is
//  kept for the resend after a reconnect.
typedef struct {
    uint64_t id;
    size_t messages;
    size_t size;
    int64_t sent_ms;
    char *frame;
} client_flight_t;

//  One replica entry (the value is owned).
typedef struct {
    uint64_t seq;
    void *value;
    size_t value_size;
} client_replica_entry_t;

struct _parley_client_t {
    char endpoint[256];
    char agent[PARLEY_NAME_MAX + 1];
    char *caps[CLIENT_MAX_CAPS];
    size_t cap_count;
    //  Transport
    bool raw;                   //  client_raw: no frame size cap, keep every event
    int raw_rcvhwm;             //  client_raw: receive high-water mark (0: none)
    zsock_t *dealer;
    zsock_t *sub;
    char sub_endpoint[256];
    //  Session
    bool session;
    uint64_t epoch;
    parley_welcome_t welcome;
    char channels[PARLEY_MAX_CHANNELS][PARLEY_NAME_MAX + 1];
    size_t channel_count;
    //  Requests: `enc` for the caller's request, `hello` for the handshake
    //  (which may run in the middle of a resend of `enc`), `keepalive` for
    //  the HEARTBEAT sent without waiting.
    penc_t enc, hello, keepalive;
    uint64_t next_id;
    uint64_t enc_id, keepalive_id;
    uint64_t next_batch;
    bool busy;                  //  inside a request: keepalive stays out
    client_pending_t *pending;  //  posted, not yet collected (in no order)
    size_t pending_count;
    int64_t request_ms, backoff_max_ms;
    int attempts;
    int connect_attempts;       //  0: forever
    int64_t last_send_ms;
    volatile sig_atomic_t *stop;
    char error[512];
    //  Security: CURVE key files (NULL: plain), the resume token and the
    //  file that keeps it, the monitor that tells a refused handshake
    //  from silence, and observer mode.
    char *curve_key, *curve_server_key;
    char *token_file;
    char token[PARLEY_NAME_MAX + 1];
    zsock_t *watch;
    bool observe;
    //  The model report HEARTBEATs carry (parley_client_set_report).
    bool has_report;
    parley_model_report_t report;
    //  Results: the last reply, and what the typed results point into.
    pmsg_t *reply;
    client_arena_t arena;
    void *items;                //  the result's array (mail, entries, ...)
    size_t items_size;
    void *items2;               //  a second array (seqs + item errors)
    size_t items2_size;
    void *step_seqs;            //  STEPPED: its sent part's arrays (items
    size_t step_seqs_size;      //  holds its mail)
    void *step_errors;
    size_t step_errors_size;
    //  Mail: the highest seq handed out, for the duplicate filter.
    bool dedup;
    uint64_t handed_seq;
    uint64_t handed_epoch;
    uint64_t handed_origin;
    //  Events
    bool mail_flag;
    //  Workflow events: on, the queue (pmsg_t *, oldest first), and the
    //  one handed out last (what its result points into).
    bool workflow_on;
    zlistx_t *workflow_queue;
    pmsg_t *workflow_event;
    char *workflow_reason;      //  its reason, NUL-terminated
    //  Replica
    bool replica_on;
    char replica_prefixes[PARLEY_REPLICA_PREFIXES][PROTO_MAX_KEY + 1];
    size_t replica_prefix_count;
    zhashx_t *replica;          //  key -> client_replica_entry_t
    uint64_t replica_seq;       //  highest seq applied (for gaps, prefix "")
    uint64_t replica_epoch;     //  session of the last snapshot
    bool replica_stale;         //  a gap was seen: snapshot again
    zhashx_t *replica_held;     //  key -> zframe_t *: its newest update, not yet decoded
    //  Generic events (client_observe.c): the topic prefixes subscribed,
    //  the queue (zframe_t * pairs: topic, body; oldest first) and the
    //  pair handed out last.
    char *event_topics[PARLEY_MAX_EVENT_TOPICS];
    size_t event_topic_count;
    zlistx_t *event_queue;      //  zmsg_t * (topic, body)
    zmsg_t *event_last;
    char event_type[PROTO_MAX_NAME + 1];
    parley_client_stats_t stats;
    //  Pipelined SENDs (client_confirm.c): the ring of those in flight,
    //  oldest first, the window, the SENDs' wait, the failures queue.
    client_flight_t *flight;
    size_t flight_cap, flight_head, flight_count;
    size_t flight_messages, flight_bytes;
    uint64_t flight_epoch;      //  the session they went out on
    int flight_rounds;          //  resends without a confirm in between
    size_t window_messages, window_bytes;
    int64_t send_wait_ms;       //  -1: three quarters of request_ms
    parley_send_failure_t *failures;
    size_t failure_head, failure_count;
    parley_pipeline_stats_t pstats;
    //  Pushed mail (client_push.c): the window asked for (0: pulling),
    //  the MAIL_PUSH frames not yet taken (pmsg_t *, oldest first), the
    //  highest ack sent and the broker lifetime it belongs to, the ack
    //  policy; the caller's epoll descriptor over both sockets.
    uint32_t credit;
    uint64_t credit_bytes;
    zlistx_t *push_queue;
    uint64_t ack_sent;
    uint64_t ack_origin;
    parley_ack_policy_t ack_policy;
    int epoll_fd, epoll_sub, epoll_dealer;
};

//  client.c
//  malloc / realloc that abort on out of memory, as czmq's zmalloc does
//  (docs/CODING.md, allocation failure): every client allocation is
//  bounded by one reply frame or one state value.
void *client_alloc (void *ptr, size_t size);
parley_err_t client_fail (parley_client_t *self, parley_err_t code, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

//  client_transport.c
zsock_t *client_socket_new (parley_client_t *self, int type, const char *endpoint);
void client_close_dealer (parley_client_t *self);
parley_err_t client_exchange (parley_client_t *self, penc_t *enc, uint64_t id, pmsg_t **reply_p);
pmsg_t *client_recv_reply (parley_client_t *self, bool nowait);
parley_err_t client_await (parley_client_t *self, uint64_t id, int64_t until, pmsg_t **reply_p);

//  client_session.c
parley_err_t client_ensure_session (parley_client_t *self);

//  client_request.c: sends self->enc (begun with client_begin) with
//  resends; on PARLEY_OK self->reply holds a reply of type `expect`.
penc_t *client_begin (parley_client_t *self, pmsg_type_t type, size_t fields);
parley_err_t client_call (parley_client_t *self, pmsg_type_t expect);
parley_err_t client_error_reply (parley_client_t *self, const pmsg_t *reply);

//  client_requests.c: SEND, FETCH and WRITE checked and encoded into
//  self->enc, for the blocking call and for the pipeline.
//  `batch_p` NULL: a pipelined SEND (no batch id).
parley_err_t client_encode_send (parley_client_t *self, const parley_outgoing_t *items,
                                 size_t count, uint64_t *batch_p);
void client_encode_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream);
//  SEND's messages (STEP carries the same): checked (PARLEY_ERR_INVALID
//  with the reason), and encoded as the "messages" field.
parley_err_t client_messages_check (parley_client_t *self, const parley_outgoing_t *items,
                                    size_t count);
void client_messages_encode (parley_client_t *self, penc_t *enc, const parley_outgoing_t *items,
                             size_t count);
parley_err_t client_encode_write (parley_client_t *self, const parley_op_t *ops, size_t count);

//  client_pipeline.c
//  Keeps `msg` if it answers a posted request (true: taken).
bool client_pending_keep (parley_client_t *self, pmsg_t *msg);
//  client_confirm.c: takes a CONFIRM, or an ERROR answering a pipelined
//  SEND (true: `msg` was taken and destroyed).
bool client_confirm_keep (parley_client_t *self, pmsg_t *msg);
void client_confirm_destroy (parley_client_t *self);
//  The wait_ms every SEND carries.
uint64_t client_send_wait (parley_client_t *self);
//  Every posted request still waiting for its reply fails with `code`.
void client_pending_fail (parley_client_t *self, parley_err_t code);
void client_pending_destroy (parley_client_t *self);

//  client_requests.c: WRITE's ops (HANDOVER carries the same): checked
//  (PARLEY_ERR_INVALID with the reason) and encoded as the "ops" field.
parley_err_t client_ops_check (parley_client_t *self, const parley_op_t *ops, size_t count);
void client_ops_encode (penc_t *enc, const parley_op_t *ops, size_t count);

//  client_results.c
void client_results_reset (parley_client_t *self);
void client_decode_welcome (parley_client_t *self, const pmsg_t *msg);
void client_decode_sent (parley_client_t *self, uint64_t batch, size_t count, parley_sent_t *out);
void client_decode_mail (parley_client_t *self, parley_mail_batch_t *out);
void client_decode_written (parley_client_t *self, parley_written_t *out);
void client_decode_state (parley_client_t *self, parley_state_t *out);
void client_decode_observation (parley_client_t *self, parley_observation_t *out);
//  The same from a record of the reply (STEPPED's parts), with the arrays
//  the result points into given by the caller.
void client_decode_sent_in (parley_client_t *self, const msgpack_object *map, uint64_t batch,
                            size_t count, parley_sent_t *out, void **seq_items,
                            size_t *seq_size, void **error_items, size_t *error_size);
void client_decode_mail_in (parley_client_t *self, const msgpack_object *map, const char *key,
                            parley_mail_batch_t *out, void **mail_items, size_t *mail_size);
void client_decode_observation_in (parley_client_t *self, const msgpack_object *map,
                                   parley_observation_t *out);
void client_decode_agents (parley_client_t *self, parley_agent_list_t *out);
void client_decode_stats (parley_client_t *self, parley_stats_t *out);
//  The model_* fields of HEARTBEAT and agent_info, by name and place in
//  parley_model_report_t.
typedef struct {
    const char *name;
    size_t offset;
} client_model_field_t;
#define CLIENT_MODEL_FIELDS 9
extern const client_model_field_t client_model_fields [CLIENT_MODEL_FIELDS];
//  A HEARTBEAT with the model report, if one is set (client_requests.c).
void client_begin_heartbeat (parley_client_t *self, penc_t *enc, uint64_t id);

size_t client_arena_copy (client_arena_t *arena, const char *text, size_t len);
void *client_items (void **items, size_t *have, size_t count, size_t size);
//  Packs `value` into the arena: its offset, and its size in *size.
size_t client_arena_pack (client_arena_t *arena, const msgpack_object *value, size_t *size);

//  client_events.c
void client_drain_events (parley_client_t *self);
//  Takes what the DEALER holds without waiting (pushes, posted replies,
//  the keepalive's reply).
void client_drain_replies (parley_client_t *self);
void client_open_sub (parley_client_t *self);

//  client_workflow.c
//  Queues a WORKFLOW_EVENT frame (bounded; the oldest is dropped).
void client_workflow_queue (parley_client_t *self, zframe_t *frame);
//  True when an event waits to be taken (parley_client_wait returns).
bool client_workflow_pending (parley_client_t *self);
void client_workflow_destroy (parley_client_t *self);

//  client_observe.c: generic events and STATS as a field list.
//  Subscribes the (new) SUB socket to every topic asked for.
void client_events_subscribe_all (parley_client_t *self);
//  Queues a copy of an event whose topic was asked for.
void client_events_queue (parley_client_t *self, const char *topic, zmsg_t *msg);
bool client_events_pending (parley_client_t *self);
void client_events_destroy (parley_client_t *self);

//  client_push.c
//  Queues `msg` if it is a MAIL_PUSH (true: taken).
bool client_push_keep (parley_client_t *self, pmsg_t *msg);
bool client_push_pending (parley_client_t *self);
//  After a new WELCOME: drops the old connection's frames, sends the last
//  ack again and CONSUME when subscribed (on the hello encoder).
void client_push_resume (parley_client_t *self);
void client_push_destroy (parley_client_t *self);
//  The caller's descriptor follows the sockets: after one is made, and
//  before one is destroyed.
void client_fd_sync (parley_client_t *self);
void client_fd_forget (parley_client_t *self, zsock_t *sock);

//  client_replica.c
void client_replica_apply (parley_client_t *self, const pmsg_t *update);
//  A STATE_UPDATE frame for `key` (the topic after "state."): applied now
//  when the replica tells gaps, else held until the key is read.
void client_replica_update (parley_client_t *self, const char *key, zframe_t *frame);
void client_replica_refresh (parley_client_t *self);
void client_replica_destroy (parley_client_t *self);

#endif
