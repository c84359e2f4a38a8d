// SPDX-License-Identifier: MIT
/*  stats - parley_stats_t and parley_stat_t: STATS as a list of every
    field the broker sent (parley/broker.h).

    The list walks the reply map itself rather than the schema: a field
    this library has never heard of still comes out, with its unit from
    the protocol's naming rule and an empty help sentence.
*/
#include <assert.h>
#include <string.h>
#include "arena.h"
#include "mem.h"
#include "stats_int.h"

struct _parley_stat_t {
    const client_arena_t *arena;
    size_t name, text, value;       //  offsets
    size_t value_size;
    parley_stat_kind_t kind;
    uint64_t uint_value;
    int64_t int_value;
    double num_value;
    const char *unit;               //  static
    const char *help;               //  the schema's
};

struct _parley_stats_t {
    client_arena_t *arena;
    parley_stat_t *fields;
    size_t count, cap;
};

const char *
parley_stat_unit_of (const char *name, parley_stat_kind_t kind)
{
    assert (name);
    if (kind == PARLEY_STAT_TEXT || kind == PARLEY_STAT_BOOL || kind == PARLEY_STAT_OTHER)
        return "";
    size_t len = strlen (name);
    if (len > 3 && strcmp (name + len - 3, "_ms") == 0)
        return "ms";
    if (len > 3 && strcmp (name + len - 3, "_us") == 0)
        return "us";
    if (strstr (name, "bytes"))
        return "bytes";
    if (strncmp (name, "rate_", 5) == 0)
        return "messages/s";
    if (len > 4 && strcmp (name + len - 4, "_seq") == 0)
        return "seq";
    return "count";
}

//  The protocol table's sentence for a STATS_REPLY field, "" if unknown.
static const char *
s_help (const char *name)
{
    const pschema_t *schema = pmsg_schema (PMSG_STATS_REPLY);
    for (size_t i = 0; schema && i < schema->count; i++)
        if (strcmp (schema->fields [i].name, name) == 0)
            return schema->fields [i].doc ? schema->fields [i].doc : "";
    return "";
}

parley_stats_t *
client_stats_new (void)
{
    parley_stats_t *self = (parley_stats_t *) client_mem_zalloc (sizeof (parley_stats_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_stats_destroy (parley_stats_t **self_p)
{
    assert (self_p);
    parley_stats_t *self = *self_p;
    if (self) {
        client_arena_destroy (&self->arena);
        client_mem_free (self->fields);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static void
s_field (parley_stat_t *f, client_arena_t *arena, const char *name, size_t len,
         const msgpack_object *v)
{
    *f = (parley_stat_t) { .arena = arena };
    f->name = client_arena_text (arena, name, len);
    switch (v->type) {
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            f->kind = PARLEY_STAT_UINT;
            f->uint_value = v->via.u64;
            f->num_value = (double) v->via.u64;
            break;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            f->kind = PARLEY_STAT_INT;
            f->int_value = v->via.i64;
            f->num_value = (double) v->via.i64;
            break;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            f->kind = PARLEY_STAT_NUM;
            f->num_value = v->via.f64;
            break;
        case MSGPACK_OBJECT_BOOLEAN:
            f->kind = PARLEY_STAT_BOOL;
            f->uint_value = v->via.boolean ? 1 : 0;
            f->num_value = (double) f->uint_value;
            break;
        case MSGPACK_OBJECT_STR:
            f->kind = PARLEY_STAT_TEXT;
            f->text = client_arena_str (arena, v);
            break;
        default:
            f->kind = PARLEY_STAT_OTHER;
            break;
    }
    f->value = client_arena_pack (arena, v, &f->value_size);
    f->unit = parley_stat_unit_of (client_arena_at (arena, f->name), f->kind);
    f->help = s_help (client_arena_at (arena, f->name));
}

parley_err_t
client_stats_decode (parley_stats_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    client_arena_reset (self->arena);
    self->count = 0;
    const msgpack_object *root = pmsg_root (reply);
    size_t n = root->type == MSGPACK_OBJECT_MAP ? root->via.map.size : 0;
    if (n > self->cap) {
        parley_stat_t *grown = (parley_stat_t *)
            client_mem_array (self->fields, n, sizeof (parley_stat_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->fields = grown;
        self->cap = n;
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr [i];
        if (kv->key.type != MSGPACK_OBJECT_STR)
            continue;
        const char *name = kv->key.via.str.ptr;
        size_t len = kv->key.via.str.size < PROTO_MAX_KEY ? kv->key.via.str.size : PROTO_MAX_KEY;
        //  The envelope is not a statistic.
        if ((len == 1 && (*name == 'v' || *name == 't')) || (len == 2 && memcmp (name, "id", 2) == 0))
            continue;
        s_field (&self->fields [count++], self->arena, name, len, &kv->val);
    }
    if (client_arena_failed (self->arena))
        return PARLEY_ERR_NOMEM;
    self->count = count;
    return PARLEY_OK;
}

size_t
parley_stats_count (const parley_stats_t *self)
{
    assert (self);
    return self->count;
}

const parley_stat_t *
parley_stats_at (const parley_stats_t *self, size_t index)
{
    assert (self);
    return index < self->count ? &self->fields [index] : NULL;
}

const parley_stat_t *
parley_stats_find (const parley_stats_t *self, const char *name)
{
    assert (self && name);
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (parley_stat_name (&self->fields [i]), name) == 0)
            return &self->fields [i];
    return NULL;
}

uint64_t
parley_stats_uint (const parley_stats_t *self, const char *name)
{
    const parley_stat_t *f = parley_stats_find (self, name);
    return f && (f->kind == PARLEY_STAT_UINT || f->kind == PARLEY_STAT_BOOL) ? f->uint_value : 0;
}

double
parley_stats_num (const parley_stats_t *self, const char *name)
{
    const parley_stat_t *f = parley_stats_find (self, name);
    return f ? f->num_value : 0;
}

const char *
parley_stat_name (const parley_stat_t *self)
{
    assert (self);
    return client_arena_at (self->arena, self->name);
}

#define S_FIELD(type, name, field) \
    type parley_stat_##name (const parley_stat_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (parley_stat_kind_t, kind, kind)
S_FIELD (uint64_t, uint, uint_value)
S_FIELD (int64_t, int, int_value)
S_FIELD (double, num, num_value)
S_FIELD (size_t, value_size, value_size)
S_FIELD (const char *, unit, unit)
S_FIELD (const char *, help, help)

const char *
parley_stat_text (const parley_stat_t *self)
{
    assert (self);
    return client_arena_at (self->arena, self->text);
}

const void *
parley_stat_value (const parley_stat_t *self)
{
    assert (self);
    return client_arena_at (self->arena, self->value);
}
