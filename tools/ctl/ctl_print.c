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
    printf ("status      %s\n", info->status_name [0] ? info->status_name : "?");
    printf ("holder      %s%s\n", info->holder [0] ? info->holder : "-",
            info->paused ? " (paused: waiting for a person)" : "");
    printf ("agent       %s\n", info->agent [0] ? info->agent : "-");
    printf ("turn        %llu of at most %llu\n", (unsigned long long) info->turn,
            (unsigned long long) info->max_turns);
    printf ("revisions   %llu of at most %llu\n", (unsigned long long) info->revisions,
            (unsigned long long) info->max_revisions);
    printf ("checkpoint  %llu\n", (unsigned long long) info->checkpoint);
    if (info->reason [0])
        printf ("reason      %s\n", info->reason);
}

void
ctl_print_checkpoint (ctl_t *ctl, const parley_checkpoint_info_t *info)
{
    if (ctl->json) {
        s_print_json (wfjson_checkpoint (info));
        return;
    }
    printf ("%6llu  turn %-4llu %-12s holder %-20s revisions %llu  changed %llu keys, %llu bytes\n",
            (unsigned long long) info->number, (unsigned long long) info->turn,
            info->status_name, info->holder [0] ? info->holder : "-",
            (unsigned long long) info->revisions, (unsigned long long) info->changed,
            (unsigned long long) info->bytes);
}

void
ctl_print_entries (const parley_checkpoint_state_t *state)
{
    for (size_t i = 0; i < state->count; i++) {
        const parley_checkpoint_entry_t *entry = &state->entries [i];
        if (entry->removed) {
            printf ("- %s\n", entry->key);
            continue;
        }
        printf ("%s (%s) = ", entry->key, entry->reducer);
        ctl_print_value (entry->value, entry->value_size);
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
ctl_role (const parley_agent_info_t *agent, char *buf, size_t size)
{
    for (size_t i = 0; i < agent->cap_count; i++)
        if (strncmp (agent->caps [i], "role:", 5) == 0) {
            snprintf (buf, size, "%s", agent->caps [i] + 5);
            return buf;
        }
    return "-";
}

const char *
ctl_stat_unit (const parley_stat_field_t *field)
{
    //  queued_memory is bytes (PROTOCOL.md, STATS) but its name has no
    //  "bytes" in it, so the naming rule calls it a count.
    if (strcmp (field->name, "queued_memory") == 0)
        return "bytes";
    return field->unit;
}
