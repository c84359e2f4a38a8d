// SPDX-License-Identifier: MIT
/*  wfjson - workflow replies as JSON. See wfjson.h.

    libparley's results point into the client until its next request, so
    the first CHECKPOINT of a diff is turned into JSON before the second
    is sent.
*/
#include "wfjson.h"

#include <assert.h>

#include "mpjs.h"

static void
s_set_text (json_t *object, const char *key, const char *text)
{
    if (text && *text)
        json_object_set_new (object, key, json_string (text));
}

static void
s_set_uint (json_t *object, const char *key, uint64_t value)
{
    json_object_set_new (object, key, json_integer ((json_int_t) value));
}

json_t *
wfjson_info (const parley_workflow_t *info)
{
    assert (info);
    json_t *json = json_object ();
    json_object_set_new (json, "status", json_string (info->status_name));
    s_set_uint (json, "turn", info->turn);
    s_set_uint (json, "revisions", info->revisions);
    s_set_text (json, "holder", info->holder);
    s_set_text (json, "agent", info->agent);
    if (info->paused)
        json_object_set_new (json, "paused", json_true ());
    if (info->max_revisions)
        s_set_uint (json, "max_revisions", info->max_revisions);
    if (info->max_turns)
        s_set_uint (json, "max_turns", info->max_turns);
    s_set_text (json, "reason", info->reason);
    s_set_uint (json, "checkpoint", info->checkpoint);
    if (info->seq)
        s_set_uint (json, "seq", info->seq);
    return json;
}

json_t *
wfjson_checkpoint (const parley_checkpoint_info_t *info)
{
    assert (info);
    json_t *json = json_object ();
    s_set_uint (json, "number", info->number);
    s_set_uint (json, "turn", info->turn);
    json_object_set_new (json, "status", json_string (info->status_name));
    s_set_text (json, "holder", info->holder);
    s_set_uint (json, "revisions", info->revisions);
    s_set_uint (json, "changed", info->changed);
    s_set_uint (json, "bytes", info->bytes);
    return json;
}

json_t *
wfjson_entries (const parley_checkpoint_state_t *state)
{
    assert (state);
    json_t *entries = json_array ();
    for (size_t i = 0; i < state->count; i++) {
        const parley_checkpoint_entry_t *entry = &state->entries [i];
        json_t *item = json_pack ("{s:s}", "key", entry->key);
        s_set_text (item, "reducer", entry->reducer);
        if (entry->value) {
            json_t *value = mpjs_decode (entry->value, entry->value_size);
            json_object_set_new (item, "value", value ? value : json_null ());
        }
        if (entry->removed)
            json_object_set_new (item, "removed", json_true ());
        json_array_append_new (entries, item);
    }
    return entries;
}

//  Each entry of one direction into `by_key` (and, when new, `order`),
//  its value under `side`.
static void
s_collect (json_t *by_key, json_t *order, const parley_checkpoint_state_t *state,
           const char *side)
{
    for (size_t i = 0; i < state->count; i++) {
        const parley_checkpoint_entry_t *entry = &state->entries [i];
        json_t *item = json_object_get (by_key, entry->key);
        if (!item) {
            item = json_pack ("{s:s}", "key", entry->key);
            json_object_set_new (by_key, entry->key, item);
            json_array_append (order, item);
        }
        if (entry->removed)
            continue;
        if (*entry->reducer)
            json_object_set_new (item, "reducer", json_string (entry->reducer));
        json_t *value = entry->value ? mpjs_decode (entry->value, entry->value_size) : NULL;
        json_object_set_new (item, side, value ? value : json_null ());
    }
}

json_t *
wfjson_diff (parley_client_t *client, uint64_t from, uint64_t to, parley_err_t *err)
{
    assert (client && err);
    parley_checkpoint_state_t state;
    *err = parley_client_checkpoint_diff (client, to, from, &state);
    if (*err != PARLEY_OK)
        return NULL;
    json_t *by_key = json_object ();
    json_t *entries = json_array ();
    json_t *diff = json_pack ("{s:I, s:I, s:o, s:o}", "from", (json_int_t) from,
                              "to", (json_int_t) to, "info", wfjson_checkpoint (&state.info),
                              "entries", entries);
    s_collect (by_key, entries, &state, "new");
    *err = parley_client_checkpoint_diff (client, from, to, &state);
    if (*err == PARLEY_OK)
        s_collect (by_key, entries, &state, "old");
    json_decref (by_key);
    if (*err != PARLEY_OK) {
        json_decref (diff);
        return NULL;
    }
    return diff;
}
