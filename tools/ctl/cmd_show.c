// SPDX-License-Identifier: MIT
/*  parley-ctl show N: the shared state at checkpoint N, and what changed
    from N-1 (when N-1 is kept). */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"

int
cmd_show (ctl_t *ctl)
{
    uint64_t number;
    if (!ctl_uint_arg (ctl, 0, "the checkpoint number", &number))
        return PARLEY_EXIT_USAGE;
    parley_checkpoint_state_t *state = NULL;
    int rc = ctl_check (ctl, parley_client_checkpoint (ctl->link, number, &state), "CHECKPOINT");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    ctl_print_checkpoint (ctl, parley_checkpoint_state_info (state));
    ctl_print_entries (ctl, state);
    //  The same result object, filled again with the diff.
    if (number > 0
    &&  parley_client_checkpoint_diff (ctl->link, number, number - 1, &state) == PARLEY_OK) {
        if (!ctl->json)
            printf ("changed since %llu:\n", (unsigned long long) number - 1);
        ctl_print_entries (ctl, state);
    }
    parley_checkpoint_state_destroy (&state);
    return PARLEY_EXIT_OK;
}
