// SPDX-License-Identifier: MIT
/*  reducer - stored state values and the five reducers. See reducer.h for
    the layout and what each reducer costs.
*/
#include "reducer.h"

static const char *s_reducer_names [STATE_REDUCER__COUNT] = {
    "replace", "append", "union", "merge", "add"
};

const char *
state_reducer_name (state_reducer_t reducer)
{
    return (unsigned) reducer < STATE_REDUCER__COUNT? s_reducer_names [reducer]: "?";
}

bool
state_reducer_from_name (const char *name, size_t len, state_reducer_t *reducer)
{
    for (int i = 0; name && i < STATE_REDUCER__COUNT; i++)
        if (strlen (s_reducer_names [i]) == len && memcmp (s_reducer_names [i], name, len) == 0) {
            *reducer = (state_reducer_t) i;
            return true;
        }
    return false;
}
#include <string.h>

// ---------------------------------------------------------------------------
//  Binary keys for zhashx: union members and merge key sets. Lookups pass a
//  blob_t view on the caller's bytes; the hash stores its own copy.

typedef struct {
    size_t len;
    const char *bytes;
} blob_t;

static size_t
s_blob_hash (const void *key)
{
    const blob_t *blob = (const blob_t *) key;
    uint64_t hash = 14695981039346656037ULL;            //  FNV-1a
    for (size_t i = 0; i < blob->len; i++) {
        hash ^= (unsigned char) blob->bytes [i];
        hash *= 1099511628211ULL;
    }
    return (size_t) hash;
}

static int
s_blob_compare (const void *item1, const void *item2)
{
    const blob_t *a = (const blob_t *) item1;
    const blob_t *b = (const blob_t *) item2;
    if (a->len != b->len)
        return a->len < b->len? -1: 1;
    return memcmp (a->bytes, b->bytes, a->len);
}

static void *
s_blob_dup (const void *key)
{
    const blob_t *blob = (const blob_t *) key;
    blob_t *copy = (blob_t *) malloc (sizeof (blob_t) + blob->len + 1);
    if (!copy)
        return NULL;
    char *bytes = (char *) (copy + 1);
    memcpy (bytes, blob->bytes, blob->len);
    copy->len = blob->len;
    copy->bytes = bytes;
    return copy;
}

static void
s_blob_free (void **key_p)
{
    free (*key_p);
    *key_p = NULL;
}

static zhashx_t *
s_blob_set_new (void)
{
    zhashx_t *set = zhashx_new ();
    if (!set)
        return NULL;
    zhashx_set_key_hasher (set, s_blob_hash);
    zhashx_set_key_comparator (set, s_blob_compare);
    zhashx_set_key_duplicator (set, s_blob_dup);
    zhashx_set_key_destructor (set, s_blob_free);
    return set;
}

// ---------------------------------------------------------------------------
//  Buffer

void
sval_init (sval_t *self)
{
    assert (self);
    memset (self, 0, sizeof (*self));
}

void
sval_free (sval_t *self)
{
    assert (self);
    free (self->data);
    zhashx_destroy (&self->members);
    sval_init (self);
}

const void *
sval_bytes (const sval_t *self)
{
    return self->data + self->head;
}

size_t
sval_size (const sval_t *self)
{
    return self->size - self->head;
}

size_t
sval_footprint (const sval_t *self)
{
    size_t size = sval_size (self);
    if (self->members)
        size += (self->size - SVAL_HEAD)
              + zhashx_size (self->members) * SVAL_MEMBER_COST;
    return size;
}

static int
s_sval_reserve (sval_t *self, size_t extra)
{
    if (self->size + extra <= self->cap)
        return 0;
    size_t cap = self->cap? self->cap * 2: 64;
    if (cap < self->size + extra)
        cap = self->size + extra;
    char *data = (char *) realloc (self->data, cap);
    if (!data)
        return -1;
    self->data = data;
    self->cap = cap;
    return 0;
}

//  Empty buffer with the header room reserved.
static int
s_sval_start (sval_t *self)
{
    if (s_sval_reserve (self, SVAL_HEAD + 16))
        return -1;
    self->head = self->size = SVAL_HEAD;
    self->count = 0;
    return 0;
}

static int
s_sval_write (void *data, const char *buf, size_t len)
{
    sval_t *self = (sval_t *) data;
    if (s_sval_reserve (self, len))
        return -1;
    if (len)                    //  an empty str body may come as NULL
        memcpy (self->data + self->size, buf, len);
    self->size += len;
    return 0;
}

static void
s_sval_packer (sval_t *self, msgpack_packer *pk)
{
    msgpack_packer_init (pk, self, s_sval_write);
}

//  Rewrites the array header for `count`, right-aligned before the body.
static void
s_sval_header (sval_t *self)
{
    unsigned char *end = (unsigned char *) self->data + SVAL_HEAD;
    uint32_t n = self->count;
    if (n <= 15) {
        end [-1] = (unsigned char) (0x90 | n);
        self->head = SVAL_HEAD - 1;
    }
    else
    if (n <= 0xffff) {
        end [-3] = 0xdc;
        end [-2] = (unsigned char) (n >> 8);
        end [-1] = (unsigned char) n;
        self->head = SVAL_HEAD - 3;
    }
    else {
        end [-5] = 0xdd;
        end [-4] = (unsigned char) (n >> 24);
        end [-3] = (unsigned char) (n >> 16);
        end [-2] = (unsigned char) (n >> 8);
        end [-1] = (unsigned char) n;
        self->head = SVAL_HEAD - 5;
    }
}

// ---------------------------------------------------------------------------
//  Shapes

static const char *
s_type_name (const msgpack_object *o)
{
    switch (o->type) {
        case MSGPACK_OBJECT_NIL: return "nil";
        case MSGPACK_OBJECT_BOOLEAN: return "a bool";
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "an integer";
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64: return "a float";
        case MSGPACK_OBJECT_STR: return "a string";
        case MSGPACK_OBJECT_BIN: return "binary";
        case MSGPACK_OBJECT_ARRAY: return "an array";
        case MSGPACK_OBJECT_MAP: return "a map";
        default: return "an ext value";
    }
}

static bool
s_is_number (const msgpack_object *o)
{
    return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER
        || o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
        || o->type == MSGPACK_OBJECT_FLOAT32
        || o->type == MSGPACK_OBJECT_FLOAT64;
}

perr_t
reducer_check (state_reducer_t reducer, const msgpack_object *value,
               char *why, size_t why_size)
{
    const char *need = NULL;
    switch (reducer) {
        case STATE_REPLACE:
            return PERR_NONE;
        case STATE_APPEND:
        case STATE_UNION:
            if (value->type != MSGPACK_OBJECT_ARRAY)
                need = "an array";
            break;
        case STATE_MERGE:
            if (value->type != MSGPACK_OBJECT_MAP)
                need = "a map with string keys";
            else
            for (uint32_t i = 0; i < value->via.map.size; i++)
                if (value->via.map.ptr [i].key.type != MSGPACK_OBJECT_STR) {
                    snprintf (why, why_size, "reducer merge needs string keys; "
                              "key %u is %s", i, s_type_name (&value->via.map.ptr [i].key));
                    return PERR_REDUCER_MISMATCH;
                }
            break;
        case STATE_ADD:
            if (!s_is_number (value))
                need = "a number";
            break;
        default:
            snprintf (why, why_size, "unknown reducer %d", (int) reducer);
            return PERR_INTERNAL;
    }
    if (need) {
        snprintf (why, why_size, "reducer %s needs %s, got %s",
                  state_reducer_name (reducer), need, s_type_name (value));
        return PERR_REDUCER_MISMATCH;
    }
    return PERR_NONE;
}

static perr_t
s_out_of_memory (char *why, size_t why_size)
{
    snprintf (why, why_size, "out of memory while building a state value");
    return PERR_INTERNAL;
}

// ---------------------------------------------------------------------------
//  Append and union

perr_t
sval_extend (sval_t *self, state_reducer_t reducer, const msgpack_object *value,
             char *why, size_t why_size)
{
    assert (reducer == STATE_APPEND || reducer == STATE_UNION);
    perr_t rc = reducer_check (reducer, value, why, why_size);
    if (rc)
        return rc;
    size_t old_size = self->size;
    uint32_t old_count = self->count;
    msgpack_packer pk;
    s_sval_packer (self, &pk);
    for (uint32_t i = 0; i < value->via.array.size; i++) {
        size_t at = self->size;
        if (msgpack_pack_object (&pk, value->via.array.ptr [i]))
            goto oom;
        if (reducer == STATE_UNION) {
            blob_t blob = { self->size - at, self->data + at };
            if (zhashx_lookup (self->members, &blob)) {
                self->size = at;            //  already present: drop it
                continue;
            }
            if (zhashx_insert (self->members, &blob, (void *) 1))
                goto oom;
        }
        self->count++;
    }
    s_sval_header (self);
    return PERR_NONE;
oom:
    sval_truncate (self, old_size, old_count);
    return s_out_of_memory (why, why_size);
}

void
sval_truncate (sval_t *self, size_t size, uint32_t count)
{
    assert (size <= self->size);
    if (self->members && size < self->size) {
        //  Forget the members in the tail; each element is one msgpack value.
        msgpack_unpacked result;
        msgpack_unpacked_init (&result);
        size_t offset = size;
        while (offset < self->size) {
            size_t start = offset;
            if (msgpack_unpack_next (&result, self->data, self->size, &offset)
                != MSGPACK_UNPACK_SUCCESS)
                break;                      //  cannot happen: we packed it
            blob_t blob = { offset - start, self->data + start };
            zhashx_delete (self->members, &blob);
        }
        msgpack_unpacked_destroy (&result);
    }
    self->size = size;
    self->count = count;
    s_sval_header (self);
}

// ---------------------------------------------------------------------------
//  Merge

//  Decodes a stored value; the caller destroys `result`.
static bool
s_sval_decode (const sval_t *self, msgpack_unpacked *result)
{
    size_t offset = 0;
    msgpack_unpacked_init (result);
    return msgpack_unpack_next (result, (const char *) sval_bytes (self),
                                sval_size (self), &offset) == MSGPACK_UNPACK_SUCCESS;
}

static blob_t
s_key_blob (const msgpack_object *key)
{
    blob_t blob = { key->via.str.size, key->via.str.ptr };
    return blob;
}

//  old may be NULL (empty map). Keys keep their old order; new keys follow
//  in the update's order; a key repeated in the update takes its last value.
perr_t
sval_merge (const sval_t *old, const msgpack_object *value, sval_t *out,
            char *why, size_t why_size)
{
    perr_t rc = reducer_check (STATE_MERGE, value, why, why_size);
    if (rc)
        return rc;
    msgpack_unpacked decoded;
    msgpack_object_map empty = { 0, NULL };
    const msgpack_object_map *was = &empty;
    bool have_old = old != NULL;
    if (have_old && s_sval_decode (old, &decoded) && decoded.data.type == MSGPACK_OBJECT_MAP)
        was = &decoded.data.via.map;
    zhashx_t *update = s_blob_set_new ();
    zhashx_t *seen = s_blob_set_new ();
    rc = PERR_INTERNAL;
    if (!update || !seen || s_sval_start (out))
        goto done;
    const msgpack_object_map *upd = &value->via.map;
    for (uint32_t i = 0; i < upd->size; i++) {
        blob_t blob = s_key_blob (&upd->ptr [i].key);
        zhashx_update (update, &blob, (void *) (uintptr_t) (i + 1));
    }
    uint32_t count = was->size;
    for (uint32_t i = 0; i < was->size; i++) {
        blob_t blob = s_key_blob (&was->ptr [i].key);
        zhashx_insert (seen, &blob, (void *) 1);
    }
    for (uint32_t i = 0; i < upd->size; i++) {
        blob_t blob = s_key_blob (&upd->ptr [i].key);
        if ((uintptr_t) zhashx_lookup (update, &blob) == i + 1 && !zhashx_lookup (seen, &blob))
            count++;
    }
    msgpack_packer pk;
    s_sval_packer (out, &pk);
    int fail = msgpack_pack_map (&pk, count);
    for (uint32_t i = 0; i < was->size && !fail; i++) {
        blob_t blob = s_key_blob (&was->ptr [i].key);
        uintptr_t at = (uintptr_t) zhashx_lookup (update, &blob);
        fail |= msgpack_pack_object (&pk, was->ptr [i].key);
        fail |= msgpack_pack_object (&pk, at? upd->ptr [at - 1].val: was->ptr [i].val);
    }
    for (uint32_t i = 0; i < upd->size && !fail; i++) {
        blob_t blob = s_key_blob (&upd->ptr [i].key);
        if ((uintptr_t) zhashx_lookup (update, &blob) == i + 1 && !zhashx_lookup (seen, &blob)) {
            fail |= msgpack_pack_object (&pk, upd->ptr [i].key);
            fail |= msgpack_pack_object (&pk, upd->ptr [i].val);
        }
    }
    rc = fail? PERR_INTERNAL: PERR_NONE;
done:
    if (rc == PERR_INTERNAL) {
        sval_free (out);
        s_out_of_memory (why, why_size);
    }
    zhashx_destroy (&update);
    zhashx_destroy (&seen);
    if (have_old)
        msgpack_unpacked_destroy (&decoded);
    return rc;
}

// ---------------------------------------------------------------------------
//  Add: int + int stays an integer (overflow is refused, not wrapped);
//  anything with a float gives a float64.

static double
s_as_double (const msgpack_object *o)
{
    switch (o->type) {
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double) o->via.u64;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double) o->via.i64;
        default: return o->via.f64;
    }
}

static __int128
s_as_int (const msgpack_object *o)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        return (__int128) o->via.u64;
    return (__int128) o->via.i64;
}

static bool
s_is_float (const msgpack_object *o)
{
    return o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64;
}

perr_t
sval_add (const sval_t *old, const msgpack_object *value, sval_t *out,
          char *why, size_t why_size)
{
    perr_t rc = reducer_check (STATE_ADD, value, why, why_size);
    if (rc)
        return rc;
    msgpack_unpacked decoded;
    if (!s_sval_decode (old, &decoded) || !s_is_number (&decoded.data)) {
        msgpack_unpacked_destroy (&decoded);
        snprintf (why, why_size, "stored counter is not a number");
        return PERR_INTERNAL;
    }
    const msgpack_object *was = &decoded.data;
    int fail = s_sval_start (out);
    msgpack_packer pk;
    s_sval_packer (out, &pk);
    if (fail)
        rc = s_out_of_memory (why, why_size);
    else
    if (s_is_float (was) || s_is_float (value))
        fail = msgpack_pack_double (&pk, s_as_double (was) + s_as_double (value));
    else {
        __int128 sum = s_as_int (was) + s_as_int (value);
        if (sum > (__int128) UINT64_MAX || sum < (__int128) INT64_MIN) {
            snprintf (why, why_size, "reducer add: the sum would overflow a 64-bit integer");
            rc = PERR_REDUCER_MISMATCH;
        }
        else
        if (sum >= 0)
            fail = msgpack_pack_uint64 (&pk, (uint64_t) sum);
        else
            fail = msgpack_pack_int64 (&pk, (int64_t) sum);
    }
    if (fail && !rc)
        rc = s_out_of_memory (why, why_size);
    if (rc)
        sval_free (out);
    msgpack_unpacked_destroy (&decoded);
    return rc;
}

// ---------------------------------------------------------------------------
//  Fresh values: set, clear, declare, first update

perr_t
sval_build (sval_t *out, state_reducer_t reducer, const msgpack_object *value,
            char *why, size_t why_size)
{
    if (value) {
        perr_t rc = reducer_check (reducer, value, why, why_size);
        if (rc)
            return rc;
    }
    if (reducer == STATE_MERGE) {
        msgpack_object empty = { .type = MSGPACK_OBJECT_MAP };
        return sval_merge (NULL, value? value: &empty, out, why, why_size);
    }
    if (s_sval_start (out))
        return s_out_of_memory (why, why_size);
    msgpack_packer pk;
    s_sval_packer (out, &pk);
    int fail = 0;
    if (reducer == STATE_APPEND || reducer == STATE_UNION) {
        if (reducer == STATE_UNION && !(out->members = s_blob_set_new ()))
            fail = 1;
        s_sval_header (out);
        if (!fail && value) {
            perr_t rc = sval_extend (out, reducer, value, why, why_size);
            if (rc) {
                sval_free (out);
                return rc;
            }
        }
    }
    else
    if (reducer == STATE_ADD)
        fail = value? msgpack_pack_object (&pk, *value): msgpack_pack_int (&pk, 0);
    else
        fail = value? msgpack_pack_object (&pk, *value): msgpack_pack_nil (&pk);
    if (fail) {
        sval_free (out);
        return s_out_of_memory (why, why_size);
    }
    return PERR_NONE;
}
