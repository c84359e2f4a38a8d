/*  parley-ctl show N: the shared state at checkpoint N, and what changed
    from N-1 (when N-1 is kept). */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"
#include "workflow_requests.h"

int
cmd_show (ctl_t *ctl)
{
    uint64_t number;
    if (!ctl_uint_arg (ctl, 0, "the checkpoint number", &number))
        return PARLEY_EXIT_USAGE;
    char err [256] = "";
    pmsg_t *state = ctl_expect (wfreq_checkpoint (ctl->link, number, -1, err, sizeof err),
                                PMSG_CHECKPOINT_STATE, "CHECKPOINT", err);
    if (!state)
        return PARLEY_EXIT_FAILURE;
    ctl_print_checkpoint (ctl, pmsg_field (state, "info"));
    ctl_print_entries (ctl, state);
    pmsg_destroy (&state);
    if (number == 0)
        return PARLEY_EXIT_OK;
    pmsg_t *diff = wfreq_checkpoint (ctl->link, number, (int64_t) number - 1, err, sizeof err);
    if (diff && pmsg_type (diff) == PMSG_CHECKPOINT_STATE) {
        if (!ctl->json)
            printf ("changed since %llu:\n", (unsigned long long) number - 1);
        ctl_print_entries (ctl, diff);
    }
    pmsg_destroy (&diff);
    return PARLEY_EXIT_OK;
}
