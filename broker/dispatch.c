// SPDX-License-Identifier: MIT
/*  dispatch - from a ROUTER frame to a handler and back to one reply.

    Per request: receive the routing id and the body with zmq_msg_t (no czmq
    zmsg/zframe allocation per message), mirror it on the tap, decode it
    (pmsg_decode: strict and bounded), check that it is a request and that
    the connection has said HELLO, refresh the agent's liveness, and call the
    handler for its type from a table indexed by pmsg_type_t. Every handler
    writes exactly one reply into self->reply (one reused penc_t), which goes
    back on the same connection.

    Bad input never gets further than here: a frame that fails to decode,
    carries a reply/event type, or comes with extra body frames gets ERROR
    with the request id when it could be read, is counted (bad_frames) and
    logged at most a few times a second. Nothing queued is touched.

    A session belongs to one connection, not to a routing id: a client may
    choose its routing id, so a new connection can present the id of one
    that has gone. Each frame carries its connection's handshake serial
    (auth.h, the ZAP User-Id); a registered routing id arriving with another
    serial is a new connection, which starts as nobody and must say HELLO
    (with the key or resume token that id needs), and the old session is
    ended (AGENT_EVENT expired). A connection that closes ends its session
    as it closes (conn_watch.h, session.c: AGENT_EVENT disconnected), so the
    id shows offline at once; in plain mode it stays held for its resume
    token all the same.

    Each wake-up drains up to BROKER_DRAIN_BATCH requests, then ends the
    turn (dispatch_turn_end): parked SENDs that may go on are retried
    (parking.h), the CONFIRMs due are queued (confirms.h), the MAIL_READY
    wake-ups that turn collected are queued, the journal is written (and
    synced under --fsync always), then everything queued leaves
    (outbox.h), and the pushes to consumers follow (push.c): that is the
    coalescing (one write and at most one sync per turn, at most one
    wake-up per agent per turn, pushes in as few frames as credit allows)
    and it keeps pipelined senders cheap. A frame from a connection with a
    parked SEND is held behind it, not handled; every reply goes through
    dispatch_reply, which queues the connection's CONFIRM first, so
    replies keep the request order.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "broker_internal.h"
#include "rights.h"
#include "pclock.h"
#include "pcurve.h"
#include "plog.h"

static handler_fn *s_handlers [PMSG__COUNT] = {
    [PMSG_HELLO] = handle_hello,
    [PMSG_HEARTBEAT] = handle_heartbeat,
    [PMSG_BYE] = handle_bye,
    [PMSG_AGENTS] = handle_agents,
    [PMSG_SEND] = handle_send,
    [PMSG_FETCH] = handle_fetch,
    [PMSG_ACK] = handle_ack,
    [PMSG_LISTEN] = handle_listen,
    [PMSG_UNLISTEN] = handle_unlisten,
    [PMSG_WRITE] = handle_write,
    [PMSG_GET] = handle_get,
    [PMSG_SNAPSHOT] = handle_snapshot,
    [PMSG_PERCEIVE] = handle_perceive,
    [PMSG_ACT] = handle_act,
    [PMSG_WORLD_RESET] = handle_world_reset,
    [PMSG_STATS] = handle_stats,
    [PMSG_HANDOVER] = handle_handover,
    [PMSG_WORKFLOW] = handle_workflow,
    [PMSG_CHECKPOINTS] = handle_checkpoints,
    [PMSG_CHECKPOINT] = handle_checkpoint,
    [PMSG_RESUME] = handle_resume,
    [PMSG_STEP] = handle_step,
    [PMSG_CONSUME] = handle_consume,
};

static plog_limit_t s_bad_frame_limit;
static plog_limit_t s_unroutable_limit;
static plog_limit_t s_unauthorized_limit;

void
dispatch_error (broker_t *self, uint64_t id, perr_t code, const char *format, ...)
{
    char *text = self->reply_text;
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof self->reply_text, format, args);
    va_end (args);
    if (self->part_error) {
        //  A STEP part (handle_step.c): the error belongs to that part of
        //  its STEPPED, not to an ERROR reply.
        self->part_error->code = code;
        snprintf (self->part_error->text, sizeof self->part_error->text, "%s", text);
        return;
    }
    penc_error (&self->reply, id, code, "%s", text);
    self->counters.errors++;
    self->reply_error = code;
}

//  The tap's "peer": the agent id, else the connection id in hex.
static void
s_tap (broker_t *self, const char *dir, const agent_t *agent, const conn_id_t *conn,
       const void *data, size_t size)
{
    if (!tap_active (self->tap))
        return;
    if (agent)
        tap_frame (self->tap, dir, agent->id, agent->id_len, data, size);
    else {
        char hex [2 * sizeof conn->bytes + 1];
        conn_id_hex (conn, hex, sizeof hex);
        tap_frame (self->tap, dir, hex, strlen (hex), data, size);
    }
}

handler_fn *
dispatch_handler (pmsg_type_t type)
{
    assert (type < PMSG__COUNT && s_handlers [type]);
    return s_handlers [type];
}

//  The CONFIRM due to `conn`, if any, goes before anything else to it.
static void
s_confirm_flush (broker_t *self, const conn_id_t *conn)
{
    bool envelope;
    if (!confirms_take (self->confirms, conn, &self->confirm, &envelope))
        return;
    self->counters.confirms++;
    agent_t *agent = agents_by_conn (self->agents, conn);
    outbox_reply (self->outbox, conn, agent ? agent->conn_serial : 0, envelope,
                  agent ? agent->id : NULL, penc_data (&self->confirm), penc_size (&self->confirm));
}

void
dispatch_reply (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                const agent_t *agent, const void *data, size_t size)
{
    if (confirms_due (self->confirms))
        s_confirm_flush (self, conn);
    outbox_reply (self->outbox, conn, serial, envelope, agent ? agent->id : NULL, data, size);
}

int
dispatch_try_send (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
                   const char *agent_id, const void *data, size_t size)
{
    agent_t *agent = agent_id && agent_id [0] ? agents_lookup (self->agents, agent_id) : NULL;
    //  Only the session of this very connection: the id may have moved to
    //  another connection since the reply was made.
    if (agent && (!agent->online || agent->conn_serial != serial
              ||  conn_id_compare (&agent->conn, conn) != 0))
        agent = NULL;
    //  ROUTER_MANDATORY: the routing-id frame fails when the peer is gone
    //  (EHOSTUNREACH) or its pipe is full (EAGAIN, as we never block).
    if (zmq_send (self->router_handle, conn->bytes, conn->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) == -1) {
        int error = zmq_errno ();
        if (error == EAGAIN)
            return EAGAIN;
        self->counters.unroutable++;
        plog_limited (&s_unroutable_limit, 5, PLOG_WARN, "reply to %s not sent: %s",
                      agent_id && agent_id [0] ? agent_id : "a connection without HELLO",
                      zmq_strerror (error));
        if (error == EHOSTUNREACH && agent)
            session_detach (self, agent, "expired");
        return error;
    }
    s_tap (self, "out", agent, conn, data, size);
    //  Once the routing-id frame is queued libzmq takes the rest of the
    //  message whole (atomic multipart), so these can only fail on
    //  ETERM/EINTR-like conditions. Counted and logged, never fatal. The
    //  body goes out even when the delimiter failed: it is the frame
    //  without SNDMORE that ends the message, and a message left open
    //  would swallow the next reply.
    bool sent = true;
    if (envelope && zmq_send (self->router_handle, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == -1)
        sent = false;
    if (zmq_send (self->router_handle, data, size, ZMQ_DONTWAIT) == -1)
        sent = false;
    if (!sent) {
        self->counters.unroutable++;
        plog_limited (&s_unroutable_limit, 5, PLOG_WARN, "reply to %s not sent whole: %s",
                      agent_id && agent_id [0] ? agent_id : "a connection without HELLO",
                      zmq_strerror (zmq_errno ()));
        return EIO;
    }
    self->counters.replies++;
    return 0;
}

void
dispatch_send (broker_t *self, const conn_id_t *conn, uint64_t serial, bool envelope,
               const char *agent_id, const void *data, size_t size)
{
    //  A reply is never dropped for a full pipe (stall.h): it waits, and
    //  so does every later one to the same connection.
    if (stall_blocked (self->stall, conn)
    ||  dispatch_try_send (self, conn, serial, envelope, agent_id, data, size) == EAGAIN)
        stall_reply (self, conn, serial, envelope, agent_id, data, size);
}

bool
dispatch_release (broker_t *self)
{
    //  The durability point (outbox.h): the turn's records in the file,
    //  and synced under --fsync always. Not reached: everything waits.
    if (!durable_point (self))
        return !self->failed;
    //  Only what was made before that point: a reply found unroutable
    //  below ends its session, which may change the core (the workflow
    //  fails, a parked SEND is applied); what that change says waits for
    //  its own durability point, at the next release.
    size_t due = outbox_size (self->outbox);
    outbox_entry_t entry;
    for (; due > 0 && outbox_next (self->outbox, &entry); due--) {
        if (entry.kind == OUTBOX_REPLY)
            dispatch_send (self, &entry.conn, entry.serial, entry.envelope, entry.agent,
                           entry.data, entry.size);
        else
            publish_send (self, entry.topic, entry.topic_len, entry.data, entry.size);
    }
    //  Emptied: the walk's end resets the outbox (outbox.h).
    if (outbox_size (self->outbox) == 0)
        (void) outbox_next (self->outbox, &entry);
    return true;
}

bool
dispatch_may (broker_t *self, request_t *req, unsigned right, const char *what)
{
    if (auth_rights (self->auth, req->key) & right)
        return true;
    char rights [64];
    pcurve_rights_format (right, rights, sizeof rights);
    dispatch_error (self, req->id, PERR_UNAUTHORIZED,
                    "%s needs a key with the %s right; this connection's key lacks it",
                    what, rights);
    self->counters.unauthorized++;
    plog_limited (&s_unauthorized_limit, 5, PLOG_WARN, "%s refused to %s: no %s right", what,
                  req->agent? req->agent->id: "a connection without HELLO", rights);
    return false;
}

//  Requests that read and change nothing, answered to a connection that
//  said HELLO observe (PROTOCOL.md, HELLO). They do not use req->agent.
static bool
s_read_only (pmsg_type_t type)
{
    return type == PMSG_GET || type == PMSG_SNAPSHOT || type == PMSG_AGENTS || type == PMSG_STATS
        || type == PMSG_WORKFLOW || type == PMSG_CHECKPOINTS || type == PMSG_CHECKPOINT;
}

static void
s_handle (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
          size_t extra_frames, request_t *req)
{
    req->conn = conn;
    req->agent = agents_by_conn (self->agents, conn);
    if (req->agent && req->agent->conn_serial != req->serial) {
        session_detach (self, req->agent, "expired");
        req->agent = NULL;
    }
    if (!req->retry) {
        s_tap (self, "in", req->agent, conn, data, size);
        self->counters.requests++;
    }

    char why [256] = "";
    perr_t err = PERR_NONE;
    uint64_t id = 0;
    pmsg_type_t named;
    bool named_known = false;
    pmsg_t *msg = pmsg_decode_with_type (data, size, pwire_default_limits (), &err, &id,
                                         &named, &named_known, why, sizeof why);
    if (msg && extra_frames) {
        err = PERR_MALFORMED;
        snprintf (why, sizeof why, "a request is one frame; this one had %zu more", extra_frames);
        pmsg_destroy (&msg);
    }
    //  A frame whose "t" names a reply or event is NOT_REQUEST (PROTOCOL.md),
    //  whatever else is wrong with its fields.
    if (!msg && (err == PERR_BAD_FIELD || err == PERR_TOO_LARGE)
    &&  named_known && pmsg_type_kind (named) != PMSG_REQUEST) {
        err = PERR_NOT_REQUEST;
        snprintf (why, sizeof why, "%s is not a request", pmsg_type_name (named));
    }
    if (!msg) {
        self->counters.bad_frames++;
        plog_limited (&s_bad_frame_limit, 5, PLOG_WARN, "bad frame (%zu bytes) from %s: %s: %s",
                      size, req->agent ? req->agent->id : "a connection without HELLO",
                      perr_name (err), why);
        dispatch_error (self, id, err, "%s", why [0] ? why : "the frame could not be decoded");
        return;
    }
    req->msg = msg;
    req->type = pmsg_type (msg);
    req->id = pmsg_id (msg);
    req->pipelined = req->type == PMSG_SEND && pmsg_bool (msg, "pipelined", false);
    if (pmsg_type_kind (req->type) != PMSG_REQUEST) {
        self->counters.bad_frames++;
        dispatch_error (self, req->id, PERR_NOT_REQUEST,
                        "%s is a %s, not a request", pmsg_type_name (req->type),
                        pmsg_type_kind (req->type) == PMSG_REPLY ? "reply" : "event");
    }
    else
    if (!req->agent && s_read_only (req->type) && observers_has (self->observers, req->serial)) {
        //  An observer (a view, an operator's tool) reads without
        //  registering: the rights of HELLO observe suffice.
        if (dispatch_may (self, req, PCURVE_RIGHT_TAP, pmsg_type_name (req->type)))
            s_handlers [req->type] (self, req);
    }
    else
    if (!req->agent && req->type != PMSG_HELLO)
        dispatch_error (self, req->id, PERR_NOT_HELLO,
                        "say HELLO with your agent id before %s", pmsg_type_name (req->type));
    else {
        if (req->agent)
            req->agent->last_seen_ms = self->now_ms;
        //  Closed connections first: this HELLO may come on a reused descriptor.
        if (req->type == PMSG_HELLO)
            session_end_closed (self);
        //  Rights, in one place, against the key's current rights (rights.h).
        if (rights_allow (self, req))
            s_handlers [req->type] (self, req);
        if (req->type == PMSG_HELLO && req->agent)
            req->agent->conn_fd = request_fd (req);
    }
    pmsg_destroy (&msg);
    req->msg = NULL;
}

//  The next part of a message already received in part. A signal (SIGTERM
//  arriving mid-message) can fail the call with EINTR; the part is still
//  there, so try again instead of losing the message's framing.
static int
s_recv_part (broker_t *self, zmq_msg_t *part)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        int rc = zmq_msg_recv (part, self->router_handle, ZMQ_DONTWAIT);
        if (rc != -1 || zmq_errno () != EINTR)
            return rc;
    }
    return -1;
}

//  Receives one request; false when none is waiting.
static bool
s_receive_one (broker_t *self)
{
    zmq_msg_t frame, body;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, self->router_handle, ZMQ_DONTWAIT) == -1) {
        zmq_msg_close (&frame);
        return false;
    }
    conn_id_t conn;
    size_t len = zmq_msg_size (&frame);
    conn.len = (uint8_t) (len > sizeof conn.bytes ? sizeof conn.bytes : len);
    memcpy (conn.bytes, zmq_msg_data (&frame), conn.len);
    bool more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    if (!more)
        return true;            //  ROUTER always adds a body frame; be safe

    //  The rest of a multipart message is already here (atomic delivery),
    //  so DONTWAIT cannot miss a part. A receive that still fails (ETERM at
    //  shutdown) ends this request without a reply rather than handling an
    //  empty body as if it were the request.
    zmq_msg_init (&body);
    bool envelope = false;
    if (s_recv_part (self, &body) == -1)
        goto lost;
    if (zmq_msg_size (&body) == 0 && zmq_msg_more (&body)) {
        //  REQ-style empty delimiter: echoed before the reply.
        envelope = true;
        zmq_msg_close (&body);
        zmq_msg_init (&body);
        if (s_recv_part (self, &body) == -1)
            goto lost;
    }
    size_t extra = 0;
    more = zmq_msg_more (&body);
    while (more) {
        zmq_msg_init (&frame);
        int rc = s_recv_part (self, &frame);
        more = rc != -1 && zmq_msg_more (&frame);
        zmq_msg_close (&frame);
        if (rc == -1)
            goto lost;
        extra++;
    }
    request_t req = { .conn_fd = REQUEST_FD_UNREAD, .body = &body, .envelope = envelope,
                      .arrived_ms = self->now_ms };
    //  The handshake serial (and CURVE key) of the connection: auth.c.
    auth_parse (zmq_msg_gets (&body, "User-Id"), &req.serial, req.key);
    //  Which key each connection uses, to cut it if the key is revoked.
    if (req.key [0])
        peers_note (self->router_peers, request_fd (&req), req.key);
    //  Behind replies its pipe refused, a request waits (stall.h).
    if (!stall_hold (self, &conn, zmq_msg_data (&body), zmq_msg_size (&body), extra, &req))
        dispatch_incoming (self, &conn, zmq_msg_data (&body), zmq_msg_size (&body), extra, &req);
    zmq_msg_close (&body);
    return true;
lost:
    zmq_msg_close (&body);
    self->counters.bad_frames++;
    plog_limited (&s_bad_frame_limit, 5, PLOG_WARN, "request parts lost on receive: %s",
                  zmq_strerror (zmq_errno ()));
    return true;
}

int
request_fd (const request_t *req)
{
    if (req->conn_fd != REQUEST_FD_UNREAD)
        return req->conn_fd;
    return req->body ? conn_watch_fd (req->body) : -1;
}

void
dispatch_incoming (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
                   size_t extra_frames, request_t *req)
{
    //  Behind a parked SEND of this connection, a request waits its turn.
    if (!parking_hold (self, conn, data, size, extra_frames, req))
        dispatch_process (self, conn, data, size, extra_frames, req);
}

void
dispatch_answer (broker_t *self, request_t *req)
{
    if (req->no_reply)
        return;
    if (req->pipelined && self->reply_error != PERR_NONE) {
        //  A pipelined SEND refused whole: an entry without `index` in the
        //  CONFIRM, in its place among the others.
        confirms_add (self->confirms, req->conn, req->envelope, req->id, 0);
        penc_t *enc = confirms_error (self->confirms, req->conn);
        if (enc) {
            msgpack_pack_map (penc_packer (enc), 3);
            penc_kv_uint (enc, "id", req->id);
            penc_kv_uint (enc, "code", (uint64_t) self->reply_error);
            penc_kv_cstr (enc, "message", self->reply_text);
        }
        return;
    }
    dispatch_reply (self, req->conn, req->serial, req->envelope, req->agent,
                    penc_data (&self->reply), penc_size (&self->reply));
}

void
dispatch_process (broker_t *self, const conn_id_t *conn, const void *data, size_t size,
                  size_t extra_frames, request_t *req)
{
    //  Metrics: a vDSO clock read and a few array increments. Within a
    //  turn's run of requests one request's end is the next one's start
    //  (its receive counts with it): one read a request, not two.
    int64_t started = self->turn_mark_us ? self->turn_mark_us : pclock_mono_us ();
    self->reply_error = PERR_NONE;
    req->type = METRICS_TYPE_INVALID;
    req->frame = data;
    req->frame_size = size;
    s_handle (self, conn, data, size, extra_frames, req);
    int64_t ended = pclock_mono_us ();
    int64_t took = ended - started;
    if (self->turn_mark_us)
        self->turn_mark_us = ended;
    unsigned type = req->type < PMSG__COUNT && pmsg_type_kind (req->type) == PMSG_REQUEST
                  ? (unsigned) req->type : METRICS_TYPE_INVALID;
    if (!req->retry)
        metrics_request (&self->metrics, type, self->reply_error, took > 0 ? (uint64_t) took : 0);
    req->conn = conn;
    dispatch_answer (self, req);
}

int
dispatch_turn_end (broker_t *self)
{
    parking_run (self);
    conn_id_t conn;
    bool envelope;
    while (confirms_take_next (self->confirms, &conn, &self->confirm, &envelope)) {
        self->counters.confirms++;
        agent_t *agent = agents_by_conn (self->agents, &conn);
        outbox_reply (self->outbox, &conn, agent ? agent->conn_serial : 0, envelope,
                      agent ? agent->id : NULL, penc_data (&self->confirm),
                      penc_size (&self->confirm));
    }
    publish_mail_ready (self);
    if (!dispatch_release (self))
        return -1;
    //  After the release: the mail a push hands out was made durable with
    //  this turn's records (none while answers wait for the journal).
    if (!durable_holding (self))
        push_flush (self);
    return broker_drain_sent (self);
}

int
dispatch_on_router (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    self->turn_mark_us = pclock_mono_us ();
    self->now_ms = self->turn_mark_us / 1000;
    self->turn_wall_us = pclock_wall_us ();
    for (int i = 0; i < BROKER_DRAIN_BATCH; i++)
        if (!s_receive_one (self))
            break;
    self->turn_mark_us = 0;
    int rc = dispatch_turn_end (self);
    self->turn_wall_us = 0;
    return rc;
}
