// SPDX-License-Identifier: MIT
/*  answer_schema - an exploring agent's possible answer as OpenAI tools
    and as one JSON Schema, from the step's allowed actions, teammates and
    channels; and a structured answer turned into the canonical text
    answer (answer_format), so every answer mode goes through the same
    parser and validation (answer.h) as the text mode and the heuristic.

    Tools (tool_choice "required"):
        act         {"thinking", "action": one of the allowed actions,
                     "reason", "message_to_others"}     exactly once
        message_to  {"target": a teammate or channel, "text"}   any number
        listen_to   {"channel"}                                 any number
    JSON Schema: {"thinking", "action", "reason", "message_to_others",
                  "message_to": [{"target", "text"}], "listen_to": [CHANNEL]}
*/
#ifndef PARLEY_ANSWER_SCHEMA_H
#define PARLEY_ANSWER_SCHEMA_H

#include <jansson.h>
#include "policy.h"

//  New references, from the input's actions, teammates and channels.
json_t *answer_schema_tools (const policy_input_t *input);
json_t *answer_schema_object (const policy_input_t *input);

//  The tool calls (llm_reply_t.calls) as the canonical text answer
//  (caller frees). Calls other than the three are left out; no act call
//  gives an answer without an action, which validation refuses with its
//  usual sentence.
char *answer_schema_text_of_calls (const json_t *calls);
//  The JSON object in `content` as the canonical text answer, or NULL
//  when it holds none (the caller then parses `content` as text).
char *answer_schema_text_of_json (const char *content);

#endif
