// SPDX-License-Identifier: MIT
/*  parley-ctl stats: every STATS field the broker sends, with its unit and
    the protocol's sentence for it. The list comes from libparley's
    generic decoding (parley_client_stats_fields), so counters a newer
    broker adds (the journal's, say) show up without a change here.
    --json: one object, {"name": {"value": V, "unit": "U"}, ...}. */
#include <stdio.h>
#include <stdlib.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

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
                                                           "unit", f->unit));
        }
        ctl_print_json (json);
        return PARLEY_EXIT_OK;
    }
    for (size_t i = 0; i < list.count; i++) {
        const parley_stat_field_t *f = &list.fields [i];
        char value [64];
        switch (f->kind) {
            case PARLEY_STAT_UINT:
                snprintf (value, sizeof value, "%llu", (unsigned long long) f->uint_value);
                break;
            case PARLEY_STAT_INT:
                snprintf (value, sizeof value, "%lld", (long long) f->int_value);
                break;
            case PARLEY_STAT_NUM:
                snprintf (value, sizeof value, "%.2f", f->num_value);
                break;
            case PARLEY_STAT_BOOL:
                snprintf (value, sizeof value, "%s", f->uint_value ? "true" : "false");
                break;
            case PARLEY_STAT_TEXT:
                snprintf (value, sizeof value, "%s", f->text);
                break;
            default: {
                //  A map or a list (model_roles): as compact JSON, whole.
                json_t *json = mpjs_decode (f->value, f->value_size);
                char *text = json ? json_dumps (json, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
                json_decref (json);
                printf ("%-16s %s  %s\n", f->name, text ? text : "(undecodable)", f->help);
                free (text);
                continue;
            }
        }
        printf ("%-16s %14s %-10s %s\n", f->name, value, f->unit, f->help);
    }
    return PARLEY_EXIT_OK;
}
