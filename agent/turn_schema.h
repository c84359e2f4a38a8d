// SPDX-License-Identifier: MIT
/*  turn_schema - what a workflow role may do, as OpenAI tools and as one
    JSON Schema, generated from its role file and its scenario; and the
    model's structured answer turned back into the turn's JSON object
    ({"ops": [...], "next": ROLE, "status": S, "summary": TEXT}) that
    policy_workflow_llm checks for every answer mode alike.

    The value of each key the role writes has the type its reducer takes:

        append, union   an array (the items added)
        merge           an object (the fields set)
        add             a number (added to the total)
        replace         the type of the scenario's initial value, when it
                        has one; any JSON value otherwise

    Tools (tool_choice "required"):
        write_<key>  {"value": V}                  one per key it writes
        hand_over    {"next": ROLE, "status": S, "summary": TEXT}
    A tool name holds only A-Z a-z 0-9 _ - (at most 64 bytes): a key with
    other characters gets them as '_' (and a number when two collide);
    turn_schema_key maps the name back.

    The JSON Schema (response_format) is the turn object itself, with
    `ops` items one per key, `next` an enum of the roles it may hand the
    turn to and `status` an enum of the statuses.
*/
#ifndef PARLEY_TURN_SCHEMA_H
#define PARLEY_TURN_SCHEMA_H

#include <jansson.h>
#include <stddef.h>
#include "role.h"
#include "scenario.h"

#define TURN_SCHEMA_STATUSES "in_progress, revision, done, failed"

typedef struct _turn_schema_t turn_schema_t;

//  `scenario` may be NULL: the role file alone (its writes' reducers, its
//  hand-over list) says what is allowed.
turn_schema_t *turn_schema_new (const role_t *role, const scenario_t *scenario);
void turn_schema_destroy (turn_schema_t **self_p);

//  Borrowed, valid while `self` lives.
const json_t *turn_schema_tools (const turn_schema_t *self);
const json_t *turn_schema_object (const turn_schema_t *self);

//  The keys it may write ("" when any key) and what each takes, one line
//  each ("- draft (replace: a string)"), and the roles it may hand the
//  turn to ("reviewer, approver" or "any role"), for the prompt.
const char *turn_schema_writes_text (const turn_schema_t *self);
const char *turn_schema_roles_text (const turn_schema_t *self);
//  A first key it may write and a role it may hand to (for examples), or NULL.
const char *turn_schema_example_key (const turn_schema_t *self);
const char *turn_schema_example_role (const turn_schema_t *self);
//  A JSON value of the type the first key takes, for the example.
const char *turn_schema_example_value (const turn_schema_t *self);

//  The model's tool calls (llm_reply_t.calls) as the turn's JSON object
//  (new reference), or NULL with one sentence for the model in `err`.
json_t *turn_schema_from_calls (const turn_schema_t *self, const json_t *calls,
                                char *err, size_t err_size);

#endif
