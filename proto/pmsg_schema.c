// SPDX-License-Identifier: MIT
/*  pmsg_schema - the schema table: every message type and record of the
    protocol, with its fields, kinds, limits and whether each is required.

    This table and PROTOCOL.md say the same thing; tests/check_proto.c checks
    that PROTOCOL.md names every type and field listed here. Changing a
    field here changes the protocol: update PROTOCOL.md in the same commit.

    Required fields in replies and events are the ones a receiver cannot do
    without; the rest are optional so a broker may leave out what it does
    not have (the forward-compatibility rule works both ways).
*/
#include <string.h>
#include "pmsg.h"

#define N(array) (sizeof (array) / sizeof ((array) [0]))
#define SCHEMA(var, name) { name, var, N (var) }

// ---------------------------------------------------------------------------
//  Records

static const pfield_t s_send_item [] = {
    { "to", PF_NAME, false, 0, NULL, "recipient agent id, or \"all\" (exactly one of to/channel)" },
    { "channel", PF_NAME, false, 0, NULL, "channel to post to (exactly one of to/channel)" },
    { "body", PF_BODY, true, 0, NULL, "message body, str or bin" },
    { "resolve", PF_BOOL, false, 0, NULL, "with channel: an agent of that name first, else a channel someone listens to, else NO_SUCH_TARGET" },
};

static const pfield_t s_mail_item [] = {
    { "seq", PF_UINT, true, 0, NULL, "mail sequence number" },
    { "ts", PF_UINT, true, 0, NULL, "microseconds since the Unix epoch, broker clock" },
    { "from", PF_NAME, true, 0, NULL, "sender agent id" },
    { "to", PF_NAME, false, 0, NULL, "recipient id, or \"all\" (exactly one of to/channel)" },
    { "channel", PF_NAME, false, 0, NULL, "channel it was posted to (exactly one of to/channel)" },
    { "body", PF_BODY, true, 0, NULL, "message body as the sender sent it" },
};

static const pfield_t s_item_error [] = {
    { "index", PF_UINT, true, 0, NULL, "index of the item in SEND.messages" },
    { "code", PF_UINT, true, 0, NULL, "error code" },
    { "message", PF_STR, true, PROTO_MAX_TEXT, NULL, "a sentence for a person" },
    { "agent", PF_NAME, false, 0, NULL, "the recipient a fan-out could not reach" },
};

static const pfield_t s_write_op [] = {
    { "op", PF_STR, true, PROTO_MAX_NAME, NULL, "declare, update, set, clear or delete" },
    { "key", PF_STR, true, PROTO_MAX_KEY, NULL, "state key" },
    { "value", PF_ANY, false, 0, NULL, "msgpack value, for update and set" },
    { "reducer", PF_STR, false, PROTO_MAX_NAME, NULL, "reducer name, for declare" },
};

static const pfield_t s_state_entry [] = {
    { "key", PF_STR, true, PROTO_MAX_KEY, NULL, "state key" },
    { "reducer", PF_STR, true, PROTO_MAX_NAME, NULL, "the key's reducer" },
    { "seq", PF_UINT, true, 0, NULL, "state seq of the last write to the key" },
    { "value", PF_ANY, false, 0, NULL, "the value (nil: absent)" },
};

static const pfield_t s_agent_info [] = {
    { "agent", PF_NAME, true, 0, NULL, "agent id" },
    { "online", PF_BOOL, true, 0, NULL, "has a live connection" },
    { "idle_ms", PF_UINT, false, 0, NULL, "time since last heard from" },
    { "pending", PF_UINT, false, 0, NULL, "messages queued and not acknowledged" },
    { "caps", PF_STR_ARRAY, false, 64, NULL, "capabilities from HELLO" },
    { "model_calls", PF_UINT, false, 0, NULL, "last reported: model calls made" },
    { "model_ok", PF_UINT, false, 0, NULL, "last reported: calls that got an answer" },
    { "model_failed", PF_UINT, false, 0, NULL, "last reported: calls that got none" },
    { "model_skipped", PF_UINT, false, 0, NULL, "last reported: decisions not sent: circuit open" },
    { "model_retries", PF_UINT, false, 0, NULL, "last reported: HTTP retries" },
    { "model_prompt_tokens", PF_UINT, false, 0, NULL, "last reported: prompt tokens the server reported" },
    { "model_completion_tokens", PF_UINT, false, 0, NULL, "last reported: completion tokens the server reported" },
    { "model_latency_ms", PF_UINT, false, 0, NULL, "last reported: sum of call latencies, ms" },
    { "model_latency_max_ms", PF_UINT, false, 0, NULL, "last reported: slowest call, ms" },
    { "unacked", PF_UINT, false, 0, NULL, "messages handed out by FETCH and not acknowledged" },
    { "inbox_bytes", PF_UINT, false, 0, NULL, "body bytes of the pending messages" },
    { "step", PF_UINT, false, 0, NULL, "step of its last ACT that moved (0: none)" },
    { "acts", PF_UINT, false, 0, NULL, "ACTs that moved (replays not counted)" },
};

static const pfield_t s_world [] = {
    { "kind", PF_STR, true, PROTO_MAX_NAME, NULL, "\"line\" or \"grid\"" },
    { "width", PF_UINT, false, 0, NULL, "cells along x" },
    { "height", PF_UINT, false, 0, NULL, "cells along y (1 on a line)" },
    { "objects_total", PF_UINT, false, 0, NULL, "unique objects in the world" },
    { "explored", PF_UINT, false, 0, NULL, "unique objects explored by anyone" },
    { "coverage", PF_NUM, false, 0, NULL, "explored / objects_total, 0..1" },
    { "done", PF_BOOL, false, 0, NULL, "everything explored" },
};

static const pfield_t s_checkpoint_info [] = {
    { "number", PF_UINT, true, 0, NULL, "checkpoint number (0: the workflow's start)" },
    { "turn", PF_UINT, true, 0, NULL, "turns taken when it was recorded" },
    { "status", PF_STR, true, PROTO_MAX_NAME, NULL, "workflow status then" },
    { "holder", PF_STR, false, PROTO_MAX_NAME, NULL, "role holding the turn then" },
    { "revisions", PF_UINT, false, 0, NULL, "revisions made by then" },
    { "changed", PF_UINT, false, 0, NULL, "keys changed since the previous checkpoint" },
    { "bytes", PF_UINT, false, 0, NULL, "bytes stored for this checkpoint" },
};

static const pfield_t s_checkpoint_entry [] = {
    { "key", PF_STR, true, PROTO_MAX_KEY, NULL, "state key" },
    { "reducer", PF_STR, false, PROTO_MAX_NAME, NULL, "the key's reducer (absent when removed)" },
    { "value", PF_ANY, false, 0, NULL, "the value (absent when removed)" },
    { "removed", PF_BOOL, false, 0, NULL, "the key does not exist at the later checkpoint" },
};

//  Replies whose fields STEPPED carries as records (defined with the
//  replies below; the sizes say how many fields each has).
static const pfield_t s_sent [4];
static const pfield_t s_written [2];
static const pfield_t s_observation [12];

static const pfield_t s_part_error [] = {
    { "code", PF_UINT, true, 0, NULL, "error code" },
    { "error", PF_STR, true, PROTO_MAX_NAME, NULL, "the code's name" },
    { "message", PF_STR, true, PROTO_MAX_TEXT, NULL, "a sentence for a person" },
};

static const pfield_t s_confirm_error [] = {
    { "id", PF_UINT, true, 0, NULL, "request id of the pipelined SEND" },
    { "index", PF_UINT, false, 0, NULL, "index of the item in its messages (absent: the whole SEND was refused)" },
    { "code", PF_UINT, true, 0, NULL, "error code" },
    { "message", PF_STR, true, PROTO_MAX_TEXT, NULL, "a sentence for a person" },
    { "agent", PF_NAME, false, 0, NULL, "the recipient a fan-out could not reach" },
};

static const pschema_t s_records [] = {
    SCHEMA (s_send_item, "send_item"),
    SCHEMA (s_mail_item, "mail_item"),
    SCHEMA (s_item_error, "item_error"),
    SCHEMA (s_write_op, "write_op"),
    SCHEMA (s_state_entry, "state_entry"),
    SCHEMA (s_agent_info, "agent_info"),
    SCHEMA (s_world, "world"),
    SCHEMA (s_checkpoint_info, "checkpoint_info"),
    SCHEMA (s_checkpoint_entry, "checkpoint_entry"),
    SCHEMA (s_sent, "sent_result"),
    SCHEMA (s_written, "written_result"),
    SCHEMA (s_observation, "observation"),
    SCHEMA (s_part_error, "part_error"),
    SCHEMA (s_confirm_error, "confirm_error"),
};

#define R_SEND_ITEM   (&s_records [0])
#define R_MAIL_ITEM   (&s_records [1])
#define R_ITEM_ERROR  (&s_records [2])
#define R_WRITE_OP    (&s_records [3])
#define R_STATE_ENTRY (&s_records [4])
#define R_AGENT_INFO  (&s_records [5])
#define R_WORLD       (&s_records [6])
#define R_CHECKPOINT_INFO  (&s_records [7])
#define R_CHECKPOINT_ENTRY (&s_records [8])
#define R_SENT_RESULT (&s_records [9])
#define R_WRITTEN_RESULT (&s_records [10])
#define R_OBSERVATION (&s_records [11])
#define R_PART_ERROR  (&s_records [12])
#define R_CONFIRM_ERROR (&s_records [13])

// ---------------------------------------------------------------------------
//  Requests

static const pfield_t s_hello [] = {
    { "agent", PF_NAME, true, 0, NULL, "the agent id this connection speaks for" },
    { "caps", PF_STR_ARRAY, false, 64, NULL, "capabilities, free-form" },
    { "token", PF_STR, false, PROTO_MAX_NAME, NULL, "resume token from an earlier WELCOME" },
    { "observe", PF_BOOL, false, 0, NULL, "WELCOME only, no registration (the tap)" },
};
static const pfield_t s_heartbeat [] = {
    { "model_calls", PF_UINT, false, 0, NULL, "model calls made" },
    { "model_ok", PF_UINT, false, 0, NULL, "calls that got an answer" },
    { "model_failed", PF_UINT, false, 0, NULL, "calls that got none" },
    { "model_skipped", PF_UINT, false, 0, NULL, "decisions not sent: circuit open" },
    { "model_retries", PF_UINT, false, 0, NULL, "HTTP retries" },
    { "model_prompt_tokens", PF_UINT, false, 0, NULL, "prompt tokens the server reported" },
    { "model_completion_tokens", PF_UINT, false, 0, NULL, "completion tokens the server reported" },
    { "model_latency_ms", PF_UINT, false, 0, NULL, "sum of call latencies, ms" },
    { "model_latency_max_ms", PF_UINT, false, 0, NULL, "slowest call, ms" },
};
static const pfield_t s_bye [] = {
    { "forget", PF_BOOL, false, 0, NULL, "also delete the registration and its mail" },
};
static const pfield_t s_send [] = {
    { "messages", PF_REC_ARRAY, true, PROTO_MAX_BATCH, R_SEND_ITEM, "1..4096 messages" },
    { "batch", PF_UINT, false, 0, NULL, "sender's batch id: a repeat gets the same SENT, posts nothing" },
    { "pipelined", PF_BOOL, false, 0, NULL, "no SENT: covered by the connection's next CONFIRM" },
    { "wait_ms", PF_UINT, false, 0, NULL, "wait up to this long for room in an online recipient's full inbox (0: INBOX_FULL at once)" },
    { "ack", PF_UINT, false, 0, NULL, "acknowledge the sender's own mail with seq <= ack first (WELCOME features send_ack)" },
};
static const pfield_t s_fetch [] = {
    { "ack", PF_UINT, false, 0, NULL, "acknowledge everything with seq <= ack first" },
    { "max", PF_UINT, false, 0, NULL, "at most this many messages" },
    { "stream", PF_BOOL, false, 0, NULL, "continue after the mail earlier FETCHes handed out" },
};
static const pfield_t s_ack [] = {
    { "seq", PF_UINT, true, 0, NULL, "acknowledge everything with seq <= seq" },
};
static const pfield_t s_listen [] = {
    { "channel", PF_NAME, true, 0, NULL, "channel name" },
};
static const pfield_t s_write [] = {
    { "ops", PF_REC_ARRAY, true, PROTO_MAX_BATCH, R_WRITE_OP, "1..4096 operations, atomic" },
};
static const pfield_t s_get [] = {
    { "keys", PF_STR_ARRAY, true, PROTO_MAX_BATCH, NULL, "1..4096 state keys" },
};
static const pfield_t s_snapshot [] = {
    { "prefix", PF_STR, false, PROTO_MAX_KEY, NULL, "only keys starting with it" },
    { "after_key", PF_STR, false, PROTO_MAX_KEY, NULL, "page: only keys after it (bytewise)" },
    { "limit", PF_UINT, false, 0, NULL, "page: at most this many entries" },
};
static const pfield_t s_act [] = {
    { "action", PF_STR, true, PROTO_MAX_TEXT, NULL, "forward, backward, left, right, stay" },
    { "step", PF_UINT, false, 0, NULL, "the agent's step number: a repeat gets the same answer" },
};
static const pfield_t s_world_reset [] = {
    { "seed", PF_UINT, false, 0, NULL, "new world seed" },
};

// ---------------------------------------------------------------------------
//  Replies

static const pfield_t s_welcome [] = {
    { "version", PF_UINT, true, 0, NULL, "protocol version" },
    { "agent", PF_NAME, true, 0, NULL, "the id, as registered" },
    { "pub", PF_STR, true, PROTO_MAX_TEXT, NULL, "event endpoint" },
    { "tap", PF_STR, false, PROTO_MAX_TEXT, NULL, "tap endpoint" },
    { "heartbeat_ms", PF_UINT, true, 0, NULL, "send something at least this often" },
    { "liveness_ms", PF_UINT, true, 0, NULL, "silent this long, the agent is gone" },
    { "max_body", PF_UINT, true, 0, NULL, "largest message body accepted" },
    { "max_batch", PF_UINT, true, 0, NULL, "most messages per SEND / MAIL" },
    { "acked", PF_UINT, true, 0, NULL, "acknowledged mail position" },
    { "mail_seq", PF_UINT, false, 0, NULL, "latest mail seq" },
    { "state_seq", PF_UINT, false, 0, NULL, "latest state seq" },
    { "world", PF_REC, false, 0, R_WORLD, "world summary" },
    { "channels", PF_STR_ARRAY, false, PROTO_MAX_BATCH, NULL, "channels listened to" },
    { "origin", PF_UINT, false, 0, NULL, "identifies the broker's counters: changes when they restart" },
    { "token", PF_STR, false, PROTO_MAX_NAME, NULL, "resume token (plain mode): keep it for HELLO" },
    { "features", PF_STR_ARRAY, false, 64, NULL, "optional behaviours this broker has, e.g. send_ack" },
};
static const pfield_t s_error [] = {
    { "code", PF_UINT, true, 0, NULL, "error code" },
    { "error", PF_STR, true, PROTO_MAX_NAME, NULL, "the code's name" },
    { "message", PF_STR, true, PROTO_MAX_TEXT, NULL, "a sentence for a person" },
};
static const pfield_t s_agent_list [] = {
    { "agents", PF_REC_ARRAY, true, PROTO_MAX_BATCH, R_AGENT_INFO, "registered agents" },
};
static const pfield_t s_sent [4] = {
    { "accepted", PF_UINT, true, 0, NULL, "items accepted" },
    { "seqs", PF_UINT_ARRAY, true, PROTO_MAX_BATCH, NULL, "mail seq per item, 0 if rejected" },
    { "errors", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_ITEM_ERROR, "rejected items" },
    { "errors_omitted", PF_UINT, false, 0, NULL, "item errors left out of errors (reply budget)" },
};
static const pfield_t s_mail [] = {
    { "messages", PF_REC_ARRAY, true, PROTO_MAX_BATCH, R_MAIL_ITEM, "mail, oldest first" },
    { "pending", PF_UINT, true, 0, NULL, "messages still queued" },
    { "acked", PF_UINT, true, 0, NULL, "acknowledged position" },
};
static const pfield_t s_written [2] = {
    { "seq", PF_UINT, true, 0, NULL, "state seq after the write" },
    { "changed", PF_UINT, true, 0, NULL, "keys changed" },
};
static const pfield_t s_state [] = {
    { "seq", PF_UINT, true, 0, NULL, "state seq of the snapshot" },
    { "entries", PF_REC_ARRAY, true, PROTO_MAX_STATE_ENTRIES, R_STATE_ENTRY, "state entries" },
    { "more", PF_BOOL, false, 0, NULL, "a paged SNAPSHOT left entries out: ask again" },
};
static const pfield_t s_observation [12] = {
    { "position", PF_UINT, true, 0, NULL, "index along the line (y * width + x)" },
    { "x", PF_UINT, false, 0, NULL, "x coordinate" },
    { "y", PF_UINT, false, 0, NULL, "y coordinate" },
    { "objects", PF_STR_ARRAY, false, PROTO_MAX_BATCH, NULL, "objects at the position" },
    { "outcome", PF_STR, true, PROTO_MAX_NAME, NULL, "perceived, moved, edge, stayed" },
    { "new_objects", PF_STR_ARRAY, false, PROTO_MAX_BATCH, NULL, "newly explored objects" },
    { "explored", PF_UINT, false, 0, NULL, "unique objects explored" },
    { "objects_total", PF_UINT, false, 0, NULL, "unique objects in the world" },
    { "coverage", PF_NUM, false, 0, NULL, "explored / objects_total" },
    { "done", PF_BOOL, false, 0, NULL, "everything explored" },
    { "image", PF_BODY, false, 256 * 1024, NULL, "the position's image (PNG or JPEG bytes)" },
    { "image_type", PF_STR, false, PROTO_MAX_NAME, NULL, "\"png\" or \"jpeg\"" },
};
static const pfield_t s_stats_reply [] = {
    { "uptime_ms", PF_UINT, true, 0, NULL, "since start" },
    { "agents", PF_UINT, false, 0, NULL, "registered agents" },
    { "online", PF_UINT, false, 0, NULL, "agents with a live connection" },
    { "channels", PF_UINT, false, 0, NULL, "channels" },
    { "queued", PF_UINT, false, 0, NULL, "messages not acknowledged by all" },
    { "queued_bytes", PF_UINT, false, 0, NULL, "their bytes" },
    { "delivered", PF_UINT, false, 0, NULL, "messages delivered" },
    { "dropped", PF_UINT, false, 0, NULL, "messages dropped" },
    { "rejected", PF_UINT, false, 0, NULL, "items rejected" },
    { "msgs_in", PF_UINT, false, 0, NULL, "messages in" },
    { "msgs_out", PF_UINT, false, 0, NULL, "messages out" },
    { "rate_in", PF_NUM, false, 0, NULL, "messages/s in, last second" },
    { "rate_out", PF_NUM, false, 0, NULL, "messages/s out, last second" },
    { "state_keys", PF_UINT, false, 0, NULL, "state keys" },
    { "state_bytes", PF_UINT, false, 0, NULL, "state bytes" },
    { "state_seq", PF_UINT, false, 0, NULL, "latest state seq" },
    { "mail_seq", PF_UINT, false, 0, NULL, "latest mail seq" },
    { "errors", PF_UINT, false, 0, NULL, "ERROR replies sent" },
    { "bad_frames", PF_UINT, false, 0, NULL, "frames that failed decoding" },
    { "unroutable", PF_UINT, false, 0, NULL, "replies not sent: peer gone or its pipe full" },
    { "requests", PF_UINT, false, 0, NULL, "request frames received" },
    { "tap_seq", PF_UINT, false, 0, NULL, "latest tap sequence (TAP tseq)" },
    { "forgotten", PF_UINT, false, 0, NULL, "agents forgotten after --forget-after-ms offline" },
    { "unauthorized", PF_UINT, false, 0, NULL, "requests refused UNAUTHORIZED" },
    { "auth_denied", PF_UINT, false, 0, NULL, "connections refused at the handshake (CURVE)" },
    { "replies_dropped", PF_UINT, false, 0, NULL, "replies lost with a connection cut for not reading them" },
    { "replies_stalled", PF_UINT, false, 0, NULL, "replies a full pipe refused at first, kept and sent later" },
    { "replies_waiting", PF_UINT, false, 0, NULL, "replies kept now for clients that read slowly" },
    { "connections_cut", PF_UINT, false, 0, NULL, "connections cut for not reading their replies" },
    { "requests_stalled", PF_UINT, false, 0, NULL, "requests held now behind replies their client has not read" },
    { "journal_healthy", PF_UINT, false, 0, NULL, "0 while the journal heals from a failed write or sync (changes refused), else 1" },
    { "queued_memory", PF_UINT, false, 0, NULL, "memory of the queued messages (bounded by --max-queued-bytes)" },
    { "storage_errors", PF_UINT, false, 0, NULL, "journal records that could not be written (ERROR STORAGE)" },
    { "version", PF_STR, false, PROTO_MAX_NAME, NULL, "the broker's release (parley-broker --version)" },
    { "sends_parked", PF_UINT, false, 0, NULL, "SENDs that waited for room in a full inbox" },
    { "send_wait_timeouts", PF_UINT, false, 0, NULL, "parked SENDs answered INBOX_FULL at their deadline" },
    { "sends_waiting", PF_UINT, false, 0, NULL, "SENDs parked now" },
    { "requests_held", PF_UINT, false, 0, NULL, "requests queued now behind parked SENDs" },
    { "requests_refused_held", PF_UINT, false, 0, NULL, "requests refused QUEUES_FULL: too many behind a parked SEND" },
    { "confirms", PF_UINT, false, 0, NULL, "CONFIRM frames sent" },
    { "pushed", PF_UINT, false, 0, NULL, "mail items pushed to consumers (MAIL_PUSH)" },
    { "push_frames", PF_UINT, false, 0, NULL, "MAIL_PUSH frames sent" },
    { "push_deferred", PF_UINT, false, 0, NULL, "MAIL_PUSH frames the consumer's full pipe refused (retried, nothing lost)" },
    { "consumers", PF_UINT, false, 0, NULL, "agents with an open push subscription" },
    { "journal_log_bytes", PF_UINT, false, 0, NULL, "size of the journal's current log (--data-dir)" },
    { "journal_snapshot_bytes", PF_UINT, false, 0, NULL, "size of the journal's newest snapshot" },
    { "journal_written_bytes", PF_UINT, false, 0, NULL, "bytes appended to the journal's logs since start" },
    { "journal_compactions", PF_UINT, false, 0, NULL, "journal compactions finished since start" },
    { "journal_write_errors", PF_UINT, false, 0, NULL, "journal appends that failed" },
    { "journal_sync_errors", PF_UINT, false, 0, NULL, "journal syncs that failed" },
    { "model_roles", PF_MAP, false, 0, NULL, "model use per role: {role: {agents, model_calls, ...}}" },
};

// ---------------------------------------------------------------------------
//  Events

static const pfield_t s_mail_ready [] = {
    { "agent", PF_NAME, true, 0, NULL, "the agent with new mail" },
    { "seq", PF_UINT, true, 0, NULL, "newest seq queued for it" },
};
static const pfield_t s_state_update [] = {
    { "key", PF_STR, true, PROTO_MAX_KEY, NULL, "state key" },
    { "seq", PF_UINT, true, 0, NULL, "state seq of this write" },
    { "op", PF_STR, true, PROTO_MAX_NAME, NULL, "declare, update, set, clear, delete" },
    { "reducer", PF_STR, false, PROTO_MAX_NAME, NULL, "the key's reducer" },
    { "value", PF_ANY, false, 0, NULL, "the key's full new value" },
};
static const pfield_t s_world_event [] = {
    { "event", PF_STR, true, PROTO_MAX_NAME, NULL, "explored, reset" },
    { "coverage", PF_NUM, false, 0, NULL, "explored / objects_total" },
    { "explored", PF_UINT, false, 0, NULL, "unique objects explored" },
    { "objects_total", PF_UINT, false, 0, NULL, "unique objects in the world" },
};
static const pfield_t s_agent_event [] = {
    { "agent", PF_NAME, true, 0, NULL, "agent id" },
    { "event", PF_STR, true, PROTO_MAX_NAME, NULL, "joined, left, expired, forgotten" },
};
static const pfield_t s_tap [] = {
    { "tseq", PF_UINT, true, 0, NULL, "tap sequence" },
    { "ts", PF_UINT, true, 0, NULL, "microseconds since the Unix epoch" },
    { "dir", PF_STR, true, PROTO_MAX_NAME, NULL, "in, out, pub" },
    { "peer", PF_STR, true, PROTO_MAX_TEXT, NULL, "agent id, connection id or topic" },
    { "body", PF_BODY, true, PROTO_MAX_FRAME, NULL, "the frame as sent" },
};

// ---------------------------------------------------------------------------
//  Workflow and checkpoints (added after the first table)

static const pfield_t s_handover [] = {
    { "ops", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_WRITE_OP, "state writes, applied with the hand-over" },
    { "next", PF_NAME, false, 0, NULL, "the role that takes the turn" },
    { "status", PF_STR, false, PROTO_MAX_NAME, NULL, "in_progress, revision, done or failed" },
    { "reason", PF_STR, false, PROTO_MAX_TEXT, NULL, "why (a failed or done workflow's report)" },
    { "turn", PF_UINT, false, 0, NULL, "the turn it ends: a resend of a hand-over that was taken gets the same answer" },
};
static const pfield_t s_checkpoint [] = {
    { "number", PF_UINT, true, 0, NULL, "the checkpoint to show" },
    { "since", PF_UINT, false, 0, NULL, "show only what changed from this checkpoint" },
};
static const pfield_t s_resume [] = {
    { "number", PF_UINT, true, 0, NULL, "the checkpoint to resume from" },
};
static const pfield_t s_workflow_info [] = {
    { "status", PF_STR, true, PROTO_MAX_NAME, NULL, "pending, in_progress, revision, done, failed" },
    { "turn", PF_UINT, true, 0, NULL, "turns started so far" },
    { "revisions", PF_UINT, true, 0, NULL, "revisions made so far" },
    { "holder", PF_STR, false, PROTO_MAX_NAME, NULL, "the role holding the turn" },
    { "agent", PF_STR, false, PROTO_MAX_NAME, NULL, "the agent acting for it (absent: none connected)" },
    { "paused", PF_BOOL, false, 0, NULL, "the turn waits for a person (a human role)" },
    { "max_revisions", PF_UINT, false, 0, NULL, "the revision limit" },
    { "max_turns", PF_UINT, false, 0, NULL, "the total-turns limit" },
    { "reason", PF_STR, false, PROTO_MAX_TEXT, NULL, "why the workflow ended, or the last hand-over's reason" },
    { "checkpoint", PF_UINT, false, 0, NULL, "the latest checkpoint number" },
    { "seq", PF_UINT, false, 0, NULL, "state seq after the request" },
};
static const pfield_t s_checkpoint_list [] = {
    { "checkpoints", PF_REC_ARRAY, true, PROTO_MAX_BATCH, R_CHECKPOINT_INFO, "kept checkpoints, oldest first" },
    { "dropped", PF_UINT, false, 0, NULL, "older checkpoints folded away by the retention bound" },
};
static const pfield_t s_checkpoint_state [] = {
    { "number", PF_UINT, true, 0, NULL, "the checkpoint shown" },
    { "since", PF_UINT, false, 0, NULL, "present for a diff: the earlier checkpoint" },
    { "info", PF_REC, true, 0, R_CHECKPOINT_INFO, "the checkpoint's workflow fields" },
    { "entries", PF_REC_ARRAY, true, PROTO_MAX_STATE_ENTRIES, R_CHECKPOINT_ENTRY, "the state, or what changed" },
};
static const pfield_t s_workflow_event [] = {
    { "event", PF_STR, true, PROTO_MAX_NAME, NULL, "turn, paused, done, failed, resumed" },
    { "status", PF_STR, true, PROTO_MAX_NAME, NULL, "workflow status" },
    { "turn", PF_UINT, true, 0, NULL, "turns started so far" },
    { "revisions", PF_UINT, false, 0, NULL, "revisions made so far" },
    { "holder", PF_STR, false, PROTO_MAX_NAME, NULL, "the role holding the turn" },
    { "agent", PF_STR, false, PROTO_MAX_NAME, NULL, "the agent acting for it" },
    { "reason", PF_STR, false, PROTO_MAX_TEXT, NULL, "why" },
    { "checkpoint", PF_UINT, false, 0, NULL, "the checkpoint recorded at this boundary" },
};

// ---------------------------------------------------------------------------
//  STEP: an agent's whole step in one request (added after the workflow)

static const pfield_t s_step [] = {
    { "step", PF_UINT, false, 0, NULL, "the agent's step number: a repeat gets the same answer, applies nothing" },
    { "ack", PF_UINT, false, 0, NULL, "acknowledge everything with seq <= ack first" },
    { "messages", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_SEND_ITEM, "messages to send, as SEND's" },
    { "ops", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_WRITE_OP, "state writes, atomic among themselves, as WRITE's" },
    { "action", PF_STR, false, PROTO_MAX_TEXT, NULL, "a move, as ACT's" },
    { "perceive", PF_BOOL, false, 0, NULL, "without action: the observation of a PERCEIVE" },
    { "fetch", PF_UINT, false, 0, NULL, "return up to this many mail messages" },
    { "stream", PF_BOOL, false, 0, NULL, "with fetch: continue after the mail handed out before, as FETCH's" },
};
static const pfield_t s_stepped [] = {
    { "step", PF_UINT, false, 0, NULL, "the request's step" },
    { "sent", PF_REC, false, 0, R_SENT_RESULT, "the messages' result, as SENT" },
    { "written", PF_REC, false, 0, R_WRITTEN_RESULT, "the ops' result, as WRITTEN" },
    { "ops_error", PF_REC, false, 0, R_PART_ERROR, "the ops were refused: none applied" },
    { "observation", PF_REC, false, 0, R_OBSERVATION, "after the action (or PERCEIVE)" },
    { "action_error", PF_REC, false, 0, R_PART_ERROR, "the action was refused" },
    { "mail", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_MAIL_ITEM, "with fetch: mail, oldest first" },
    { "pending", PF_UINT, false, 0, NULL, "with fetch: messages queued after these" },
    { "acked", PF_UINT, true, 0, NULL, "acknowledged position after the ack" },
    { "replayed", PF_BOOL, false, 0, NULL, "a repeated step answered from memory" },
};

// ---------------------------------------------------------------------------
//  Pipelined SENDs

static const pfield_t s_confirm [] = {
    { "through", PF_UINT, true, 0, NULL, "request id of the last pipelined SEND covered" },
    { "count", PF_UINT, true, 0, NULL, "pipelined SENDs covered" },
    { "accepted", PF_UINT, false, 0, NULL, "messages accepted by them" },
    { "errors", PF_REC_ARRAY, false, PROTO_MAX_BATCH, R_CONFIRM_ERROR, "refused SENDs and items, in order" },
    { "errors_omitted", PF_UINT, false, 0, NULL, "errors left out of errors" },
};

// ---------------------------------------------------------------------------
//  Pushed delivery (added after the workflow)

static const pfield_t s_consume [] = {
    { "credit", PF_UINT, true, 0, NULL, "messages pushed and not acknowledged at most (0: stop pushing)" },
    { "credit_bytes", PF_UINT, false, 0, NULL, "body bytes pushed and not acknowledged at most" },
};

static const pfield_t s_none [1] = { { NULL, PF_ANY, false, 0, NULL, NULL } };

static const pschema_t s_types [PMSG__COUNT] = {
    [PMSG_HELLO] = SCHEMA (s_hello, "HELLO"),
    [PMSG_HEARTBEAT] = SCHEMA (s_heartbeat, "HEARTBEAT"),
    [PMSG_BYE] = SCHEMA (s_bye, "BYE"),
    [PMSG_AGENTS] = { "AGENTS", s_none, 0 },
    [PMSG_SEND] = SCHEMA (s_send, "SEND"),
    [PMSG_FETCH] = SCHEMA (s_fetch, "FETCH"),
    [PMSG_ACK] = SCHEMA (s_ack, "ACK"),
    [PMSG_LISTEN] = SCHEMA (s_listen, "LISTEN"),
    [PMSG_UNLISTEN] = SCHEMA (s_listen, "UNLISTEN"),
    [PMSG_WRITE] = SCHEMA (s_write, "WRITE"),
    [PMSG_GET] = SCHEMA (s_get, "GET"),
    [PMSG_SNAPSHOT] = SCHEMA (s_snapshot, "SNAPSHOT"),
    [PMSG_PERCEIVE] = { "PERCEIVE", s_none, 0 },
    [PMSG_ACT] = SCHEMA (s_act, "ACT"),
    [PMSG_WORLD_RESET] = SCHEMA (s_world_reset, "WORLD_RESET"),
    [PMSG_STATS] = { "STATS", s_none, 0 },
    [PMSG_WELCOME] = SCHEMA (s_welcome, "WELCOME"),
    [PMSG_OK] = { "OK", s_none, 0 },
    [PMSG_ERROR] = SCHEMA (s_error, "ERROR"),
    [PMSG_AGENT_LIST] = SCHEMA (s_agent_list, "AGENT_LIST"),
    [PMSG_SENT] = SCHEMA (s_sent, "SENT"),
    [PMSG_MAIL] = SCHEMA (s_mail, "MAIL"),
    [PMSG_WRITTEN] = SCHEMA (s_written, "WRITTEN"),
    [PMSG_STATE] = SCHEMA (s_state, "STATE"),
    [PMSG_OBSERVATION] = SCHEMA (s_observation, "OBSERVATION"),
    [PMSG_STATS_REPLY] = SCHEMA (s_stats_reply, "STATS_REPLY"),
    [PMSG_MAIL_READY] = SCHEMA (s_mail_ready, "MAIL_READY"),
    [PMSG_STATE_UPDATE] = SCHEMA (s_state_update, "STATE_UPDATE"),
    [PMSG_WORLD_EVENT] = SCHEMA (s_world_event, "WORLD_EVENT"),
    [PMSG_AGENT_EVENT] = SCHEMA (s_agent_event, "AGENT_EVENT"),
    [PMSG_TAP] = SCHEMA (s_tap, "TAP"),
    [PMSG_HANDOVER] = SCHEMA (s_handover, "HANDOVER"),
    [PMSG_WORKFLOW] = { "WORKFLOW", s_none, 0 },
    [PMSG_CHECKPOINTS] = { "CHECKPOINTS", s_none, 0 },
    [PMSG_CHECKPOINT] = SCHEMA (s_checkpoint, "CHECKPOINT"),
    [PMSG_RESUME] = SCHEMA (s_resume, "RESUME"),
    [PMSG_WORKFLOW_INFO] = SCHEMA (s_workflow_info, "WORKFLOW_INFO"),
    [PMSG_CHECKPOINT_LIST] = SCHEMA (s_checkpoint_list, "CHECKPOINT_LIST"),
    [PMSG_CHECKPOINT_STATE] = SCHEMA (s_checkpoint_state, "CHECKPOINT_STATE"),
    [PMSG_WORKFLOW_EVENT] = SCHEMA (s_workflow_event, "WORKFLOW_EVENT"),
    [PMSG_STEP] = SCHEMA (s_step, "STEP"),
    [PMSG_STEPPED] = SCHEMA (s_stepped, "STEPPED"),
    [PMSG_CONFIRM] = SCHEMA (s_confirm, "CONFIRM"),
    [PMSG_CONSUME] = SCHEMA (s_consume, "CONSUME"),
    [PMSG_MAIL_PUSH] = SCHEMA (s_mail, "MAIL_PUSH"),
};

//  Types added after PMSG_TAP are not in request/reply/event order, so
//  each names its kind here.
static const pmsg_kind_t s_added_kinds [PMSG__COUNT] = {
    [PMSG_HANDOVER] = PMSG_REQUEST,
    [PMSG_WORKFLOW] = PMSG_REQUEST,
    [PMSG_CHECKPOINTS] = PMSG_REQUEST,
    [PMSG_CHECKPOINT] = PMSG_REQUEST,
    [PMSG_RESUME] = PMSG_REQUEST,
    [PMSG_WORKFLOW_INFO] = PMSG_REPLY,
    [PMSG_CHECKPOINT_LIST] = PMSG_REPLY,
    [PMSG_CHECKPOINT_STATE] = PMSG_REPLY,
    [PMSG_WORKFLOW_EVENT] = PMSG_EVENT,
    [PMSG_STEP] = PMSG_REQUEST,
    [PMSG_STEPPED] = PMSG_REPLY,
    [PMSG_CONFIRM] = PMSG_REPLY,
    [PMSG_CONSUME] = PMSG_REQUEST,
    [PMSG_MAIL_PUSH] = PMSG_REPLY,
};

const char *
pmsg_type_name (pmsg_type_t type)
{
    if ((unsigned) type >= PMSG__COUNT)
        return "UNKNOWN";
    return s_types [type].name;
}

bool
pmsg_type_from_name (const char *name, size_t len, pmsg_type_t *type)
{
    if (!name || len == 0 || len > 32)
        return false;
    for (int i = 0; i < PMSG__COUNT; i++) {
        const char *candidate = s_types [i].name;
        //  Byte by byte up to the first difference: no strlen per
        //  candidate. The candidate's NUL ends it, so a name holding a
        //  NUL never matches and nothing is read past the candidate.
        size_t i_byte = 0;
        while (i_byte < len && candidate [i_byte] && candidate [i_byte] == name [i_byte])
            i_byte++;
        if (i_byte == len && candidate [len] == 0) {
            if (type)
                *type = (pmsg_type_t) i;
            return true;
        }
    }
    return false;
}

pmsg_kind_t
pmsg_type_kind (pmsg_type_t type)
{
    if (type > PMSG_TAP && type < PMSG__COUNT)
        return s_added_kinds [type];
    if (type < PMSG_WELCOME)
        return PMSG_REQUEST;
    if (type < PMSG_MAIL_READY)
        return PMSG_REPLY;
    return PMSG_EVENT;
}

const pschema_t *
pmsg_schema (pmsg_type_t type)
{
    if ((unsigned) type >= PMSG__COUNT)
        return NULL;
    return &s_types [type];
}

const pschema_t *
pmsg_record_schema (const char *name)
{
    for (size_t i = 0; name && i < N (s_records); i++)
        if (strcmp (s_records [i].name, name) == 0)
            return &s_records [i];
    return NULL;
}

size_t
pmsg_record_schema_count (void)
{
    return N (s_records);
}

const pschema_t *
pmsg_record_schema_at (size_t index)
{
    return index < N (s_records) ? &s_records [index] : NULL;
}

//  A table rather than isalnum(): locale-free, and one lookup per
//  character, since every to/from/channel of every message passes here.
#define S_RANGE(from, to) [from ... to] = true
static const bool s_name_chars [256] = {
    S_RANGE ('a', 'z'), S_RANGE ('A', 'Z'), S_RANGE ('0', '9'),
    ['_'] = true, ['.'] = true, [':'] = true, ['-'] = true
};
#undef S_RANGE

static inline bool
s_name_char (unsigned char c)
{
    return s_name_chars [c];
}

bool
pmsg_name_valid (const char *name, size_t len)
{
    if (!name || len == 0 || len > PROTO_MAX_NAME)
        return false;
    size_t start = name [0] == '$' ? 1 : 0;     //  broker-reserved names
    if (start == len || name [start] == '.' || name [start] == '-')
        return false;
    for (size_t i = start; i < len; i++)
        if (!s_name_char ((unsigned char) name [i]))
            return false;
    return true;
}
