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
    parley_checkpoint_state_t state;
    int rc = ctl_check (ctl, parley_client_checkpoint (ctl->link, number, &state), "CHECKPOINT");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    ctl_print_checkpoint (ctl, &state.info);
    ctl_print_entries (ctl, &state);
    if (number == 0)
        return PARLEY_EXIT_OK;
    //  The results point into the client: the state above is printed
    //  before this second request.
    if (parley_client_checkpoint_diff (ctl->link, number, number - 1, &state) == PARLEY_OK) {
        if (!ctl->json)
            printf ("changed since %llu:\n", (unsigned long long) number - 1);
        ctl_print_entries (ctl, &state);
    }
    return PARLEY_EXIT_OK;
}
