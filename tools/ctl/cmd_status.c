// SPDX-License-Identifier: MIT
/*  parley-ctl status: is the broker up, and how is it. One STATS and one
    AGENTS; the journal's fields are every STATS field named journal_*, as
    the broker sends them (a broker that keeps everything in memory sends
    none). When the broker does not
    answer it says so (--json: {"up": false}) and exits 3. This
    connection itself (registered for the moment, forgotten at BYE) is
    not counted. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"

static uint64_t
s_uint (const parley_stats_t *list, const char *name)
{
    double value = parley_stats_num (list, name);
    return value > 0 ? (uint64_t) value : 0;
}

//  No session: either nothing answered (down, exit 3) or the broker
//  answered and refused this HELLO (up, exit 1, with its reason: a key
//  that may not be this id, too many agents...).
static int
s_down (ctl_t *ctl)
{
    bool refused = ctl->connect_error < PARLEY_ERR_TIMEOUT;
    if (ctl->json) {
        json_t *json = json_pack ("{s:b, s:s, s:s, s:s, s:s}", "up", refused, "broker", ctl->broker,
                                  "error", parley_strerror (ctl->connect_error),
                                  "reason", ctl->connect_why, "ctl_version", PARLEY_VERSION);
        if (refused)
            json_object_set_new (json, "refused_hello_as", json_string (ctl->id));
        ctl_print_json (json);
    }
    else
    if (refused)
        printf ("broker      up at %s, but it refused HELLO as %s: %s: %s\n", ctl->broker,
                ctl->id, parley_strerror (ctl->connect_error), ctl->connect_why);
    else
        printf ("broker      down: %s does not answer (%s%s%s)\n", ctl->broker,
                parley_strerror (ctl->connect_error), *ctl->connect_why ? ": " : "",
                ctl->connect_why);
    return refused ? PARLEY_EXIT_FAILURE : PARLEY_EXIT_NETWORK;
}

//  What AGENTS said, this connection left out.
typedef struct {
    size_t live, registered, reported;
    uint64_t calls, tokens;
} s_totals_t;

static int s_print (ctl_t *ctl, const parley_stats_t *stats, const s_totals_t *totals);

int
cmd_status (ctl_t *ctl)
{
    if (!ctl->connected)
        return s_down (ctl);
    parley_agent_list_t *agents = NULL;
    int rc = ctl_check (ctl, parley_client_agents (ctl->link, &agents), "AGENTS");
    if (rc != PARLEY_EXIT_OK) {
        parley_agent_list_destroy (&agents);
        return rc;
    }
    s_totals_t totals = { 0 };
    for (size_t i = 0; i < parley_agent_list_count (agents); i++) {
        const parley_agent_t *a = parley_agent_list_at (agents, i);
        if (strcmp (parley_agent_name (a), ctl->id) == 0)
            continue;               //  this connection itself
        totals.registered++;
        totals.live += parley_agent_online (a);
        totals.reported += parley_agent_model_reported (a);
        totals.calls += parley_agent_model (a, PARLEY_MODEL_CALLS);
        totals.tokens += parley_agent_model (a, PARLEY_MODEL_PROMPT_TOKENS)
                       + parley_agent_model (a, PARLEY_MODEL_COMPLETION_TOKENS);
    }
    parley_agent_list_destroy (&agents);
    parley_stats_t *stats = NULL;
    rc = ctl_check (ctl, parley_client_stats (ctl->link, &stats), "STATS");
    if (rc == PARLEY_EXIT_OK)
        rc = s_print (ctl, stats, &totals);
    parley_stats_destroy (&stats);
    return rc;
}

static int
s_print (ctl_t *ctl, const parley_stats_t *stats, const s_totals_t *totals)
{
    size_t live = totals->live, registered = totals->registered, reported = totals->reported;
    uint64_t calls = totals->calls, tokens = totals->tokens;
    size_t count = parley_stats_count (stats);
    uint64_t connections = s_uint (stats, "online");
    if (connections && !ctl->observer)
        connections--;              //  ours, registered for the moment
    const parley_stat_t *version = parley_stats_find (stats, "version");
    const char *broker_version = version && parley_stat_kind (version) == PARLEY_STAT_TEXT
                               ? parley_stat_text (version) : "";
    if (ctl->json) {
        json_t *journal = json_object ();
        for (size_t i = 0; i < count; i++) {
            const parley_stat_t *f = parley_stats_at (stats, i);
            if (strncmp (parley_stat_name (f), "journal", 7) == 0) {
                json_t *value = mpjs_decode (parley_stat_value (f), parley_stat_value_size (f));
                json_object_set_new (journal, parley_stat_name (f), value ? value : json_null ());
            }
        }
        json_t *json = json_pack (
            "{s:b, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
            "up", 1, "broker", ctl->broker, "ctl_version", PARLEY_VERSION,
            "uptime_ms", (json_int_t) s_uint (stats, "uptime_ms"),
            "connections", (json_int_t) connections,
            "agents", (json_int_t) registered, "live_agents", (json_int_t) live,
            "channels", (json_int_t) s_uint (stats, "channels"),
            "queued", (json_int_t) s_uint (stats, "queued"),
            "queued_bytes", (json_int_t) s_uint (stats, "queued_bytes"),
            "dropped", (json_int_t) s_uint (stats, "dropped"),
            "rejected", (json_int_t) s_uint (stats, "rejected"),
            "unroutable", (json_int_t) s_uint (stats, "unroutable"),
            "model_calls", (json_int_t) calls, "model_tokens", (json_int_t) tokens,
            "journal", journal);
        if (*broker_version)
            json_object_set_new (json, "version", json_string (broker_version));
        ctl_print_json (json);
        return PARLEY_EXIT_OK;
    }
    char uptime [48];
    ctl_duration (s_uint (stats, "uptime_ms"), uptime, sizeof uptime);
    printf ("broker      up at %s, version %s (parley-ctl %s)\n", ctl->broker,
            *broker_version ? broker_version : "not reported", PARLEY_VERSION);
    printf ("uptime      %s\n", uptime);
    printf ("agents      %zu live of %zu registered; %llu connections, %llu channels\n",
            live, registered, (unsigned long long) connections,
            (unsigned long long) s_uint (stats, "channels"));
    printf ("queued      %llu messages, %llu bytes\n",
            (unsigned long long) s_uint (stats, "queued"),
            (unsigned long long) s_uint (stats, "queued_bytes"));
    printf ("drops       %llu dropped, %llu rejected, %llu unroutable\n",
            (unsigned long long) s_uint (stats, "dropped"),
            (unsigned long long) s_uint (stats, "rejected"),
            (unsigned long long) s_uint (stats, "unroutable"));
    printf ("model       %llu calls, %llu tokens (%zu agents reporting)\n",
            (unsigned long long) calls, (unsigned long long) tokens, reported);
    //  journal_log_bytes 7789 bytes -> "log 7789 bytes".
    size_t shown = 0;
    for (size_t i = 0; i < count; i++) {
        const parley_stat_t *f = parley_stats_at (stats, i);
        if (strncmp (parley_stat_name (f), "journal_", 8) != 0)
            continue;
        const char *unit = ctl_stat_unit (f);
        char name [PARLEY_NAME_MAX + 1];
        snprintf (name, sizeof name, "%s", parley_stat_name (f) + 8);
        size_t len = strlen (name);
        if (strcmp (unit, "bytes") == 0 && len > 6 && strcmp (name + len - 6, "_bytes") == 0)
            name [len - 6] = 0;
        json_t *value = mpjs_decode (parley_stat_value (f), parley_stat_value_size (f));
        char *text = value ? json_dumps (value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        bool counted = strcmp (unit, "count") == 0 || !*unit;
        printf ("%s %s %s%s%s\n", shown++ ? "           " : "journal    ", name,
                text ? text : "?", counted ? "" : " ", counted ? "" : unit);
        free (text);
        json_decref (value);
    }
    if (!shown)
        printf ("journal     none (--data-dir none: everything in memory only)\n");
    return PARLEY_EXIT_OK;
}
