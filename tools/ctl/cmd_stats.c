// SPDX-License-Identifier: MIT
/*  parley-ctl stats: every STATS field the broker sends, with its unit and
    the protocol's sentence for it. The list comes from libparley's
    generic decoding (parley_client_stats_fields), so counters a newer
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
s_value (const parley_stat_field_t *f, char *value, size_t size)
{
    switch (f->kind) {
        case PARLEY_STAT_UINT:
            snprintf (value, size, "%llu", (unsigned long long) f->uint_value);
            break;
        case PARLEY_STAT_INT:
            snprintf (value, size, "%lld", (long long) f->int_value);
            break;
        case PARLEY_STAT_NUM:
            snprintf (value, size, "%.2f", f->num_value);
            break;
        case PARLEY_STAT_BOOL:
            snprintf (value, size, "%s", f->uint_value ? "true" : "false");
            break;
        case PARLEY_STAT_TEXT:
            snprintf (value, size, "%s", f->text);
            break;
        default:
            snprintf (value, size, "(%zu bytes)", f->value_size);
            break;
    }
}

int
cmd_stats (ctl_t *ctl)
{
    parley_stat_list_t list;
    int rc = ctl_check (ctl, parley_client_stats_fields (ctl->link, &list), "STATS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    if (ctl->json) {
        json_t *json = json_object ();
        for (size_t i = 0; i < list.count; i++) {
            const parley_stat_field_t *f = &list.fields [i];
            json_t *value = mpjs_decode (f->value, f->value_size);
            json_object_set_new (json, f->name, json_pack ("{s:o, s:s}", "value",
                                                           value ? value : json_null (),
                                                           "unit", ctl_stat_unit (f)));
        }
        ctl_print_json (json);
        return PARLEY_EXIT_OK;
    }
    //  Columns as wide as their widest cell: names and values vary in
    //  length with the broker's version and its uptime.
    int name_width = 0, value_width = 0, unit_width = 0;
    char (*values) [64] = calloc (list.count ? list.count : 1, sizeof *values);
    if (!values)
        return PARLEY_EXIT_FAILURE;
    for (size_t i = 0; i < list.count; i++) {
        const parley_stat_field_t *f = &list.fields [i];
        if (f->kind == PARLEY_STAT_OTHER)
            continue;
        s_value (f, values [i], sizeof values [i]);
        name_width = s_max (name_width, strlen (f->name));
        value_width = s_max (value_width, strlen (values [i]));
        unit_width = s_max (unit_width, strlen (ctl_stat_unit (f)));
    }
    for (size_t i = 0; i < list.count; i++) {
        const parley_stat_field_t *f = &list.fields [i];
        if (f->kind != PARLEY_STAT_OTHER)
            printf ("%-*s  %*s %-*s  %s\n", name_width, f->name, value_width, values [i],
                    unit_width, ctl_stat_unit (f), f->help);
    }
    for (size_t i = 0; i < list.count; i++) {
        const parley_stat_field_t *f = &list.fields [i];
        if (f->kind != PARLEY_STAT_OTHER)
            continue;
        json_t *json = mpjs_decode (f->value, f->value_size);
        char *text = json ? json_dumps (json, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref (json);
        printf ("%-*s  %s  %s\n", name_width, f->name, text ? text : "(undecodable)", f->help);
        free (text);
    }
    free (values);
    return PARLEY_EXIT_OK;
}
