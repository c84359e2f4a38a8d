// SPDX-License-Identifier: MIT
/*  core_snapshot - the whole core as journal records, and back.

    Written by the compaction child (journal.c forks it) from the memory it
    inherited, read at recovery before the logs. Records, in this order:
        [10, 2, mail_seq, state_seq, origin, limits]              head
        [13, world]                                               world_snapshot_encode
        [11, id, caps, acked, delivered, channels, token,
             slots, step, acts]                                   each agent
        [12, key, reducer, seq, value]                            each state key
        [14, seq, ts, kind, from, to, body, bin, holders,
             dropped]                                             each queued message
        [16, workflow fields], [17, checkpoint or key]...         workflow_snapshot
        [15, agents, keys, messages]                              end
    Older snapshots (head version 1 of 4 or 5 items, agents of 6 or 7
    items, no workflow, messages of 9 items and without the tombstones of
    posts their channel dropped) are read as they were written: what they
    lack (limits, slots, the workflow's progress) starts as a fresh core
    has it.
    Messages come in seq order with the agents holding them, so restoring
    is one mailroom_restore per message and every inbox fills in order.
    What is slow: collecting the messages sorts (message, holder) pairs,
    O(n log n) for n placements; it runs in the child, not in the loop.
*/
#include <string.h>

#include "core_int.h"
#include "snapshot_obj.h"
#include "pwire.h"

enum {
    JREC_SNAP_HEAD = 10,
    JREC_SNAP_AGENT = 11,
    JREC_SNAP_STATE = 12,
    JREC_SNAP_WORLD = 13,
    JREC_SNAP_MAIL = 14,
    JREC_SNAP_END = 15,
    JREC_SNAP_WORKFLOW = 16,
    JREC_SNAP_CHECKPOINT = 17
};

struct _core_restore_t {
    core_t *core;
    bool head, end;
    uint64_t mail_seq, state_seq;
    uint64_t agents, keys, messages, failed;
    bool origin, limits, workflow;
    uint64_t last_mail;         //  the seq of the last message restored
    agent_t **holders;
    size_t holder_cap;
    char why [256];
};

//  ---------------------------------------------------------------------
//  Writing (in the compaction child)

typedef struct {
    core_record_fn *emit;
    void *arg;
    msgpack_sbuffer buf;
    msgpack_packer pk;
    int rc;
    uint64_t keys;
} writer_t;

static void
s_flush (writer_t *w)
{
    if (w->rc == 0 && (w->buf.size > CORE_RECORD_MAX
    ||  w->emit (w->buf.data, w->buf.size, w->arg) != 0))
        w->rc = -1;
    msgpack_sbuffer_clear (&w->buf);
}

static int
s_emit_workflow (msgpack_sbuffer *record, void *arg)
{
    writer_t *w = arg;
    if (w->rc == 0 && (record->size > CORE_RECORD_MAX
    ||  w->emit (record->data, record->size, w->arg) != 0))
        w->rc = -1;
    return w->rc;
}

static void
s_pack_str (msgpack_packer *pk, const char *text, size_t len)
{
    msgpack_pack_str (pk, len);
    msgpack_pack_str_body (pk, text, len);
}

static void
s_write_key (const state_entry_t *entry, void *arg)
{
    writer_t *w = arg;
    msgpack_pack_array (&w->pk, 5);
    msgpack_pack_int (&w->pk, JREC_SNAP_STATE);
    s_pack_str (&w->pk, entry->key, strlen (entry->key));
    msgpack_pack_uint32 (&w->pk, (uint32_t) entry->reducer);
    msgpack_pack_uint64 (&w->pk, entry->seq);
    msgpack_pack_bin (&w->pk, entry->size);
    msgpack_pack_bin_body (&w->pk, entry->value, entry->size);
    s_flush (w);
    w->keys++;
}

typedef struct {
    mail_t *mail;
    agent_t *agent;
} placement_t;

static int
s_placement_cmp (const void *a, const void *b)
{
    const placement_t *x = a, *y = b;
    if (x->mail->seq != y->mail->seq)
        return x->mail->seq < y->mail->seq ? -1 : 1;
    return x->agent->index < y->agent->index ? -1 : x->agent->index > y->agent->index;
}

int
core_snapshot_write (core_t *self, core_record_fn *emit, void *arg)
{
    writer_t w = { .emit = emit, .arg = arg };
    msgpack_sbuffer_init (&w.buf);
    msgpack_packer_init (&w.pk, &w.buf, msgpack_sbuffer_write);
    const mailroom_counters_t *counters = mailroom_counters (self->mailroom);

    msgpack_pack_array (&w.pk, 6);
    msgpack_pack_int (&w.pk, JREC_SNAP_HEAD);
    msgpack_pack_int (&w.pk, 2);
    msgpack_pack_uint64 (&w.pk, counters->mail_seq);
    msgpack_pack_uint64 (&w.pk, state_seq (self->state));
    msgpack_pack_uint64 (&w.pk, self->origin);
    limits_encode (&self->limits, &w.pk);
    s_flush (&w);

    if (self->world) {
        msgpack_pack_array (&w.pk, 2);
        msgpack_pack_int (&w.pk, JREC_SNAP_WORLD);
        world_snapshot_encode (self->world, &w.pk);
        s_flush (&w);
    }

    size_t placements = 0;
    size_t count = agents_size (self->agents);
    for (size_t i = 0; i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        placements += mailbox_count (agent->inbox);
        msgpack_pack_array (&w.pk, 10);
        msgpack_pack_int (&w.pk, JREC_SNAP_AGENT);
        s_pack_str (&w.pk, agent->id, agent->id_len);
        msgpack_pack_array (&w.pk, (uint32_t) zlistx_size (agent->caps));
        for (char *cap = zlistx_first (agent->caps); cap; cap = zlistx_next (agent->caps))
            s_pack_str (&w.pk, cap, strlen (cap));
        msgpack_pack_uint64 (&w.pk, agent->acked);
        msgpack_pack_uint64 (&w.pk, agent->delivered);
        msgpack_pack_array (&w.pk, (uint32_t) zlistx_size (agent->channels));
        for (channel_t *channel = zlistx_first (agent->channels); channel;
             channel = zlistx_next (agent->channels))
            s_pack_str (&w.pk, channel->name, channel->name_len);
        s_pack_str (&w.pk, agent->token, strlen (agent->token));
        msgpack_pack_array (&w.pk, AGENT_SLOTS);
        for (int slot = 0; slot < AGENT_SLOTS; slot++) {
            const replay_t *r = &agent->slots [slot];
            if (!r->data) {
                msgpack_pack_nil (&w.pk);
                continue;
            }
            msgpack_pack_array (&w.pk, 3);
            msgpack_pack_uint64 (&w.pk, r->key);
            msgpack_pack_uint64 (&w.pk, r->fields);
            msgpack_pack_bin (&w.pk, r->size);
            msgpack_pack_bin_body (&w.pk, r->data, r->size);
        }
        msgpack_pack_uint64 (&w.pk, agent->step);
        msgpack_pack_uint64 (&w.pk, agent->acts);
        s_flush (&w);
    }

    state_foreach_prefix (self->state, NULL, 0, s_write_key, &w);

    placement_t *all = malloc ((placements ? placements : 1) * sizeof (placement_t));
    size_t n = 0;
    for (size_t i = 0; all && i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        size_t held = mailbox_count (agent->inbox);
        //  A channel's dropped post too: a tombstone FETCH skips, but
        //  which holds its place in the inbox (its count, what
        //  drop-oldest pops first) until acknowledged.
        for (size_t j = 0; j < held; j++)
            all [n++] = (placement_t) { mailbox_at (agent->inbox, j), agent };
    }
    if (!all)
        w.rc = -1;
    else
        qsort (all, n, sizeof (placement_t), s_placement_cmp);
    uint64_t messages = 0;
    for (size_t i = 0; i < n; ) {
        mail_t *mail = all [i].mail;
        size_t end = i;
        while (end < n && all [end].mail == mail)
            end++;
        msgpack_pack_array (&w.pk, 10);
        msgpack_pack_int (&w.pk, JREC_SNAP_MAIL);
        msgpack_pack_uint64 (&w.pk, mail->seq);
        msgpack_pack_int64 (&w.pk, mail->ts);
        msgpack_pack_uint32 (&w.pk, mail->kind);
        s_pack_str (&w.pk, mail_from (mail), mail->from_len);
        s_pack_str (&w.pk, mail_to (mail), mail->to_len);
        msgpack_pack_bin (&w.pk, mail->body_len);
        msgpack_pack_bin_body (&w.pk, mail_body (mail), mail->body_len);
        if (mail->body_bin)
            msgpack_pack_true (&w.pk);
        else
            msgpack_pack_false (&w.pk);
        msgpack_pack_array (&w.pk, (uint32_t) (end - i));
        for (size_t j = i; j < end; j++)
            s_pack_str (&w.pk, all [j].agent->id, all [j].agent->id_len);
        if (mail->dropped)
            msgpack_pack_true (&w.pk);
        else
            msgpack_pack_false (&w.pk);
        s_flush (&w);
        messages++;
        i = end;
    }
    free (all);

    if (self->workflow && w.rc == 0)
        workflow_snapshot (self->workflow, JREC_SNAP_WORKFLOW, JREC_SNAP_CHECKPOINT, &w.buf,
                           s_emit_workflow, &w);
    msgpack_sbuffer_clear (&w.buf);

    msgpack_pack_array (&w.pk, 4);
    msgpack_pack_int (&w.pk, JREC_SNAP_END);
    msgpack_pack_uint64 (&w.pk, count);
    msgpack_pack_uint64 (&w.pk, w.keys);
    msgpack_pack_uint64 (&w.pk, messages);
    s_flush (&w);
    msgpack_sbuffer_destroy (&w.buf);
    return w.rc;
}

//  ---------------------------------------------------------------------
//  Restoring (at recovery)

//  A record is at most CORE_RECORD_MAX bytes, so at most that many
//  objects; nesting is bounded by the walk's own stack.
static const pwire_limits_t s_record_limits = {
    .max_frame = CORE_RECORD_MAX,
    .max_depth = 32,
    .max_objects = CORE_RECORD_MAX
};

bool
core_record_check (const void *payload, size_t size, char *why, size_t why_size)
{
    return pwire_check (payload, size, &s_record_limits, why, why_size) == PERR_NONE;
}

//  A msgpack value a record keeps as bytes (a state value, a checkpoint's)
//  is unpacked later with msgpack-c: its counts must be sound as well.
static bool
s_value_sound (core_restore_t *r, const msgpack_object *bin)
{
    char why [200];
    if (bin->via.bin.size == 0          //  a removed key's: never unpacked
    ||  core_record_check (bin->via.bin.ptr, bin->via.bin.size, why, sizeof why))
        return true;
    snprintf (r->why, sizeof r->why, "a snapshot value is not sound msgpack: %s", why);
    return false;
}

core_restore_t *
core_restore_new (core_t *core)
{
    core_restore_t *self = calloc (1, sizeof (core_restore_t));
    if (self)
        self->core = core;
    return self;
}

static bool
s_is (const msgpack_object *o, msgpack_object_type type)
{
    return o->type == type;
}

static bool
s_restore_slots (agent_t *agent, const msgpack_object *slots)
{
    if (!s_is (slots, MSGPACK_OBJECT_ARRAY) || slots->via.array.size != AGENT_SLOTS)
        return false;
    for (int i = 0; i < AGENT_SLOTS; i++) {
        const msgpack_object *slot = &slots->via.array.ptr [i];
        replay_forget (&agent->slots [i]);
        if (s_is (slot, MSGPACK_OBJECT_NIL))
            continue;
        if (!s_is (slot, MSGPACK_OBJECT_ARRAY) || slot->via.array.size != 3
        ||  !s_is (&slot->via.array.ptr [0], MSGPACK_OBJECT_POSITIVE_INTEGER)
        ||  !s_is (&slot->via.array.ptr [1], MSGPACK_OBJECT_POSITIVE_INTEGER)
        ||  !s_is (&slot->via.array.ptr [2], MSGPACK_OBJECT_BIN))
            return false;
        const msgpack_object_bin *bin = &slot->via.array.ptr [2].via.bin;
        if (!replay_set (&agent->slots [i], slot->via.array.ptr [0].via.u64,
                         (size_t) slot->via.array.ptr [1].via.u64, bin->size ? bin->ptr : "",
                         bin->size))
            return false;
    }
    return true;
}

static int
s_restore_agent (core_restore_t *r, const msgpack_object *items, uint32_t count)
{
    core_t *self = r->core;
    if (!s_is (&items [1], MSGPACK_OBJECT_STR) || items [1].via.str.size == 0
    ||  items [1].via.str.size > PROTO_MAX_NAME || !s_is (&items [2], MSGPACK_OBJECT_ARRAY)
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [5], MSGPACK_OBJECT_ARRAY)
    ||  (count > 6 && (!s_is (&items [6], MSGPACK_OBJECT_STR)
                   ||  items [6].via.str.size >= sizeof ((agent_t *) 0)->token))
    ||  (count > 7 && (!s_is (&items [8], MSGPACK_OBJECT_POSITIVE_INTEGER)
                   ||  !s_is (&items [9], MSGPACK_OBJECT_POSITIVE_INTEGER))))
        return -1;
    char id [PROTO_MAX_NAME + 1];
    snapshot_obj_copy (&items [1], id, sizeof id);
    agent_t *agent = agents_lookup (self->agents, id);
    if (!agent) {
        //  A snapshot's agents were all registered under the limits of
        //  their day (the limit is set again at the end record).
        if (agents_size (self->agents) >= agents_max (self->agents))
            agents_set_max (self->agents, 2 * agents_size (self->agents) + 1);
        agent = agents_create (self->agents, id);
    }
    if (!agent)
        return -1;
    const msgpack_object_array *caps = &items [2].via.array;
    const char *texts [64];
    size_t lens [64], n = 0;
    for (uint32_t i = 0; i < caps->size && n < 64; i++)
        if (s_is (&caps->ptr [i], MSGPACK_OBJECT_STR)) {
            texts [n] = caps->ptr [i].via.str.ptr;
            lens [n++] = caps->ptr [i].via.str.size;
        }
    agents_set_caps (agent, texts, lens, n);
    agent->acked = items [3].via.u64;
    agent->delivered = items [4].via.u64;
    agent->cursor = agent->acked;
    agent->out_count = 0;
    agent->out_bytes = 0;
    if (count > 6)
        snapshot_obj_copy (&items [6], agent->token, sizeof agent->token);
    else
        agent->token [0] = 0;
    if (count > 7) {
        if (!s_restore_slots (agent, &items [7]))
            return -1;
        agent->step = items [8].via.u64;
        agent->acts = items [9].via.u64;
    }
    const msgpack_object_array *channels = &items [5].via.array;
    for (uint32_t i = 0; i < channels->size; i++)
        if (s_is (&channels->ptr [i], MSGPACK_OBJECT_STR)
        &&  channels->ptr [i].via.str.size <= PROTO_MAX_NAME) {
            char name [PROTO_MAX_NAME + 1];
            snapshot_obj_copy (&channels->ptr [i], name, sizeof name);
            mailroom_listen (self->mailroom, agent, name);
        }
    r->agents++;
    return 0;
}

static int
s_restore_key (core_restore_t *r, const msgpack_object *items)
{
    if (!s_is (&items [1], MSGPACK_OBJECT_STR) || items [1].via.str.size > PROTO_MAX_KEY
    ||  !s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  items [2].via.u64 >= STATE_REDUCER__COUNT
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_BIN) || !s_value_sound (r, &items [4]))
        return -1;
    char key [PROTO_MAX_KEY + 1];
    snapshot_obj_copy (&items [1], key, sizeof key);
    if (state_restore_entry (r->core->state, key, (state_reducer_t) items [2].via.u64,
                             items [3].via.u64, items [4].via.bin.ptr, items [4].via.bin.size,
                             r->why, sizeof r->why)) {
        r->failed++;
        return 0;
    }
    r->keys++;
    return 0;
}

static int
s_restore_mail (core_restore_t *r, const msgpack_object *items, uint32_t count)
{
    core_t *self = r->core;
    if (count > 9 && !s_is (&items [9], MSGPACK_OBJECT_BOOLEAN))
        return -1;
    bool dropped = count > 9 && items [9].via.boolean;
    if (!s_is (&items [1], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  (!s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&   !s_is (&items [2], MSGPACK_OBJECT_NEGATIVE_INTEGER))
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_STR) || !s_is (&items [5], MSGPACK_OBJECT_STR)
    ||  items [4].via.str.size > 255 || items [5].via.str.size > 255
    ||  !s_is (&items [6], MSGPACK_OBJECT_BIN) || !s_is (&items [7], MSGPACK_OBJECT_BOOLEAN)
    ||  !s_is (&items [8], MSGPACK_OBJECT_ARRAY))
        return -1;
    //  Inboxes are rings in seq order: a message out of order is damage.
    if (items [1].via.u64 <= r->last_mail) {
        snprintf (r->why, sizeof r->why, "snapshot message %llu comes after %llu",
                  (unsigned long long) items [1].via.u64, (unsigned long long) r->last_mail);
        return -1;
    }
    r->last_mail = items [1].via.u64;
    const msgpack_object_array *list = &items [8].via.array;
    if (list->size > r->holder_cap) {
        agent_t **grown = realloc (r->holders, list->size * sizeof (agent_t *));
        if (!grown)
            return -1;
        r->holders = grown;
        r->holder_cap = list->size;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < list->size; i++) {
        if (!s_is (&list->ptr [i], MSGPACK_OBJECT_STR) || list->ptr [i].via.str.size > PROTO_MAX_NAME)
            continue;
        char id [PROTO_MAX_NAME + 1];
        snapshot_obj_copy (&list->ptr [i], id, sizeof id);
        agent_t *agent = agents_lookup (self->agents, id);
        if (agent)
            r->holders [n++] = agent;
    }
    uint64_t kind = items [3].via.u64;
    if (kind > MAIL_CHANNEL)
        return -1;
    if (mailroom_restore (self->mailroom, items [1].via.u64, items [2].via.i64,
                          (mail_kind_t) kind,
                          items [4].via.str.ptr, items [4].via.str.size,
                          items [5].via.str.ptr, items [5].via.str.size,
                          items [6].via.bin.ptr, items [6].via.bin.size,
                          items [7].via.boolean, dropped, r->holders, n))
        r->messages++;
    else
        r->failed++;
    return 0;
}

static int
s_restore_head (core_restore_t *r, const msgpack_object *items, uint32_t count)
{
    core_t *self = r->core;
    if (count < 4 || count > 6 || !s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  (count > 4 && !s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)))
        return -1;
    r->head = true;
    //  The snapshot holds every key the core had: a key the fresh core
    //  wrote at its start and the snapshot lacks was deleted since.
    state_restore_begin (self->state);
    r->mail_seq = items [2].via.u64;
    r->state_seq = items [3].via.u64;
    //  The counters go on, so their lifetime does too.
    if (count > 4) {
        self->origin = items [4].via.u64;
        r->origin = true;
    }
    if (count > 5) {
        core_limits_t limits;
        if (!limits_decode (&items [5], &limits, r->why, sizeof r->why))
            return -1;
        op_t op = { .kind = OP_LIMITS, .agent = "", .limits = &limits };
        core_apply (self, &op, NULL);
        r->limits = true;
    }
    //  What the snapshot holds was there under the limits in force, which
    //  keep what is there when lowered: it all comes back (the limits are
    //  set again at the end record).
    channels_set_max (mailroom_channels (self->mailroom), SIZE_MAX);
    return 0;
}

int
core_restore_record (core_restore_t *r, const void *payload, size_t size)
{
    core_t *self = r->core;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = -1;
    if (!core_record_check (payload, size, r->why, sizeof r->why)
    ||  msgpack_unpack_next (&unpacked, payload, size, &offset) != MSGPACK_UNPACK_SUCCESS
    ||  unpacked.data.type != MSGPACK_OBJECT_ARRAY || unpacked.data.via.array.size < 2
    ||  unpacked.data.via.array.ptr [0].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        goto done;
    const msgpack_object *items = unpacked.data.via.array.ptr;
    uint32_t count = unpacked.data.via.array.size;
    switch (items [0].via.u64) {
        case JREC_SNAP_HEAD:
            rc = s_restore_head (r, items, count);
            break;
        case JREC_SNAP_WORLD:
            //  A world that changed since (another file or size) starts
            //  afresh: its progress does not fit it.
            if (self->world && world_snapshot_restore (self->world, &items [1], r->why,
                                                       sizeof r->why))
                r->failed++;
            rc = 0;
            break;
        case JREC_SNAP_AGENT:
            rc = count == 6 || count == 7 || count == 10 ? s_restore_agent (r, items, count) : -1;
            break;
        case JREC_SNAP_STATE:
            rc = count == 5 ? s_restore_key (r, items) : -1;
            break;
        case JREC_SNAP_MAIL:
            rc = count == 9 || count == 10 ? s_restore_mail (r, items, count) : -1;
            break;
        case JREC_SNAP_WORKFLOW:
            rc = self->workflow
               ? workflow_restore_fields (self->workflow, items, count, r->why, sizeof r->why) : 0;
            r->workflow = self->workflow && rc == 0;
            break;
        case JREC_SNAP_CHECKPOINT:
            //  A checkpoint's key: [17, 1, number, key, reducer, deleted, value].
            if (count == 7 && s_is (&items [6], MSGPACK_OBJECT_BIN)
            &&  !s_value_sound (r, &items [6]))
                break;
            rc = r->workflow
               ? workflow_restore_key (self->workflow, items, count, r->why, sizeof r->why) : 0;
            break;
        case JREC_SNAP_END:
            //  Before the logs replay on top: their writes continue the seqs.
            r->end = true;
            mailroom_restore_seq (self->mailroom, r->mail_seq);
            state_restore_seq (self->state, r->state_seq);
            agents_set_max (self->agents, self->limits.max_agents);
            channels_set_max (mailroom_channels (self->mailroom), self->limits.mail.max_channels);
            rc = r->workflow ? workflow_restore_end (self->workflow, r->why, sizeof r->why) : 0;
            break;
        default:
            break;
    }
done:
    if (rc && !r->why [0])
        snprintf (r->why, sizeof r->why, "a snapshot record (%zu bytes) has the wrong shape", size);
    msgpack_unpacked_destroy (&unpacked);
    return rc;
}

int
core_restore_end (core_restore_t **r_p, core_restore_report_t *report, char *why, size_t why_size)
{
    core_restore_t *r = *r_p;
    int rc = 0;
    if (r->head && !r->end) {
        snprintf (why, why_size, "the snapshot ends before its end record");
        rc = -1;
    }
    if (report) {
        report->snapshot = r->head;
        report->agents = r->agents;
        report->keys = r->keys;
        report->messages = r->messages;
        report->failed = r->failed;
        report->origin = r->origin;
        report->limits = r->limits;
        snprintf (report->why, sizeof report->why, "%s", r->why);
    }
    free (r->holders);
    free (r);
    *r_p = NULL;
    return rc;
}

const char *
core_restore_why (core_restore_t *r)
{
    return r->why;
}
