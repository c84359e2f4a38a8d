// SPDX-License-Identifier: MIT
/*  parley-ctl stats: every STATS field the broker sends, with its unit and
    the protocol's sentence for it. The list comes from libparley's
    generic decoding (parley_client_stats), so counters a newer
    broker adds (the journal's, say) show up without a change here. The
    columns are as wide as their widest cell; a map or a list (model_roles)
    follows the table, whole, as compact JSON.
    --json: one object, {"name": {"value": V, "unit": "U"}, ...}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

static int
s_max (int width, size_t len)
{
    return (int) len > width ? (int) len : width;
}

static void
s_value (const parley_stat_t *f, char *value, size_t size)
{
    switch (parley_stat_kind (f)) {
        case PARLEY_STAT_UINT:
            snprintf (value, size, "%llu", (unsigned long long) parley_stat_uint (f));
            break;
        case PARLEY_STAT_INT:
            snprintf (value, size, "%lld", (long long) parley_stat_int (f));
            break;
        case PARLEY_STAT_NUM:
            snprintf (value, size, "%.2f", parley_stat_num (f));
            break;
        case PARLEY_STAT_BOOL:
            snprintf (value, size, "%s", parley_stat_uint (f) ? "true" : "false");
            break;
        case PARLEY_STAT_TEXT:
            snprintf (value, size, "%s", parley_stat_text (f));
            break;
        default:
            snprintf (value, size, "(%zu bytes)", parley_stat_value_size (f));
            break;
    }
}

int
cmd_stats (ctl_t *ctl)
{
    parley_stats_t *list = NULL;
    int rc = ctl_check (ctl, parley_client_stats (ctl->link, &list), "STATS");
    if (rc != PARLEY_EXIT_OK) {
        parley_stats_destroy (&list);
        return rc;
    }
    size_t count = parley_stats_count (list);
    if (ctl->json) {
        json_t *json = json_object ();
        for (size_t i = 0; i < count; i++) {
            const parley_stat_t *f = parley_stats_at (list, i);
            json_t *value = mpjs_decode (parley_stat_value (f), parley_stat_value_size (f));
            json_object_set_new (json, parley_stat_name (f),
                                 json_pack ("{s:o, s:s}", "value", value ? value : json_null (),
                                            "unit", ctl_stat_unit (f)));
        }
        ctl_print_json (json);
        parley_stats_destroy (&list);
        return PARLEY_EXIT_OK;
    }
    //  Columns as wide as their widest cell: names and values vary in
    //  length with the broker's version and its uptime.
    int name_width = 0, value_width = 0, unit_width = 0;
    char (*values) [64] = calloc (count ? count : 1, sizeof *values);
    if (!values) {
        parley_stats_destroy (&list);
        return PARLEY_EXIT_FAILURE;
    }
    for (size_t i = 0; i < count; i++) {
        const parley_stat_t *f = parley_stats_at (list, i);
        if (parley_stat_kind (f) == PARLEY_STAT_OTHER)
            continue;
        s_value (f, values [i], sizeof values [i]);
        name_width = s_max (name_width, strlen (parley_stat_name (f)));
        value_width = s_max (value_width, strlen (values [i]));
        unit_width = s_max (unit_width, strlen (ctl_stat_unit (f)));
    }
    for (size_t i = 0; i < count; i++) {
        const parley_stat_t *f = parley_stats_at (list, i);
        if (parley_stat_kind (f) != PARLEY_STAT_OTHER)
            printf ("%-*s  %*s %-*s  %s\n", name_width, parley_stat_name (f), value_width,
                    values [i], unit_width, ctl_stat_unit (f), parley_stat_help (f));
    }
    for (size_t i = 0; i < count; i++) {
        const parley_stat_t *f = parley_stats_at (list, i);
        if (parley_stat_kind (f) != PARLEY_STAT_OTHER)
            continue;
        json_t *json = mpjs_decode (parley_stat_value (f), parley_stat_value_size (f));
        char *text = json ? json_dumps (json, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref (json);
        printf ("%-*s  %s  %s\n", name_width, parley_stat_name (f),
                text ? text : "(undecodable)", parley_stat_help (f));
        free (text);
    }
    free (values);
    parley_stats_destroy (&list);
    return PARLEY_EXIT_OK;
}
