// SPDX-License-Identifier: MIT
/*  durable - the broker's journal: the operations the core applied,
    recovery at start, group commit, compaction (docs/DURABILITY.md).

    What is logged is what changed, as Redis's AOF logs the effects of
    commands: every call (call.h) is one record holding its operations
    (op.h) with the time, the agent and the request frame they came from.
    Recovery builds a fresh core from the flags, restores the newest
    snapshot into it (core_restore_*) and applies the logs' operations with
    core_apply, the same function the live broker used; so the recovered
    core is the live one, seqs, times, idempotency slots, the workflow and
    its checkpoints included, whatever the flags of the restarted broker
    (the limits are themselves journaled: OP_LIMITS).

    Records written before operations existed (a request frame per
    mutating request, HELLO with its token, forgets, pushes' positions,
    the origin) are still read: their requests go through the handlers as
    they did then, which turn them into operations; the next compaction
    writes them as a snapshot of the core.

    The snapshot (core_snapshot.c) is written by a forked child from the
    memory it inherited; the log after it holds only what happened since,
    so storage follows the live data, not the history.

    Nothing changes the core without its record: call_begin reserves the
    record's room first and refuses the request with STORAGE when the disk
    is full. A write or a sync that fails after the change was applied
    (an I/O error) stops the broker from acknowledging anything more
    (durable_lost): the loop ends, and a restart recovers what the disk
    has, while clients without replies send again.
*/
#include <errno.h>
#include <string.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

//  Record kinds: the first element of every record's msgpack array.
//  Never renumber (files outlive binaries). OP_RECORD_TXN (5) is op.h's.
enum {
    JREC_REQUEST = 1,           //  legacy: [1, agent id, frame], HELLO: [1, agent id, frame, token]
    JREC_FORGET = 2,            //  legacy: [2, agent id]
    JREC_ORIGIN = 3,            //  legacy: [3, "", origin]
    JREC_DELIVERED = 4          //  legacy: [4, agent id, delivered]
};

struct _durable_t {
    journal_t *journal;
    core_restore_t *restore;    //  while the snapshot is read
    uint64_t storage_errors;
    uint64_t replayed, skipped, legacy, diverged;
    char lost [256];            //  why nothing more may be acknowledged ("": fine)
    bool holding;               //  a turn's write or sync failed: the outbox waits
                                //  for the journal to heal
    char unhealthy [256];       //  durable_refusal's sentence while unhealthy
};

static plog_limit_t s_diverged_limit;

//  ---------------------------------------------------------------------
//  Writing (call.c)

const char *
durable_refusal (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d)
        return NULL;
    if (d->lost [0])
        return d->lost;
    if (!journal_healthy (d->journal)) {
        snprintf (d->unhealthy, sizeof d->unhealthy, "a write or sync of the journal failed "
                  "(%s); it is being rewritten from memory", strerror (journal_health_error
                                                                      (d->journal)));
        return d->unhealthy;
    }
    return NULL;
}

int
durable_reserve (broker_t *self, size_t size)
{
    if (size > JFILE_MAX_RECORD)
        size = JFILE_MAX_RECORD;
    return journal_reserve (self->durable->journal, size);
}

void
durable_count_refusal (broker_t *self)
{
    if (self->durable)
        self->durable->storage_errors++;
}

int
durable_append (broker_t *self, const void *data, size_t size)
{
    jfile_part_t part = { data, size };
    return durable_append_parts (self, &part, 1);
}

int
durable_append_parts (broker_t *self, const jfile_part_t *parts, size_t count)
{
    size_t size = 0;
    for (size_t i = 0; i < count; i++)
        size += parts [i].size;
    if (size > JFILE_MAX_RECORD) {
        errno = EMSGSIZE;
        return -1;
    }
    return journal_append_parts (self->durable->journal, parts, count);
}

void
durable_lost (broker_t *self, const char *what)
{
    durable_t *d = self->durable;
    int error = errno;
    if (d && !d->lost [0]) {
        snprintf (d->lost, sizeof d->lost, "%s: %s", what, strerror (error));
        plog_error ("%s; stopping so nothing unwritten is acknowledged", d->lost);
    }
    if (d)
        d->storage_errors++;
    self->failed = true;
}

bool
durable_point (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d || self->replaying)
        return !self->failed;
    if (self->failed)
        return false;
    //  What a failed turn answered waits for the healing snapshot: a good
    //  write or sync after a failed one proves nothing (journal.h).
    if (d->holding && !journal_healthy (d->journal))
        return false;
    bool ok = journal_flush (d->journal) == 0;
    if (ok && self->config.fsync == JOURNAL_FSYNC_ALWAYS)
        ok = journal_commit (d->journal) == 0;
    if (!ok) {
        if (!d->holding)
            plog_error ("the journal could not be %s (%s): nothing more is answered until it "
                        "is rewritten from memory; changes are refused meanwhile",
                        self->config.fsync == JOURNAL_FSYNC_ALWAYS ? "written and synced"
                                                                   : "written",
                        strerror (journal_health_error (d->journal) ? journal_health_error
                                  (d->journal) : errno));
        d->storage_errors++;
        d->holding = true;
        return false;
    }
    if (d->holding)
        plog_info ("the journal is sound again: the answers held since its failure go out");
    d->holding = false;
    return true;
}

bool
durable_healthy (broker_t *self)
{
    return !self->durable || journal_healthy (self->durable->journal);
}

bool
durable_holding (broker_t *self)
{
    return self->durable && self->durable->holding;
}

bool
durable_flush (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d || self->replaying)
        return !self->failed;
    if (self->failed)
        return false;
    return journal_flush (d->journal) == 0;
}

//  ---------------------------------------------------------------------
//  Replay

static void
s_diverged (broker_t *self, const core_outcome_t *out)
{
    self->durable->diverged++;
    plog_limited (&s_diverged_limit, 5, PLOG_ERROR, "replay: %s; did the world's or the "
                  "scenario's settings change since this data directory was written?",
                  out->divergence);
}

//  A record of operations (op.h).
static int
s_replay_txn (broker_t *self, const msgpack_object *items, uint32_t count)
{
    durable_t *d = self->durable;
    if (count != 5
    ||  (items [1].type != MSGPACK_OBJECT_POSITIVE_INTEGER
         && items [1].type != MSGPACK_OBJECT_NEGATIVE_INTEGER)
    ||  items [2].type != MSGPACK_OBJECT_STR || items [2].via.str.size > PROTO_MAX_NAME
    ||  (items [3].type != MSGPACK_OBJECT_NIL && items [3].type != MSGPACK_OBJECT_BIN)
    ||  items [4].type != MSGPACK_OBJECT_ARRAY) {
        d->skipped++;
        return 0;
    }
    char agent [PROTO_MAX_NAME + 1];
    snprintf (agent, sizeof agent, "%.*s", (int) items [2].via.str.size,
              items [2].via.str.size ? items [2].via.str.ptr : "");
    pmsg_t *msg = NULL;
    if (items [3].type == MSGPACK_OBJECT_BIN) {
        perr_t err;
        char why [256];
        msg = pmsg_decode (items [3].via.bin.ptr, items [3].via.bin.size,
                           pwire_default_limits (), &err, NULL, why, sizeof why);
        if (!msg) {
            plog_error ("replay: a record's request does not decode: %s", why);
            d->skipped++;
            return 0;
        }
    }
    const msgpack_object_array *ops = &items [4].via.array;
    for (uint32_t i = 0; i < ops->size; i++) {
        core_limits_t limits;
        char why [256];
        op_t op = { .ts = items [1].via.i64, .agent = agent, .frame = msg };
        if (!op_decode (&ops->ptr [i], &op, &limits, why, sizeof why)) {
            plog_error ("replay: %s", why);
            d->skipped++;
            continue;
        }
        core_outcome_t out = { 0 };
        core_apply (self->core, &op, &out);
        if (out.diverged)
            s_diverged (self, &out);
        d->replayed++;
    }
    pmsg_destroy (&msg);
    return 0;
}

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

//  A legacy request record: the request through its handler, which
//  applies what it decides (call.c records nothing while replaying).
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
    request_t req = { .msg = msg, .type = pmsg_type (msg), .id = pmsg_id (msg), .conn_fd = -1,
                      .frame = frame, .frame_size = size };
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
        req.replay_token = token ? token : "";
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
    d->replayed++;
    d->legacy++;
    pmsg_destroy (&msg);
    return 0;
}

static void
s_replay_simple (broker_t *self, op_kind_t kind, const char *id, uint64_t value)
{
    op_t op = { .kind = kind, .agent = id, .u = value, .ts = pclock_wall_us () };
    if (kind == OP_FORGET) {
        agent_t *agent = agents_lookup (self->agents, id);
        if (!agent)
            return;
        if (agent->online)
            agents_detach (self->agents, agent);
    }
    core_apply (self->core, &op, NULL);
}

static int
s_on_log_record (const void *payload, size_t size, void *arg)
{
    broker_t *self = arg;
    durable_t *d = self->durable;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = 0;
    char why [256];
    //  msgpack-c's unpacker reserves what a count claims: a record's
    //  counts are checked against its bytes first.
    if (!core_record_check (payload, size, why, sizeof why)
    ||  msgpack_unpack_next (&unpacked, payload, size, &offset) != MSGPACK_UNPACK_SUCCESS
    ||  unpacked.data.type != MSGPACK_OBJECT_ARRAY || unpacked.data.via.array.size < 2
    ||  unpacked.data.via.array.ptr [0].type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
        d->skipped++;
        msgpack_unpacked_destroy (&unpacked);
        return 0;
    }
    const msgpack_object *items = unpacked.data.via.array.ptr;
    uint32_t count = unpacked.data.via.array.size;
    uint64_t kind = items [0].via.u64;
    if (kind == OP_RECORD_TXN) {
        rc = s_replay_txn (self, items, count);
        msgpack_unpacked_destroy (&unpacked);
        return rc;
    }
    //  The legacy records: [kind, agent id, ...].
    if (items [1].type != MSGPACK_OBJECT_STR || items [1].via.str.size > PROTO_MAX_NAME) {
        d->skipped++;
        msgpack_unpacked_destroy (&unpacked);
        return 0;
    }
    char id [PROTO_MAX_NAME + 1];
    //  An empty str has no pointer (msgpack-c): memcpy must not see it.
    if (items [1].via.str.size)
        memcpy (id, items [1].via.str.ptr, items [1].via.str.size);
    id [items [1].via.str.size] = 0;
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
    if (kind == JREC_ORIGIN && count == 3 && items [2].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        s_replay_simple (self, OP_ORIGIN, "", items [2].via.u64);
    else
    if (kind == JREC_DELIVERED && count == 3 && items [2].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        s_replay_simple (self, OP_DELIVER, id, items [2].via.u64);
    else
    if (kind == JREC_FORGET)
        s_replay_simple (self, OP_FORGET, id, 0);
    else
        d->skipped++;
    msgpack_unpacked_destroy (&unpacked);
    return rc;
}

static int
s_on_snapshot_record (const void *payload, size_t size, void *arg)
{
    broker_t *self = arg;
    durable_t *d = self->durable;
    if (core_restore_record (d->restore, payload, size) == 0)
        return 0;
    plog_error ("snapshot: %s", core_restore_why (d->restore));
    return -1;
}

//  ---------------------------------------------------------------------
//  Life cycle

static int s_snapshot_write (jfile_t *file, void *arg);

//  One operation of the broker's own at start (origin, limits), written
//  and synced before anything is served.
static int
s_start_op (broker_t *self, op_t *op, char *why, size_t why_size)
{
    if (call_one (self, "", op, NULL) != PERR_NONE || !durable_flush (self)
    ||  journal_commit (self->durable->journal) != 0) {
        snprintf (why, why_size, "cannot write to the journal in %s: %s", self->config.data_dir,
                  strerror (errno));
        return -1;
    }
    return 0;
}

int
durable_open (broker_t *self, const core_limits_t *limits, char *why, size_t why_size)
{
    const broker_config_t *cfg = &self->config;
    if (!cfg->data_dir || !*cfg->data_dir || strcmp (cfg->data_dir, "none") == 0) {
        plog_info ("data directory: none (in memory: a restart starts empty)");
        op_t op = { .kind = OP_ORIGIN, .agent = "", .u = (uint64_t) pclock_wall_us () };
        core_apply (self->core, &op, NULL);
        return 0;
    }
    durable_t *d = calloc (1, sizeof (durable_t));
    if (!d) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    self->durable = d;
    d->journal = journal_open (cfg->data_dir, cfg->fsync, cfg->compact_min_bytes,
                               why, why_size);
    if (!d->journal)
        return -1;
    //  How the journal heals after a failed write or sync: a snapshot of
    //  the core, as compaction writes.
    journal_set_snapshot (d->journal, s_snapshot_write, self);
    int64_t start = pclock_mono_ms ();
    self->replaying = true;
    d->restore = core_restore_new (self->core);
    if (!d->restore) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    int rc = journal_recover (d->journal, cfg->repair, s_on_snapshot_record,
                              s_on_log_record, self, why, why_size);
    core_restore_report_t report;
    if (core_restore_end (&d->restore, &report, why, why_size))
        rc = -1;
    self->replaying = false;
    if (rc)
        return -1;
    if (report.failed)
        plog_warn ("snapshot: %llu keys or messages could not be restored (limits lowered?): "
                   "%s", (unsigned long long) report.failed, report.why);
    //  An inspection writes nothing.
    if (cfg->dump_state)
        return 0;
    //  A data directory without an origin starts its counters now (or was
    //  written before origins were kept: clients then reset their duplicate
    //  filters once, which at-least-once delivery allows).
    if (!core_origin (self->core)) {
        op_t op = { .kind = OP_ORIGIN, .u = (uint64_t) pclock_wall_us () };
        if (s_start_op (self, &op, why, why_size))
            return -1;
    }
    //  The limits of this start, when they are not the journal's: the
    //  history was applied under its own, what comes next under these.
    if (!limits_equal (core_limits (self->core), limits) || !report.limits) {
        op_t op = { .kind = OP_LIMITS, .limits = limits };
        if (s_start_op (self, &op, why, why_size))
            return -1;
    }
    //  Everyone is offline until they say HELLO again.
    for (size_t i = 0; i < agents_size (self->agents); i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (agent->online)
            agents_detach (self->agents, agent);
        agent->offline_since_ms = pclock_mono_ms ();
        agent->conn_fd = -1;
        agent->cursor = agent->acked;
        agent->out_count = 0;
        agent->out_bytes = 0;
    }
    state_changes_reset (self->state);
    if (d->diverged)
        plog_error ("replay: %llu operations met other seqs than they recorded (see above)",
                    (unsigned long long) d->diverged);
    const mailroom_counters_t *mail = mailroom_counters (self->mailroom);
    state_stats_t stats;
    state_stats (self->state, &stats);
    plog_info ("data directory %s: recovered %zu agents, %llu queued messages, %zu state keys "
               "(state seq %llu, mail seq %llu) in %lld ms; %llu operations replayed "
               "(%llu from old request records), %llu skipped; fsync %s", cfg->data_dir,
               agents_size (self->agents), (unsigned long long) mail->queued, stats.keys,
               (unsigned long long) state_seq (self->state),
               (unsigned long long) mail->mail_seq, (long long) (pclock_mono_ms () - start),
               (unsigned long long) d->replayed, (unsigned long long) d->legacy,
               (unsigned long long) d->skipped,
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
    //  A healing snapshot starts here when the journal is unhealthy.
    journal_tick (d->journal);
    if (journal_healthy (d->journal) && journal_wants_compaction (d->journal))
        durable_compact (self);
    //  Records appended outside a request turn (a push's position) are
    //  written within a second; answers held since a failure leave once
    //  the journal healed.
    return dispatch_release (self) ? 0 : -1;
}

//  In the compaction child: the core's snapshot records into the file.
static int
s_emit (const void *payload, size_t size, void *arg)
{
    return jfile_append ((jfile_t *) arg, payload, size);
}

static int
s_snapshot_write (jfile_t *file, void *arg)
{
    broker_t *self = arg;
    return core_snapshot_write (self->core, s_emit, file);
}

int
durable_compact (broker_t *self)
{
    durable_t *d = self->durable;
    if (!d)
        return -1;
    char why [256];
    if (journal_compact (d->journal, s_snapshot_write, self, why, sizeof why) != 0) {
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

