// SPDX-License-Identifier: MIT
/*  parley-ctl watch [KEY]...: follows a workflow turn by turn. For each
    WORKFLOW_EVENT it prints who acted, what their turn changed (the
    difference between the event's checkpoint and the one before, with
    the values before) and who is next; when the run ends, the values of
    the KEYs given (e.g. the final report). Exit 0 when the workflow is
    done, 1 when it failed.

    Each line says what it counts: a turn line carries the turn's number,
    the line of the run's end does not (it ends the turn before it); an
    appended list says how many entries the turn added and how many it
    holds, and, when its entries name themselves by "id", how many
    distinct ones (a scene's objects are appended again as each role
    refines them: twelve entries, three objects).

    A turn announced again (an agent, or a person's tool, came to take
    it) is one line naming who took it.

    --json: one JSON object per event and line (the change as parley-ctl
    diff's; "again": true for a turn announced again), then
    {"keys": {...}} when the run ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

//  Distinct "id"s among an array's objects (0 when none has one).
static size_t
s_distinct_ids (const json_t *array)
{
    json_t *seen = json_object ();
    size_t i;
    const json_t *item;
    json_array_foreach (array, i, item) {
        const char *id = json_string_value (json_object_get (item, "id"));
        if (id)
            json_object_set_new (seen, id, json_true ());
    }
    size_t count = json_object_size (seen);
    json_decref (seen);
    return count;
}

//  True when `old` is the start of `now`: the turn appended to it.
static bool
s_appended (const json_t *old, const json_t *now)
{
    if (!json_is_array (old) || json_array_size (old) > json_array_size (now))
        return false;
    for (size_t i = 0; i < json_array_size (old); i++)
        if (!json_equal (json_array_get (old, i), json_array_get (now, i)))
            return false;
    return true;
}

static void
s_print_list (const char *key, const json_t *old, const json_t *now)
{
    size_t size = json_array_size (now);
    size_t ids = s_distinct_ids (now);
    char distinct [64] = "";
    if (ids)
        snprintf (distinct, sizeof distinct, " (%zu distinct id%s)", ids, ids == 1 ? "" : "s");
    size_t from = 0;
    if (s_appended (old, now)) {
        from = json_array_size (old);
        printf ("      %s: +%zu entr%s, %zu in all%s\n", key, size - from,
                size - from == 1 ? "y" : "ies", size, distinct);
    }
    else
        printf ("      %s: %zu entr%s, %zu before%s\n", key, size, size == 1 ? "y" : "ies",
                json_array_size (old), distinct);
    //  New items that describe themselves (issues) are worth reading.
    for (size_t i = from; i < size && i < from + 8; i++) {
        const json_t *item = json_array_get (now, i);
        const char *text = json_string_value (json_object_get (item, "description"));
        const char *category = json_string_value (json_object_get (item, "category"));
        if (text && category)
            printf ("        - [%s] %s\n", category, text);
    }
}

//  One line per changed key: lists by what the turn added, the rest by
//  value (cut), with the value before when there was one.
static void
s_print_change (const json_t *item)
{
    const char *key = json_string_value (json_object_get (item, "key"));
    const json_t *old = json_object_get (item, "old");
    const json_t *now = json_object_get (item, "new");
    if (!now) {
        printf ("      %s removed\n", key);
        return;
    }
    if (json_is_array (now)) {
        s_print_list (key, old, now);
        return;
    }
    char *text = json_dumps (now, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (4));
    char *was = old && !json_is_null (old)
              ? json_dumps (old, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (4)) : NULL;
    printf ("      %s = %.100s%s", key, text ? text : "null",
            text && strlen (text) > 100 ? "..." : "");
    if (was && strlen (was) <= 40)
        printf ("  (was %s)", was);
    putchar ('\n');
    free (text);
    free (was);
}

//  The event's line: a turn, a person's turn, the run's end, a resume.
static void
s_print_event (const parley_wf_event_t *event, const char *previous)
{
    const char *from = previous [0] ? previous : "(start)";
    const char *holder = parley_wf_event_holder (event);
    const char *agent = parley_wf_event_agent (event);
    unsigned long long turn = (unsigned long long) parley_wf_event_turn (event);
    unsigned long long revisions = (unsigned long long) parley_wf_event_revisions (event);
    const char *status = parley_wf_event_status_name (event);
    parley_wf_event_kind_t kind = parley_wf_event_kind (event);
    switch (kind) {
        case PARLEY_WF_EVENT_DONE:
        case PARLEY_WF_EVENT_FAILED:
            printf ("end      %s ended the run after turn %llu: %s  [revisions %llu]\n",
                    from, turn, status, revisions);
            break;
        case PARLEY_WF_EVENT_RESUMED:
            printf ("resumed  from checkpoint %llu: %s holds turn %llu  [%s, revisions %llu]\n",
                    (unsigned long long) parley_wf_event_checkpoint (event),
                    *holder ? holder : "nobody", turn, status, revisions);
            break;
        default:
            printf ("turn %-3llu %s -> %s  [%s, revisions %llu]%s%s\n", turn, from,
                    *holder ? holder : "(end)", status, revisions,
                    kind == PARLEY_WF_EVENT_PAUSED ? "  waiting for a person"
                    : *agent ? "  agent " : "",
                    kind == PARLEY_WF_EVENT_PAUSED ? "" : agent);
            break;
    }
    if (*parley_wf_event_reason (event))
        printf ("      reason: %s\n", parley_wf_event_reason (event));
}

//  The turn and checkpoint of the last event printed: the broker announces
//  a turn again when an agent (or a person's tool) comes to take it.
static uint64_t s_last_turn, s_last_checkpoint;

static void
s_turn (ctl_t *ctl, const parley_wf_event_t *event, const char *previous)
{
    parley_wf_event_kind_t kind = parley_wf_event_kind (event);
    uint64_t turn = parley_wf_event_turn (event);
    uint64_t checkpoint = parley_wf_event_checkpoint (event);
    bool again = (kind == PARLEY_WF_EVENT_TURN || kind == PARLEY_WF_EVENT_PAUSED)
              && turn == s_last_turn && checkpoint == s_last_checkpoint;
    s_last_turn = turn;
    s_last_checkpoint = checkpoint;
    if (again && !ctl->json) {
        if (*parley_wf_event_agent (event))
            printf ("         %s takes the turn (%s)\n", parley_wf_event_agent (event),
                    parley_wf_event_holder (event));
        return;
    }
    json_t *json = NULL;
    if (ctl->json)
        json = json_pack ("{s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s}",
                          "event", parley_wf_event_name (event),
                          "status", parley_wf_event_status_name (event),
                          "turn", (json_int_t) turn,
                          "revisions", (json_int_t) parley_wf_event_revisions (event),
                          "from", previous, "holder", parley_wf_event_holder (event),
                          "agent", parley_wf_event_agent (event),
                          "reason", parley_wf_event_reason (event));
    else
        s_print_event (event, previous);
    if (parley_wf_event_has_checkpoint (event) && json)
        json_object_set_new (json, "checkpoint", json_integer ((json_int_t) checkpoint));
    if (again && json)
        json_object_set_new (json, "again", json_true ());
    json_t *diff = NULL;
    int rc;
    if (checkpoint > 0 && kind != PARLEY_WF_EVENT_RESUMED && !again)
        diff = ctl_diff (ctl, checkpoint - 1, checkpoint, true, &rc);
    if (json) {
        if (diff)
            json_object_set_new (json, "changes", diff);
        ctl_print_json (json);
        return;
    }
    size_t i;
    const json_t *item;
    json_array_foreach (json_object_get (diff, "entries"), i, item)
        s_print_change (item);
    json_decref (diff);
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
    json_t *keys = json_object ();
    for (size_t i = 0; i < parley_state_count (state); i++) {
        const parley_entry_t *entry = parley_state_at (state, i);
        const void *bytes = parley_entry_value (entry);
        size_t size = parley_entry_value_size (entry);
        json_t *value = bytes ? mpjs_decode (bytes, size) : NULL;
        if (ctl->json) {
            json_object_set_new (keys, parley_entry_key (entry), value ? value : json_null ());
            continue;
        }
        printf ("\n%s:\n", parley_entry_key (entry));
        if (json_is_string (value))
            printf ("%s\n", json_string_value (value));
        else {
            ctl_print_value (bytes, size);
            putchar ('\n');
        }
        json_decref (value);
    }
    parley_state_destroy (&state);
    if (ctl->json)
        ctl_print_json (json_pack ("{s:o}", "keys", keys));
    else
        json_decref (keys);
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
    if (ctl_check (ctl, parley_client_workflow (ctl->link, &info), "WORKFLOW") != PARLEY_EXIT_OK) {
        parley_workflow_destroy (&info);
        return PARLEY_EXIT_FAILURE;
    }
    //  The first turn has no one before it.
    if (parley_workflow_status (info) != PARLEY_WF_PENDING)
        snprintf (previous, sizeof previous, "%s", parley_workflow_holder (info));
    if (ctl->json)
        ctl_print_json (wfjson_info (info));
    else
        printf ("workflow %s, %s holds turn %llu\n", parley_workflow_status_name (info),
                previous [0] ? previous : "nobody",
                (unsigned long long) parley_workflow_turn (info));
    fflush (stdout);
    int rc = s_exit_of (parley_workflow_status (info));
    parley_workflow_destroy (&info);
    parley_wf_event_t *event = NULL;
    while (rc < 0 && !parley_client_stopped (ctl->link)) {
        parley_client_wait (ctl->link, 500);
        //  The event is ours: it stays valid over s_turn's requests.
        while (rc < 0 && parley_client_workflow_event (ctl->link, &event)) {
            s_turn (ctl, event, previous);
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
