// SPDX-License-Identifier: MIT
/*  agent_role - --role for parley-agent. See agent_role.h. */
#include "agent_role.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_state.h"
#include "agent_workflow.h"
#include "plog.h"

//  The scenario the role file belongs to (roles/../scenario.yaml), for
//  its keys, corrections and fallback. NULL when there is none (a role
//  file on its own); -1 in *bad when it is there and does not load.
static scenario_t *
s_scenario_of (const role_t *role, int *bad)
{
    *bad = 0;
    //  The folder above roles/, by its real name (errors then name files
    //  as the broker's do, without "roles/..").
    char *real = realpath (role->path, NULL);
    char *roles = real ? dirname (real) : NULL;
    char path [4200];
    snprintf (path, sizeof path, "%s/scenario.yaml", roles ? dirname (roles) : "..");
    free (real);
    if (access (path, F_OK) != 0)
        return NULL;
    char why [1024] = "";
    scenario_t *scenario = scenario_load (path, why, sizeof why);
    if (!scenario) {
        fprintf (stderr, "parley-agent: %s\n", why);
        *bad = -1;
        return NULL;
    }
    if (!scenario_role (scenario, role->name)) {
        plog_warn ("%s has no role %s: the role file is used on its own", path, role->name);
        scenario_destroy (&scenario);
    }
    return scenario;
}

agent_role_next_t
agent_role_run (pconfig_t *config, agent_config_t *c, role_t **role,
                volatile sig_atomic_t *stop, int *exit_code)
{
    char why [1024] = "";
    *role = role_load (pconfig_str (config, "role"), why, sizeof why);
    if (!*role) {
        fprintf (stderr, "parley-agent: %s\n", why);
        *exit_code = PARLEY_EXIT_USAGE;
        return AGENT_ROLE_EXIT;
    }
    const role_t *file = *role;
    role_policy_t policy = file->policy;
    if (pconfig_is_set (config, "policy") && !role_policy_from_name (c->policy, &policy)) {
        fprintf (stderr, "parley-agent: --policy %s is not a policy (llm, heuristic or a "
                 "built-in such as scene_critic)\n", c->policy);
        *exit_code = PARLEY_EXIT_USAGE;
        return AGENT_ROLE_EXIT;
    }
    llm_mode_t mode = LLM_MODE_AUTO;
    if (c->llm_mode && !llm_mode_parse (c->llm_mode, &mode)) {
        fprintf (stderr, "parley-agent: --llm-mode %s is not auto, tools, json-schema or text\n",
                 c->llm_mode);
        *exit_code = PARLEY_EXIT_USAGE;
        return AGENT_ROLE_EXIT;
    }
    int bad;
    scenario_t *scenario = s_scenario_of (file, &bad);
    if (bad) {
        *exit_code = PARLEY_EXIT_USAGE;
        return AGENT_ROLE_EXIT;
    }
    if (!pconfig_is_set (config, "top-k") && file->top_k)
        c->top_k = file->top_k;
    if (!pconfig_is_set (config, "memory-index"))
        c->memory_index = file->index;
    //  What the memory stores, and the channels joined at start.
    c->memory_store_set = true;
    c->memory_store = ((file->store & ROLE_STORE_OBSERVATIONS)? AGENT_STORE_OBSERVATIONS: 0)
                    | ((file->store & ROLE_STORE_MESSAGES)? AGENT_STORE_MESSAGES: 0)
                    | ((file->store & ROLE_STORE_DECISIONS)? AGENT_STORE_DECISIONS: 0);
    c->channels = file->channels;
    c->channel_count = file->channel_count;
    //  The same token file as the step loop's (agent.c), so either can
    //  take the id over after the other.
    char token_file [1100] = "";
    if (c->memory_dir && *c->memory_dir)
        snprintf (token_file, sizeof token_file, "%s/broker-token", c->memory_dir);
    agent_workflow_config_t flow = {
        .broker = c->broker, .id = c->id, .role = file, .policy = policy,
        .request_timeout_ms = c->request_timeout_ms, .llm_url = c->llm_url,
        .llm_model = c->llm_model, .llm_timeout_ms = c->llm_timeout_ms,
        .llm_mode = mode, .llm_breaker_ms = c->llm_breaker_ms, .scenario = scenario,
        .curve_key = c->curve_key, .curve_server_key = c->curve_server_key,
        .token_file = token_file [0] ? token_file : NULL,
        .progress = c->progress, .stop = stop,
    };
    int rc = agent_workflow_run (&flow);
    scenario_destroy (&scenario);
    if (rc != AGENT_WORKFLOW_NONE) {
        *exit_code = rc;
        return AGENT_ROLE_EXIT;
    }
    if (policy != ROLE_POLICY_LLM && policy != ROLE_POLICY_HEURISTIC) {
        fprintf (stderr, "parley-agent: policy %s plays turns, and the broker runs no "
                 "workflow (start it with --scenario)\n", role_policy_name (policy));
        *exit_code = PARLEY_EXIT_USAGE;
        return AGENT_ROLE_EXIT;
    }
    c->policy = role_policy_name (policy);
    plog_info ("role %s: no workflow on the broker, running the step loop (policy %s)",
               file->name, c->policy);
    return AGENT_ROLE_STEP_LOOP;
}
