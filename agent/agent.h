// SPDX-License-Identifier: MIT
/*  agent - one Parley agent: the parts, the step loop, the summary.

    agent_new() builds everything that needs no network: the embedder, the
    private vector memory (loaded from its directory if one is there, so an
    agent resumes with its memories), the policies and the connectors.
    agent_connect() says HELLO (waiting for the broker as long as it takes)
    and joins the configured channels. agent_run() calls agent_step()
    (agent_step.h) until the run ends, and saves the memory.
*/
#ifndef PARLEY_AGENT_H
#define PARLEY_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "stage.h"

typedef struct _agent_t agent_t;

typedef struct {
    const char *broker;             //  tcp://HOST:5555 (required)
    const char *id;                 //  agent id (required)
    const char *policy;             //  "heuristic" (default) or "llm"
    const char *llm_url;
    const char *llm_model;
    const char *llm_mode;           //  auto (NULL), tools, json-schema or text
    const char *embed_url;          //  NULL/"" = built-in embedder
    const char *embed_model;
    int64_t embed_dim;              //  with embed_url: 0 = ask the server once
    const char *memory_dir;         //  NULL = memory in RAM only
    const char *memory_index;       //  "flat" (NULL), "hnsw" or "ivf" (vmemory_index.h)
    int64_t top_k;                  //  memories retrieved per step
    int64_t max_steps;
    bool stop_when_explored;
    uint64_t seed;
    int64_t step_delay_ms;
    int64_t request_timeout_ms;     //  broker reply timeout; 0 = default
    const char *curve_key;          //  own CURVE pair; NULL = plain
    const char *curve_server_key;   //  the broker's public certificate
    int64_t llm_timeout_ms;         //  model call timeout; 0 = default
    FILE *progress;                 //  progress lines and summary; NULL = none
    int64_t llm_deadline_ms;        //  one decision, every try and retry; 0 = none
    int64_t llm_breaker_ms;         //  circuit breaker cool-down; 0 = no breaker
    bool llm_probe;                 //  GET <llm-url>/models at start
    int64_t context_tokens;         //  the model's context window; 0 = no budget
    bool llm_vision;                //  send the view's image to the model
    const char *caption_url;        //  caption model server; NULL/"" = no captions
    const char *caption_model;
    //  Ablations (docs/TEAM.md): each switches off one source of knowledge,
    //  for every policy, and nothing else.
    bool no_messages;               //  no SEND/LISTEN/FETCH, no team.* state
    bool no_shared_positions;       //  world.agent_positions is not read
    bool no_memory;                 //  no retrieval, nothing stored
    int64_t team_size;              //  wait for this many online agents first
    int64_t team_wait_ms;           //  ... at most this long (0: as long as it takes)
    //  A role file's settings (agent_role.h).
    bool memory_store_set;          //  false: the memory stores every part
    unsigned memory_store;          //  AGENT_STORE_* bits (agent_state.h)
    char *const *channels;          //  channels joined at start (LISTEN)
    size_t channel_count;
} agent_config_t;

//  Exit status of agent_run.
#define AGENT_DONE 0                //  the loop ended normally
#define AGENT_STOPPED 1             //  a signal stopped it
#define AGENT_FAILED 2              //  a stage failed, its fallback too
#define AGENT_NO_MODEL 3            //  the loop ended, but the model never answered once

//  parley-agent's exit code for AGENT_NO_MODEL: the llm policy was asked to
//  decide and its server never gave one answer (the heuristic decided
//  every step). Distinct from 1 so scripts can tell "ran without its
//  model" from "crashed".
#define AGENT_EXIT_NO_MODEL 4

//  NULL with `err` filled (bad option, memory or model setup failure).
agent_t *agent_new (const agent_config_t *config, char *err, size_t err_size);
void agent_destroy (agent_t **self_p);

//  Says HELLO; 0 or -1 (refused for good, or stopped) with err filled.
int agent_connect (agent_t *self, volatile sig_atomic_t *stop, char *err, size_t err_size);
int agent_run (agent_t *self);
void agent_summary (agent_t *self, FILE *out);

//  For tests: what the run did.
uint64_t agent_steps (agent_t *self);
const char *agent_end_reason (agent_t *self);
//  A stage's counts over the run; false for an unknown stage.
bool agent_stage_stats (agent_t *self, stage_id_t id, stage_stats_t *stats);
//  Stage entries over the run (six per full step).
uint64_t agent_stage_entries (agent_t *self);
uint64_t agent_memories_stored (agent_t *self);
//  The text of memory `index` (in the order stored), or NULL.
const char *agent_memory_text (agent_t *self, size_t index);
//  Channels joined (at start and by ListenTo).
size_t agent_channel_count (agent_t *self);

#endif
