// SPDX-License-Identifier: MIT
/*  parley-ctl agents: every registered agent, from AGENTS' agent_info:
    role (its capability role:<name>), online, last seen, step, inbox
    depth (pending), unacknowledged, model calls and tokens. This
    connection is an observer (or, with a key that may not observe, a
    registration forgotten at BYE, left out here). --json: one document,
    {"agents": [...]}, every figure the broker sent for each. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "pconfig.h"

static json_t *
s_json (const parley_agent_info_t *a)
{
    char role [PARLEY_NAME_MAX + 1];
    json_t *caps = json_array ();
    for (size_t i = 0; i < a->cap_count; i++)
        json_array_append_new (caps, json_string (a->caps [i]));
    json_t *json = json_pack ("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
                              "agent", a->agent, "role", ctl_role (a, role, sizeof role),
                              "online", a->online, "idle_ms", (json_int_t) a->idle_ms,
                              "step", (json_int_t) a->step, "acts", (json_int_t) a->acts,
                              "inbox", (json_int_t) a->pending,
                              "inbox_bytes", (json_int_t) a->inbox_bytes,
                              "unacked", (json_int_t) a->unacked, "caps", caps);
    if (a->model_reported)
        json_object_set_new (json, "model", json_pack (
            "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
            "calls", (json_int_t) a->model.calls, "ok", (json_int_t) a->model.ok,
            "failed", (json_int_t) a->model.failed, "skipped", (json_int_t) a->model.skipped,
            "retries", (json_int_t) a->model.retries,
            "prompt_tokens", (json_int_t) a->model.prompt_tokens,
            "completion_tokens", (json_int_t) a->model.completion_tokens,
            "latency_ms", (json_int_t) a->model.latency_ms,
            "latency_max_ms", (json_int_t) a->model.latency_max_ms));
    return json;
}

int
cmd_agents (ctl_t *ctl)
{
    parley_agent_list_t list;
    int rc = ctl_check (ctl, parley_client_agents (ctl->link, &list), "AGENTS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    json_t *all = ctl->json ? json_array () : NULL;
    size_t shown = 0;
    if (!ctl->json)
        printf ("%-20s %-12s %-7s %10s %6s %6s %8s %6s %10s\n", "AGENT", "ROLE", "STATE",
                "LAST SEEN", "STEP", "INBOX", "UNACKED", "CALLS", "TOKENS");
    for (size_t i = 0; i < list.count; i++) {
        const parley_agent_info_t *a = &list.agents [i];
        if (strcmp (a->agent, ctl->id) == 0)
            continue;               //  this connection itself
        shown++;
        if (ctl->json) {
            json_array_append_new (all, s_json (a));
            continue;
        }
        char role [PARLEY_NAME_MAX + 1], seen [48], calls [24] = "-", tokens [24] = "-";
        ctl_duration (a->idle_ms, seen, sizeof seen);
        if (a->model_reported) {
            snprintf (calls, sizeof calls, "%llu", (unsigned long long) a->model.calls);
            snprintf (tokens, sizeof tokens, "%llu", (unsigned long long)
                      (a->model.prompt_tokens + a->model.completion_tokens));
        }
        printf ("%-20s %-12s %-7s %6s ago %6llu %6llu %8llu %6s %10s\n", a->agent,
                ctl_role (a, role, sizeof role), a->online ? "online" : "offline", seen,
                (unsigned long long) a->step, (unsigned long long) a->pending,
                (unsigned long long) a->unacked, calls, tokens);
    }
    if (ctl->json)
        ctl_print_json (json_pack ("{s:o}", "agents", all));
    else
    if (!shown)
        printf ("(no agents registered)\n");
    return PARLEY_EXIT_OK;
}
