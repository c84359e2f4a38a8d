// SPDX-License-Identifier: MIT
/*  parley-ctl stats: every STATS field the broker sends, with its unit and
    the protocol's sentence for it. The list comes from libparley's
    generic decoding (parley_client_stats), so counters a newer
    broker adds (the journal's, say) show up without a change here.
    --json: one object, {"name": {"value": V, "unit": "U"}, ...}. */
#include <stdio.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

int
cmd_stats (ctl_t *ctl)
{
    parley_stats_t *list = NULL;
    int rc = ctl_check (ctl, parley_client_stats (ctl->link, &list), "STATS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    size_t count = parley_stats_count (list);
    if (ctl->json) {
        json_t *json = json_object ();
        for (size_t i = 0; i < count; i++) {
            const parley_stat_t *f = parley_stats_at (list, i);
            json_t *value = mpjs_decode (parley_stat_value (f), parley_stat_value_size (f));
            json_object_set_new (json, parley_stat_name (f),
                                 json_pack ("{s:o, s:s}", "value", value ? value : json_null (),
                                            "unit", parley_stat_unit (f)));
        }
        ctl_print_json (json);
        parley_stats_destroy (&list);
        return PARLEY_EXIT_OK;
    }
    for (size_t i = 0; i < count; i++) {
        const parley_stat_t *f = parley_stats_at (list, i);
        char value [64];
        switch (parley_stat_kind (f)) {
            case PARLEY_STAT_UINT:
                snprintf (value, sizeof value, "%llu", (unsigned long long) parley_stat_uint (f));
                break;
            case PARLEY_STAT_INT:
                snprintf (value, sizeof value, "%lld", (long long) parley_stat_int (f));
                break;
            case PARLEY_STAT_NUM:
                snprintf (value, sizeof value, "%.2f", parley_stat_num (f));
                break;
            case PARLEY_STAT_BOOL:
                snprintf (value, sizeof value, "%s", parley_stat_uint (f) ? "true" : "false");
                break;
            case PARLEY_STAT_TEXT:
                snprintf (value, sizeof value, "%s", parley_stat_text (f));
                break;
            default:
                snprintf (value, sizeof value, "(%zu bytes)", parley_stat_value_size (f));
                break;
        }
        printf ("%-16s %14s %-10s %s\n", parley_stat_name (f), value, parley_stat_unit (f),
                parley_stat_help (f));
    }
    parley_stats_destroy (&list);
    return PARLEY_EXIT_OK;
}
