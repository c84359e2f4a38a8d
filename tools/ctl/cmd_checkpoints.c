// SPDX-License-Identifier: MIT
/*  parley-ctl checkpoints: every kept checkpoint, oldest first. --json:
    one document, {"checkpoints": [...], "dropped": N}. */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"

int
cmd_checkpoints (ctl_t *ctl)
{
    parley_checkpoint_list_t *list = NULL;
    int rc = ctl_check (ctl, parley_client_checkpoints (ctl->link, &list), "CHECKPOINTS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    size_t count = parley_checkpoint_list_count (list);
    if (ctl->json) {
        json_t *all = json_array ();
        for (size_t i = 0; i < count; i++)
            json_array_append_new (all, wfjson_checkpoint (parley_checkpoint_list_at (list, i)));
        ctl_print_json (json_pack ("{s:o, s:I}", "checkpoints", all, "dropped",
                                   (json_int_t) parley_checkpoint_list_dropped (list)));
        parley_checkpoint_list_destroy (&list);
        return PARLEY_EXIT_OK;
    }
    for (size_t i = 0; i < count; i++)
        ctl_print_checkpoint (ctl, parley_checkpoint_list_at (list, i));
    if (parley_checkpoint_list_dropped (list))
        printf ("(%llu older checkpoints folded away by the retention bound)\n",
                (unsigned long long) parley_checkpoint_list_dropped (list));
    parley_checkpoint_list_destroy (&list);
    return PARLEY_EXIT_OK;
}
