// SPDX-License-Identifier: MIT
/*  parley-ctl resume N: fork the run from checkpoint N (a CURVE broker
    wants a key with the admin right). */
#include "ctl.h"
#include "pconfig.h"

int
cmd_resume (ctl_t *ctl)
{
    uint64_t number;
    if (!ctl_uint_arg (ctl, 0, "the checkpoint number", &number))
        return PARLEY_EXIT_USAGE;
    parley_workflow_t *info = NULL;
    int rc = ctl_check (ctl, parley_client_resume (ctl->link, number, &info), "RESUME");
    if (rc == PARLEY_EXIT_OK)
        ctl_print_info (ctl, info);
    parley_workflow_destroy (&info);
    return rc;
}
