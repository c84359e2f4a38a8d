// SPDX-License-Identifier: MIT
/*  policy - how the agent decides: one interface, several policies.

    A policy reads a policy_input_t (identity, the AgentMemory context, the
    retrieved memories, the connectors, the allowed actions) and returns
    its answer as TEXT in the reply format (a fenced yaml block with
    thinking / action / reason / message_to_others, plus the channel
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

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "connector.h"
#include "llm.h"
#include "llm_mode.h"
#include "prompt_template.h"
#include "steplog.h"
#include "teammap.h"
#include "team_facts.h"

typedef struct {
    const char *agent_id;
    uint64_t step;
    uint64_t max_steps;
    const char *context;                //  AgentMemory context (history + state);
                                        //  NULL unless the policy reads_context
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
    int64_t deadline_ms;                //  the decision ends by then (pclock_mono_ms); 0: none
    const volatile sig_atomic_t *stop;  //  raised by a stop signal; may be NULL
    const steplog_t *steps;             //  recent steps, for the history; may be NULL
    const teammap_t *map;               //  positions the team visited; may be NULL
    const char *const *channels;        //  channels this agent listens to
    size_t channel_count;
    size_t context_tokens;              //  the model's context window; 0: no limit
    const char *visible_caption;        //  the caption model's sentence for the view, or NULL
    bool vision;                        //  send the view's image to the model (--llm-vision)
} policy_input_t;

typedef struct {
    //  Returns the answer text (caller frees), NULL with `err` filled.
    char *(*decide) (void *impl, const policy_input_t *input, char *err, size_t err_size);
    void (*destroy) (void *impl);
    //  The agent keeps AgentMemory (the turns and thoughts) and renders
    //  policy_input_t.context for this policy. A policy that decides from
    //  the facts alone says false: the history, the connectors' state and
    //  the world.explored_by_all key that only the state shows are then
    //  neither kept nor rendered (they were most of a heuristic step).
    bool reads_context;
} policy_ops_t;

typedef struct _policy_t policy_t;

//  Takes ownership of impl.
policy_t *policy_new (const char *name, const policy_ops_t *ops, void *impl);
void policy_destroy (policy_t **self_p);
const char *policy_name (const policy_t *self);
char *policy_decide (policy_t *self, const policy_input_t *input, char *err, size_t err_size);
void *policy_impl (policy_t *self);
//  policy_ops_t.reads_context of the policy; true for NULL (no policy
//  known: everything is kept).
bool policy_reads_context (const policy_t *self);

//  The heuristic: seeded with `seed` mixed with the agent id, so agents
//  with the same --seed still differ, and runs repeat exactly.
policy_t *policy_heuristic_new (uint64_t seed, const char *agent_id);
//  Channel the heuristic listens to and reports to.
#define HEURISTIC_CHANNEL TEAM_CHANNEL

//  The llm policy; takes ownership of `llm`. `breaker_ms` is the circuit
//  breaker's first cool-down (0: no breaker), see policy_llm.c.
policy_t *policy_llm_new (llm_t *llm, int64_t breaker_ms);
#define POLICY_LLM_BREAKER_FAILURES 3           //  failed calls in a row that open it
#define POLICY_LLM_BREAKER_MAX_MS   (5 * 60 * 1000)

typedef struct {
    llm_totals_t totals;                //  every call made (llm.h)
    uint64_t skipped;                   //  decisions not sent: circuit open
    uint64_t breaker_openings;
    bool breaker_open;                  //  the last decision found it open
    uint64_t prompts_cut;               //  prompts that left something out for the budget
    uint64_t images_sent;               //  decisions that showed the model the view's image
    uint64_t images_left_out;           //  images the context budget had no room for
    llm_result_t last_result;           //  of the last decision
    uint64_t answered;                  //  decisions the model answered (usable or not)
    uint64_t unanswered;                //  decisions sent that got no answer
    char last_error[256];               //  why the last call gave no answer
    llm_mode_t mode;                    //  the answer mode (auto until probed)
    uint64_t probe_calls;               //  the auto mode's probe (llm_mode.h), not in totals
} policy_llm_report_t;
void policy_llm_report (policy_t *self, policy_llm_report_t *report);

//  True when asking again this decision may help: the last call got a
//  garbled reply (not JSON, no choices). False after a refused request,
//  spent HTTP retries, a passed deadline, or with the circuit open.
bool policy_llm_retry_useful (policy_t *self);

//  GET <llm-url>/models once at start, with a clear log line; a server
//  that cannot be reached opens the circuit at once.
void policy_llm_probe (policy_t *self, long timeout_ms);

//  How the model answers (llm_mode.h); default auto.
void policy_llm_set_mode (policy_t *self, llm_mode_t mode);

//  Replaces the prompt's words (prompt_template.h); takes ownership.
void policy_llm_set_template (policy_t *self, prompt_template_t *tpl);

#endif
