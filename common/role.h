// SPDX-License-Identifier: MIT
/*  role - one agent's role file (scenarios/<name>/roles/<role>.yaml).

    A role says who an agent is and what it may do, so one parley-agent
    binary can play any member of any team:

        role: critic                      # required: the role's name
        goal: check the scene             # required
        instructions: |                   # the model's instructions (llm policy)
          ...
        human: false                      # a person holds this role's turns
        policy: scene_critic              # llm, heuristic or a built-in name
        connectors:                       # what it perceives
          world: false
          mailbox: true
          state: [scene_objects, master_plan]
        actions:                          # what it may do
          world: []                       # world moves: forward, backward, ...
          writes:                         # state keys it writes, with reducers
            - { key: validation_issues, reducer: append }
          messages: true
          handover: [orchestrator]        # roles it may hand the turn to
        channels: [scene]
        memory:
          store: [observations, decisions]
          top_k: 4
          index: flat                     # flat, hnsw or ivf

    docs/SCENARIOS.md documents every key. Errors name file, line and key.
*/
#ifndef PARLEY_ROLE_H
#define PARLEY_ROLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROLE_MAX_LIST 64            //  elements of any list in a role file

//  How the role decides. The built-in deterministic policies run without a
//  model; `llm` asks the configured model server.
typedef enum {
    ROLE_POLICY_LLM = 0,
    ROLE_POLICY_HEURISTIC,
    ROLE_POLICY_SCENE_ORCHESTRATOR,
    ROLE_POLICY_SCENE_LIBRARIAN,
    ROLE_POLICY_SCENE_ARCHITECT,
    ROLE_POLICY_SCENE_MATERIALS,
    ROLE_POLICY_SCENE_CINEMATOGRAPHER,
    ROLE_POLICY_SCENE_CRITIC,
    ROLE_POLICY__COUNT
} role_policy_t;

const char *role_policy_name (role_policy_t policy);
bool role_policy_from_name (const char *name, role_policy_t *policy);

//  World moves a role may be allowed.
typedef enum {
    ROLE_MOVE_FORWARD = 1 << 0,
    ROLE_MOVE_BACKWARD = 1 << 1,
    ROLE_MOVE_LEFT = 1 << 2,
    ROLE_MOVE_RIGHT = 1 << 3,
    ROLE_MOVE_STAY = 1 << 4
} role_move_t;

//  What the agent's memory keeps.
typedef enum {
    ROLE_STORE_OBSERVATIONS = 1 << 0,
    ROLE_STORE_MESSAGES = 1 << 1,
    ROLE_STORE_DECISIONS = 1 << 2
} role_store_t;

typedef struct {
    char *key;
    char *reducer;                  //  replace, append, union, merge, add
    size_t line;                    //  where it was written, for cross-checks
} role_write_t;

typedef struct {
    char *path;                     //  the file it came from
    char *name;
    size_t line;                    //  of `role:` (the cross-checks name it)
    size_t policy_line;             //  of `policy:`, 0 when not given
    char *goal;
    char *instructions;             //  NULL when not given
    bool human;
    role_policy_t policy;
    //  connectors
    bool sees_world;
    bool reads_mailbox;
    char **reads;                   //  state keys it perceives
    size_t *read_lines;             //  the line of each
    size_t read_count;
    size_t reads_line;              //  of the list (0: not given)
    //  actions
    unsigned moves;                 //  role_move_t bits
    role_write_t *writes;
    size_t write_count;
    size_t writes_line;             //  of the list (0: not given)
    bool sends_messages;
    char **handover;                //  roles it may hand the turn to
    size_t *handover_lines;         //  the line of each
    size_t handover_count;
    size_t handover_line;           //  of the list (0: not given)
    //  channels
    char **channels;
    size_t channel_count;
    //  memory
    unsigned store;                 //  role_store_t bits
    unsigned top_k;
    char *index;                    //  "flat" (default), "hnsw" or "ivf"
} role_t;

//  Loads and checks a role file. NULL with "file:line: key: sentence".
role_t *role_load (const char *path, char *why, size_t why_size);
void role_destroy (role_t **self_p);

//  True when the role writes `key` (any reducer).
const role_write_t *role_write_of (const role_t *self, const char *key);

//  What a built-in policy needs of the scenario it runs in (role_builtin.c):
//  the keys it writes and the roles it hands the turn to, NULL-terminated.
typedef struct {
    role_policy_t policy;
    const char *scenario;           //  the scenario it was written for
    const char *const *writes;
    const char *const *hands_to;
} role_builtin_t;

//  NULL for llm and heuristic, which need nothing of a scenario.
const role_builtin_t *role_builtin (role_policy_t policy);

#endif
