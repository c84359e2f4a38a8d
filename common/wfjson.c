// SPDX-License-Identifier: MIT
/*  wfjson - workflow replies as JSON. See wfjson.h.

    The two CHECKPOINTs of a diff fill one result in turn: the first is
    turned into JSON before the second is asked for.
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
    json_object_set_new (json, "status", json_string (parley_workflow_status_name (info)));
    s_set_uint (json, "turn", parley_workflow_turn (info));
    s_set_uint (json, "revisions", parley_workflow_revisions (info));
    s_set_text (json, "holder", parley_workflow_holder (info));
    s_set_text (json, "agent", parley_workflow_agent (info));
    if (parley_workflow_paused (info))
        json_object_set_new (json, "paused", json_true ());
    if (parley_workflow_max_revisions (info))
        s_set_uint (json, "max_revisions", parley_workflow_max_revisions (info));
    if (parley_workflow_max_turns (info))
        s_set_uint (json, "max_turns", parley_workflow_max_turns (info));
    s_set_text (json, "reason", parley_workflow_reason (info));
    s_set_uint (json, "checkpoint", parley_workflow_checkpoint (info));
    if (parley_workflow_seq (info))
        s_set_uint (json, "seq", parley_workflow_seq (info));
    return json;
}

json_t *
wfjson_checkpoint (const parley_checkpoint_t *info)
{
    assert (info);
    json_t *json = json_object ();
    s_set_uint (json, "number", parley_checkpoint_number (info));
    s_set_uint (json, "turn", parley_checkpoint_turn (info));
    json_object_set_new (json, "status", json_string (parley_checkpoint_status_name (info)));
    s_set_text (json, "holder", parley_checkpoint_holder (info));
    s_set_uint (json, "revisions", parley_checkpoint_revisions (info));
    s_set_uint (json, "changed", parley_checkpoint_changed (info));
    s_set_uint (json, "bytes", parley_checkpoint_bytes (info));
    return json;
}

//  An entry's value as JSON, or NULL when it has none.
static json_t *
s_value (const parley_entry_t *entry)
{
    if (!parley_entry_value (entry))
        return NULL;
    json_t *value = mpjs_decode (parley_entry_value (entry), parley_entry_value_size (entry));
    return value ? value : json_null ();
}

json_t *
wfjson_entries (const parley_checkpoint_state_t *state)
{
    assert (state);
    json_t *entries = json_array ();
    for (size_t i = 0; i < parley_checkpoint_state_count (state); i++) {
        const parley_entry_t *entry = parley_checkpoint_state_at (state, i);
        json_t *item = json_pack ("{s:s}", "key", parley_entry_key (entry));
        s_set_text (item, "reducer", parley_entry_reducer (entry));
        json_t *value = s_value (entry);
        if (value)
            json_object_set_new (item, "value", value);
        if (parley_entry_removed (entry))
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
    for (size_t i = 0; i < parley_checkpoint_state_count (state); i++) {
        const parley_entry_t *entry = parley_checkpoint_state_at (state, i);
        const char *key = parley_entry_key (entry);
        json_t *item = json_object_get (by_key, key);
        if (!item) {
            item = json_pack ("{s:s}", "key", key);
            json_object_set_new (by_key, key, item);
            json_array_append (order, item);
        }
        if (parley_entry_removed (entry))
            continue;
        if (*parley_entry_reducer (entry))
            json_object_set_new (item, "reducer", json_string (parley_entry_reducer (entry)));
        json_t *value = s_value (entry);
        json_object_set_new (item, side, value ? value : json_null ());
    }
}

json_t *
wfjson_diff (parley_client_t *client, uint64_t from, uint64_t to, parley_err_t *err)
{
    assert (client && err);
    parley_checkpoint_state_t *state = NULL;
    *err = parley_client_checkpoint_diff (client, to, from, &state);
    if (*err != PARLEY_OK) {
        parley_checkpoint_state_destroy (&state);
        return NULL;
    }
    json_t *by_key = json_object ();
    json_t *entries = json_array ();
    json_t *diff = json_pack ("{s:I, s:I, s:o, s:o}", "from", (json_int_t) from,
                              "to", (json_int_t) to,
                              "info", wfjson_checkpoint (parley_checkpoint_state_info (state)),
                              "entries", entries);
    s_collect (by_key, entries, state, "new");
    *err = parley_client_checkpoint_diff (client, from, to, &state);
    if (*err == PARLEY_OK)
        s_collect (by_key, entries, state, "old");
    parley_checkpoint_state_destroy (&state);
    json_decref (by_key);
    if (*err != PARLEY_OK) {
        json_decref (diff);
        return NULL;
    }
    return diff;
}
