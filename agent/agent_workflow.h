// SPDX-License-Identifier: MIT
/*  agent_workflow - parley-agent playing a role in a scenario's workflow.

    With --role, the agent says HELLO with the capability role:<name> and
    asks the broker for its WORKFLOW. A broker without one answers
    NO_WORKFLOW and the agent runs its usual step loop (the role file then
    sets its policy, its memory settings and the channels it joins). Otherwise it waits for its
    turn on WORKFLOW_EVENT (parley_client_workflow_events), and on each turn:

        1. GET the keys its role reads (connectors.state)
        2. decide: a built-in scene policy, or the model (policy llm)
        3. ONE HANDOVER: its writes, the next role, the status

    A built-in policy's turn that cannot be decided (an input it cannot
    use) ends the run with the reason. A model's turn (agent_turn.c) is
    never dropped and never ended by accident: a refused answer goes back
    to the model (at most workflow.corrections times), then the
    scenario's fallback takes the turn (workflow.fallback); while the
    model gives no answer at all the agent holds the turn and asks again,
    and never hands over without it. The agent exits when the workflow is
    done (0) or failed (1).
*/
#ifndef PARLEY_AGENT_WORKFLOW_H
#define PARLEY_AGENT_WORKFLOW_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "llm_mode.h"
#include "role.h"
#include "scenario.h"

//  agent_workflow_run's answer when the broker runs no workflow.
#define AGENT_WORKFLOW_NONE (-1)

typedef struct {
    const char *broker;
    const char *id;
    const role_t *role;
    role_policy_t policy;           //  the role's, or --policy's
    int64_t request_timeout_ms;
    const char *llm_url;            //  policy llm
    const char *llm_model;
    int64_t llm_timeout_ms;
    llm_mode_t llm_mode;            //  --llm-mode
    int64_t llm_breaker_ms;         //  the longest pause between asks while the model is away
    const scenario_t *scenario;     //  the role's scenario (corrections, fallback, keys), or NULL
    const char *curve_key;          //  CURVE key files (NULL: plain), as the step loop's
    const char *curve_server_key;
    const char *token_file;         //  the resume token's file (NULL: memory only)
    FILE *progress;                 //  one line per turn; NULL: quiet
    volatile sig_atomic_t *stop;
} agent_workflow_config_t;

//  PARLEY_EXIT_* when it ran the workflow, AGENT_WORKFLOW_NONE when the
//  broker has none (nothing was done but HELLO/BYE).
int agent_workflow_run (const agent_workflow_config_t *config);

#endif
