// SPDX-License-Identifier: MIT
/*  ctl_diff - what changed between two checkpoints, old and new values.

    The broker's CHECKPOINT with `since` lists the keys that differ
    between two checkpoints with their values at the one asked for. Asked
    both ways (M since N, then N since M) it gives each differing key's
    value at both ends: the same keys, a key absent at one end marked
    removed there. The first reply is turned into JSON before the second
    request, since libparley's results point into the client until then.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

//  key -> {"key", "reducer", side: value} for one direction.
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

//  ctl_check, or only its exit code when quiet.
static int
s_check (ctl_t *ctl, parley_err_t rc, bool quiet)
{
    if (quiet)
        return rc == PARLEY_OK ? PARLEY_EXIT_OK : PARLEY_EXIT_FAILURE;
    return ctl_check (ctl, rc, "CHECKPOINT");
}

json_t *
ctl_diff (ctl_t *ctl, uint64_t from, uint64_t to, bool quiet, int *rc)
{
    parley_checkpoint_state_t state;
    *rc = s_check (ctl, parley_client_checkpoint_diff (ctl->link, to, from, &state), quiet);
    if (*rc != PARLEY_EXIT_OK)
        return NULL;
    json_t *by_key = json_object ();
    json_t *entries = json_array ();
    json_t *diff = json_pack ("{s:I, s:I, s:o, s:o}", "from", (json_int_t) from,
                              "to", (json_int_t) to, "info", ctl_checkpoint_json (&state.info),
                              "entries", entries);
    s_collect (by_key, entries, &state, "new");
    *rc = s_check (ctl, parley_client_checkpoint_diff (ctl->link, from, to, &state), quiet);
    if (*rc == PARLEY_EXIT_OK)
        s_collect (by_key, entries, &state, "old");
    json_decref (by_key);
    if (*rc != PARLEY_EXIT_OK) {
        json_decref (diff);
        return NULL;
    }
    return diff;
}

//  A value as compact JSON, cut at `cut` characters (0: whole).
static char *
s_text (const json_t *value, size_t cut)
{
    char *text = json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (6));
    if (!text)
        return strdup ("?");
    if (cut && strlen (text) > cut)
        strcpy (text + cut - 3, "...");
    return text;
}

void
ctl_print_diff (const json_t *diff, size_t cut)
{
    const json_t *entries = json_object_get (diff, "entries");
    if (!json_array_size (entries))
        printf ("(no key differs)\n");
    size_t i;
    const json_t *item;
    json_array_foreach (entries, i, item) {
        const json_t *old = json_object_get (item, "old");
        const json_t *new = json_object_get (item, "new");
        const char *reducer = json_string_value (json_object_get (item, "reducer"));
        char *old_text = old ? s_text (old, cut) : strdup ("(absent)");
        char *new_text = new ? s_text (new, cut) : strdup ("(removed)");
        char head [512];
        snprintf (head, sizeof head, "%s%s%s%s", json_string_value (json_object_get (item, "key")),
                  reducer ? " (" : "", reducer ? reducer : "", reducer ? ")" : "");
        if (strlen (head) + strlen (old_text) + strlen (new_text) <= 100)
            printf ("%s: %s -> %s\n", head, old_text, new_text);
        else
            printf ("%s\n    old: %s\n    new: %s\n", head, old_text, new_text);
        free (old_text);
        free (new_text);
    }
}
