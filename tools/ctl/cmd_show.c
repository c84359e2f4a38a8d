// SPDX-License-Identifier: MIT
/*  parley-ctl show N: the shared state at checkpoint N, and what changed
    from N-1 (old and new values, when N-1 is kept). --json: one document,
    {"checkpoint", "entries", "changes": a diff as parley-ctl diff's}. */
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
    //  What is kept of the checkpoint is copied (JSON) or printed before
    //  the next request.
    json_t *json = ctl->json ? json_pack ("{s:o, s:o}", "checkpoint",
                                          wfjson_checkpoint (parley_checkpoint_state_info (state)),
                                          "entries", wfjson_entries (state))
                             : NULL;
    if (!ctl->json) {
        ctl_print_checkpoint (ctl, parley_checkpoint_state_info (state));
        ctl_print_entries (state);
    }
    parley_checkpoint_state_destroy (&state);
    //  The previous checkpoint may have been folded away: then there is
    //  no "what changed", and that is no error.
    json_t *changes = NULL;
    if (number > 0) {
        parley_checkpoint_list_t *list = NULL;
        bool kept = false;
        if (parley_client_checkpoints (ctl->link, &list) == PARLEY_OK)
            for (size_t i = 0; i < parley_checkpoint_list_count (list); i++)
                kept |= parley_checkpoint_number (parley_checkpoint_list_at (list, i))
                        == number - 1;
        parley_checkpoint_list_destroy (&list);
        if (kept)
            changes = ctl_diff (ctl, number - 1, number, false, &rc);
    }
    if (ctl->json) {
        if (changes)
            json_object_set_new (json, "changes", changes);
        ctl_print_json (json);
    }
    else
    if (changes) {
        printf ("changed since %llu:\n", (unsigned long long) number - 1);
        ctl_print_diff (changes, 100);
        json_decref (changes);
    }
    return rc;
}
