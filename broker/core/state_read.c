// SPDX-License-Identifier: MIT
/*  state_read - GET and SNAPSHOT on the state, and the encoders for STATE
    entries and STATE_UPDATE events. Values are copied as stored bytes
    (penc_raw), never re-encoded.

    Consistency: the broker is single-threaded, so everything read between
    two writes is consistent with state_seq() - the `seq` a STATE reply
    carries.
*/
#include "state_int.h"
#include <stdint.h>
#include <string.h>

static void
s_entry_view (const entry_t *entry, state_entry_t *view)
{
    view->key = entry->key;
    view->reducer = entry->reducer;
    view->seq = entry->seq;
    view->value = sval_bytes (&entry->val);
    view->size = sval_size (&entry->val);
}

bool
state_get (state_t *self, const char *key, state_entry_t *entry)
{
    assert (self && key);
    entry_t *found = (entry_t *) zhashx_lookup (self->entries, key);
    if (found && entry)
        s_entry_view (found, entry);
    return found != NULL;
}

static const char *s_get_key (const msgpack_object *o, char *buf);

static int
s_compare_entries (const void *a, const void *b)
{
    const entry_t *x = *(const entry_t *const *) a;
    const entry_t *y = *(const entry_t *const *) b;
    return strcmp (x->key, y->key);
}

//  The entries matching prefix, sorted; caller frees the array. NULL with
//  *count 0 when none (or out of memory, logged by the caller's emptiness).
static entry_t **
s_collect (state_t *self, const char *prefix, size_t len, size_t *count)
{
    *count = 0;
    size_t total = zhashx_size (self->entries);
    entry_t **found = total? (entry_t **) malloc (total * sizeof (entry_t *)): NULL;
    if (!found)
        return NULL;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (!prefix || strncmp (entry->key, prefix, len) == 0)
            //  strncmp stops at a NUL in prefix; keys have none, so a prefix
            //  with a NUL byte matches keys equal up to it - harmless.
            found [(*count)++] = entry;
    qsort (found, *count, sizeof (entry_t *), s_compare_entries);
    return found;
}

size_t
state_foreach_prefix (state_t *self, const char *prefix, size_t len,
                      state_visit_fn *fn, void *arg)
{
    assert (self && fn);
    size_t count;
    entry_t **found = s_collect (self, len? prefix: NULL, len, &count);
    for (size_t i = 0; i < count; i++) {
        state_entry_t view;
        s_entry_view (found [i], &view);
        fn (&view, arg);
    }
    free (found);
    return count;
}

void
state_encode_entry (const state_entry_t *entry, penc_t *enc)
{
    msgpack_pack_map (penc_packer (enc), 4);
    penc_kv_cstr (enc, "key", entry->key);
    penc_kv_cstr (enc, "reducer", state_reducer_name (entry->reducer));
    penc_kv_uint (enc, "seq", entry->seq);
    penc_kv_raw (enc, "value", entry->value, entry->size);
}

size_t
state_encode_prefix (state_t *self, penc_t *enc, const char *prefix, size_t len)
{
    assert (self && enc);
    size_t count;
    entry_t **found = s_collect (self, len? prefix: NULL, len, &count);
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++) {
        state_entry_t view;
        s_entry_view (found [i], &view);
        state_encode_entry (&view, enc);
    }
    free (found);
    return count;
}

//  An upper bound of one entry's encoded size (map header, four keys,
//  their headers, the key, the reducer name, seq, the stored value).
static size_t
s_entry_cost (const entry_t *entry)
{
    return 48 + strlen (entry->key) + sval_size (&entry->val);
}

size_t
state_encode_page (state_t *self, penc_t *enc, const state_page_t *page, bool *more,
                   size_t *need)
{
    assert (self && enc && page && more);
    size_t count;
    entry_t **found = s_collect (self, page->prefix_len? page->prefix: NULL, page->prefix_len,
                               &count);
    //  Sorted by key: skip to the first key after after_key (strcmp order,
    //  the keys holding no NUL).
    size_t start = 0;
    if (page->after_key)
        while (start < count && strcmp (found [start]->key, page->after_key) <= 0)
            start++;
    size_t end = start, bytes = 0, total = 0;
    for (size_t i = start; i < count; i++)
        total += s_entry_cost (found [i]);
    while (end < count && end - start < page->limit) {
        size_t cost = s_entry_cost (found [end]);
        if (bytes + cost > page->max_bytes)
            break;
        bytes += cost;
        end++;
    }
    *more = end < count;
    if (need)
        *need = total;
    if (*more && page->strict) {
        free (found);
        return SIZE_MAX;
    }
    msgpack_pack_array (penc_packer (enc), end - start);
    for (size_t i = start; i < end; i++) {
        state_entry_t view;
        s_entry_view (found [i], &view);
        state_encode_entry (&view, enc);
    }
    free (found);
    return end - start;
}

size_t
state_keys_cost (state_t *self, const msgpack_object *keys)
{
    assert (self);
    char buf [PROTO_MAX_KEY + 1];
    size_t size = keys && keys->type == MSGPACK_OBJECT_ARRAY? keys->via.array.size: 0;
    size_t total = 0;
    for (size_t i = 0; i < size; i++) {
        const char *key = s_get_key (&keys->via.array.ptr [i], buf);
        entry_t *entry = key? (entry_t *) zhashx_lookup (self->entries, key): NULL;
        if (entry)
            total += s_entry_cost (entry);
    }
    return total;
}

//  The key of a GET element, NUL-terminated in buf, or NULL if unusable.
static const char *
s_get_key (const msgpack_object *o, char *buf)
{
    if (o->type != MSGPACK_OBJECT_STR || o->via.str.size == 0
    ||  o->via.str.size > PROTO_MAX_KEY || memchr (o->via.str.ptr, 0, o->via.str.size))
        return NULL;
    memcpy (buf, o->via.str.ptr, o->via.str.size);
    buf [o->via.str.size] = 0;
    return buf;
}

size_t
state_encode_keys (state_t *self, penc_t *enc, const msgpack_object *keys)
{
    assert (self && enc);
    char buf [PROTO_MAX_KEY + 1];
    size_t size = keys && keys->type == MSGPACK_OBJECT_ARRAY? keys->via.array.size: 0;
    size_t count = 0;
    for (size_t i = 0; i < size; i++) {
        const char *key = s_get_key (&keys->via.array.ptr [i], buf);
        if (key && zhashx_lookup (self->entries, key))
            count++;
    }
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < size; i++) {
        const char *key = s_get_key (&keys->via.array.ptr [i], buf);
        entry_t *entry = key? (entry_t *) zhashx_lookup (self->entries, key): NULL;
        if (entry) {
            state_entry_t view;
            s_entry_view (entry, &view);
            state_encode_entry (&view, enc);
        }
    }
    return count;
}

void
state_encode_change (const state_change_t *change, penc_t *enc)
{
    assert (change && enc);
    penc_kv_cstr (enc, "key", change->key);
    penc_kv_uint (enc, "seq", change->seq);
    penc_kv_cstr (enc, "op", state_op_name (change->op));
    penc_kv_cstr (enc, "reducer", state_reducer_name (change->reducer));
    penc_kv_raw (enc, "value", change->value, change->size);
}
