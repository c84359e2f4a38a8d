// SPDX-License-Identifier: MIT
/*  client_results - replies decoded into libparley's typed results.

    Fixed-size fields are copied into the result; strings of unbounded
    count (objects, caps, keys) and values go into the client's arena, a
    growable buffer reset by every request. While a result is built the
    arena may move, so strings are recorded as offsets and turned into
    pointers once the reply is done. Arrays of records live in `items`
    (and `items2`), grown the same way. All of it stays valid until the
    next request.
*/
#include <assert.h>
#include <stddef.h>
#include "client_internal.h"
#include "plog.h"

void
client_results_reset (parley_client_t *self)
{
    self->arena.used = 0;
}

//  Room for `size` more bytes (aborts on out of memory, see client_alloc).
static size_t
s_arena_reserve (client_arena_t *arena, size_t size)
{
    if (arena->used + size > arena->size) {
        size_t want = arena->size? arena->size * 2: 4096;
        while (want < arena->used + size)
            want *= 2;
        arena->data = (char *) client_alloc (arena->data, want);
        arena->size = want;
    }
    size_t at = arena->used;
    arena->used += size;
    return at;
}

//  Copies `len` bytes plus a NUL; returns the offset.
static size_t
s_arena_copy (client_arena_t *arena, const char *text, size_t len)
{
    size_t at = s_arena_reserve (arena, len + 1);
    if (len)
        memcpy (arena->data + at, text, len);
    arena->data [at + len] = 0;
    return at;
}

//  An array of `count` records of `size` bytes in `*items`, not cleared:
//  for decoders that set every field of every record.
static void *
s_items_raw (void **items, size_t *have, size_t count, size_t size)
{
    size_t want = (count? count: 1) * size;
    if (want > *have) {
        *items = client_alloc (*items, want);
        *have = want;
    }
    return *items;
}

//  The same, cleared.
static void *
s_items (void **items, size_t *have, size_t count, size_t size)
{
    void *array = s_items_raw (items, have, count, size);
    memset (array, 0, (count? count: 1) * size);
    return array;
}

//  A str field of a record into a fixed buffer ("" if absent).
static void
s_copy (const msgpack_object *map, const char *name, char *buf, size_t size)
{
    if (!pobj_strcpy (map, name, buf, size))
        buf [0] = 0;
}

static const msgpack_object *
s_array (const pmsg_t *msg, const char *name)
{
    const msgpack_object *array = pmsg_field (msg, name);
    return array && array->type == MSGPACK_OBJECT_ARRAY? array: NULL;
}

//  A str array's elements into the arena; the offsets are kept in the
//  arena too, as a run of size_t after the strings. Returns the offset of
//  that run, to be turned into a char * table by s_table.
static size_t
s_strings (client_arena_t *arena, const msgpack_object *array, size_t *count)
{
    *count = 0;
    if (!array || array->type != MSGPACK_OBJECT_ARRAY)
        return 0;
    size_t n = array->via.array.size;
    size_t offsets [64];
    size_t *offs = n <= 64? offsets: (size_t *) client_alloc (NULL, n * sizeof (size_t));
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *o = &array->via.array.ptr [i];
        if (o->type == MSGPACK_OBJECT_STR)
            offs [kept++] = s_arena_copy (arena, o->via.str.ptr, o->via.str.size);
    }
    //  The table of pointers, aligned, filled with offsets for now.
    size_t pad = (sizeof (char *) - arena->used % sizeof (char *)) % sizeof (char *);
    s_arena_reserve (arena, pad);
    size_t table = s_arena_reserve (arena, (kept? kept: 1) * sizeof (char *));
    memcpy (arena->data + table, offs, kept * sizeof (size_t));
    if (offs != offsets)
        free (offs);
    *count = kept;
    return table;
}

//  Turns a table of offsets (from s_strings) into pointers; call when the
//  arena no longer moves.
static const char *const *
s_table (client_arena_t *arena, size_t table, size_t count)
{
    char **ptrs = (char **) (arena->data + table);
    for (size_t i = 0; i < count; i++) {
        size_t off;
        memcpy (&off, &ptrs [i], sizeof (off));
        ptrs [i] = arena->data + off;
    }
    return (const char *const *) ptrs;
}

void
client_decode_welcome (parley_client_t *self, const pmsg_t *msg)
{
    parley_welcome_t *w = &self->welcome;
    memset (w, 0, sizeof (*w));
    pmsg_strcpy (msg, "pub", w->pub, sizeof (w->pub));
    pmsg_strcpy (msg, "tap", w->tap, sizeof (w->tap));
    w->heartbeat_ms = pmsg_uint (msg, "heartbeat_ms", 1000);
    w->liveness_ms = pmsg_uint (msg, "liveness_ms", 5000);
    w->max_body = pmsg_uint (msg, "max_body", PROTO_MAX_BODY);
    w->max_batch = pmsg_uint (msg, "max_batch", PROTO_MAX_BATCH);
    w->acked = pmsg_uint (msg, "acked", 0);
    w->mail_seq = pmsg_uint (msg, "mail_seq", 0);
    w->state_seq = pmsg_uint (msg, "state_seq", 0);
    w->origin = pmsg_uint (msg, "origin", 0);
    strcpy (w->world_kind, "line");
    const msgpack_object *world = pmsg_field (msg, "world");
    if (world && world->type == MSGPACK_OBJECT_MAP) {
        if (!pobj_strcpy (world, "kind", w->world_kind, sizeof (w->world_kind)))
            strcpy (w->world_kind, "line");
        w->world_width = pobj_uint (world, "width", 0);
        w->world_height = pobj_uint (world, "height", 1);
        w->objects_total = pobj_uint (world, "objects_total", 0);
        w->explored = pobj_uint (world, "explored", 0);
        w->coverage = pobj_num (world, "coverage", 0);
        w->done = pobj_bool (world, "done", false);
    }
}

//  A field of a record that must be an array, or NULL.
static const msgpack_object *
s_map_array (const msgpack_object *map, const char *name)
{
    const msgpack_object *array = pobj_get (map, name);
    return array && array->type == MSGPACK_OBJECT_ARRAY? array: NULL;
}

void
client_decode_sent (parley_client_t *self, uint64_t batch, size_t count, parley_sent_t *out)
{
    client_decode_sent_in (self, pmsg_root (self->reply), batch, count, out,
                           &self->items, &self->items_size, &self->items2, &self->items2_size);
}

void
client_decode_sent_in (parley_client_t *self, const msgpack_object *map, uint64_t batch,
                       size_t count, parley_sent_t *out, void **seq_items, size_t *seq_size,
                       void **error_items, size_t *error_size)
{
    memset (out, 0, sizeof (*out));
    out->batch = batch;
    out->count = count;
    out->accepted = pobj_uint (map, "accepted", 0);
    const msgpack_object *seqs = s_map_array (map, "seqs");
    const msgpack_object *errors = s_map_array (map, "errors");
    size_t error_count = errors? errors->via.array.size: 0;
    uint64_t *seq_out = (uint64_t *) s_items (seq_items, seq_size, count, sizeof (uint64_t));
    for (size_t i = 0; seqs && i < count && i < seqs->via.array.size; i++) {
        const msgpack_object *o = &seqs->via.array.ptr [i];
        seq_out [i] = o->type == MSGPACK_OBJECT_POSITIVE_INTEGER? o->via.u64: 0;
    }
    parley_item_error_t *err_out = (parley_item_error_t *)
        s_items (error_items, error_size, error_count, sizeof (parley_item_error_t));
    for (size_t i = 0; i < error_count; i++) {
        const msgpack_object *e = &errors->via.array.ptr [i];
        err_out [i].index = pobj_uint (e, "index", 0);
        err_out [i].code = (int) pobj_uint (e, "code", 0);
        s_copy (e, "agent", err_out [i].agent, sizeof (err_out [i].agent));
        s_copy (e, "message", err_out [i].message, sizeof (err_out [i].message));
    }
    out->seqs = seq_out;
    out->errors = err_out;
    out->error_count = error_count;
}

void
client_decode_written (parley_client_t *self, parley_written_t *out)
{
    out->seq = pmsg_uint (self->reply, "seq", 0);
    out->changed = pmsg_uint (self->reply, "changed", 0);
}

//  The duplicate filter's watermark follows the broker: a restarted
//  broker's fresh mail counter (WELCOME.origin changed, or an older
//  broker's mail_seq below what we handed out) starts again from what
//  WELCOME says we acknowledged. Comparing mail_seq alone is not enough:
//  a busy restarted broker may be past our old watermark already, and
//  its first messages would be taken for duplicates and lost.
static void
s_check_epoch (parley_client_t *self)
{
    if (self->handed_epoch == self->epoch)
        return;
    bool new_origin = self->welcome.origin != self->handed_origin;
    if (self->handed_epoch != 0
    &&  (new_origin || self->welcome.mail_seq < self->handed_seq)) {
        plog_info ("broker mail counter restarted; resuming at %" PRIu64, self->welcome.acked);
        self->handed_seq = self->welcome.acked;
    }
    self->handed_epoch = self->epoch;
    self->handed_origin = self->welcome.origin;
}

//  A str value into a fixed buffer, as pobj_strcpy: "" when it is not a
//  str, does not fit, or holds a NUL.
static void
s_name (const msgpack_object *o, char *buf, size_t size)
{
    size_t len = o->type == MSGPACK_OBJECT_STR? o->via.str.size: size;
    if (len >= size || memchr (o->via.str.ptr, 0, len)) {
        buf [0] = 0;
        return;
    }
    memcpy (buf, o->via.str.ptr, len);
    buf [len] = 0;
}

//  One MAIL record into `m`, in one pass over its
//  fields: mail is the bulk of what a client decodes, and a lookup by name
//  per field would scan the record six times. The first of a repeated key
//  counts, as with pobj_get; nil is absent.
static void
s_mail_record (const msgpack_object *item, parley_mail_t *m)
{
    *m = (parley_mail_t) { .body = "" };     //  every field, any added later too
    if (item->type != MSGPACK_OBJECT_MAP)
        return;
    unsigned seen = 0;
    for (uint32_t k = 0; k < item->via.map.size; k++) {
        const msgpack_object *key = &item->via.map.ptr [k].key;
        const msgpack_object *val = &item->via.map.ptr [k].val;
        if (key->type != MSGPACK_OBJECT_STR || val->type == MSGPACK_OBJECT_NIL)
            continue;
        const char *name = key->via.str.ptr;
        size_t len = key->via.str.size;
        unsigned bit = 0;
        #define S_KEY(text, flag) (len == sizeof (text) - 1 && memcmp (name, text, len) == 0 \
                                   && !(seen & (bit = flag)))
        if (S_KEY ("seq", 1))
            m->seq = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER? val->via.u64: 0;
        else
        if (S_KEY ("ts", 2))
            m->ts = val->type == MSGPACK_OBJECT_POSITIVE_INTEGER? val->via.u64: 0;
        else
        if (S_KEY ("from", 4))
            s_name (val, m->from, sizeof (m->from));
        else
        if (S_KEY ("to", 8))
            s_name (val, m->to, sizeof (m->to));
        else
        if (S_KEY ("channel", 16))
            s_name (val, m->channel, sizeof (m->channel));
        else
        if (S_KEY ("body", 32)) {
            //  The body points into the reply: str or bin, as sent.
            if (val->type == MSGPACK_OBJECT_STR) {
                m->body = val->via.str.ptr;
                m->body_len = val->via.str.size;
            }
            else
            if (val->type == MSGPACK_OBJECT_BIN) {
                m->body = val->via.bin.ptr;
                m->body_len = val->via.bin.size;
            }
        }
        #undef S_KEY
        seen |= bit;
    }
}

void
client_decode_mail (parley_client_t *self, parley_mail_batch_t *out)
{
    client_decode_mail_in (self, pmsg_root (self->reply), "messages", out,
                           &self->items, &self->items_size);
}

void
client_decode_mail_in (parley_client_t *self, const msgpack_object *map, const char *key,
                       parley_mail_batch_t *out, void **mail_items, size_t *mail_size)
{
    memset (out, 0, sizeof (*out));
    s_check_epoch (self);
    out->pending = pobj_uint (map, "pending", 0);
    out->acked = pobj_uint (map, "acked", 0);
    const msgpack_object *items = s_map_array (map, key);
    size_t n = items? items->via.array.size: 0;
    //  Not cleared here: s_mail_record clears each record it fills (a MAIL
    //  reply of 1,000 records is ~230 kB of them; clearing twice cost 2 %
    //  of a fan-out client's time).
    parley_mail_t *mail = (parley_mail_t *) s_items_raw (mail_items, mail_size,
                                                         n, sizeof (parley_mail_t));
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *item = &items->via.array.ptr [i];
        parley_mail_t *m = &mail [kept];
        s_mail_record (item, m);
        uint64_t seq = m->seq;
        if (self->dedup && seq != 0 && seq <= self->handed_seq) {
            self->stats.duplicates++;
            continue;
        }
        if (seq > self->handed_seq)
            self->handed_seq = seq;
        kept++;
    }
    out->messages = mail;
    out->count = kept;
}

//  A msgpack object packed into the arena.
static int
s_arena_write (void *data, const char *bytes, size_t len)
{
    client_arena_t *arena = (client_arena_t *) data;
    size_t at = s_arena_reserve (arena, len);
    memcpy (arena->data + at, bytes, len);
    return 0;
}

void
client_decode_state (parley_client_t *self, parley_state_t *out)
{
    memset (out, 0, sizeof (*out));
    out->seq = pmsg_uint (self->reply, "seq", 0);
    out->more = pmsg_bool (self->reply, "more", false);
    const msgpack_object *entries = s_array (self->reply, "entries");
    size_t n = entries? entries->via.array.size: 0;
    parley_entry_t *list = (parley_entry_t *) s_items (&self->items, &self->items_size,
                                                       n, sizeof (parley_entry_t));
    //  Offsets first (key, reducer, value), pointers once the arena is done.
    size_t *offs = (size_t *) s_items (&self->items2, &self->items2_size, n * 3, sizeof (size_t));
    msgpack_packer pk;
    msgpack_packer_init (&pk, &self->arena, s_arena_write);
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *e = &entries->via.array.ptr [i];
        size_t len = 0;
        const char *key = pobj_str (e, "key", &len);
        offs [i * 3] = s_arena_copy (&self->arena, key? key: "", key? len: 0);
        const char *reducer = pobj_str (e, "reducer", &len);
        offs [i * 3 + 1] = s_arena_copy (&self->arena, reducer? reducer: "", reducer? len: 0);
        list [i].seq = pobj_uint (e, "seq", 0);
        const msgpack_object *value = pobj_get (e, "value");
        if (value && value->type != MSGPACK_OBJECT_NIL) {
            offs [i * 3 + 2] = self->arena.used;
            msgpack_pack_object (&pk, *value);
            list [i].value_size = self->arena.used - offs [i * 3 + 2];
        }
    }
    for (size_t i = 0; i < n; i++) {
        list [i].key = self->arena.data + offs [i * 3];
        list [i].reducer = self->arena.data + offs [i * 3 + 1];
        list [i].value = list [i].value_size? self->arena.data + offs [i * 3 + 2]: NULL;
    }
    out->entries = list;
    out->count = n;
}

void
client_decode_observation (parley_client_t *self, parley_observation_t *out)
{
    client_decode_observation_in (self, pmsg_root (self->reply), out);
}

void
client_decode_observation_in (parley_client_t *self, const msgpack_object *map,
                              parley_observation_t *out)
{
    memset (out, 0, sizeof (*out));
    out->position = pobj_uint (map, "position", 0);
    out->x = pobj_uint (map, "x", out->position);
    out->y = pobj_uint (map, "y", 0);
    pobj_strcpy (map, "outcome", out->outcome, sizeof (out->outcome));
    out->explored = pobj_uint (map, "explored", 0);
    out->objects_total = pobj_uint (map, "objects_total", 0);
    out->coverage = pobj_num (map, "coverage", 0);
    out->done = pobj_bool (map, "done", false);
    size_t objects = s_strings (&self->arena, pobj_get (map, "objects"), &out->object_count);
    size_t fresh = s_strings (&self->arena, pobj_get (map, "new_objects"), &out->new_count);
    out->objects = s_table (&self->arena, objects, out->object_count);
    out->new_objects = s_table (&self->arena, fresh, out->new_count);
    //  The image stays in the reply (valid until the next call), and only
    //  with a type the protocol names.
    const msgpack_object *image = pobj_get (map, "image");
    char type [sizeof (out->image_type)] = "";
    pobj_strcpy (map, "image_type", type, sizeof (type));
    if (image && image->type == MSGPACK_OBJECT_BIN && image->via.bin.size > 0
    &&  (streq (type, "png") || streq (type, "jpeg"))) {
        out->image = image->via.bin.ptr;
        out->image_size = image->via.bin.size;
        snprintf (out->image_type, sizeof (out->image_type), "%s", type);
    }
}

const client_model_field_t client_model_fields [CLIENT_MODEL_FIELDS] = {
    { "model_calls", offsetof (parley_model_report_t, calls) },
    { "model_ok", offsetof (parley_model_report_t, ok) },
    { "model_failed", offsetof (parley_model_report_t, failed) },
    { "model_skipped", offsetof (parley_model_report_t, skipped) },
    { "model_retries", offsetof (parley_model_report_t, retries) },
    { "model_prompt_tokens", offsetof (parley_model_report_t, prompt_tokens) },
    { "model_completion_tokens", offsetof (parley_model_report_t, completion_tokens) },
    { "model_latency_ms", offsetof (parley_model_report_t, latency_ms) },
    { "model_latency_max_ms", offsetof (parley_model_report_t, latency_max_ms) },
};

//  An agent_info's model_* fields; false if it has none.
static bool
s_model_report (const msgpack_object *agent, parley_model_report_t *out)
{
    bool any = false;
    for (size_t f = 0; f < CLIENT_MODEL_FIELDS; f++) {
        const msgpack_object *o = pobj_get (agent, client_model_fields [f].name);
        if (!o)
            continue;
        any = true;
        *(uint64_t *) ((char *) out + client_model_fields [f].offset)
            = pobj_uint (agent, client_model_fields [f].name, 0);
    }
    return any;
}

void
client_decode_agents (parley_client_t *self, parley_agent_list_t *out)
{
    memset (out, 0, sizeof (*out));
    const msgpack_object *agents = s_array (self->reply, "agents");
    size_t n = agents? agents->via.array.size: 0;
    parley_agent_info_t *list = (parley_agent_info_t *)
        s_items (&self->items, &self->items_size, n, sizeof (parley_agent_info_t));
    size_t *tables = (size_t *) s_items (&self->items2, &self->items2_size, n, sizeof (size_t));
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *a = &agents->via.array.ptr [i];
        s_copy (a, "agent", list [i].agent, sizeof (list [i].agent));
        list [i].online = pobj_bool (a, "online", false);
        list [i].idle_ms = pobj_uint (a, "idle_ms", 0);
        list [i].pending = pobj_uint (a, "pending", 0);
        tables [i] = s_strings (&self->arena, pobj_get (a, "caps"), &list [i].cap_count);
        list [i].model_reported = s_model_report (a, &list [i].model);
        list [i].unacked = pobj_uint (a, "unacked", 0);
        list [i].inbox_bytes = pobj_uint (a, "inbox_bytes", 0);
        list [i].step = pobj_uint (a, "step", 0);
        list [i].acts = pobj_uint (a, "acts", 0);
    }
    for (size_t i = 0; i < n; i++)
        list [i].caps = s_table (&self->arena, tables [i], list [i].cap_count);
    out->agents = list;
    out->count = n;
}

//  STATS_REPLY's fields, by name and place in parley_stats_t.
typedef struct {
    const char *name;
    size_t offset;
    bool number;                //  double, else uint64_t
} s_stat_field_t;

#define STAT_U(f) { #f, offsetof (parley_stats_t, f), false }
#define STAT_N(f) { #f, offsetof (parley_stats_t, f), true }

static const s_stat_field_t s_stat_fields [] = {
    STAT_U (uptime_ms), STAT_U (agents), STAT_U (online), STAT_U (channels),
    STAT_U (queued), STAT_U (queued_bytes), STAT_U (delivered), STAT_U (dropped),
    STAT_U (rejected), STAT_U (msgs_in), STAT_U (msgs_out), STAT_U (state_keys),
    STAT_U (state_bytes), STAT_U (state_seq), STAT_U (mail_seq), STAT_U (errors),
    STAT_U (bad_frames), STAT_U (unroutable), STAT_U (requests), STAT_U (tap_seq),
    STAT_U (forgotten), STAT_N (rate_in), STAT_N (rate_out),
};

void
client_decode_stats (parley_client_t *self, parley_stats_t *out)
{
    memset (out, 0, sizeof (*out));
    for (size_t i = 0; i < sizeof (s_stat_fields) / sizeof (s_stat_fields [0]); i++) {
        const s_stat_field_t *f = &s_stat_fields [i];
        char *at = (char *) out + f->offset;
        if (f->number)
            *(double *) at = pmsg_num (self->reply, f->name, 0);
        else
            *(uint64_t *) at = pmsg_uint (self->reply, f->name, 0);
    }
}

//  For the decoders in other files (client_workflow.c).
size_t
client_arena_copy (client_arena_t *arena, const char *text, size_t len)
{
    return s_arena_copy (arena, text, len);
}

void *
client_items (void **items, size_t *have, size_t count, size_t size)
{
    return s_items (items, have, count, size);
}

size_t
client_arena_pack (client_arena_t *arena, const msgpack_object *value, size_t *size)
{
    msgpack_packer pk;
    msgpack_packer_init (&pk, arena, s_arena_write);
    size_t at = arena->used;
    msgpack_pack_object (&pk, *value);
    *size = arena->used - at;
    return at;
}
