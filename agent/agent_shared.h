/*  agent_shared - the shared store the agent's nodes read and write.

    In PocketFlow terms this is `shared`: the one struct every node gets.
    Nodes (nodes_*.c) know this struct and nothing of each other; the
    wiring is in agent_flow.c and the ownership (who creates and destroys
    each part) in agent.c. Fields are grouped by who writes them.
*/
#ifndef PARLEY_AGENT_SHARED_H
#define PARLEY_AGENT_SHARED_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "agentmem.h"
#include "answer.h"
#include "parley/client.h"
#include "captioner.h"
#include "conn_world.h"
#include "embedder.h"
#include "flow.h"
#include "policy.h"
#include "steplog.h"
#include "team_facts.h"
#include "vmemory/vmemory.h"

#define AGENT_MAX_TEAM 64
#define AGENT_CONNECTORS 3
#define AGENT_MAX_ACTIONS 6
#define AGENT_MAX_CHANNELS 16           //  listened channels named in the prompt
//  vmemory is written to disk every this many steps, and at the end:
//  saving fsyncs, which is the slowest part of a step.
#define AGENT_SAVE_EVERY 10
#define AGENT_STEP_SAMPLES 4096       //  step times kept for the summary

typedef struct {
    //  Configuration (agent.c)
    char id[PROTO_MAX_NAME + 1];
    uint64_t max_steps;
    size_t top_k;
    bool stop_when_explored;
    int64_t step_delay_ms;
    FILE *progress;                     //  one line per step; NULL = quiet
    volatile sig_atomic_t *stop;
    int64_t llm_deadline_ms;            //  per decision; 0 = none
    bool no_messages, no_shared_positions, no_memory;
    uint64_t team_size;                 //  online agents to wait for (0/1: none)
    int64_t connected_ms;               //  monotonic time HELLO was answered

    //  Parts (agent.c)
    parley_client_t *link;
    connector_t *world, *mailbox, *state;
    connector_t *connectors[AGENT_CONNECTORS];     //  context order
    agentmem_t *mem;
    steplog_t *steps;                   //  one record per step, for the prompt
    teammap_t *map;                     //  positions the team visited
    embedder_t *embedder;
    vmemory_t *vmem;
    bool memory_durable;                //  vmem is saved to disk (has a dir)
    policy_t *policy;                   //  primary
    policy_t *heuristic;                //  fallback (may be == policy)
    float *vec;                         //  embedder_dim floats, scratch
    captioner_t *captioner;             //  image -> visible_caption, or NULL
    bool llm_vision;                    //  the model sees the view's image
    team_facts_t *facts;                //  cells and claims (team_facts.h); NULL: none

    //  Team (Communication)
    char team[AGENT_MAX_TEAM][PROTO_MAX_NAME + 1];
    size_t team_count;
    const char *team_ptrs[AGENT_MAX_TEAM];
    char channels[AGENT_MAX_CHANNELS][PROTO_MAX_NAME + 1];     //  listened to
    const char *channel_ptrs[AGENT_MAX_CHANNELS];
    size_t channel_count;
    size_t context_tokens;              //  the model's context window; 0: no limit
    const char *actions[AGENT_MAX_ACTIONS];
    size_t action_count;

    //  The step (Perception .. UpdateMemory)
    uint64_t step;
    zlistx_t *step_obs;                 //  observations since the last turn
    char *last_action;                  //  "forward (reason: ...)", for the turn
    world_view_t seen;                  //  the view the decision was made on
    vmemory_hit_t hits[VMEMORY_MAX_TOP_K];
    const char *memories[VMEMORY_MAX_TOP_K];
    size_t memory_count;
    char *context;
    char *answer_text;                  //  the answer being validated
    answer_t *answer;                   //  the accepted answer
    char answer_error[512];             //  why the last answer was refused
    char *refused_answer;               //  that answer, told back on a retry
    bool by_fallback;                   //  the heuristic decided this step
    int64_t decision_deadline;          //  pclock_mono_ms; 0 = none
    int decision_tries;                 //  policy asks this decision
    char action[32];
    char *mail_text;                    //  messages received this step, for memory
    char *visible_caption;              //  the caption of this step's view, or NULL
    char step_note[STEPLOG_NOTE_MAX];   //  what else was refused this step (steplog)

    //  End of the loop
    bool finished;
    char end_reason[64];

    //  Counters (summary)
    uint64_t msgs_sent, msgs_received, send_errors;
    uint64_t invalid_answers, fallbacks, act_errors;
    uint64_t memories_stored, memory_errors;
    uint64_t msgs_suppressed;           //  messages not sent (--no-messages)
    double coverage;

    //  Step time without the model (summary): a step's wall time from
    //  Perception to the end of UpdateMemory, minus the time a non-heuristic
    //  policy spent deciding (the LLM call and its retries) and minus
    //  --step-delay-ms. The last AGENT_STEP_SAMPLES steps are kept.
    int64_t step_start_us, model_us;
    int64_t step_us[AGENT_STEP_SAMPLES];
    uint64_t step_samples;              //  steps measured (ring index = n % size)
} agent_shared_t;

//  Node tables (nodes_*.c).
const flow_node_ops_t *node_perception (void);
const flow_node_ops_t *node_retrieve_memory (void);
const flow_node_ops_t *node_communication (void);
const flow_node_ops_t *node_decision (void);
const flow_node_ops_t *node_execution (void);
const flow_node_ops_t *node_update_memory (void);

//  The wiring (agent_flow.c): adds the six nodes and their transitions.
int agent_flow_build (flow_t *flow);

//  Sends the llm policy's totals to the broker (no-op for the heuristic).
void agent_shared_report_model (agent_shared_t *shared);
//  Writes the agent's new visits and its claim to team.visited /
//  team.claims (not with --no-messages): every TEAM_SYNC_EVERY steps, or
//  now with `force`. Late joiners read the team's knowledge there.
#define TEAM_SYNC_EVERY 4
void agent_team_sync (agent_shared_t *shared, bool force);

//  True if `name` is one of the team (an agent id from AGENTS).
bool agent_shared_is_teammate (agent_shared_t *shared, const char *name);

#endif
