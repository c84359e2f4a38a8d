// SPDX-License-Identifier: MIT
/*  parley-ctl --role R submit NEXT [OP KEY JSON]...: a person's turn. The
    state updates and the hand-over to NEXT go in one HANDOVER, atomic like
    any agent's. OP is update, set, clear or delete (clear and delete take
    no JSON); NEXT may be "-" with --status done or failed. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "jsonops.h"
#include "pconfig.h"

static json_t *
s_ops (ctl_t *ctl)
{
    json_t *ops = json_array ();
    for (size_t i = 1; ops && i < ctl->arg_count; ) {
        const char *op = ctl->args [i];
        bool valued = strcmp (op, "update") == 0 || strcmp (op, "set") == 0;
        bool bare = strcmp (op, "clear") == 0 || strcmp (op, "delete") == 0;
        if ((!valued && !bare) || i + 1 >= ctl->arg_count || (valued && i + 2 >= ctl->arg_count)) {
            fprintf (stderr, "parley-ctl: submit wants OP KEY [JSON] triples after NEXT "
                     "(OP: update, set, clear, delete), not \"%s\"\n", op);
            json_decref (ops);
            return NULL;
        }
        json_t *item = json_pack ("{s:s, s:s}", "op", op, "key", ctl->args [i + 1]);
        if (valued) {
            json_error_t error;
            json_t *value = json_loads (ctl->args [i + 2], JSON_DECODE_ANY, &error);
            if (!value) {
                fprintf (stderr, "parley-ctl: the value of %s is not JSON: %s\n",
                         ctl->args [i + 1], error.text);
                json_decref (item);
                json_decref (ops);
                return NULL;
            }
            json_object_set_new (item, "value", value);
        }
        json_array_append_new (ops, item);
        i += valued ? 3 : 2;
    }
    return ops;
}

int
cmd_submit (ctl_t *ctl)
{
    if (ctl->arg_count < 1) {
        fprintf (stderr, "parley-ctl: submit needs NEXT, the role that takes the turn "
                 "(\"-\" with --status done or failed)\n");
        return PARLEY_EXIT_USAGE;
    }
    parley_wf_status_t status = parley_wf_status_parse (ctl->status);
    if (ctl->status && status == PARLEY_WF_UNSET) {
        fprintf (stderr, "parley-ctl: --status is in_progress, revision, done or failed, "
                 "not \"%s\"\n", ctl->status);
        return PARLEY_EXIT_USAGE;
    }
    json_t *json = s_ops (ctl);
    if (!json)
        return PARLEY_EXIT_USAGE;
    char why [256];
    jsonops_t *ops = jsonops_new (json, why, sizeof why);
    if (!ops) {
        fprintf (stderr, "parley-ctl: %s\n", why);
        json_decref (json);
        return PARLEY_EXIT_USAGE;
    }
    parley_handover_t *handover = parley_handover_new ();
    parley_workflow_t *info = NULL;
    int rc = ctl_check (ctl, handover ? PARLEY_OK : PARLEY_ERR_NOMEM, "HANDOVER");
    if (rc == PARLEY_EXIT_OK) {
        //  A refusal here is kept by the builder and reported by the request.
        jsonops_fill (ops, parley_handover_ops (handover));
        parley_handover_set_next (handover, strcmp (ctl->args [0], "-") == 0 ? NULL
                                                                               : ctl->args [0]);
        parley_handover_set_status (handover, status);
        parley_handover_set_reason (handover, ctl->reason);
        rc = ctl_check (ctl, parley_client_handover (ctl->link, handover, &info), "HANDOVER");
    }
    if (rc == PARLEY_EXIT_OK)
        ctl_print_info (ctl, info);
    parley_workflow_destroy (&info);
    parley_handover_destroy (&handover);
    jsonops_destroy (&ops);
    json_decref (json);
    return rc;
}
