// SPDX-License-Identifier: MIT
/*  parley-ctl checkpoints: every kept checkpoint, oldest first. --json:
    one document, {"checkpoints": [...], "dropped": N}. */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"

int
cmd_checkpoints (ctl_t *ctl)
{
    parley_checkpoint_list_t list;
    int rc = ctl_check (ctl, parley_client_checkpoints (ctl->link, &list), "CHECKPOINTS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    if (ctl->json) {
        json_t *all = json_array ();
        for (size_t i = 0; i < list.count; i++)
            json_array_append_new (all, wfjson_checkpoint (&list.checkpoints [i]));
        ctl_print_json (json_pack ("{s:o, s:I}", "checkpoints", all,
                                   "dropped", (json_int_t) list.dropped));
        return PARLEY_EXIT_OK;
    }
    for (size_t i = 0; i < list.count; i++)
        ctl_print_checkpoint (ctl, &list.checkpoints [i]);
    if (list.dropped)
        printf ("(%llu older checkpoints folded away by the retention bound)\n",
                (unsigned long long) list.dropped);
    return PARLEY_EXIT_OK;
}
