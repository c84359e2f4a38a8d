/*  policy - how the agent decides: one interface, several policies.

    A policy reads a policy_input_t (identity, the AgentMemory context, the
    retrieved memories, the connectors, the allowed actions) and returns
    its answer as TEXT in seed 000's reply format (a fenced yaml block with
    thinking / action / reason / message_to_others, plus seed 003's
    directives). Every policy's answer goes through the same parser
    (answer.h), so the heuristic exercises exactly the path a model does.

    Policies:
      heuristic   policy_heuristic.c - deterministic, seeded, no server
      llm         policy_llm.c       - an OpenAI-compatible chat model

    A retry after an invalid answer passes `previous_answer` and
    `previous_error`; the llm policy tells the model what was wrong.
*/
#ifndef PARLEY_POLICY_H
#define PARLEY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "connector.h"
#include "llm.h"
#include "team_facts.h"

typedef struct {
    const char *agent_id;
    uint64_t step;
    uint64_t max_steps;
    const char *context;                //  AgentMemory context (history + state)
    const char *const *memories;        //  retrieved memories, best first
    size_t memory_count;
    const char *const *actions;         //  allowed actions, e.g. forward, backward, end
    size_t action_count;
    const char *const *teammates;       //  other agents' ids
    size_t teammate_count;
    connector_t *world;                 //  conn_world
    connector_t *mailbox;               //  conn_mailbox
    connector_t *state;                 //  conn_state
    team_facts_t *facts;                //  the team's cells and claims, or NULL
                                        //  (a policy then learns its own)
    const char *previous_answer;        //  on a retry, else NULL
    const char *previous_error;         //  on a retry, else NULL
} policy_input_t;

typedef struct {
    //  Returns the answer text (caller frees), NULL with `err` filled.
    char *(*decide) (void *impl, const policy_input_t *input, char *err, size_t err_size);
    void (*destroy) (void *impl);
} policy_ops_t;

typedef struct _policy_t policy_t;

//  Takes ownership of impl.
policy_t *policy_new (const char *name, const policy_ops_t *ops, void *impl);
void policy_destroy (policy_t **self_p);
const char *policy_name (const policy_t *self);
char *policy_decide (policy_t *self, const policy_input_t *input, char *err, size_t err_size);
void *policy_impl (policy_t *self);

//  The heuristic: seeded with `seed` mixed with the agent id, so agents
//  with the same --seed still differ, and runs repeat exactly.
policy_t *policy_heuristic_new (uint64_t seed, const char *agent_id);
//  Channel the heuristic listens to and reports to.
#define HEURISTIC_CHANNEL TEAM_CHANNEL

//  The llm policy; takes ownership of `llm`.
policy_t *policy_llm_new (llm_t *llm);
//  Model calls made and failed (for the summary).
void policy_llm_counts (policy_t *self, uint64_t *calls, uint64_t *failures);

#endif
