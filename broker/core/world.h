// SPDX-License-Identifier: MIT
/*  world - the exploration world the agents explore.

    A line of `width` positions (height 1) or a width x height grid. Every
    position holds 1..3 object names drawn from a built-in pool of 40
    household/office names, from a seed (splitmix64: the same seed gives the
    same world on every machine), or the objects come from a JSON world file
    (world_load, format in world_file.c and tests/worlds/).

    Agents enter at their first PERCEIVE or ACT. Where the i-th agent to
    enter since the last reset (i = 0, 1, 2, ...) starts is the placement
    (world_set_start):
        spread  x = (i * width / 3) % width,  y = (i * height / 3) % height,
                so the first three spread over the world (the default);
        same    every agent at position 0;
        random  a position drawn from the seed and i (splitmix64), so the
                same seed places the same way. What an agent sees where it
    stands - the start position included - is explored.

    Moves: forward x+1, backward x-1; on a grid also right y+1, left y-1
    (left/right on a line: BAD_ACTION). A move off the edge does not move the
    agent and reports outcome "edge". `stay` reports "stayed".

    Coverage = unique object NAMES explored by anyone / unique object NAMES
    in the world. A name at several positions counts once, and is explored
    when it has been seen at any of them. (The original divided a set of
    names by a count of slots, so coverage could never reach 1 with
    duplicates.) done = explored == objects_total.

    State keys (written through state_apply_raw, protected from clients):
        world.objects          replace: map uint position -> [str], set at
                               creation and reset
        world.agent_positions  merge:   map agent -> uint position
        world.explored_by_all  union:   [str] names explored
    Every world call that writes does it as ONE state batch, so afterwards
    state_change_count()/state_change_at() list the keys to publish.

    Not thread-safe: the broker's event loop is the lock.
*/
#ifndef PARLEY_WORLD_H
#define PARLEY_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "perr.h"
#include "pmsg.h"
#include "state.h"

typedef struct _world_t world_t;

typedef enum { WORLD_LINE = 0, WORLD_GRID } world_kind_t;

typedef enum {
    WORLD_FORWARD = 0,
    WORLD_BACKWARD,
    WORLD_LEFT,
    WORLD_RIGHT,
    WORLD_STAY,
    WORLD_ACTION__COUNT
} world_action_t;

//  Limits. Cells are capped so world.objects fits in one frame.
#define WORLD_MAX_SIDE          4096
#define WORLD_MAX_CELLS         4096
#define WORLD_MAX_PER_CELL      16      //  objects at one position (files)
#define WORLD_MAX_NAME          64      //  bytes of an object name
#define WORLD_DEFAULT_WIDTH     10

typedef enum {
    WORLD_START_SPREAD = 0,
    WORLD_START_SAME,
    WORLD_START_RANDOM
} world_start_t;

typedef struct {
    world_kind_t kind;          //  WORLD_LINE forces height 1
    uint32_t width;             //  0 = WORLD_DEFAULT_WIDTH
    uint32_t height;            //  grid only; 0 = width
    uint64_t seed;
} world_config_t;

//  Generates a world from config (NULL = a line of 10, world seed zero) and writes
//  it to state. NULL with `why` on a bad config or a state error.
world_t *world_new (state_t *state, const world_config_t *config,
                    char *why, size_t why_size);
//  Loads a JSON world file. NULL with `why` (file, field, reason) on any
//  problem; never crashes on garbage.
world_t *world_load (state_t *state, const char *path, char *why, size_t why_size);
void world_destroy (world_t **self_p);

//  Start placement of agents entering from now on; `seed` draws random
//  placements. "spread", "same", "random" <-> world_start_t.
void world_set_start (world_t *self, world_start_t start, uint64_t seed);
bool world_start_from_name (const char *name, world_start_t *start);

//  Forgets every agent and all exploration; a generated world is drawn
//  again from `seed` (or from its configured seed if seed is NULL); a world
//  from a file keeps its objects. Rewrites the three state keys.
perr_t world_reset (world_t *self, const uint64_t *seed, char *why, size_t why_size);

//  The agent leaves (BYE with forget): removed from world.agent_positions.
//  What it explored stays explored. Returns false if it was not in the world.
bool world_leave (world_t *self, const char *agent, char *why, size_t why_size);

//  "forward", "backward", "left", "right", "stay".
bool world_action_from_name (const char *name, size_t len, world_action_t *action);
const char *world_action_name (world_action_t action);

//  An image of a position (PNG or JPEG bytes, from the world file).
#define WORLD_IMAGE_MAX (256 * 1024)            //  bytes per image
#define WORLD_IMAGES_MAX (16 * 1024 * 1024)     //  bytes of every image together
typedef struct {
    uint8_t *data;              //  NULL: this position has no image
    size_t size;
    const char *type;           //  "png" or "jpeg"
} world_image_t;

//  One observation. Pointers are valid until the next world call.
typedef struct {
    uint32_t position;          //  y * width + x
    uint32_t x, y;
    const char *const *objects; //  names visible at the position
    size_t object_count;
    const char *outcome;        //  "perceived", "moved", "edge", "stayed"
    const char *const *new_objects;   //  names this step added to explored_by_all
    size_t new_count;
    size_t explored;            //  unique names explored by anyone
    size_t objects_total;       //  unique names in the world
    double coverage;            //  explored / objects_total (1 if total is 0)
    bool done;
    bool completed;             //  this step explored the last name: publish
                                //  WORLD_EVENT "explored"
    const world_image_t *image; //  the position's image, or NULL
} world_obs_t;

//  PERCEIVE: enters the agent if new, marks what it sees explored.
perr_t world_perceive (world_t *self, const char *agent, world_obs_t *obs,
                       char *why, size_t why_size);
//  ACT: action is the wire string (len bytes). BAD_ACTION for an unknown
//  action or left/right on a line (nothing changes then).
perr_t world_act (world_t *self, const char *agent, const char *action, size_t len,
                  world_obs_t *obs, char *why, size_t why_size);

//  OBSERVATION fields, WORLD_OBSERVATION_FIELDS pairs:
//      penc_begin (&enc, PMSG_OBSERVATION, id, WORLD_OBSERVATION_FIELDS);
//      world_encode_observation (&obs, &enc);
#define WORLD_OBSERVATION_FIELDS 10
void world_encode_observation (const world_obs_t *obs, penc_t *enc);
//  The field count for this observation: WORLD_OBSERVATION_FIELDS, plus
//  `image` and `image_type` when the position has an image.
size_t world_observation_fields (const world_obs_t *obs);

//  WELCOME's `world`: writes ONE map value (kind, width, height,
//  objects_total, explored, coverage, done). After penc_key (&enc, "world").
void world_encode_summary (world_t *self, penc_t *enc);

//  WORLD_EVENT fields, WORLD_EVENT_FIELDS pairs (event, coverage, explored,
//  objects_total); event is "explored" or "reset".
#define WORLD_EVENT_FIELDS 4
void world_encode_event (world_t *self, const char *event, penc_t *enc);

//  Introspection, for tests and STATS.
world_kind_t world_kind (world_t *self);
//  The seed a reset without one draws from (the world's configured seed).
uint64_t world_seed (world_t *self);
uint32_t world_width (world_t *self);
uint32_t world_height (world_t *self);
size_t world_objects_total (world_t *self);
size_t world_explored (world_t *self);
double world_coverage (world_t *self);
bool world_done (world_t *self);
size_t world_agents (world_t *self);
//  Names at a position (NULL if out of range); count in *count.
const char *const *world_objects_at (world_t *self, uint32_t position, size_t *count);
//  false if the agent has not entered.
bool world_position_of (world_t *self, const char *agent, uint32_t *position);

//  The journal's snapshot of the world: the seed of its current map, the
//  explored names, the agents' positions (its world.* state keys travel
//  with the state). restore: -1 with why if the record does not fit this
//  world (e.g. a world file that changed since).
//  Agents come in id order: the encoding is canonical (core_dump uses it).
void world_snapshot_encode (world_t *self, msgpack_packer *pk);
int world_snapshot_restore (world_t *self, const msgpack_object *obj, char *why, size_t why_size);

#endif
