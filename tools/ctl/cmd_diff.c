// SPDX-License-Identifier: MIT
/*  parley-ctl diff N M: what differs from checkpoint N to checkpoint M
    ("- key" for a key removed). */
#include "ctl.h"
#include "pconfig.h"

int
cmd_diff (ctl_t *ctl)
{
    uint64_t from, to;
    if (!ctl_uint_arg (ctl, 0, "the first checkpoint", &from)
    ||  !ctl_uint_arg (ctl, 1, "the second checkpoint", &to))
        return PARLEY_EXIT_USAGE;
    parley_checkpoint_state_t *diff = NULL;
    int rc = ctl_check (ctl, parley_client_checkpoint_diff (ctl->link, to, from, &diff),
                        "CHECKPOINT");
    if (rc == PARLEY_EXIT_OK)
        ctl_print_entries (ctl, diff);
    parley_checkpoint_state_destroy (&diff);
    return rc;
}
