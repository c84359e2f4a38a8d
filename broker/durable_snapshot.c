// SPDX-License-Identifier: MIT
/*  durable_snapshot - the whole broker state as journal records, and back.

    Written by the compaction child (journal.c forks it) from the memory it
    inherited, read at recovery before the logs. Records, in this order:
        [10, 1, mail_seq, state_seq, origin]                      head
        [13, world]                                               world_snapshot_encode
        [11, id, caps, acked, delivered, channels, token]         each agent
        [12, key, reducer, seq, value]                            each state key
        [14, seq, ts, kind, from, to, body, bin, holders]         each queued message
        [15, agents, keys, messages]                              end
    `origin` (WELCOME.origin) and `token` (the plain-mode resume token, ""
    without one) came later: a head of 4 and an agent of 6 items are read
    as without them. Messages come in seq order with the agents holding them, so restoring
    is one mailroom_restore per message and every inbox fills in order.
    What is slow: collecting the messages sorts (message, holder) pairs,
    O(n log n) for n placements; it runs in the child, not in the loop.
*/
#include <string.h>

#include "broker_internal.h"
#include "plog.h"

enum {
    JREC_SNAP_HEAD = 10,
    JREC_SNAP_AGENT = 11,
    JREC_SNAP_STATE = 12,
    JREC_SNAP_WORLD = 13,
    JREC_SNAP_MAIL = 14,
    JREC_SNAP_END = 15
};

struct _restore_t {
    bool head, end;
    uint64_t mail_seq, state_seq;
    uint64_t agents, keys, messages, failed;
    agent_t **holders;
    size_t holder_cap;
    char why [256];
};

//  ---------------------------------------------------------------------
//  Writing (in the compaction child)

typedef struct {
    jfile_t *file;
    msgpack_sbuffer buf;
    msgpack_packer pk;
    int rc;
    uint64_t keys;
} writer_t;

static void
s_flush (writer_t *w)
{
    if (w->rc == 0 && (w->buf.size > JFILE_MAX_RECORD
    ||  jfile_append (w->file, w->buf.data, w->buf.size) != 0))
        w->rc = -1;
    msgpack_sbuffer_clear (&w->buf);
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
durable_snapshot_write (jfile_t *file, void *arg)
{
    broker_t *self = arg;
    writer_t w = { .file = file };
    msgpack_sbuffer_init (&w.buf);
    msgpack_packer_init (&w.pk, &w.buf, msgpack_sbuffer_write);
    const mailroom_counters_t *counters = mailroom_counters (self->mailroom);

    msgpack_pack_array (&w.pk, 5);
    msgpack_pack_int (&w.pk, JREC_SNAP_HEAD);
    msgpack_pack_int (&w.pk, 1);
    msgpack_pack_uint64 (&w.pk, counters->mail_seq);
    msgpack_pack_uint64 (&w.pk, state_seq (self->state));
    msgpack_pack_uint64 (&w.pk, self->origin);
    s_flush (&w);

    msgpack_pack_array (&w.pk, 2);
    msgpack_pack_int (&w.pk, JREC_SNAP_WORLD);
    world_snapshot_encode (self->world, &w.pk);
    s_flush (&w);

    size_t placements = 0;
    size_t count = agents_size (self->agents);
    for (size_t i = 0; i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        placements += mailbox_count (agent->inbox);
        msgpack_pack_array (&w.pk, 7);
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
        s_flush (&w);
    }

    state_foreach_prefix (self->state, NULL, 0, s_write_key, &w);

    placement_t *all = malloc ((placements ? placements : 1) * sizeof (placement_t));
    size_t n = 0;
    for (size_t i = 0; all && i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        size_t held = mailbox_count (agent->inbox);
        for (size_t j = 0; j < held; j++) {
            mail_t *mail = mailbox_at (agent->inbox, j);
            //  A channel's dropped post is a tombstone: FETCH skips it.
            if (!mail->dropped)
                all [n++] = (placement_t) { mail, agent };
        }
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
        msgpack_pack_array (&w.pk, 9);
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
        s_flush (&w);
        messages++;
        i = end;
    }
    free (all);

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

void
durable_snapshot_begin (broker_t *self)
{
    self->restore = calloc (1, sizeof (restore_t));
    assert (self->restore);
}

static void
s_copy (const msgpack_object *o, char *buf, size_t size)
{
    size_t len = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
    if (len)
        memcpy (buf, o->via.str.ptr, len);
    buf [len] = 0;
}

static bool
s_is (const msgpack_object *o, msgpack_object_type type)
{
    return o->type == type;
}

static int
s_restore_agent (broker_t *self, const msgpack_object *items, uint32_t count)
{
    if (!s_is (&items [1], MSGPACK_OBJECT_STR) || items [1].via.str.size == 0
    ||  items [1].via.str.size > PROTO_MAX_NAME || !s_is (&items [2], MSGPACK_OBJECT_ARRAY)
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [5], MSGPACK_OBJECT_ARRAY)
    ||  (count > 6 && (!s_is (&items [6], MSGPACK_OBJECT_STR)
                   ||  items [6].via.str.size >= sizeof ((agent_t *) 0)->token)))
        return -1;
    char id [PROTO_MAX_NAME + 1];
    s_copy (&items [1], id, sizeof id);
    agent_t *agent = agents_lookup (self->agents, id);
    if (!agent)
        agent = agents_create (self->agents, id);
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
        s_copy (&items [6], agent->token, sizeof agent->token);
    else
        agent->token [0] = 0;
    const msgpack_object_array *channels = &items [5].via.array;
    for (uint32_t i = 0; i < channels->size; i++)
        if (s_is (&channels->ptr [i], MSGPACK_OBJECT_STR)
        &&  channels->ptr [i].via.str.size <= PROTO_MAX_NAME) {
            char name [PROTO_MAX_NAME + 1];
            s_copy (&channels->ptr [i], name, sizeof name);
            mailroom_listen (self->mailroom, agent, name);
        }
    self->restore->agents++;
    return 0;
}

static int
s_restore_key (broker_t *self, const msgpack_object *items)
{
    if (!s_is (&items [1], MSGPACK_OBJECT_STR) || items [1].via.str.size > PROTO_MAX_KEY
    ||  !s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  items [2].via.u64 >= STATE_REDUCER__COUNT
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_BIN))
        return -1;
    char key [PROTO_MAX_KEY + 1];
    s_copy (&items [1], key, sizeof key);
    restore_t *r = self->restore;
    if (state_restore_entry (self->state, key, (state_reducer_t) items [2].via.u64,
                             items [3].via.u64, items [4].via.bin.ptr, items [4].via.bin.size,
                             r->why, sizeof r->why)) {
        plog_error ("state key %s not restored: %s", key, r->why);
        r->failed++;
        return 0;
    }
    r->keys++;
    return 0;
}

static int
s_restore_mail (broker_t *self, const msgpack_object *items)
{
    if (!s_is (&items [1], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  (!s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
    &&   !s_is (&items [2], MSGPACK_OBJECT_NEGATIVE_INTEGER))
    ||  !s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
    ||  !s_is (&items [4], MSGPACK_OBJECT_STR) || !s_is (&items [5], MSGPACK_OBJECT_STR)
    ||  items [4].via.str.size > 255 || items [5].via.str.size > 255
    ||  !s_is (&items [6], MSGPACK_OBJECT_BIN) || !s_is (&items [7], MSGPACK_OBJECT_BOOLEAN)
    ||  !s_is (&items [8], MSGPACK_OBJECT_ARRAY))
        return -1;
    restore_t *r = self->restore;
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
        s_copy (&list->ptr [i], id, sizeof id);
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
                          items [7].via.boolean, r->holders, n))
        r->messages++;
    else
        r->failed++;
    return 0;
}

int
durable_snapshot_record (const void *payload, size_t size, void *arg)
{
    broker_t *self = arg;
    restore_t *r = self->restore;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t offset = 0;
    int rc = -1;
    if (msgpack_unpack_next (&unpacked, payload, size, &offset) != MSGPACK_UNPACK_SUCCESS
    ||  unpacked.data.type != MSGPACK_OBJECT_ARRAY || unpacked.data.via.array.size < 2
    ||  unpacked.data.via.array.ptr [0].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        goto done;
    const msgpack_object *items = unpacked.data.via.array.ptr;
    uint32_t count = unpacked.data.via.array.size;
    switch (items [0].via.u64) {
        case JREC_SNAP_HEAD:
            if ((count == 4 || count == 5) && s_is (&items [2], MSGPACK_OBJECT_POSITIVE_INTEGER)
            &&  s_is (&items [3], MSGPACK_OBJECT_POSITIVE_INTEGER)
            &&  (count == 4 || s_is (&items [4], MSGPACK_OBJECT_POSITIVE_INTEGER))) {
                r->head = true;
                r->mail_seq = items [2].via.u64;
                r->state_seq = items [3].via.u64;
                //  The counters go on, so their lifetime does too.
                if (count == 5) {
                    self->origin = items [4].via.u64;
                    self->origin_recovered = true;
                }
                rc = 0;
            }
            break;
        case JREC_SNAP_WORLD:
            rc = world_snapshot_restore (self->world, &items [1], r->why, sizeof r->why);
            if (rc)
                plog_error ("the world's progress is not restored: %s", r->why);
            rc = 0;
            break;
        case JREC_SNAP_AGENT:
            rc = count == 6 || count == 7 ? s_restore_agent (self, items, count) : -1;
            break;
        case JREC_SNAP_STATE:
            rc = count == 5 ? s_restore_key (self, items) : -1;
            break;
        case JREC_SNAP_MAIL:
            rc = count == 9 ? s_restore_mail (self, items) : -1;
            break;
        case JREC_SNAP_END:
            //  Before the logs replay on top: their writes continue the seqs.
            r->end = true;
            mailroom_restore_seq (self->mailroom, r->mail_seq);
            state_restore_seq (self->state, r->state_seq);
            rc = 0;
            break;
        default:
            break;
    }
done:
    if (rc)
        snprintf (r->why, sizeof r->why, "a snapshot record (%zu bytes) has the wrong shape", size);
    msgpack_unpacked_destroy (&unpacked);
    return rc;
}

int
durable_snapshot_end (broker_t *self, char *why, size_t why_size)
{
    restore_t *r = self->restore;
    int rc = 0;
    if (r->head && !r->end) {
        snprintf (why, why_size, "the snapshot ends before its end record");
        rc = -1;
    }
    if (r->failed)
        plog_warn ("snapshot: %llu keys or messages could not be restored (limits lowered?)",
                   (unsigned long long) r->failed);
    free (r->holders);
    free (r);
    self->restore = NULL;
    return rc;
}

size_t
durable_state_keys (broker_t *self)
{
    state_stats_t stats;
    state_stats (self->state, &stats);
    return stats.keys;
}
