// SPDX-License-Identifier: MIT
/*  scenario - a team of one's own: scenarios/<name>/scenario.yaml plus
    the role files in scenarios/<name>/roles/<role>.yaml.

    scenario.yaml is what the broker loads:

        name: scene                        # required
        description: a scene director team
        world: none                        # none, or { kind: line|grid, size, width, height, seed }
        state:                             # the initial shared state
          user_prompt: { reducer: replace, value: "a cozy bedroom" }
          scene_objects: { reducer: append, value: [] }
        workflow:                          # absent: no turns (free-running agents)
          entry: orchestrator              # required: the role that holds the first turn
          max_revisions: 3                 # 1..5
          max_turns: 40                    # the total-turns limit, 1..100000
          turn_timeout_ms: 30000           # a holder silent this long loses the turn; 0 = never
          on_timeout: fail                 # fail, or replace (a connected agent of the same role)
          clear_on_revision: [validation_issues]
          keys:                            # where the broker mirrors the workflow in the state
            holder: current_agent
            status: workflow_status
            revisions: iteration_count
            turn: turn

    Every role file in roles/ is loaded and checked too (role.h), and the
    two are checked against each other: the entry and every hand-over
    target name a role, and a role's writes use the reducer the scenario
    declares for that key. Errors name the file, the line and the key.
*/
#ifndef PARLEY_SCENARIO_H
#define PARLEY_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "role.h"

#define SCENARIO_MAX_KEYS   1024        //  initial state keys
#define SCENARIO_MAX_ROLES  64          //  role files in roles/
#define SCENARIO_MAX_CLEAR  64          //  clear_on_revision keys

typedef enum {
    SCENARIO_WORLD_DEFAULT = 0,         //  not given: the broker's flags decide
    SCENARIO_WORLD_NONE,
    SCENARIO_WORLD_LINE,
    SCENARIO_WORLD_GRID
} scenario_world_t;

typedef enum { SCENARIO_TIMEOUT_FAIL = 0, SCENARIO_TIMEOUT_REPLACE } scenario_on_timeout_t;

typedef struct {
    char *key;
    char *reducer;                      //  replace, append, union, merge, add
    void *value;                        //  msgpack, NULL when not given
    size_t size;
    size_t line;
} scenario_key_t;

typedef struct {
    bool enabled;
    char *entry;
    unsigned max_revisions;             //  default 3
    unsigned max_turns;                 //  default 100
    uint64_t turn_timeout_ms;           //  default 0: never
    scenario_on_timeout_t on_timeout;
    char **clear_on_revision;
    size_t clear_count;
    char *holder_key;                   //  default "current_agent"
    char *status_key;                   //  default "workflow_status"
    char *revisions_key;                //  default "iteration_count"
    char *turn_key;                     //  default "turn"
} scenario_workflow_t;

typedef struct {
    char *dir;                          //  the scenario folder
    char *path;                         //  its scenario.yaml
    char *name;
    char *description;                  //  NULL when not given
    scenario_world_t world;
    uint32_t world_width, world_height; //  0: the broker's default
    uint64_t world_seed;
    bool world_seed_set;
    scenario_key_t *keys;
    size_t key_count;
    scenario_workflow_t workflow;
    role_t **roles;                     //  sorted by file name
    size_t role_count;
} scenario_t;

//  `path` is the scenario folder or its scenario.yaml. NULL with
//  "file:line: key: sentence" in why.
scenario_t *scenario_load (const char *path, char *why, size_t why_size);
void scenario_destroy (scenario_t **self_p);

const role_t *scenario_role (const scenario_t *self, const char *name);
const scenario_key_t *scenario_key (const scenario_t *self, const char *key);

#endif
