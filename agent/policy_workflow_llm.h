// SPDX-License-Identifier: MIT
/*  policy_workflow_llm - a workflow turn decided by a chat model, with the
    model told why an answer was refused.

    The prompt (wfllm_prompt) gives the role's goal and instructions, the
    keys it reads (as JSON, with workflow_status and iteration_count), the
    keys it may write with what each reducer takes, the roles it may hand
    the turn to and the statuses. How the model answers is the answer
    mode (llm_mode.h):

        tools        it calls write_<key> for each key, then hand_over
        json-schema  one JSON object, constrained by the server
        text         one JSON object, described in the prompt and found
                     in the answer however much prose surrounds it

    Every mode ends in the same JSON object, checked the same way:

        {"ops": [{"op": "update", "key": "...", "value": ...}],
         "next": "reviewer", "status": "in_progress", "summary": "..."}

    status is in_progress, revision, done or failed; a turn that leaves it
    out is in_progress (so one revision does not stay the status of every
    later turn). next may be left out only with done or failed.

    A refused answer, by this check (wfllm_ask answers WFLLM_REFUSED) or
    by the broker (the caller passes its sentence to wfllm_refused), is
    told to the model in the next request: after the refused answer, as a
    user message (text, json-schema) or as the result of its tool calls
    (tools), with "correction N of M", so no two requests of a turn are
    ever the same. How many corrections a turn gets, and what happens
    after, is the caller's (agent_workflow.c, the scenario's
    workflow.corrections and workflow.fallback).
*/
#ifndef PARLEY_POLICY_WORKFLOW_LLM_H
#define PARLEY_POLICY_WORKFLOW_LLM_H

#include <jansson.h>
#include "llm.h"
#include "llm_mode.h"
#include "policy_scene.h"
#include "role.h"
#include "scenario.h"
#include "turn_schema.h"

typedef struct _wfllm_t wfllm_t;

typedef enum {
    WFLLM_TURN = 0,         //  a turn to hand over (turn filled)
    WFLLM_REFUSED,          //  the answer was not usable; err is what the model is told
    WFLLM_NO_ANSWER         //  no answer came (llm_last_call (llm)->result says why)
} wfllm_outcome_t;

//  Borrows `llm`, `role` and `scenario` (may be NULL), which must outlive it.
wfllm_t *wfllm_new (llm_t *llm, llm_mode_t mode, const role_t *role,
                    const scenario_t *scenario, unsigned corrections);
void wfllm_destroy (wfllm_t **self_p);

//  A new turn on `state` (the role's keys): forgets the last turn's refusals.
void wfllm_begin (wfllm_t *self, const json_t *state);
//  Asks the model (again, after a refusal). turn->ops is the caller's.
wfllm_outcome_t wfllm_ask (wfllm_t *self, scene_turn_t *turn, char *err, size_t err_size);
//  The broker refused the last turn with `sentence`: the next ask says so.
void wfllm_refused (wfllm_t *self, const char *sentence);
//  Refusals in this turn (each one a correction asked of the model).
unsigned wfllm_refusals (const wfllm_t *self);
//  The mode in use (auto resolves at the first ask; until then auto).
llm_mode_t wfllm_mode (const wfllm_t *self);

//  The user message for `state` in `mode` (caller frees): what the model
//  reads, for tests and golden files.
char *wfllm_prompt (const role_t *role, const turn_schema_t *schema, llm_mode_t mode,
                    const json_t *state);
//  The system message (caller frees).
char *wfllm_system (llm_mode_t mode);

//  Checks an answer's text (a JSON object somewhere in it) and fills
//  `turn` (ops owned by turn). 0, or -1 with what was wrong in err.
int wfllm_parse (const role_t *role, const char *answer, scene_turn_t *turn,
                 char *err, size_t err_size);

#endif
