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
s_print_change (const parley_checkpoint_entry_t *entry)
{
    if (entry->removed) {
        printf ("      %s removed\n", entry->key);
        return;
    }
    json_t *value = entry->value ? mpjs_decode (entry->value, entry->value_size) : NULL;
    if (json_is_array (value)) {
        printf ("      %s: %zu items\n", entry->key, json_array_size (value));
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
    printf ("      %s = %.100s%s\n", entry->key, text ? text : "null",
            text && strlen (text) > 100 ? "..." : "");
    free (text);
    json_decref (value);
}

static void
s_print_turn (ctl_t *ctl, const parley_workflow_event_t *event, const char *previous)
{
    printf ("turn %-3llu %-10s %s -> %s  [%s, revisions %llu]%s%s\n",
            (unsigned long long) event->turn, event->name,
            previous [0] ? previous : "(start)", event->holder [0] ? event->holder : "(end)",
            event->status_name, (unsigned long long) event->revisions,
            event->agent [0] ? "  agent " : "", event->agent);
    if (event->reason [0])
        printf ("      reason: %s\n", event->reason);
    if (event->checkpoint == 0 || event->kind == PARLEY_WF_EVENT_RESUMED)
        return;
    parley_checkpoint_state_t diff;
    if (parley_client_checkpoint_diff (ctl->link, event->checkpoint, event->checkpoint - 1,
                                       &diff) == PARLEY_OK)
        for (size_t i = 0; i < diff.count; i++)
            s_print_change (&diff.entries [i]);
}

//  The KEYs' values once the run ended: strings as they are.
static void
s_print_keys (ctl_t *ctl)
{
    parley_state_t state;
    if (parley_client_get (ctl->link, ctl->args, ctl->arg_count, &state) != PARLEY_OK)
        return;
    for (size_t i = 0; i < state.count; i++) {
        const parley_entry_t *entry = &state.entries [i];
        printf ("\n%s:\n", entry->key);
        json_t *value = entry->value ? mpjs_decode (entry->value, entry->value_size) : NULL;
        if (json_is_string (value))
            printf ("%s\n", json_string_value (value));
        else {
            ctl_print_value (entry->value, entry->value_size);
            putchar ('\n');
        }
        json_decref (value);
    }
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
    parley_workflow_t info;
    if (ctl_check (ctl, parley_client_workflow (ctl->link, &info), "WORKFLOW") != PARLEY_EXIT_OK)
        return PARLEY_EXIT_FAILURE;
    //  The first turn has no one before it.
    if (info.status != PARLEY_WF_PENDING)
        snprintf (previous, sizeof previous, "%s", info.holder);
    printf ("workflow %s, %s holds turn %llu\n", info.status_name,
            previous [0] ? previous : "nobody", (unsigned long long) info.turn);
    fflush (stdout);
    int rc = s_exit_of (info.status);
    while (rc < 0 && !parley_client_stopped (ctl->link)) {
        parley_client_wait (ctl->link, 500);
        parley_workflow_event_t event;
        //  The event stays valid over s_print_turn's request: it is not
        //  kept in the request's buffers.
        while (rc < 0 && parley_client_workflow_event (ctl->link, &event)) {
            s_print_turn (ctl, &event, previous);
            snprintf (previous, sizeof previous, "%s", event.holder);
            rc = s_exit_of (event.status);
            fflush (stdout);
        }
    }
    if (rc >= 0 && ctl->arg_count)
        s_print_keys (ctl);
    return rc < 0 ? PARLEY_EXIT_FAILURE : rc;
}
