// SPDX-License-Identifier: MIT
/*  durable - the broker's journal hooks: write-ahead logging of requests,
    recovery at start, group commit, compaction (docs/DURABILITY.md).

    What is logged is the request itself (as Redis's AOF logs commands):
    before a mutating request reaches its handler, its frame is appended
    with the id of the agent that sent it; recovery replays the frames
    through the same handlers in the same order, which rebuilds inboxes,
    acknowledged positions, listens, registrations, the shared state with
    its seq, the world and the counters exactly, because every handler is a
    function of the broker's state and the request. Two things are not
    requests and get records of their own: HELLO (logged after it succeeded:
    whether an id is free depends on liveness timing, which a replay
    cannot reproduce; the record carries the resume token WELCOME gave, so
    after a restart the id is still held for its agent in plain mode) and
    the forgetting of agents offline too long, and a push (push.c), which
    hands mail out without a request: its record carries the agent's new
    `delivered` position, so a replayed ACK of pushed mail is not clamped
    below it. BYE is logged too, even
    without `forget`: it gives up the id's resume token. The origin of the
    counters (WELCOME.origin) is a record of its own, written when a data
    directory starts empty, and kept in every snapshot's head: the counters
    survive a restart, so their origin does too, and clients keep their
    duplicate filters.

    If the record cannot be written (a full disk, an I/O error) the request
    is refused with ERROR STORAGE before anything is applied, and reads go on;
    the next write tries again, so the broker recovers when space returns.
    FETCH and ACK are the exception (and a STEP that only acknowledges
    and fetches): their records are best effort (a lost
    one can only make mail come again after a restart, which at-least-once
    delivery allows), so agents keep draining their mail on a full disk;
    so is a plain BYE's (a lost one leaves the id held for its resume token
    after a restart, which is the safe side).

    The snapshot (durable_snapshot.c) writes the state itself; the log
    after it holds only what happened since, so storage follows the live
    data, not the history.
*/
#include <errno.h>
#include <string.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

static plog_limit_t s_storage_limit;

//  Record kinds: the first element of every record's msgpack array.
//  Never renumber (files outlive binaries).
enum {
    JREC_REQUEST = 1,           //  [1, agent id, frame], HELLO: [1, agent id, frame, token]
    JREC_FORGET = 2,            //  [2, agent id]
    JREC_ORIGIN = 3,            //  [3, "", origin]
    JREC_DELIVERED = 4          //  [4, agent id, delivered]: a push handed mail out
};

typedef struct {
    conn_id_t conn;
    bool envelope;
    char agent [PROTO_MAX_NAME + 1];
    size_t offset, size;        //  in the held bytes
} held_t;

struct _durable_t {
    journal_t *journal;
    msgpack_sbuffer record;
    msgpack_packer pk;
    held_t *held;
    size_t held_count, held_cap;
    char *bytes;                //  held reply bodies
    size_t bytes_size, bytes_cap;
    uint64_t storage_errors;
    uint64_t replayed, skipped;
};

static bool
s_mutates (pmsg_type_t type)
{
    switch (type) {
        case PMSG_BYE: case PMSG_SEND: case PMSG_FETCH: case PMSG_ACK:
        case PMSG_LISTEN: case PMSG_UNLISTEN: case PMSG_WRITE:
        case PMSG_PERCEIVE: case PMSG_ACT: case PMSG_WORLD_RESET: case PMSG_STEP:
            return true;
        default:
            return false;
    }
}

//  A STEP that only acknowledges and reads mail: its record is best
//  effort, as FETCH's is.
static bool
s_step_reads_only (const pmsg_t *msg)
{
    const msgpack_object *items = pmsg_field (msg, "messages");
    const msgpack_object *ops = pmsg_field (msg, "ops");
    return (!items || items->via.array.size == 0) && (!ops || ops->via.array.size == 0)
        && !pmsg_field (msg, "action") && !pmsg_bool (msg, "perceive", false);
}

//  `token` (HELLO only) is appended after the frame; NULL: none.
static int
s_append (broker_t *self, int kind, const char *agent, const void *frame, size_t size,
          const char *token)
{
    durable_t *d = self->durable;
    msgpack_sbuffer_clear (&d->record);
    msgpack_pack_array (&d->pk, frame ? (token ? 4 : 3) : 2);
    msgpack_pack_int (&d->pk, kind);
    size_t len = strlen (agent);
    msgpack_pack_str (&d->pk, len);
    msgpack_pack_str_body (&d->pk, agent, len);
    if (frame) {
        msgpack_pack_bin (&d->pk, size);
        msgpack_pack_bin_body (&d->pk, frame, size);
        if (token) {
            size_t token_len = strlen (token);
            msgpack_pack_str (&d->pk, token_len);
            msgpack_pack_str_body (&d->pk, token, token_len);
        }
    }
    if (d->record.size > JFILE_MAX_RECORD) {
        errno = EMSGSIZE;
        return -1;
    }
    return journal_append (d->journal, d->record.data, d->record.size);
}

bool
durable_request (broker_t *self, request_t *req, const void *frame, size_t size)
{
    if (!self->durable || self->replaying || !s_mutates (req->type) || !req->agent)
        return true;
    if (s_append (self, JREC_REQUEST, req->agent->id, frame, size, NULL) == 0)
        return true;
    int error = errno;
    self->durable->storage_errors++;
    plog_limited (&s_storage_limit, 5, PLOG_ERROR, "cannot journal %s from %s: %s",
                  pmsg_type_name (req->type), req->agent->id, strerror (error));
    //  A lost BYE record can only leave the id held for its resume token
    //  after a restart (until it is forgotten): the safe side.
    if (req->type == PMSG_FETCH || req->type == PMSG_ACK
    ||  (req->type == PMSG_BYE && !pmsg_bool (req->msg, "forget", false))
    ||  (req->type == PMSG_STEP && s_step_reads_only (req->msg)))
        return true;
    dispatch_error (self, req->id, PERR_STORAGE,
                    "the broker cannot write its journal (%s); nothing was changed, "
                    "reads still work; try again later", strerror (error));
    return false;
}

void
durable_hello (broker_t *self, request_t *req, const void *frame, size_t size)
{
    if (!self->durable || self->replaying || !req->agent)
        return;
    //  Only a HELLO that registered this id: a connection that speaks for
    //  an agent keeps it when its HELLO as another id, or as an observer,
    //  is refused, and replay must not register that other id.
    char id [PROTO_MAX_NAME + 1];
    if (!pmsg_strcpy (req->msg, "agent", id, sizeof id) || strcmp (id, req->agent->id) != 0
    ||  pmsg_bool (req->msg, "observe", false))
        return;
    if (s_append (self, JREC_REQUEST, req->agent->id, frame, size, req->agent->token) != 0) {
        //  The agent is attached in memory only; after a restart it says
        //  HELLO again, as after any restart. Not worth refusing a HELLO.
        self->durable->storage_errors++;
        plog_limited (&s_storage_limit, 5, PLOG_ERROR, "cannot journal HELLO of %s: %s",
                      req->agent->id, strerror (errno));
    }
}

void
durable_forget (broker_t *self, const agent_t *agent)
{
    if (!self->durable || self->replaying)
        return;
    if (s_append (self, JREC_FORGET, agent->id, NULL, 0, NULL) != 0) {
        self->durable->storage_errors++;
        plog_limited (&s_storage_limit, 5, PLOG_ERROR, "cannot journal forgetting %s: %s",
                      agent->id, strerror (errno));
    }
}

//  ---------------------------------------------------------------------
//  Group commit: under --fsync always, replies wait for the sync.

bool
durable_holds_replies (broker_t *self)
{
    durable_t *d = self->durable;
    return d && (d->held_count > 0 || journal_holds_replies (d->journal));
}

void
durable_hold_reply (broker_t *self, const conn_id_t *conn, bool envelope, const agent_t *agent,
                    const void *data, size_t size)
{
    durable_t *d = self->durable;
    if (d->held_count == d->held_cap) {
        size_t cap = d->held_cap ? 2 * d->held_cap : 64;
        held_t *grown = realloc (d->held, cap * sizeof (held_t));
        assert (grown);
        d->held = grown;
        d->held_cap = cap;
    }
    if (d->bytes_size + size > d->bytes_cap) {
        size_t cap = d->bytes_cap ? d->bytes_cap : 64 * 1024;
        while (cap < d->bytes_size + size)
            cap *= 2;
        char *grown = realloc (d->bytes, cap);
        assert (grown);
        d->bytes = grown;
        d->bytes_cap = cap;
    }
    held_t *held = &d->held [d->held_count++];
    held->conn = *conn;
    held->envelope = envelope;
    snprintf (held->agent, sizeof held->agent, "%s", agent ? agent->id : "");
    held->offset = d->bytes_size;
    held->size = size;
    memcpy (d->bytes + d->bytes_size, data, size);
    d->bytes_size += size;
}

bool
durable_flush (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d || self->failed)
        return !self->failed;
    if (journal_flush (d->journal) == 0)
        return true;
    //  Requests of this turn are applied in memory but their records did
    //  not reach the file (their disk space was reserved, so this is an
    //  I/O error, not a full disk). Acknowledging them would promise what a
    //  restart cannot give back: stop, as a failed sync under --fsync
    //  always does; clients without replies retry against the restarted
    //  broker.
    d->storage_errors++;
    plog_error ("cannot write the journal: %s; stopping so nothing unwritten is "
                "acknowledged", strerror (errno));
    self->failed = true;
    return false;
}

int
durable_commit (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d)
        return 0;
    int rc = 0;
    if (journal_commit (d->journal) != 0) {
        //  The held replies answer requests that are applied in memory but
        //  perhaps not on disk: sending them would promise what a crash
        //  could take back. Stop instead; a restart recovers what the disk
        //  has, and the clients, without replies, retry.
        plog_error ("cannot sync the journal: %s; stopping so nothing unsynced is "
                    "acknowledged", strerror (errno));
        self->failed = true;
        rc = -1;
    }
    else
        for (size_t i = 0; i < d->held_count; i++) {
            held_t *held = &d->held [i];
            agent_t *agent = held->agent [0] ? agents_lookup (self->agents, held->agent) : NULL;
            dispatch_send (self, &held->conn, held->envelope, agent,
                           d->bytes + held->offset, held->size);
        }
    d->held_count = 0;
    d->bytes_size = 0;
    return rc;
}

//  ---------------------------------------------------------------------
//  Replay

static conn_id_t
s_replay_conn (const char *id)
{
    //  No connection exists during recovery; any distinct id will do.
    conn_id_t conn = { 0 };
    size_t len = strlen (id);
    conn.bytes [0] = 0;             //  real routing ids never start with 0
    memcpy (conn.bytes + 1, id, len);
    conn.len = (uint8_t) (len + 1);
    return conn;
}

//  `token`: the resume token a HELLO record carries (NULL in records
//  written before tokens: then the id has none, as after BYE).
static int
s_replay_request (broker_t *self, const char *id, const void *frame, size_t size,
                  const char *token)
{
    durable_t *d = self->durable;
    perr_t err;
    char why [256];
    pmsg_t *msg = pmsg_decode (frame, size, pwire_default_limits (), &err, NULL, why, sizeof why);
    if (!msg) {
        d->skipped++;
        return 0;
    }
    request_t req = { .msg = msg, .type = pmsg_type (msg), .id = pmsg_id (msg), .conn_fd = -1 };
    agent_t *agent = agents_lookup (self->agents, id);
    conn_id_t conn = s_replay_conn (id);
    req.conn = &conn;
    self->now_ms = pclock_mono_ms ();
    if (req.type == PMSG_HELLO) {
        //  A logged HELLO succeeded: whatever connection held the id then
        //  had gone.
        if (agent && agent->online)
            agents_detach (self->agents, agent);
        req.agent = NULL;
    }
    else {
        if (!agent || pmsg_type_kind (req.type) != PMSG_REQUEST) {
            d->skipped++;
            pmsg_destroy (&msg);
            return 0;
        }
        if (!agent->online)
            agents_attach (self->agents, agent, &conn, self->now_ms);
        req.agent = agent;
        req.conn = &agent->conn;
    }
    dispatch_handler (req.type) (self, &req);
    if (req.type == PMSG_HELLO && req.agent)
        snprintf (req.agent->token, sizeof req.agent->token, "%s", token ? token : "");
    d->replayed++;
    pmsg_destroy (&msg);
    return 0;
}

static int
s_replay_forget (broker_t *self, const char *id)
{
    agent_t *agent = agents_lookup (self->agents, id);
    if (!agent)
        return 0;
    if (agent->online)
        agents_detach (self->agents, agent);
    session_forget (self, &agent);
    self->counters.forgotten++;
    return 0;
}

static int
s_on_log_record (const void *payload, size_t size, void *arg)
{
    broker_t *self = arg;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = 0;
    if (msgpack_unpack_next (&unpacked, payload, size, &offset) != MSGPACK_UNPACK_SUCCESS
    ||  unpacked.data.type != MSGPACK_OBJECT_ARRAY || unpacked.data.via.array.size < 2
    ||  unpacked.data.via.array.ptr [0].type != MSGPACK_OBJECT_POSITIVE_INTEGER
    ||  unpacked.data.via.array.ptr [1].type != MSGPACK_OBJECT_STR
    ||  unpacked.data.via.array.ptr [1].via.str.size > PROTO_MAX_NAME) {
        self->durable->skipped++;
        msgpack_unpacked_destroy (&unpacked);
        return 0;
    }
    const msgpack_object *items = unpacked.data.via.array.ptr;
    char id [PROTO_MAX_NAME + 1];
    //  An empty str has no pointer (msgpack-c): memcpy must not see it.
    if (items [1].via.str.size)
        memcpy (id, items [1].via.str.ptr, items [1].via.str.size);
    id [items [1].via.str.size] = 0;
    uint64_t kind = items [0].via.u64;
    uint32_t count = unpacked.data.via.array.size;
    if (kind == JREC_REQUEST && (count == 3 || count == 4)
    &&  items [2].type == MSGPACK_OBJECT_BIN
    &&  (count == 3 || (items [3].type == MSGPACK_OBJECT_STR
                    &&  items [3].via.str.size < sizeof ((agent_t *) 0)->token))) {
        char token [sizeof ((agent_t *) 0)->token] = "";
        if (count == 4 && items [3].via.str.size) {
            memcpy (token, items [3].via.str.ptr, items [3].via.str.size);
            token [items [3].via.str.size] = 0;
        }
        rc = s_replay_request (self, id, items [2].via.bin.ptr, items [2].via.bin.size,
                               count == 4 ? token : NULL);
    }
    else
    if (kind == JREC_ORIGIN && count == 3 && items [2].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        self->origin = items [2].via.u64;
        self->origin_recovered = true;
    }
    else
    if (kind == JREC_DELIVERED && count == 3 && items [2].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        agent_t *agent = agents_lookup (self->agents, id);
        if (agent && items [2].via.u64 > agent->delivered
        &&  items [2].via.u64 <= mailroom_counters (self->mailroom)->mail_seq)
            agent->delivered = items [2].via.u64;
    }
    else
    if (kind == JREC_FORGET)
        rc = s_replay_forget (self, id);
    else
        self->durable->skipped++;
    msgpack_unpacked_destroy (&unpacked);
    return rc;
}

void
durable_delivered (broker_t *self, const agent_t *agent)
{
    durable_t *d = self->durable;
    if (!d || self->replaying)
        return;
    msgpack_sbuffer_clear (&d->record);
    msgpack_pack_array (&d->pk, 3);
    msgpack_pack_int (&d->pk, JREC_DELIVERED);
    msgpack_pack_str (&d->pk, agent->id_len);
    msgpack_pack_str_body (&d->pk, agent->id, agent->id_len);
    msgpack_pack_uint64 (&d->pk, agent->delivered);
    //  Best effort, as FETCH's record: a lost one can only make pushed
    //  mail come again after a restart.
    if (journal_append (d->journal, d->record.data, d->record.size) != 0) {
        d->storage_errors++;
        plog_limited (&s_storage_limit, 5, PLOG_ERROR, "cannot journal a push to %s: %s",
                      agent->id, strerror (errno));
    }
}

//  ---------------------------------------------------------------------
//  Life cycle

int
durable_open (broker_t *self, char *why, size_t why_size)
{
    const broker_config_t *cfg = &self->config;
    if (!cfg->data_dir || !*cfg->data_dir || strcmp (cfg->data_dir, "none") == 0) {
        plog_info ("data directory: none (in memory: a restart starts empty)");
        return 0;
    }
    durable_t *d = calloc (1, sizeof (durable_t));
    if (!d) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    msgpack_sbuffer_init (&d->record);
    msgpack_packer_init (&d->pk, &d->record, msgpack_sbuffer_write);
    self->durable = d;
    d->journal = journal_open (cfg->data_dir, cfg->fsync, cfg->compact_min_bytes,
                               why, why_size);
    if (!d->journal)
        return -1;
    int64_t start = pclock_mono_ms ();
    self->replaying = true;
    durable_snapshot_begin (self);
    int rc = journal_recover (d->journal, cfg->repair, durable_snapshot_record,
                              s_on_log_record, self, why, why_size);
    if (rc == 0)
        rc = durable_snapshot_end (self, why, why_size);
    self->replaying = false;
    if (rc)
        return -1;
    //  A data directory without an origin starts its counters now (or was
    //  written before origins were kept: clients then reset their duplicate
    //  filters once, which at-least-once delivery allows).
    if (!self->origin_recovered) {
        msgpack_sbuffer_clear (&d->record);
        msgpack_pack_array (&d->pk, 3);
        msgpack_pack_int (&d->pk, JREC_ORIGIN);
        msgpack_pack_str (&d->pk, 0);
        msgpack_pack_uint64 (&d->pk, self->origin);
        if (journal_append (d->journal, d->record.data, d->record.size) != 0
        ||  journal_commit (d->journal) != 0) {
            snprintf (why, why_size, "cannot write to the journal in %s: %s", cfg->data_dir,
                      strerror (errno));
            return -1;
        }
    }
    //  Everyone is offline until they say HELLO again.
    for (size_t i = 0; i < agents_size (self->agents); i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (agent->online)
            agents_detach (self->agents, agent);
        agent->offline_since_ms = pclock_mono_ms ();
        agent->conn_fd = -1;
    }
    state_changes_reset (self->state);
    const mailroom_counters_t *mail = mailroom_counters (self->mailroom);
    plog_info ("data directory %s: recovered %zu agents, %llu queued messages, %zu state keys "
               "(state seq %llu, mail seq %llu) in %lld ms; %llu requests replayed, "
               "%llu skipped; fsync %s", cfg->data_dir, agents_size (self->agents),
               (unsigned long long) mail->queued, durable_state_keys (self),
               (unsigned long long) state_seq (self->state),
               (unsigned long long) mail->mail_seq, (long long) (pclock_mono_ms () - start),
               (unsigned long long) d->replayed, (unsigned long long) d->skipped,
               cfg->fsync == JOURNAL_FSYNC_ALWAYS ? "always"
             : cfg->fsync == JOURNAL_FSYNC_EVERYSEC ? "everysec" : "no");
    return 0;
}

void
durable_close (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d)
        return;
    journal_destroy (&d->journal);
    msgpack_sbuffer_destroy (&d->record);
    free (d->held);
    free (d->bytes);
    free (d);
    self->durable = NULL;
}

int
durable_on_tick (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *self = arg;
    durable_t *d = self->durable;
    if (!d)
        return 0;
    //  Records appended outside a request turn (an agent forgotten by a
    //  timer) are written within a second.
    if (!durable_flush (self))
        return -1;
    journal_tick (d->journal);
    if (journal_wants_compaction (d->journal))
        durable_compact (self);
    return 0;
}

int
durable_compact (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d)
        return -1;
    char why [256];
    if (journal_compact (d->journal, durable_snapshot_write, self, why, sizeof why) != 0) {
        plog_error ("compaction not started: %s", why);
        return -1;
    }
    return 0;
}

void
durable_compact_wait (broker_t *self)
{
    if (self->durable)
        journal_compact_wait (self->durable->journal);
}

uint64_t
durable_storage_errors (broker_t *self)
{
    return self->durable ? self->durable->storage_errors : 0;
}

journal_t *
durable_journal (broker_t *self)
{
    return self->durable ? self->durable->journal : NULL;
}
