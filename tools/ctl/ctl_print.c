// SPDX-License-Identifier: MIT
/*  ctl_print - parley-ctl's output: text for people, --json for scripts,
    and the common error path of a request. */
#include "ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjs.h"
#include "wfjson.h"
#include "pconfig.h"

int
ctl_check (ctl_t *ctl, parley_err_t rc, const char *what)
{
    if (rc == PARLEY_OK)
        return PARLEY_EXIT_OK;
    fprintf (stderr, "parley-ctl: %s: %s: %s\n", what, parley_strerror (rc),
             parley_client_error_text (ctl->link));
    return PARLEY_EXIT_FAILURE;
}

bool
ctl_uint_arg (ctl_t *ctl, size_t index, const char *name, uint64_t *value)
{
    char *end = NULL;
    if (index >= ctl->arg_count) {
        fprintf (stderr, "parley-ctl: missing %s\n", name);
        return false;
    }
    const char *text = ctl->args [index];
    unsigned long long parsed = strtoull (text, &end, 10);
    if (!*text || *end || text [0] == '-') {
        fprintf (stderr, "parley-ctl: %s must be a number, not \"%s\"\n", name, text);
        return false;
    }
    *value = parsed;
    return true;
}

static void
s_dump (json_t *json)
{
    char *text = json ? json_dumps (json, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (6))
                      : NULL;
    fputs (text ? text : "null", stdout);
    free (text);
}

void
ctl_print_value (const void *value, size_t size)
{
    json_t *json = value ? mpjs_decode (value, size) : NULL;
    s_dump (json);
    json_decref (json);
}

static void
s_print_json (json_t *json)
{
    s_dump (json);
    putchar ('\n');
    json_decref (json);
}

void
ctl_print_info (ctl_t *ctl, const parley_workflow_t *info)
{
    if (ctl->json) {
        s_print_json (wfjson_info (info));
        return;
    }
    const char *status = parley_workflow_status_name (info);
    const char *holder = parley_workflow_holder (info);
    const char *agent = parley_workflow_agent (info);
    printf ("status      %s\n", *status ? status : "?");
    printf ("holder      %s%s\n", *holder ? holder : "-",
            parley_workflow_paused (info) ? " (paused: waiting for a person)" : "");
    printf ("agent       %s\n", *agent ? agent : "-");
    printf ("turn        %llu of at most %llu\n", (unsigned long long) parley_workflow_turn (info),
            (unsigned long long) parley_workflow_max_turns (info));
    printf ("revisions   %llu of at most %llu\n",
            (unsigned long long) parley_workflow_revisions (info),
            (unsigned long long) parley_workflow_max_revisions (info));
    printf ("checkpoint  %llu\n", (unsigned long long) parley_workflow_checkpoint (info));
    if (*parley_workflow_reason (info))
        printf ("reason      %s\n", parley_workflow_reason (info));
}

void
ctl_print_checkpoint (ctl_t *ctl, const parley_checkpoint_t *info)
{
    if (ctl->json) {
        s_print_json (wfjson_checkpoint (info));
        return;
    }
    const char *holder = parley_checkpoint_holder (info);
    printf ("%6llu  turn %-4llu %-12s holder %-20s revisions %llu  changed %llu keys, %llu bytes\n",
            (unsigned long long) parley_checkpoint_number (info),
            (unsigned long long) parley_checkpoint_turn (info),
            parley_checkpoint_status_name (info), *holder ? holder : "-",
            (unsigned long long) parley_checkpoint_revisions (info),
            (unsigned long long) parley_checkpoint_changed (info),
            (unsigned long long) parley_checkpoint_bytes (info));
}

void
ctl_print_entries (const parley_checkpoint_state_t *state)
{
    for (size_t i = 0; i < parley_checkpoint_state_count (state); i++) {
        const parley_entry_t *entry = parley_checkpoint_state_at (state, i);
        if (parley_entry_removed (entry)) {
            printf ("- %s\n", parley_entry_key (entry));
            continue;
        }
        printf ("%s (%s) = ", parley_entry_key (entry), parley_entry_reducer (entry));
        ctl_print_value (parley_entry_value (entry), parley_entry_value_size (entry));
        putchar ('\n');
    }
}

void
ctl_print_json (json_t *json)
{
    s_print_json (json);
}

void
ctl_duration (uint64_t ms, char *buf, size_t size)
{
    uint64_t s = ms / 1000;
    if (s >= 86400)
        snprintf (buf, size, "%llud %02lluh %02llum", (unsigned long long) (s / 86400),
                  (unsigned long long) (s % 86400 / 3600), (unsigned long long) (s % 3600 / 60));
    else
    if (s >= 3600)
        snprintf (buf, size, "%lluh %02llum %02llus", (unsigned long long) (s / 3600),
                  (unsigned long long) (s % 3600 / 60), (unsigned long long) (s % 60));
    else
    if (s >= 60)
        snprintf (buf, size, "%llum %02llus", (unsigned long long) (s / 60),
                  (unsigned long long) (s % 60));
    else
        snprintf (buf, size, "%llu.%01llus", (unsigned long long) s,
                  (unsigned long long) (ms % 1000 / 100));
}

const char *
ctl_role (const parley_agent_t *agent, char *buf, size_t size)
{
    for (size_t i = 0; i < parley_agent_cap_count (agent); i++)
        if (strncmp (parley_agent_cap (agent, i), "role:", 5) == 0) {
            snprintf (buf, size, "%s", parley_agent_cap (agent, i) + 5);
            return buf;
        }
    return "-";
}

const char *
ctl_stat_unit (const parley_stat_t *field)
{
    //  queued_memory is bytes (PROTOCOL.md, STATS) but its name has no
    //  "bytes" in it, so the naming rule calls it a count.
    if (strcmp (parley_stat_name (field), "queued_memory") == 0)
        return "bytes";
    return parley_stat_unit (field);
}
