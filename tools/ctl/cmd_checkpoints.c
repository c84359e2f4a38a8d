// SPDX-License-Identifier: MIT
/*  parley-ctl checkpoints: every kept checkpoint, oldest first. */
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
    for (size_t i = 0; i < parley_checkpoint_list_count (list); i++)
        ctl_print_checkpoint (ctl, parley_checkpoint_list_at (list, i));
    if (parley_checkpoint_list_dropped (list) && !ctl->json)
        printf ("(%llu older checkpoints folded away by the retention bound)\n",
                (unsigned long long) parley_checkpoint_list_dropped (list));
    parley_checkpoint_list_destroy (&list);
    return PARLEY_EXIT_OK;
}
