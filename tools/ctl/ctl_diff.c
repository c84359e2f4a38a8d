// SPDX-License-Identifier: MIT
/*  ctl_diff - what changed between two checkpoints, old and new values:
    common/wfjson's diff, and its text for people.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "pconfig.h"

json_t *
ctl_diff (ctl_t *ctl, uint64_t from, uint64_t to, bool quiet, int *rc)
{
    parley_err_t err;
    json_t *diff = wfjson_diff (ctl->link, from, to, &err);
    *rc = quiet ? (diff ? PARLEY_EXIT_OK : PARLEY_EXIT_FAILURE)
                : ctl_check (ctl, err, "CHECKPOINT");
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
