// SPDX-License-Identifier: MIT
/*  parley-ctl diff N M: what differs from checkpoint N to checkpoint M,
    each key with its value at N and at M ("(absent)" at N for a key M
    added, "(removed)" at M for one it removed). --json: one document,
    {"from", "to", "info", "entries": [{"key", "reducer", "old", "new"}]}. */
#include "ctl.h"
#include "pconfig.h"

int
cmd_diff (ctl_t *ctl)
{
    uint64_t from, to;
    if (!ctl_uint_arg (ctl, 0, "the first checkpoint", &from)
    ||  !ctl_uint_arg (ctl, 1, "the second checkpoint", &to))
        return PARLEY_EXIT_USAGE;
    int rc;
    json_t *diff = ctl_diff (ctl, from, to, false, &rc);
    if (!diff)
        return rc;
    if (ctl->json)
        ctl_print_json (diff);
    else {
        ctl_print_diff (diff, 0);
        json_decref (diff);
    }
    return PARLEY_EXIT_OK;
}
