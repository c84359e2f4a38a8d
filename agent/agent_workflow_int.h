// SPDX-License-Identifier: MIT
/*  agent_workflow_int - what agent_workflow.c (the turn loop) and
    agent_turn.c (a model's turn) share. */
#ifndef PARLEY_AGENT_WORKFLOW_INT_H
#define PARLEY_AGENT_WORKFLOW_INT_H

#include <jansson.h>
#include "agent_workflow.h"
#include "jsonops.h"
#include "llm.h"
#include "parley/client.h"
#include "policy_workflow_llm.h"

typedef struct {
    const agent_workflow_config_t *config;
    parley_client_t *link;
    llm_t *llm;
    wfllm_t *model;                 //  policy llm: the turn's conversation
    char catalogue [1024];
    uint64_t turns;
    uint64_t fallbacks;             //  turns given to the scenario's fallback
    uint64_t corrections;           //  refused answers the model was told about
    uint64_t waits;                 //  pauses while the model gave no answer
    parley_wf_event_t *event;       //  the events taken, one object reused
} workflow_agent_t;

//  The role's keys as one JSON object, plus workflow_status and
//  iteration_count (agent_workflow.c). NULL with err.
json_t *workflow_read_state (workflow_agent_t *self, const parley_workflow_t *info,
                             char *err, size_t err_size);
//  The progress line of a turn handed over.
void workflow_progress (workflow_agent_t *self, const parley_workflow_t *info,
                        const char *summary, const parley_workflow_t *reply);
//  The decided turn into `handover` (emptied first); false with `err`
//  when its ops or status cannot be sent.
bool workflow_handover_of (const scene_turn_t *turn, parley_handover_t *handover, char *err,
                           size_t err_size);
//  One turn decided by the model (agent_turn.c).
void agent_turn_model (workflow_agent_t *self, const parley_workflow_t *info);
//  The model's figures to the broker (HEARTBEAT's model_* fields).
void agent_turn_report (workflow_agent_t *self);

#endif
