// SPDX-License-Identifier: MIT
/*  parley-ctl state get KEY... | set KEY JSON [KEY JSON]... | keys [PREFIX]

    get: each key's value as JSON (with its reducer and seq); a key that
         does not exist is an error (exit 1) after the others are printed.
    set: one atomic WRITE of `set` ops (an undeclared key is declared
         `replace`); a value that is not JSON is a usage error (exit 2).
    keys: the keys under PREFIX (all without), fetched by SNAPSHOT in pages
         of S_PAGE; --limit N stops after N keys and says where to go on
         (--after KEY). */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "jsonops.h"
#include "mpjs.h"
#include "pconfig.h"

#define S_PAGE 256                  //  keys per SNAPSHOT

static int
s_get (ctl_t *ctl)
{
    if (ctl->arg_count < 2) {
        fprintf (stderr, "parley-ctl: state get needs at least one KEY\n");
        return PARLEY_EXIT_USAGE;
    }
    parley_state_t *state = NULL;
    int rc = ctl_check (ctl, parley_client_get (ctl->link, ctl->args + 1, ctl->arg_count - 1,
                                                &state), "GET");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    json_t *all = json_object ();
    for (size_t i = 0; i < parley_state_count (state); i++) {
        const parley_entry_t *e = parley_state_at (state, i);
        json_t *value = parley_entry_value (e)
                      ? mpjs_decode (parley_entry_value (e), parley_entry_value_size (e)) : NULL;
        if (!ctl->json) {
            char *text = value ? json_dumps (value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            printf ("%s (%s, seq %llu) = %s\n", parley_entry_key (e), parley_entry_reducer (e),
                    (unsigned long long) parley_entry_seq (e), text ? text : "null");
            free (text);
        }
        json_object_set_new (all, parley_entry_key (e),
                             json_pack ("{s:o, s:s, s:I}", "value", value ? value : json_null (),
                                        "reducer", parley_entry_reducer (e),
                                        "seq", (json_int_t) parley_entry_seq (e)));
    }
    parley_state_destroy (&state);
    for (size_t k = 1; k < ctl->arg_count; k++)
        if (!json_object_get (all, ctl->args [k])) {
            fprintf (stderr, "parley-ctl: state get: no key \"%s\"\n", ctl->args [k]);
            rc = PARLEY_EXIT_FAILURE;
        }
    if (ctl->json)
        ctl_print_json (all);
    else
        json_decref (all);
    return rc;
}

static int
s_set (ctl_t *ctl)
{
    if (ctl->arg_count < 3 || (ctl->arg_count - 1) % 2) {
        fprintf (stderr, "parley-ctl: state set needs KEY JSON pairs\n");
        return PARLEY_EXIT_USAGE;
    }
    json_t *ops = json_array ();
    for (size_t i = 1; i + 1 < ctl->arg_count; i += 2) {
        json_error_t error;
        json_t *value = json_loads (ctl->args [i + 1], JSON_DECODE_ANY, &error);
        if (!value) {
            fprintf (stderr, "parley-ctl: state set: the value of %s is not JSON: %s\n",
                     ctl->args [i], error.text);
            json_decref (ops);
            return PARLEY_EXIT_USAGE;
        }
        json_array_append_new (ops, json_pack ("{s:s, s:s, s:o}", "op", "set",
                                               "key", ctl->args [i], "value", value));
    }
    char why [256];
    //  The ops point into the JSON: it lives until the WRITE is done.
    jsonops_t *parsed = jsonops_new (ops, why, sizeof why);
    if (!parsed) {
        fprintf (stderr, "parley-ctl: state set: %s\n", why);
        json_decref (ops);
        return PARLEY_EXIT_USAGE;
    }
    parley_ops_t *write = parley_ops_new ();
    parley_written_t *written = NULL;
    int rc = !write ? ctl_check (ctl, PARLEY_ERR_NOMEM, "WRITE")
           : ctl_check (ctl, jsonops_fill (parsed, write), "WRITE");
    if (rc == PARLEY_EXIT_OK)
        rc = ctl_check (ctl, parley_client_write (ctl->link, write, &written), "WRITE");
    jsonops_destroy (&parsed);
    parley_ops_destroy (&write);
    json_decref (ops);
    if (rc != PARLEY_EXIT_OK)
        return rc;
    uint64_t seq = parley_written_seq (written), changed = parley_written_changed (written);
    parley_written_destroy (&written);
    if (ctl->json)
        ctl_print_json (json_pack ("{s:I, s:I}", "seq", (json_int_t) seq,
                                   "changed", (json_int_t) changed));
    else
        printf ("written: seq %llu, %llu keys changed\n", (unsigned long long) seq,
                (unsigned long long) changed);
    return PARLEY_EXIT_OK;
}

static int
s_keys (ctl_t *ctl)
{
    if (ctl->arg_count > 2) {
        fprintf (stderr, "parley-ctl: state keys takes at most one PREFIX\n");
        return PARLEY_EXIT_USAGE;
    }
    const char *prefix = ctl->arg_count == 2 ? ctl->args [1] : "";
    char after [1024] = "";
    if (ctl->after)
        snprintf (after, sizeof after, "%s", ctl->after);
    json_t *keys = json_array ();
    uint64_t shown = 0;
    bool more = true;
    parley_state_t *state = NULL;
    while (more && (!ctl->limit || shown < ctl->limit)) {
        size_t page = S_PAGE;
        if (ctl->limit && ctl->limit - shown < page)
            page = (size_t) (ctl->limit - shown);
        int rc = ctl_check (ctl, parley_client_snapshot (ctl->link, prefix,
                                                         *after ? after : NULL, page, &state),
                            "SNAPSHOT");
        if (rc != PARLEY_EXIT_OK) {
            parley_state_destroy (&state);
            json_decref (keys);
            return rc;
        }
        size_t count = parley_state_count (state);
        for (size_t i = 0; i < count; i++) {
            const parley_entry_t *e = parley_state_at (state, i);
            if (ctl->json)
                json_array_append_new (keys, json_pack (
                    "{s:s, s:s, s:I, s:I}", "key", parley_entry_key (e),
                    "reducer", parley_entry_reducer (e), "seq", (json_int_t) parley_entry_seq (e),
                    "bytes", (json_int_t) parley_entry_value_size (e)));
            else
                printf ("%-40s %-8s seq %-8llu %zu bytes\n", parley_entry_key (e),
                        parley_entry_reducer (e), (unsigned long long) parley_entry_seq (e),
                        parley_entry_value_size (e));
            snprintf (after, sizeof after, "%s", parley_entry_key (e));
            shown++;
        }
        more = parley_state_more (state) && count > 0;
    }
    parley_state_destroy (&state);
    if (ctl->json) {
        json_t *json = json_pack ("{s:o, s:b}", "keys", keys, "more", more);
        if (more)
            json_object_set_new (json, "next_after", json_string (after));
        ctl_print_json (json);
    }
    else {
        json_decref (keys);
        if (more)
            printf ("(more: --after '%s')\n", after);
    }
    return PARLEY_EXIT_OK;
}

int
cmd_state (ctl_t *ctl)
{
    const char *what = ctl->arg_count ? ctl->args [0] : "";
    if (strcmp (what, "get") == 0)
        return s_get (ctl);
    if (strcmp (what, "set") == 0)
        return s_set (ctl);
    if (strcmp (what, "keys") == 0)
        return s_keys (ctl);
    fprintf (stderr, "parley-ctl: state wants get, set or keys%s%s\n",
             *what ? ", not " : "", what);
    return PARLEY_EXIT_USAGE;
}
