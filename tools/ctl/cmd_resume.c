/*  parley-ctl resume N: fork the run from checkpoint N. */
#include "ctl.h"
#include "pconfig.h"
#include "workflow_requests.h"

int
cmd_resume (ctl_t *ctl)
{
    uint64_t number;
    if (!ctl_uint_arg (ctl, 0, "the checkpoint number", &number))
        return PARLEY_EXIT_USAGE;
    char err [256] = "";
    pmsg_t *info = ctl_expect (wfreq_resume (ctl->link, number, err, sizeof err),
                               PMSG_WORKFLOW_INFO, "RESUME", err);
    if (!info)
        return PARLEY_EXIT_FAILURE;
    ctl_print_info (ctl, info);
    pmsg_destroy (&info);
    return PARLEY_EXIT_OK;
}
