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

//  The model report's fields by their JSON names.
static const struct {
    const char *name;
    parley_model_field_t field;
} s_model [] = {
    { "calls", PARLEY_MODEL_CALLS }, { "ok", PARLEY_MODEL_OK },
    { "failed", PARLEY_MODEL_FAILED }, { "skipped", PARLEY_MODEL_SKIPPED },
    { "retries", PARLEY_MODEL_RETRIES }, { "prompt_tokens", PARLEY_MODEL_PROMPT_TOKENS },
    { "completion_tokens", PARLEY_MODEL_COMPLETION_TOKENS },
    { "latency_ms", PARLEY_MODEL_LATENCY_MS }, { "latency_max_ms", PARLEY_MODEL_LATENCY_MAX_MS },
};

static json_t *
s_json (const parley_agent_t *a)
{
    char role [PARLEY_NAME_MAX + 1];
    json_t *caps = json_array ();
    for (size_t i = 0; i < parley_agent_cap_count (a); i++)
        json_array_append_new (caps, json_string (parley_agent_cap (a, i)));
    json_t *json = json_pack ("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
                              "agent", parley_agent_name (a),
                              "role", ctl_role (a, role, sizeof role),
                              "online", parley_agent_online (a),
                              "idle_ms", (json_int_t) parley_agent_idle_ms (a),
                              "step", (json_int_t) parley_agent_step (a),
                              "acts", (json_int_t) parley_agent_acts (a),
                              "inbox", (json_int_t) parley_agent_pending (a),
                              "inbox_bytes", (json_int_t) parley_agent_inbox_bytes (a),
                              "unacked", (json_int_t) parley_agent_unacked (a), "caps", caps);
    if (parley_agent_model_reported (a)) {
        json_t *model = json_object ();
        for (size_t i = 0; i < sizeof s_model / sizeof s_model [0]; i++)
            json_object_set_new (model, s_model [i].name, json_integer (
                (json_int_t) parley_agent_model (a, s_model [i].field)));
        json_object_set_new (json, "model", model);
    }
    return json;
}

int
cmd_agents (ctl_t *ctl)
{
    parley_agent_list_t *list = NULL;
    int rc = ctl_check (ctl, parley_client_agents (ctl->link, &list), "AGENTS");
    if (rc != PARLEY_EXIT_OK)
        return rc;
    size_t count = parley_agent_list_count (list);
    json_t *all = ctl->json ? json_array () : NULL;
    size_t shown = 0;
    if (!ctl->json)
        printf ("%-20s %-12s %-7s %10s %6s %6s %8s %6s %10s\n", "AGENT", "ROLE", "STATE",
                "LAST SEEN", "STEP", "INBOX", "UNACKED", "CALLS", "TOKENS");
    for (size_t i = 0; i < count; i++) {
        const parley_agent_t *a = parley_agent_list_at (list, i);
        if (strcmp (parley_agent_name (a), ctl->id) == 0)
            continue;               //  this connection itself
        shown++;
        if (ctl->json) {
            json_array_append_new (all, s_json (a));
            continue;
        }
        char role [PARLEY_NAME_MAX + 1], seen [48], calls [24] = "-", tokens [24] = "-";
        ctl_duration (parley_agent_idle_ms (a), seen, sizeof seen);
        if (parley_agent_model_reported (a)) {
            snprintf (calls, sizeof calls, "%llu",
                      (unsigned long long) parley_agent_model (a, PARLEY_MODEL_CALLS));
            snprintf (tokens, sizeof tokens, "%llu", (unsigned long long)
                      (parley_agent_model (a, PARLEY_MODEL_PROMPT_TOKENS)
                       + parley_agent_model (a, PARLEY_MODEL_COMPLETION_TOKENS)));
        }
        printf ("%-20s %-12s %-7s %6s ago %6llu %6llu %8llu %6s %10s\n", parley_agent_name (a),
                ctl_role (a, role, sizeof role), parley_agent_online (a) ? "online" : "offline",
                seen, (unsigned long long) parley_agent_step (a),
                (unsigned long long) parley_agent_pending (a),
                (unsigned long long) parley_agent_unacked (a), calls, tokens);
    }
    if (ctl->json)
        ctl_print_json (json_pack ("{s:o}", "agents", all));
    else
    if (!shown)
        printf ("(no agents registered)\n");
    parley_agent_list_destroy (&list);
    return PARLEY_EXIT_OK;
}
