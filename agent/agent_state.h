// SPDX-License-Identifier: MIT
/*  agent_state - what the agent's stages read and write, split by stage.

    A step (agent_step.h) calls six stage functions; each one's signature
    names the parts it reads (const) and the record it produces:

        agent_parts_t     configuration and parts, set up by agent.c
        agent_team_t      the team list (Communication) and the channels
                          joined (at start, and by Execution's ListenTo)
        perceived_t       Perception: the step, the view, its observations
        recalled_t        RetrieveMemory: the memories for this view
        heard_t           Communication: this step's mail, as text
        decided_t         Decision: the answer and the action (Execution
                          notes what it could not deliver)
        agent_counters_t  counts for the summary, written by every stage
        agent_ending_t    UpdateMemory: why the run ended

    agent_state_t holds one of each; agent.c owns it, creates and destroys
    the parts, and the stages only use them.
*/
#ifndef PARLEY_AGENT_STATE_H
#define PARLEY_AGENT_STATE_H

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
#include "policy.h"
#include "stage.h"
#include "steplog.h"
#include "team_facts.h"
#include "vmemory/vmemory.h"

//  Teammates the team list holds: the broker's default --max-agents, so
//  that a sender is never "unknown" for want of room (an unknown sender
//  makes the next Communication read the list again).
#define AGENT_MAX_TEAM 1024
#define AGENT_CONNECTORS 3
#define AGENT_MAX_ACTIONS 6
#define AGENT_MAX_CHANNELS 16           //  listened channels named in the prompt
//  vmemory is written to disk every this many steps, and at the end:
//  saving fsyncs, which is the slowest part of a step.
#define AGENT_SAVE_EVERY 10
#define AGENT_STEP_SAMPLES 4096       //  step times kept for the summary

//  What the memory stores of a step (a role file's memory.store).
#define AGENT_STORE_OBSERVATIONS (1u << 0)  //  "At position P, I saw [...]"
#define AGENT_STORE_MESSAGES (1u << 1)      //  "Messages received: ..."
#define AGENT_STORE_DECISIONS (1u << 2)     //  "I decided to A. Reason: R"
#define AGENT_STORE_ALL (AGENT_STORE_OBSERVATIONS | AGENT_STORE_MESSAGES | AGENT_STORE_DECISIONS)

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
    unsigned store;                     //  AGENT_STORE_* bits
    uint64_t team_size;                 //  online agents to wait for (0/1: none)
    int64_t team_wait_ms;               //  at most this long (0: no limit)
    int64_t connected_ms;               //  monotonic time HELLO was answered
    size_t context_tokens;              //  the model's context window; 0: no limit
    bool llm_vision;                    //  the model sees the view's image
    const char *actions[AGENT_MAX_ACTIONS];
    size_t action_count;

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
    team_facts_t *facts;                //  cells and claims (team_facts.h); NULL: none
    stage_stats_t *stats;               //  STAGE__COUNT; NULL: not counted
} agent_parts_t;

typedef struct {
    char names[AGENT_MAX_TEAM][PROTO_MAX_NAME + 1];
    const char *ptrs[AGENT_MAX_TEAM];
    bool online[AGENT_MAX_TEAM];
    size_t count;
    zhashx_t *index;                    //  the names, for agent_team_has; NULL: not built
    bool listed;                        //  names came from an AGENTS reply (then AGENT_EVENTs)
    uint64_t listed_epoch;              //  the session and the client's dropped-event
    uint64_t listed_dropped;            //  count when it was read
    char channels[AGENT_MAX_CHANNELS][PROTO_MAX_NAME + 1];     //  listened to
    const char *channel_ptrs[AGENT_MAX_CHANNELS];
    size_t channel_count;
} agent_team_t;

//  Perception: the step and what it saw. Communication and Execution add
//  to the observations (mail, undelivered messages).
typedef struct {
    uint64_t step;
    zlistx_t *obs;                      //  observations since the last turn
    world_view_t seen;                  //  the view the decision is made on
    char *visible_caption;              //  the caption of this view, or NULL
    int64_t start_us;                   //  when the step began
    bool viewed;                        //  the last STEP brought the next view and mail
} perceived_t;

//  RetrieveMemory: the memories for this view (texts owned by vmem).
typedef struct {
    vmemory_hit_t hits[VMEMORY_MAX_TOP_K];
    const char *memories[VMEMORY_MAX_TOP_K];
    size_t count;
} recalled_t;

//  Communication: this step's mail as one line for the memory (NULL: none).
typedef struct {
    char *mail_text;
} heard_t;

//  Decision: the accepted answer and its action. `last_action` is kept to
//  the next step, whose Communication closes the turn with it.
typedef struct {
    char *context;                      //  the AgentMemory context asked with
    answer_t *answer;                   //  the accepted answer
    char answer_error[512];             //  why the last answer was refused
    char *refused_answer;               //  that answer, told back on a retry
    bool by_fallback;                   //  the heuristic decided this step
    int64_t deadline;                   //  pclock_mono_ms; 0 = none
    int tries;                          //  policy asks this decision
    int64_t model_us;                   //  time a non-heuristic policy took
    char action[32];
    char *last_action;                  //  "forward (reason: ...)", for the turn
    char note[STEPLOG_NOTE_MAX];        //  what else was refused (Execution)
} decided_t;

typedef struct {
    uint64_t msgs_sent, msgs_received, send_errors;
    uint64_t invalid_answers, fallbacks, act_errors;
    uint64_t memories_stored, memory_errors;
    uint64_t msgs_suppressed;           //  messages not sent (--no-messages)
    double coverage;
    //  Step time without the model: a step's wall time from Perception to
    //  the end of UpdateMemory, minus the time a non-heuristic policy spent
    //  deciding (the LLM call and its retries) and minus --step-delay-ms.
    //  The last AGENT_STEP_SAMPLES steps are kept.
    int64_t step_us[AGENT_STEP_SAMPLES];
    uint64_t step_samples;              //  steps measured (ring index = n % size)
} agent_counters_t;

typedef struct {
    bool finished;
    char reason[64];
} agent_ending_t;

typedef struct {
    agent_parts_t parts;
    agent_team_t team;
    perceived_t perceived;
    recalled_t recalled;
    heard_t heard;
    decided_t decided;
    agent_counters_t counts;
    agent_ending_t ending;
    stage_stats_t stats[STAGE__COUNT];
    uint64_t entries;                   //  stage entries over the run
    stage_id_t failed_stage;            //  with STAGE_FAILED: which one
} agent_state_t;

//  The six stages (stage_sense.c, stage_memory.c, stage_act.c). Each
//  returns STAGE_OK or STAGE_FALLBACK to go on, STAGE_FAILED to end the
//  run; UpdateMemory also STAGE_END.
stage_outcome_t stage_perception (agent_parts_t *parts, perceived_t *out,
                                  agent_counters_t *counts);
stage_outcome_t stage_retrieve_memory (agent_parts_t *parts, const perceived_t *in,
                                       recalled_t *out);
stage_outcome_t stage_communication (agent_parts_t *parts, perceived_t *step,
                                     const decided_t *previous, agent_team_t *team,
                                     heard_t *out, agent_counters_t *counts);
stage_outcome_t stage_decision (agent_parts_t *parts, const perceived_t *in,
                                const recalled_t *recalled, const agent_team_t *team,
                                decided_t *out, agent_counters_t *counts);
stage_outcome_t stage_execution (agent_parts_t *parts, perceived_t *step, decided_t *decided,
                                 agent_team_t *team, agent_counters_t *counts);
stage_outcome_t stage_update_memory (agent_parts_t *parts, const perceived_t *in,
                                     const heard_t *heard, const decided_t *decided,
                                     agent_counters_t *counts, agent_ending_t *out);

//  Frees what the records own (not the parts).
void agent_state_free_records (agent_state_t *state);

//  Sends the llm policy's totals to the broker (no-op for the heuristic).
void agent_report_model (agent_parts_t *parts);
//  Writes the agent's new visits and its claim to team.visited /
//  team.claims (not with --no-messages): every TEAM_SYNC_EVERY steps, or
//  now with `force`. Late joiners read the team's knowledge there.
#define TEAM_SYNC_EVERY 4
void agent_team_sync (agent_parts_t *parts, uint64_t step, bool force);
//  The same writes added to `ops` (the step's STEP's): how many (0:
//  nothing due).
#define TEAM_SYNC_OPS 4
size_t agent_team_ops (agent_parts_t *parts, uint64_t step, bool force, parley_ops_t *ops);
//  Mail most STEPs fetch (the mailbox's batch; 0 with --no-messages),
//  and the position they acknowledge (what the mailbox committed).
size_t agent_fetch_size (const agent_parts_t *parts);
uint64_t agent_ack (const agent_parts_t *parts);
//  Joins `channel` (LISTEN) and names it among the prompt's message
//  targets; 0, or -1 when the broker refused (logged).
int agent_team_listen (agent_parts_t *parts, agent_team_t *team, const char *channel);

//  True if `name` is one of the team (an agent id from AGENTS).
bool agent_team_has (const agent_team_t *team, const char *name);

#endif
