/*  parley-ctl checkpoints: every kept checkpoint, oldest first. */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"
#include "workflow_requests.h"

int
cmd_checkpoints (ctl_t *ctl)
{
    char err [256] = "";
    pmsg_t *list = ctl_expect (wfreq_checkpoints (ctl->link, err, sizeof err),
                               PMSG_CHECKPOINT_LIST, "CHECKPOINTS", err);
    if (!list)
        return PARLEY_EXIT_FAILURE;
    const msgpack_object *all = pmsg_field (list, "checkpoints");
    for (uint32_t i = 0; all && i < all->via.array.size; i++)
        ctl_print_checkpoint (ctl, &all->via.array.ptr [i]);
    uint64_t dropped = pmsg_uint (list, "dropped", 0);
    if (dropped && !ctl->json)
        printf ("(%llu older checkpoints folded away by the retention bound)\n",
                (unsigned long long) dropped);
    pmsg_destroy (&list);
    return PARLEY_EXIT_OK;
}
