/*  parley-ctl workflow: status, holder, turn and revisions. */
#include "ctl.h"
#include "pconfig.h"
#include "workflow_requests.h"

int
cmd_workflow (ctl_t *ctl)
{
    char err [256] = "";
    pmsg_t *info = ctl_expect (wfreq_info (ctl->link, err, sizeof err), PMSG_WORKFLOW_INFO,
                               "WORKFLOW", err);
    if (!info)
        return PARLEY_EXIT_FAILURE;
    ctl_print_info (ctl, info);
    pmsg_destroy (&info);
    return PARLEY_EXIT_OK;
}
