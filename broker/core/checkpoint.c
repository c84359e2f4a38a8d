// SPDX-License-Identifier: MIT
/*  checkpoint - turn-boundary checkpoints as differences. See checkpoint.h.

    Three maps of key -> checkpoint_value_t:
      shadow   the state at the newest checkpoint (what the next record
               compares with)
      base     the state before the oldest kept checkpoint's difference
               (empty until the retention bound folds one away)
      each checkpoint's `diff`: changed keys, and removed ones marked
    A zlistx of the kept checkpoints, oldest first.
*/
#include "checkpoint.h"

#include <assert.h>
#include <string.h>

static const char *s_status_names [WF__COUNT] = {
    [WF_PENDING] = "pending",
    [WF_IN_PROGRESS] = "in_progress",
    [WF_REVISION] = "revision",
    [WF_DONE] = "done",
    [WF_FAILED] = "failed",
};

const char *
wf_status_name (wf_status_t status)
{
    return (unsigned) status < WF__COUNT ? s_status_names [status] : "unknown";
}

bool
wf_status_from_name (const char *name, size_t len, wf_status_t *status)
{
    for (int i = 0; name && i < WF__COUNT; i++)
        if (strlen (s_status_names [i]) == len && memcmp (s_status_names [i], name, len) == 0) {
            *status = (wf_status_t) i;
            return true;
        }
    return false;
}

typedef struct {
    checkpoint_info_t info;
    zhashx_t *diff;
} s_checkpoint_t;

struct _checkpoints_t {
    size_t retain;
    uint64_t next_number;
    uint64_t dropped;
    zlistx_t *kept;             //  s_checkpoint_t *, oldest first
    zhashx_t *shadow;
    zhashx_t *base;
    size_t base_bytes;
};

static checkpoint_value_t *
s_value_new (state_reducer_t reducer, const void *value, size_t size, bool removed)
{
    checkpoint_value_t *self = malloc (sizeof (checkpoint_value_t) + size);
    if (self) {
        self->reducer = reducer;
        self->size = size;
        self->removed = removed;
        if (size)
            memcpy (self->value, value, size);
    }
    return self;
}

static void
s_value_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void *
s_value_dup (const void *item)
{
    const checkpoint_value_t *value = item;
    return s_value_new (value->reducer, value->value, value->size, value->removed);
}

//  Values are inserted as they are (no zhashx duplicator: with one set,
//  zhashx_insert would store a copy and the caller's value would leak).
static zhashx_t *
s_map_new (void)
{
    zhashx_t *map = zhashx_new ();
    if (map)
        zhashx_set_destructor (map, s_value_free);
    return map;
}

static zhashx_t *
s_map_dup (zhashx_t *source)
{
    zhashx_t *map = s_map_new ();
    for (checkpoint_value_t *value = map ? zhashx_first (source) : NULL; value;
         value = zhashx_next (source)) {
        checkpoint_value_t *copy = s_value_dup (value);
        if (!copy || zhashx_insert (map, zhashx_cursor (source), copy)) {
            free (copy);
            zhashx_destroy (&map);
            break;
        }
    }
    return map;
}

static void
s_checkpoint_free (void **item_p)
{
    s_checkpoint_t *checkpoint = *item_p;
    if (checkpoint) {
        zhashx_destroy (&checkpoint->diff);
        free (checkpoint);
        *item_p = NULL;
    }
}

checkpoints_t *
checkpoints_new (size_t retain)
{
    assert (retain >= 1);
    checkpoints_t *self = calloc (1, sizeof (checkpoints_t));
    if (!self)
        return NULL;
    self->retain = retain;
    self->kept = zlistx_new ();
    self->shadow = s_map_new ();
    self->base = s_map_new ();
    if (!self->kept || !self->shadow || !self->base) {
        checkpoints_destroy (&self);
        return NULL;
    }
    zlistx_set_destructor (self->kept, s_checkpoint_free);
    return self;
}

void
checkpoints_destroy (checkpoints_t **self_p)
{
    assert (self_p);
    checkpoints_t *self = *self_p;
    if (self) {
        zlistx_destroy (&self->kept);
        zhashx_destroy (&self->shadow);
        zhashx_destroy (&self->base);
        free (self);
        *self_p = NULL;
    }
}

//  Applies a difference to a full map (removed keys go away).
static int
s_apply (zhashx_t *map, zhashx_t *diff)
{
    for (checkpoint_value_t *value = zhashx_first (diff); value; value = zhashx_next (diff)) {
        const char *key = zhashx_cursor (diff);
        if (value->removed)
            zhashx_delete (map, key);
        else {
            checkpoint_value_t *copy = s_value_dup (value);
            if (!copy)
                return -1;
            zhashx_update (map, key, copy);
        }
    }
    return 0;
}

static size_t
s_diff_bytes (zhashx_t *diff)
{
    size_t bytes = 0;
    for (checkpoint_value_t *value = zhashx_first (diff); value; value = zhashx_next (diff))
        bytes += strlen (zhashx_cursor (diff)) + value->size;
    return bytes;
}

//  The retention bound: the oldest checkpoint's difference moves into the base.
static void
s_fold_oldest (checkpoints_t *self)
{
    s_checkpoint_t *oldest = zlistx_first (self->kept);
    if (s_apply (self->base, oldest->diff) == 0) {
        self->base_bytes = s_diff_bytes (self->base);
        zlistx_delete (self->kept, zlistx_cursor (self->kept));
        self->dropped++;
    }
}

typedef struct {
    zhashx_t *shadow;
    zhashx_t *diff;
    zhashx_t *seen;
    bool failed;
} s_walk_t;

//  The broker's world.* keys belong to the world, which a checkpoint does
//  not restore (RESUME leaves them alone), so they are not recorded either.
#define S_WORLD_PREFIX "world."

static void
s_visit (const state_entry_t *entry, void *arg)
{
    s_walk_t *walk = arg;
    if (strncmp (entry->key, S_WORLD_PREFIX, strlen (S_WORLD_PREFIX)) == 0)
        return;
    zhashx_insert (walk->seen, entry->key, (void *) 1);
    checkpoint_value_t *old = zhashx_lookup (walk->shadow, entry->key);
    if (old && old->reducer == entry->reducer && old->size == entry->size
    &&  memcmp (old->value, entry->value, entry->size) == 0)
        return;
    checkpoint_value_t *value = s_value_new (entry->reducer, entry->value, entry->size, false);
    if (!value || zhashx_insert (walk->diff, entry->key, value)) {
        free (value);
        walk->failed = true;
    }
}

int64_t
checkpoint_record (checkpoints_t *self, state_t *state, const checkpoint_meta_t *meta)
{
    assert (self);
    assert (state);
    assert (meta);
    s_checkpoint_t *checkpoint = calloc (1, sizeof (s_checkpoint_t));
    zhashx_t *seen = zhashx_new ();
    if (!checkpoint || !seen || !(checkpoint->diff = s_map_new ())) {
        free (checkpoint);
        zhashx_destroy (&seen);
        return -1;
    }
    s_walk_t walk = { self->shadow, checkpoint->diff, seen, false };
    state_foreach_prefix (state, NULL, 0, s_visit, &walk);
    for (checkpoint_value_t *old = zhashx_first (self->shadow); old && !walk.failed;
         old = zhashx_next (self->shadow)) {
        const char *key = zhashx_cursor (self->shadow);
        if (zhashx_lookup (seen, key))
            continue;
        checkpoint_value_t *gone = s_value_new (old->reducer, NULL, 0, true);
        if (!gone || zhashx_insert (checkpoint->diff, key, gone)) {
            free (gone);
            walk.failed = true;
        }
    }
    zhashx_destroy (&seen);
    if (walk.failed) {
        s_checkpoint_free ((void **) &checkpoint);
        return -1;
    }
    if (s_apply (self->shadow, checkpoint->diff)) {
        //  Out of memory half way: the shadow is rebuilt from what is kept,
        //  so the next record still compares with the last checkpoint.
        s_checkpoint_free ((void **) &checkpoint);
        s_checkpoint_t *last = zlistx_last (self->kept);
        zhashx_t *rebuilt = last ? checkpoints_state_at (self, last->info.number) : s_map_new ();
        if (rebuilt) {
            zhashx_destroy (&self->shadow);
            self->shadow = rebuilt;
        }
        return -1;
    }
    checkpoint->info.number = self->next_number++;
    checkpoint->info.meta = *meta;
    checkpoint->info.changed = zhashx_size (checkpoint->diff);
    checkpoint->info.bytes = s_diff_bytes (checkpoint->diff);
    zlistx_add_end (self->kept, checkpoint);
    while (zlistx_size (self->kept) > self->retain)
        s_fold_oldest (self);
    return (int64_t) checkpoint->info.number;
}

size_t
checkpoints_count (checkpoints_t *self)
{
    assert (self);
    return zlistx_size (self->kept);
}

uint64_t
checkpoints_dropped (checkpoints_t *self)
{
    assert (self);
    return self->dropped;
}

const checkpoint_info_t *
checkpoints_at (checkpoints_t *self, size_t index)
{
    assert (self);
    size_t i = 0;
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint;
         checkpoint = zlistx_next (self->kept), i++)
        if (i == index)
            return &checkpoint->info;
    return NULL;
}

static s_checkpoint_t *
s_find (checkpoints_t *self, uint64_t number)
{
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint;
         checkpoint = zlistx_next (self->kept))
        if (checkpoint->info.number == number)
            return checkpoint;
    return NULL;
}

const checkpoint_info_t *
checkpoints_find (checkpoints_t *self, uint64_t number)
{
    assert (self);
    s_checkpoint_t *checkpoint = s_find (self, number);
    return checkpoint ? &checkpoint->info : NULL;
}

size_t
checkpoints_bytes (checkpoints_t *self)
{
    assert (self);
    size_t bytes = self->base_bytes;
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint;
         checkpoint = zlistx_next (self->kept))
        bytes += checkpoint->info.bytes;
    return bytes;
}

zhashx_t *
checkpoints_state_at (checkpoints_t *self, uint64_t number)
{
    assert (self);
    if (!s_find (self, number))
        return NULL;
    zhashx_t *map = s_map_dup (self->base);
    if (!map)
        return NULL;
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint;
         checkpoint = zlistx_next (self->kept)) {
        if (checkpoint->info.number > number)
            break;
        if (s_apply (map, checkpoint->diff)) {
            zhashx_destroy (&map);
            return NULL;
        }
    }
    return map;
}

zhashx_t *
checkpoints_diff (checkpoints_t *self, uint64_t from, uint64_t to)
{
    assert (self);
    zhashx_t *before = checkpoints_state_at (self, from);
    zhashx_t *after = checkpoints_state_at (self, to);
    zhashx_t *diff = before && after ? s_map_new () : NULL;
    bool failed = !diff;
    for (checkpoint_value_t *value = diff ? zhashx_first (after) : NULL; value && !failed;
         value = zhashx_next (after)) {
        const char *key = zhashx_cursor (after);
        checkpoint_value_t *old = zhashx_lookup (before, key);
        if (old && old->reducer == value->reducer && old->size == value->size
        &&  memcmp (old->value, value->value, value->size) == 0)
            continue;
        checkpoint_value_t *copy = s_value_dup (value);
        failed = !copy || zhashx_insert (diff, key, copy);
        if (failed)
            free (copy);
    }
    for (checkpoint_value_t *old = diff ? zhashx_first (before) : NULL; old && !failed;
         old = zhashx_next (before)) {
        const char *key = zhashx_cursor (before);
        if (zhashx_lookup (after, key))
            continue;
        checkpoint_value_t *gone = s_value_new (old->reducer, NULL, 0, true);
        failed = !gone || zhashx_insert (diff, key, gone);
        if (failed)
            free (gone);
    }
    zhashx_destroy (&before);
    zhashx_destroy (&after);
    if (failed)
        zhashx_destroy (&diff);
    return diff;
}

int
checkpoints_fork (checkpoints_t *self, uint64_t number)
{
    assert (self);
    zhashx_t *state = checkpoints_state_at (self, number);
    if (!state)
        return -1;
    s_checkpoint_t *last = zlistx_last (self->kept);
    while (last && last->info.number > number) {
        zlistx_delete (self->kept, zlistx_cursor (self->kept));
        last = zlistx_last (self->kept);
    }
    zhashx_destroy (&self->shadow);
    self->shadow = state;
    self->next_number = number + 1;
    return 0;
}

void
checkpoints_set_retain (checkpoints_t *self, size_t retain)
{
    assert (self);
    self->retain = retain ? retain : 1;
}

uint64_t
checkpoints_next_number (checkpoints_t *self)
{
    assert (self);
    return self->next_number;
}

static int
s_key_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

//  A map's keys in bytewise order, to `fn`. What is slow: a sort per map,
//  for the snapshot (in the compaction child) and the dump (tests).
static int
s_visit_sorted (zhashx_t *map, uint64_t number, checkpoints_key_fn *fn, void *arg)
{
    size_t count = zhashx_size (map);
    const char **keys = malloc ((count ? count : 1) * sizeof (char *));
    if (!keys)
        return -1;
    size_t n = 0;
    for (void *value = zhashx_first (map); value; value = zhashx_next (map))
        keys [n++] = zhashx_cursor (map);
    qsort (keys, n, sizeof (char *), s_key_cmp);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = fn (number, keys [i], zhashx_lookup (map, keys [i]), arg);
    free (keys);
    return rc;
}

int
checkpoints_visit (checkpoints_t *self, checkpoints_info_fn *info_fn,
                   checkpoints_key_fn *key_fn, void *arg)
{
    assert (self);
    int rc = s_visit_sorted (self->base, UINT64_MAX, key_fn, arg);
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint && rc == 0;
         checkpoint = zlistx_next (self->kept)) {
        //  The callbacks must not walk the list: its cursor is this loop's.
        rc = info_fn (&checkpoint->info, arg);
        if (rc == 0)
            rc = s_visit_sorted (checkpoint->diff, checkpoint->info.number, key_fn, arg);
    }
    return rc;
}

int
checkpoints_restore_info (checkpoints_t *self, const checkpoint_info_t *info)
{
    assert (self && info);
    s_checkpoint_t *checkpoint = calloc (1, sizeof (s_checkpoint_t));
    if (!checkpoint || !(checkpoint->diff = s_map_new ())) {
        free (checkpoint);
        return -1;
    }
    checkpoint->info = *info;
    checkpoint->info.changed = 0;
    checkpoint->info.bytes = 0;
    zlistx_add_end (self->kept, checkpoint);
    return 0;
}

int
checkpoints_restore_key (checkpoints_t *self, uint64_t number, const char *key,
                         state_reducer_t reducer, const void *value, size_t size, bool removed)
{
    assert (self && key);
    zhashx_t *map = self->base;
    s_checkpoint_t *last = zlistx_last (self->kept);
    if (number != UINT64_MAX) {
        if (!last || last->info.number != number)
            return -1;
        map = last->diff;
    }
    checkpoint_value_t *copy = s_value_new (reducer, value, removed ? 0 : size, removed);
    if (!copy)
        return -1;
    zhashx_update (map, key, copy);
    return 0;
}

int
checkpoints_restore_end (checkpoints_t *self, uint64_t next_number, uint64_t dropped)
{
    assert (self);
    zhashx_t *shadow = s_map_dup (self->base);
    if (!shadow)
        return -1;
    for (s_checkpoint_t *checkpoint = zlistx_first (self->kept); checkpoint;
         checkpoint = zlistx_next (self->kept)) {
        if (s_apply (shadow, checkpoint->diff)) {
            zhashx_destroy (&shadow);
            return -1;
        }
        checkpoint->info.changed = zhashx_size (checkpoint->diff);
        checkpoint->info.bytes = s_diff_bytes (checkpoint->diff);
    }
    zhashx_destroy (&self->shadow);
    self->shadow = shadow;
    self->base_bytes = s_diff_bytes (self->base);
    self->next_number = next_number;
    self->dropped = dropped;
    return 0;
}
