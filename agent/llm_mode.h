// SPDX-License-Identifier: MIT
/*  llm_mode - how the model is asked for its answer (--llm-mode).

        tools        OpenAI function calling: the possible actions are
                     `tools` with JSON Schemas, tool_choice "required";
                     the answer is the model's tool calls
        json-schema  response_format {"type": "json_schema"}: the answer
                     is one JSON object the server constrains to a schema
        text         the answer format is described in the prompt and
                     parsed from free text (answer.h, policy_workflow_llm.h)
        auto         decided once by llm_mode_probe

    The probe (auto) costs at most two small chat calls at the first
    decision (max_tokens 64, a one-line prompt): a call offering one tool,
    `ok`, with tool_choice "required"; a reply that calls it means tools.
    Otherwise (no tool call, or the server refused the request, say
    HTTP 400 "does not support tools"), a call with a response_format of a
    one-field JSON schema; a reply whose content is that JSON object means
    json-schema. Otherwise text. A server that cannot be reached decides
    nothing: the probe runs again at the next decision, and that one is
    asked as text meanwhile. The probe's calls are counted apart from the
    decisions' (llm_probe_totals: the MODEL line's probe_calls), and the
    choice is logged once.
*/
#ifndef PARLEY_LLM_MODE_H
#define PARLEY_LLM_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include "llm.h"

typedef enum {
    LLM_MODE_AUTO = 0,
    LLM_MODE_TOOLS,
    LLM_MODE_JSON_SCHEMA,
    LLM_MODE_TEXT
} llm_mode_t;

//  "auto", "tools", "json-schema", "text" and back (false: not a mode).
const char *llm_mode_name (llm_mode_t mode);
bool llm_mode_parse (const char *name, llm_mode_t *mode);

//  The probe above. LLM_RESULT_OK with *mode set (tools, json-schema or
//  text) and `note` saying why; any other result: nothing decided, `note`
//  is the error.
llm_result_t llm_mode_probe (llm_t *llm, llm_mode_t *mode, char *note, size_t note_size);

//  A response_format for `schema` under `name` (new reference).
json_t *llm_mode_response_format (const char *name, json_t *schema);
//  One OpenAI tool (new reference; steals `parameters`).
json_t *llm_mode_tool (const char *name, const char *description, json_t *parameters);

#endif
