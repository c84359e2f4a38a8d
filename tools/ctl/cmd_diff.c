/*  parley-ctl diff N M: what differs from checkpoint N to checkpoint M
    ("- key" for a key removed). */
#include "ctl.h"
#include "pconfig.h"
#include "workflow_requests.h"

int
cmd_diff (ctl_t *ctl)
{
    uint64_t from, to;
    if (!ctl_uint_arg (ctl, 0, "the first checkpoint", &from)
    ||  !ctl_uint_arg (ctl, 1, "the second checkpoint", &to))
        return PARLEY_EXIT_USAGE;
    char err [256] = "";
    pmsg_t *diff = ctl_expect (wfreq_checkpoint (ctl->link, to, (int64_t) from, err, sizeof err),
                               PMSG_CHECKPOINT_STATE, "CHECKPOINT", err);
    if (!diff)
        return PARLEY_EXIT_FAILURE;
    ctl_print_entries (ctl, diff);
    pmsg_destroy (&diff);
    return PARLEY_EXIT_OK;
}
