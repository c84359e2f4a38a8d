// SPDX-License-Identifier: MIT
/*  policy_workflow_llm - a workflow turn decided by a chat model.

    The model gets the role's goal and instructions, the keys it reads (as
    JSON), the keys it may write with their reducers and the roles it may
    hand the turn to, and must answer with one JSON object:

        {"ops": [{"op": "update", "key": "...", "value": ...}],
         "next": "critic", "status": "revision", "summary": "..."}

    The answer is checked here (a JSON object, ops an array of objects
    with op and key, next a string, keys the role writes); a bad answer is
    sent back to the model once with what was wrong, then the turn fails.
*/
#ifndef PARLEY_POLICY_WORKFLOW_LLM_H
#define PARLEY_POLICY_WORKFLOW_LLM_H

#include <jansson.h>
#include "llm.h"
#include "policy_scene.h"
#include "role.h"

int wfllm_decide (llm_t *llm, const role_t *role, const json_t *state, scene_turn_t *turn,
                  char *err, size_t err_size);

//  Checks an answer text and fills turn (ops owned by turn). 0 or -1 with
//  what was wrong in err (said to the model on the retry).
int wfllm_parse (const role_t *role, const char *answer, scene_turn_t *turn,
                 char *err, size_t err_size);

#endif
