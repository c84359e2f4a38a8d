// SPDX-License-Identifier: MIT
/*  policy_scene - the scene director's built-in deterministic policies:
    one per role of scenarios/scene, so the team runs without a model.

    Each reads the shared state (the role's connectors.state keys, as JSON)
    and returns its turn: the write ops, the next role, the status. The
    same inputs always give the same turn, so a scripted run repeats
    exactly (and resuming from a checkpoint replays it).

      orchestrator     the prompt -> master_plan from keyword tables; on a
                       revision, routes the first issue by its category
      librarian        one catalogue asset (with bounding box) per object
      architect        positions: a first layout on a fixed 1 m pitch; on
                       a revision, re-placed by the bounding boxes
      material_sci.    a material per object from a table and the plan
      cinematographer  lighting (warm or daylight) and a camera framing all
      critic           overlaps (tolerance 0.05 m), floating objects,
                       missing materials, lighting, camera and the prompt's
                       objects; passes (done + final report) or sends the
                       scene back (status revision)

    scene_objects is append-only (the source document's reducer): each
    role appends new versions of objects, and readers merge them by id,
    later fields over earlier ones (scene_objects_latest).
*/
#ifndef PARLEY_POLICY_SCENE_H
#define PARLEY_POLICY_SCENE_H

#include <jansson.h>
#include <stddef.h>
#include "role.h"

//  The critic's overlap tolerance, metres.
#define SCENE_TOLERANCE 0.05

typedef struct {
    json_t *state;                  //  key -> value (borrowed)
    const role_t *role;
    const char *catalogue;          //  path of the scenario's catalogue.json
} scene_input_t;

typedef struct {
    json_t *ops;                    //  write ops (owned; json_decref)
    char next [65];                 //  "" with status done/failed
    char status [32];               //  "" to leave the status as it is
    char summary [512];             //  one line for people
} scene_turn_t;

//  0, or -1 with err (an input the policy cannot work with).
int scene_decide (role_policy_t policy, const scene_input_t *input, scene_turn_t *turn,
                  char *err, size_t err_size);

//  The revision routing table: the role that fixes an issue category,
//  NULL for a category nobody handles.
const char *scene_route (const char *category);

//  scene_objects merged by id (later versions' fields over earlier ones),
//  in order of first appearance. New reference.
json_t *scene_objects_latest (const json_t *objects);

//  The critic (policy_scene_critic.c).
int scene_critic (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size);
//  Appends {"op": "update", "key": key, "value": value} (steals value).
void scene_op_update (scene_turn_t *turn, const char *key, json_t *value);
//  A "messages" entry: {"from": role, "text": text}.
void scene_op_message (scene_turn_t *turn, const char *role, const char *text);

#endif
