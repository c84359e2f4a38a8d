// SPDX-License-Identifier: MIT
/*  parley-ctl watch [KEY]...: follows a workflow turn by turn. For each
    WORKFLOW_EVENT it prints who acted, what their turn changed (the
    difference between the event's checkpoint and the one before) and who
    is next; when the run ends, the values of the KEYs given (e.g. the
    final report). Exit 0 when the workflow is done, 1 when it failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

//  One line per changed key: arrays by length, the rest by value (cut).
static void
s_print_change (const parley_entry_t *entry)
{
    const char *key = parley_entry_key (entry);
    if (parley_entry_removed (entry)) {
        printf ("      %s removed\n", key);
        return;
    }
    json_t *value = parley_entry_value (entry)
                  ? mpjs_decode (parley_entry_value (entry), parley_entry_value_size (entry))
                  : NULL;
    if (json_is_array (value)) {
        printf ("      %s: %zu items\n", key, json_array_size (value));
        //  Items that describe themselves (issues) are worth reading.
        for (size_t i = 0; i < json_array_size (value) && i < 8; i++) {
            const json_t *item = json_array_get (value, i);
            const char *text = json_string_value (json_object_get (item, "description"));
            const char *category = json_string_value (json_object_get (item, "category"));
            if (text && category)
                printf ("        - [%s] %s\n", category, text);
        }
        json_decref (value);
        return;
    }
    char *text = value ? json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY
                                            | JSON_REAL_PRECISION (4)) : NULL;
    printf ("      %s = %.100s%s\n", key, text ? text : "null",
            text && strlen (text) > 100 ? "..." : "");
    free (text);
    json_decref (value);
}

static void
s_print_turn (ctl_t *ctl, const parley_wf_event_t *event, const char *previous)
{
    const char *holder = parley_wf_event_holder (event);
    const char *agent = parley_wf_event_agent (event);
    printf ("turn %-3llu %-10s %s -> %s  [%s, revisions %llu]%s%s\n",
            (unsigned long long) parley_wf_event_turn (event), parley_wf_event_name (event),
            previous [0] ? previous : "(start)", *holder ? holder : "(end)",
            parley_wf_event_status_name (event),
            (unsigned long long) parley_wf_event_revisions (event),
            *agent ? "  agent " : "", agent);
    if (*parley_wf_event_reason (event))
        printf ("      reason: %s\n", parley_wf_event_reason (event));
    uint64_t checkpoint = parley_wf_event_checkpoint (event);
    if (checkpoint == 0 || parley_wf_event_kind (event) == PARLEY_WF_EVENT_RESUMED)
        return;
    parley_checkpoint_state_t *diff = NULL;
    if (parley_client_checkpoint_diff (ctl->link, checkpoint, checkpoint - 1, &diff) == PARLEY_OK)
        for (size_t i = 0; i < parley_checkpoint_state_count (diff); i++)
            s_print_change (parley_checkpoint_state_at (diff, i));
    parley_checkpoint_state_destroy (&diff);
}

//  The KEYs' values once the run ended: strings as they are.
static void
s_print_keys (ctl_t *ctl)
{
    parley_state_t *state = NULL;
    if (parley_client_get (ctl->link, ctl->args, ctl->arg_count, &state) != PARLEY_OK) {
        parley_state_destroy (&state);
        return;
    }
    for (size_t i = 0; i < parley_state_count (state); i++) {
        const parley_entry_t *entry = parley_state_at (state, i);
        printf ("\n%s:\n", parley_entry_key (entry));
        const void *bytes = parley_entry_value (entry);
        json_t *value = bytes ? mpjs_decode (bytes, parley_entry_value_size (entry)) : NULL;
        if (json_is_string (value))
            printf ("%s\n", json_string_value (value));
        else {
            ctl_print_value (bytes, parley_entry_value_size (entry));
            putchar ('\n');
        }
        json_decref (value);
    }
    parley_state_destroy (&state);
}

static int
s_exit_of (parley_wf_status_t status)
{
    return status == PARLEY_WF_DONE ? PARLEY_EXIT_OK
         : status == PARLEY_WF_FAILED ? PARLEY_EXIT_FAILURE : -1;
}

int
cmd_watch (ctl_t *ctl)
{
    //  Subscribed before asking, so no turn falls between the two.
    parley_client_workflow_events (ctl->link, true);
    char previous [PARLEY_NAME_MAX + 1] = "";
    parley_workflow_t *info = NULL;
    if (ctl_check (ctl, parley_client_workflow (ctl->link, &info), "WORKFLOW") != PARLEY_EXIT_OK)
        return PARLEY_EXIT_FAILURE;
    //  The first turn has no one before it.
    if (parley_workflow_status (info) != PARLEY_WF_PENDING)
        snprintf (previous, sizeof previous, "%s", parley_workflow_holder (info));
    printf ("workflow %s, %s holds turn %llu\n", parley_workflow_status_name (info),
            previous [0] ? previous : "nobody", (unsigned long long) parley_workflow_turn (info));
    fflush (stdout);
    int rc = s_exit_of (parley_workflow_status (info));
    parley_workflow_destroy (&info);
    parley_wf_event_t *event = NULL;
    while (rc < 0 && !parley_client_stopped (ctl->link)) {
        parley_client_wait (ctl->link, 500);
        while (rc < 0 && parley_client_workflow_event (ctl->link, &event)) {
            s_print_turn (ctl, event, previous);
            snprintf (previous, sizeof previous, "%s", parley_wf_event_holder (event));
            rc = s_exit_of (parley_wf_event_status (event));
            fflush (stdout);
        }
    }
    parley_wf_event_destroy (&event);
    if (rc >= 0 && ctl->arg_count)
        s_print_keys (ctl);
    return rc < 0 ? PARLEY_EXIT_FAILURE : rc;
}
