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
          corrections: 3                   # refused answers a model may correct, 0..10
          fallback: entry                  # then: fail (default), entry, or a human role
          fallback_note: notes             # the state key that records why
          keys:                            # where the broker mirrors the workflow in the state
            holder: current_agent
            status: workflow_status
            revisions: iteration_count
            turn: turn

    Every role file in roles/ is loaded and checked too (role.h), and the
    two are checked against each other: the entry and every hand-over
    target name a role (a role file whose `role:` differs from its file
    name is named when that is why), every key a role reads or writes is
    declared (or is the workflow's, world.* or team.*), writes use the
    reducer the scenario declares, a built-in policy finds the roles and
    keys it was written for (role_builtin), and the fallback's role and
    note exist and every model-driven role may use them. Errors name the
    file, the line and the key of the mistake itself.
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

//  Where a turn goes when its model's answers were refused more times
//  than `corrections` allows (docs/SCENARIOS.md, "When the model cannot
//  take its turn").
typedef enum {
    SCENARIO_FALLBACK_FAIL = 0,         //  the run fails with the reason
    SCENARIO_FALLBACK_ENTRY,            //  the entry role, the reason in fallback_note
    SCENARIO_FALLBACK_HUMAN             //  the human role fallback_role
} scenario_fallback_t;

#define SCENARIO_MAX_CORRECTIONS 10

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
    size_t entry_line;
    unsigned corrections;               //  refused answers a model may correct, default 3
    scenario_fallback_t fallback;       //  after them
    char *fallback_role;                //  SCENARIO_FALLBACK_HUMAN: the role
    char *fallback_note;                //  a state key that records why, or NULL
    size_t fallback_line, note_line;
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
//  True when a role may read `key`: declared in state, one of the
//  workflow's keys, or the broker's world.* and the agents' team.* keys.
bool scenario_knows_key (const scenario_t *self, const char *key);

//  The cross-checks of the loaded files (scenario_check.c), run by
//  scenario_load: 0, or -1 with "file:line: key: sentence".
int scenario_check (const scenario_t *self, char *why, size_t why_size);
const scenario_key_t *scenario_key (const scenario_t *self, const char *key);

#endif
