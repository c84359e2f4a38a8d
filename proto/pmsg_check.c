// SPDX-License-Identifier: MIT
/*  pcheck - schema validation of a decoded map. See pmsg_check.h.

    Rules (PROTOCOL.md section 2, "Strictness"):
      - keys of checked maps are strings; duplicates are MALFORMED;
      - nil means absent; a required field absent is BAD_FIELD;
      - a known field of the wrong kind is BAD_FIELD, over its length or
        element limit TOO_LARGE, a name breaking the name rules BAD_NAME;
      - unknown fields are ignored (but still may not be duplicated);
      - a record with both `to` and `channel` needs exactly one of them;
      - in requests, a required array may not be empty;
      - inside PF_ANY / PF_MAP values, map keys must be scalars and unique.
    Recursion follows the msgpack tree, which pwire_scan bounded to
    PROTO_MAX_DEPTH levels, so the C stack is bounded too.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg_check.h"

//  Below this many keys a quadratic duplicate scan beats allocating + sorting.
#define SMALL_MAP 8

void
pcheck_init (pcheck_t *self, msgpack_zone *zone, char *why, size_t why_size)
{
    memset (self, 0, sizeof (*self));
    self->zone = zone;
    self->why = why;
    self->why_size = why_size;
    self->type_name = "frame";
}

perr_t
pcheck_fail (pcheck_t *self, perr_t code, const char *format, ...)
{
    if (!self->why || self->why_size == 0)
        return code;
    int used = snprintf (self->why, self->why_size, "%s", self->type_name);
    for (unsigned i = 0; i < self->depth && used >= 0 && (size_t) used < self->why_size; i++) {
        if (self->index [i] >= 0)
            used += snprintf (self->why + used, self->why_size - used, ".%s[%ld]",
                              self->field [i], self->index [i]);
        else
            used += snprintf (self->why + used, self->why_size - used, ".%s",
                              self->field [i]);
    }
    if (used >= 0 && (size_t) used + 2 < self->why_size) {
        memcpy (self->why + used, ": ", 3);
        used += 2;
        va_list args;
        va_start (args, format);
        vsnprintf (self->why + used, self->why_size - used, format, args);
        va_end (args);
    }
    return code;
}

static const char *
s_kind_name (int type)
{
    switch (type) {
        case MSGPACK_OBJECT_NIL: return "nil";
        case MSGPACK_OBJECT_BOOLEAN: return "bool";
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return "uint";
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative int";
        case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return "float";
        case MSGPACK_OBJECT_STR: return "str";
        case MSGPACK_OBJECT_ARRAY: return "array";
        case MSGPACK_OBJECT_MAP: return "map";
        case MSGPACK_OBJECT_BIN: return "bin";
        case MSGPACK_OBJECT_EXT: return "ext";
        default: return "unknown";
    }
}

static perr_t
s_wrong (pcheck_t *self, const char *expected, const msgpack_object *value)
{
    return pcheck_fail (self, PERR_BAD_FIELD, "expected %s, got %s", expected,
                        s_kind_name (value->type));
}

// ---------------------------------------------------------------------------
//  Duplicate keys, by sorting. Scalar keys only: an array or map as a key
//  has no use in this protocol and is rejected.

static int
s_rank (const msgpack_object *o)
{
    return (int) o->type;
}

//  msgpack-c gives an empty str, bin or ext a NULL pointer, and memcmp
//  with NULL is undefined even for length 0: compare only when both have
//  bytes.
static int
s_bytes_cmp (const char *a, uint32_t alen, const char *b, uint32_t blen)
{
    uint32_t common = alen < blen ? alen : blen;
    int c = common ? memcmp (a, b, common) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int
s_key_cmp (const void *pa, const void *pb)
{
    const msgpack_object *a = *(const msgpack_object * const *) pa;
    const msgpack_object *b = *(const msgpack_object * const *) pb;
    if (s_rank (a) != s_rank (b))
        return s_rank (a) < s_rank (b) ? -1 : 1;
    switch (a->type) {
        case MSGPACK_OBJECT_STR:
        case MSGPACK_OBJECT_BIN:
            return s_bytes_cmp (a->via.str.ptr, a->via.str.size, b->via.str.ptr, b->via.str.size);
        case MSGPACK_OBJECT_EXT:
            if (a->via.ext.type != b->via.ext.type)
                return a->via.ext.type < b->via.ext.type ? -1 : 1;
            return s_bytes_cmp (a->via.ext.ptr, a->via.ext.size, b->via.ext.ptr, b->via.ext.size);
        case MSGPACK_OBJECT_BOOLEAN:
            return (int) a->via.boolean - (int) b->via.boolean;
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            return a->via.u64 < b->via.u64 ? -1 : a->via.u64 > b->via.u64;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return a->via.i64 < b->via.i64 ? -1 : a->via.i64 > b->via.i64;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            return memcmp (&a->via.f64, &b->via.f64, sizeof (double));
        default:
            return 0;               //  nil == nil
    }
}

//  keys: `count` key pointers (zone scratch). Sorts them in place.
static perr_t
s_no_duplicates (pcheck_t *self, const msgpack_object **keys, size_t count)
{
    if (count <= SMALL_MAP) {
        for (size_t i = 0; i < count; i++)
            for (size_t j = i + 1; j < count; j++)
                if (s_key_cmp (&keys [i], &keys [j]) == 0)
                    goto duplicate;
        return PERR_NONE;
    }
    qsort (keys, count, sizeof (keys [0]), s_key_cmp);
    for (size_t i = 1; i < count; i++)
        if (s_key_cmp (&keys [i - 1], &keys [i]) == 0)
            goto duplicate;
    return PERR_NONE;
duplicate:
    return pcheck_fail (self, PERR_MALFORMED, "duplicate map key");
}

static const msgpack_object **
s_scratch (pcheck_t *self, size_t count)
{
    return msgpack_zone_malloc (self->zone, count * sizeof (msgpack_object *));
}

//  Any value: maps anywhere inside need unique scalar keys.
static perr_t
s_check_any (pcheck_t *self, const msgpack_object *value)
{
    if (value->type == MSGPACK_OBJECT_ARRAY) {
        for (uint32_t i = 0; i < value->via.array.size; i++) {
            perr_t rc = s_check_any (self, &value->via.array.ptr [i]);
            if (rc)
                return rc;
        }
        return PERR_NONE;
    }
    if (value->type != MSGPACK_OBJECT_MAP || value->via.map.size == 0)
        return PERR_NONE;
    uint32_t n = value->via.map.size;
    const msgpack_object **keys = s_scratch (self, n);
    if (!keys)
        return pcheck_fail (self, PERR_INTERNAL, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object_kv *kv = &value->via.map.ptr [i];
        if (kv->key.type == MSGPACK_OBJECT_ARRAY || kv->key.type == MSGPACK_OBJECT_MAP)
            return pcheck_fail (self, PERR_BAD_FIELD, "map keys must be scalars, not %s",
                                s_kind_name (kv->key.type));
        keys [i] = &kv->key;
        perr_t rc = s_check_any (self, &kv->val);
        if (rc)
            return rc;
    }
    return s_no_duplicates (self, keys, n);
}

// ---------------------------------------------------------------------------
//  Field kinds

static perr_t
s_check_str (pcheck_t *self, const msgpack_object *value, size_t max, bool bin_ok)
{
    if (value->type != MSGPACK_OBJECT_STR
    && !(bin_ok && value->type == MSGPACK_OBJECT_BIN))
        return s_wrong (self, bin_ok ? "str or bin" : "str", value);
    if (value->via.str.size > max)
        return pcheck_fail (self, PERR_TOO_LARGE, "%u bytes, over the %zu-byte limit",
                            value->via.str.size, max);
    return PERR_NONE;
}

static perr_t
s_check_name (pcheck_t *self, const msgpack_object *value, size_t max)
{
    perr_t rc = s_check_str (self, value, max, false);
    if (rc)
        return rc;
    if (!pmsg_name_valid (value->via.str.ptr, value->via.str.size))
        return pcheck_fail (self, PERR_BAD_NAME, "\"%.*s\" is not a valid name "
                            "(1-64 bytes of A-Z a-z 0-9 _ . : -, not starting with . or -)",
                            (int) value->via.str.size, value->via.str.ptr);
    return PERR_NONE;
}

static perr_t
s_check_array (pcheck_t *self, const pfield_t *field, const msgpack_object *value,
               size_t max)
{
    if (value->type != MSGPACK_OBJECT_ARRAY)
        return s_wrong (self, "array", value);
    if (value->via.array.size > max)
        return pcheck_fail (self, PERR_TOO_LARGE, "%u elements, over the limit of %zu",
                            value->via.array.size, max);
    if (value->via.array.size == 0 && field->required && self->request)
        return pcheck_fail (self, PERR_BAD_FIELD, "must not be empty");
    return PERR_NONE;
}

//  Elements of STR_ARRAY, UINT_ARRAY and REC_ARRAY, each with its index in
//  the path.
static perr_t
s_check_elements (pcheck_t *self, const pfield_t *field, const msgpack_object *array)
{
    unsigned level = self->depth - 1;
    perr_t rc = PERR_NONE;
    for (uint32_t i = 0; i < array->via.array.size && !rc; i++) {
        const msgpack_object *element = &array->via.array.ptr [i];
        self->index [level] = i;
        if (field->kind == PF_STR_ARRAY)
            rc = s_check_str (self, element, PROTO_MAX_KEY, false);
        else
        if (field->kind == PF_UINT_ARRAY) {
            if (element->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                rc = s_wrong (self, "uint", element);
        }
        else
        if (element->type != MSGPACK_OBJECT_MAP)
            rc = s_wrong (self, "map", element);
        else
            rc = pcheck_map (self, element, field->rec, false);
    }
    if (!rc)
        self->index [level] = -1;
    return rc;
}

static perr_t
s_check_value (pcheck_t *self, const pfield_t *field, const msgpack_object *value)
{
    int type = value->type;
    switch (field->kind) {
        case PF_UINT:
            return type == MSGPACK_OBJECT_POSITIVE_INTEGER ? 0 : s_wrong (self, "uint", value);
        case PF_INT:
            return type == MSGPACK_OBJECT_POSITIVE_INTEGER
                || type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? 0 : s_wrong (self, "int", value);
        case PF_NUM:
            return type == MSGPACK_OBJECT_POSITIVE_INTEGER
                || type == MSGPACK_OBJECT_NEGATIVE_INTEGER
                || type == MSGPACK_OBJECT_FLOAT32
                || type == MSGPACK_OBJECT_FLOAT64 ? 0 : s_wrong (self, "number", value);
        case PF_BOOL:
            return type == MSGPACK_OBJECT_BOOLEAN ? 0 : s_wrong (self, "bool", value);
        case PF_STR:
            return s_check_str (self, value, field->max ? field->max : PROTO_MAX_TEXT, false);
        case PF_NAME:
            return s_check_name (self, value, field->max ? field->max : PROTO_MAX_NAME);
        case PF_BODY:
            return s_check_str (self, value, field->max ? field->max : PROTO_MAX_BODY, true);
        case PF_ANY:
            return s_check_any (self, value);
        case PF_MAP:
            if (type != MSGPACK_OBJECT_MAP)
                return s_wrong (self, "map", value);
            for (uint32_t i = 0; i < value->via.map.size; i++)
                if (value->via.map.ptr [i].key.type != MSGPACK_OBJECT_STR)
                    return pcheck_fail (self, PERR_BAD_FIELD, "map keys must be strings");
            return s_check_any (self, value);
        case PF_REC:
            if (type != MSGPACK_OBJECT_MAP)
                return s_wrong (self, "map", value);
            return pcheck_map (self, value, field->rec, false);
        case PF_STR_ARRAY:
        case PF_UINT_ARRAY:
        case PF_REC_ARRAY: {
            perr_t rc = s_check_array (self, field, value,
                                       field->max ? field->max : PROTO_MAX_BATCH);
            return rc ? rc : s_check_elements (self, field, value);
        }
    }
    return pcheck_fail (self, PERR_INTERNAL, "schema has an unknown field kind");
}

// ---------------------------------------------------------------------------
//  Maps

//  A str key equal to the NUL-terminated schema name, without strlen: the
//  first differing byte (usually the first) ends it. A key holding a NUL
//  never matches, since the name's NUL ends the compare first.
static inline bool
s_key_is (const msgpack_object *key, const char *name)
{
    const char *bytes = key->via.str.ptr;
    uint32_t size = key->via.str.size;
    for (uint32_t i = 0; i < size; i++)
        if (name [i] == 0 || name [i] != bytes [i])
            return false;
    return name [size] == 0;
}

//  The schema index of `key`, or -1. Encoders write a record's fields in
//  schema order, so the field after the previous hit (*hint) is tried
//  first: one compare per key in the usual case, a scan otherwise.
static int
s_find_field (const pschema_t *schema, const msgpack_object *key, size_t *hint)
{
    size_t count = schema->count;
    size_t first = *hint < count ? *hint : 0;
    for (size_t n = 0, i = first; n < count; n++, i = i + 1 < count ? i + 1 : 0)
        if (s_key_is (key, schema->fields [i].name)) {
            *hint = i + 1;
            return (int) i;
        }
    return -1;
}

static bool
s_is_envelope (const msgpack_object *key)
{
    return key->via.str.size <= 2
        && (s_key_is (key, "v") || s_key_is (key, "t") || s_key_is (key, "id"));
}

//  Unknown keys are few in practice; only when there are several do we
//  collect and sort them.
static perr_t
s_unknown_unique (pcheck_t *self, const msgpack_object *map, const pschema_t *schema,
                  bool envelope, size_t unknown)
{
    if (unknown < 2)
        return PERR_NONE;
    const msgpack_object **keys = s_scratch (self, unknown);
    if (!keys)
        return pcheck_fail (self, PERR_INTERNAL, "out of memory");
    size_t n = 0, hint = 0;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *key = &map->via.map.ptr [i].key;
        if (s_find_field (schema, key, &hint) < 0 && !(envelope && s_is_envelope (key)))
            keys [n++] = key;
    }
    return s_no_duplicates (self, keys, n);
}

//  Exactly one of `to` and `channel`, in records that have both.
static perr_t
s_check_one_of (pcheck_t *self, const pschema_t *schema, uint64_t present)
{
    //  The positions of the two in the schema, remembered for the last
    //  schema seen by this thread: a MAIL or SEND batch checks thousands
    //  of records of one schema in a row.
    static _Thread_local const pschema_t *last;
    static _Thread_local int last_to, last_channel;
    if (schema != last) {
        last_to = last_channel = -1;
        for (size_t i = 0; i < schema->count; i++) {
            const char *name = schema->fields [i].name;
            if (strcmp (name, "to") == 0)
                last_to = (int) i;
            else
            if (strcmp (name, "channel") == 0)
                last_channel = (int) i;
        }
        last = schema;
    }
    int to = last_to, channel = last_channel;
    if (to < 0 || channel < 0)
        return PERR_NONE;
    bool has_to = present & (1ull << to), has_channel = present & (1ull << channel);
    if (has_to == has_channel)
        return pcheck_fail (self, PERR_BAD_FIELD, "needs exactly one of \"to\" and \"channel\"");
    return PERR_NONE;
}

static perr_t
s_check_fields (pcheck_t *self, const msgpack_object *map, const pschema_t *schema,
                bool envelope, uint64_t *present, size_t *unknown)
{
    uint64_t seen = 0;
    size_t hint = 0;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *key = &map->via.map.ptr [i].key;
        const msgpack_object *val = &map->via.map.ptr [i].val;
        if (key->type != MSGPACK_OBJECT_STR)
            return pcheck_fail (self, PERR_MALFORMED, "key %u is not a string", i);
        int index = s_find_field (schema, key, &hint);
        if (index < 0) {
            if (!(envelope && s_is_envelope (key)))
                (*unknown)++;
            continue;
        }
        if (seen & (1ull << index))
            return pcheck_fail (self, PERR_MALFORMED, "duplicate key \"%s\"",
                                schema->fields [index].name);
        seen |= 1ull << index;
        if (val->type == MSGPACK_OBJECT_NIL)
            continue;                       //  nil means absent
        *present |= 1ull << index;
        self->field [self->depth] = schema->fields [index].name;
        self->index [self->depth] = -1;
        self->depth++;
        perr_t rc = s_check_value (self, &schema->fields [index], val);
        self->depth--;
        if (rc)
            return rc;
    }
    return PERR_NONE;
}

perr_t
pcheck_map (pcheck_t *self, const msgpack_object *map, const pschema_t *schema,
            bool envelope)
{
    assert (schema && schema->count <= 64);
    assert (map->type == MSGPACK_OBJECT_MAP);
    if (self->depth >= PCHECK_PATH)
        return pcheck_fail (self, PERR_INTERNAL, "schema nests records too deeply");
    uint64_t present = 0;
    size_t unknown = 0;
    perr_t rc = s_check_fields (self, map, schema, envelope, &present, &unknown);
    if (!rc)
        rc = s_unknown_unique (self, map, schema, envelope, unknown);
    for (size_t i = 0; i < schema->count && !rc; i++)
        if (schema->fields [i].required && !(present & (1ull << i)))
            rc = pcheck_fail (self, PERR_BAD_FIELD, "missing required field \"%s\"",
                              schema->fields [i].name);
    if (!rc)
        rc = s_check_one_of (self, schema, present);
    return rc;
}
