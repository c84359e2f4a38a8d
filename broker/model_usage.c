// SPDX-License-Identifier: MIT
/*  model_usage - the agents' model reports (HEARTBEAT's model_* fields)
    summed per role, for STATS (`model_roles`) and /metrics
    (parley_role_model_*{role="..."}).

    An agent's role is its capability role:<name> (an agent without one
    counts under "-"); only agents that sent a report count. Sums of
    counters, the maximum of model_latency_max_ms. O(agents) per STATS or
    scrape, nothing kept between them: the agents' own reports are the
    record (agents.h), so a role's figures include agents that have gone.
    Roles are at most S_MAX_ROLES (the rest are counted in "others").
*/
#include "broker_internal.h"

#define S_MAX_ROLES 64
#define S_NONE "-"
#define S_OTHERS "others"

typedef struct {
    char name [PROTO_MAX_NAME + 1];
    uint64_t agents;
    uint64_t model [AGENTS_MODEL_FIELDS];
} s_role_t;

typedef struct {
    s_role_t roles [S_MAX_ROLES + 1];
    size_t count;
} s_sums_t;

static const char *
s_role_of (const agent_t *agent)
{
    for (const char *cap = zlistx_first (agent->caps); cap; cap = zlistx_next (agent->caps))
        if (strncmp (cap, "role:", 5) == 0 && cap [5])
            return cap + 5;
    return S_NONE;
}

static s_role_t *
s_slot (s_sums_t *sums, const char *name)
{
    for (size_t i = 0; i < sums->count; i++)
        if (strcmp (sums->roles [i].name, name) == 0)
            return &sums->roles [i];
    if (sums->count > S_MAX_ROLES)              //  "others" exists: the rest share it
        return &sums->roles [S_MAX_ROLES];
    if (sums->count == S_MAX_ROLES)
        name = S_OTHERS;
    s_role_t *slot = &sums->roles [sums->count++];
    snprintf (slot->name, sizeof slot->name, "%s", name);
    return slot;
}

static void
s_sum (broker_t *self, s_sums_t *sums)
{
    memset (sums, 0, sizeof *sums);
    for (size_t i = 0; i < agents_size (self->agents); i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (!agent->model_mask)
            continue;
        s_role_t *role = s_slot (sums, s_role_of (agent));
        role->agents++;
        for (size_t f = 0; f < AGENTS_MODEL_FIELDS; f++) {
            if (!(agent->model_mask & (1u << f)))
                continue;
            if (f == AGENTS_MODEL_FIELDS - 1)           //  model_latency_max_ms
                role->model [f] = agent->model [f] > role->model [f] ? agent->model [f]
                                                                     : role->model [f];
            else
                role->model [f] += agent->model [f];
        }
    }
}

void
model_usage_encode (broker_t *self, penc_t *enc)
{
    s_sums_t sums;
    s_sum (self, &sums);
    msgpack_packer *pk = penc_packer (enc);
    penc_key (enc, "model_roles");
    msgpack_pack_map (pk, (uint32_t) sums.count);
    for (size_t i = 0; i < sums.count; i++) {
        const s_role_t *role = &sums.roles [i];
        penc_cstr (enc, role->name);
        msgpack_pack_map (pk, 1 + AGENTS_MODEL_FIELDS);
        penc_kv_uint (enc, "agents", role->agents);
        for (size_t f = 0; f < AGENTS_MODEL_FIELDS; f++)
            penc_kv_uint (enc, agents_model_fields [f], role->model [f]);
    }
}

void
model_usage_metrics (broker_t *self, metrics_text_t *text)
{
    s_sums_t sums;
    s_sum (self, &sums);
    static const struct {
        const char *name, *type, *help;
        double scale;
    } s_series [AGENTS_MODEL_FIELDS] = {
        { "parley_role_model_calls_total", "counter", "Model calls the role's agents report.", 1 },
        { "parley_role_model_ok_total", "counter", "Their calls that got an answer.", 1 },
        { "parley_role_model_failed_total", "counter", "Their calls that got none.", 1 },
        { "parley_role_model_skipped_total", "counter",
          "Decisions not sent (circuit open), or asks held back while the model was away.", 1 },
        { "parley_role_model_retries_total", "counter", "HTTP retries of their calls.", 1 },
        { "parley_role_prompt_tokens_total", "counter", "Prompt tokens their server reported.", 1 },
        { "parley_role_completion_tokens_total", "counter",
          "Completion tokens their server reported.", 1 },
        { "parley_role_model_latency_seconds_total", "counter",
          "Sum of their model call latencies.", 1e-3 },
        { "parley_role_model_latency_max_seconds", "gauge",
          "The slowest model call of the role's agents.", 1e-3 },
    };
    for (size_t f = 0; f < AGENTS_MODEL_FIELDS; f++) {
        metrics_text_family (text, s_series [f].name, s_series [f].type, s_series [f].help);
        for (size_t i = 0; i < sums.count; i++) {
            metrics_text_printf (text, "%s{role=\"", s_series [f].name);
            metrics_text_label (text, sums.roles [i].name);
            metrics_text_printf (text, "\"} %.17g\n",
                                 (double) sums.roles [i].model [f] * s_series [f].scale);
        }
    }
}
