// SPDX-License-Identifier: MIT
/*  parley-ctl workflow: status, holder, turn and revisions. */
#include "ctl.h"
#include "pconfig.h"

int
cmd_workflow (ctl_t *ctl)
{
    parley_workflow_t *info = NULL;
    int rc = ctl_check (ctl, parley_client_workflow (ctl->link, &info), "WORKFLOW");
    if (rc == PARLEY_EXIT_OK)
        ctl_print_info (ctl, info);
    parley_workflow_destroy (&info);
    return rc;
}
