// SPDX-License-Identifier: MIT
/*  world_int - the object layout of a world (wmap_t), shared by world.c,
    world_map.c (building, generating) and world_file.c (JSON files).
    Not for use outside those files.
*/
#ifndef PARLEY_WORLD_INT_H
#define PARLEY_WORLD_INT_H

#include <czmq.h>
#include "world.h"

//  Which objects lie where. Names are interned: each unique name once, and
//  cells refer to it by index, so "unique names" is simply name_count.
typedef struct {
    uint32_t width, height;
    size_t cells;
    char **names;               //  unique names, in order of first appearance
    size_t name_count, name_cap;
    zhashx_t *intern;           //  name -> index + 1
    uint32_t *ids;              //  name index of each object, cell by cell
    size_t object_count, object_cap;
    uint32_t *start;            //  cell c holds ids [start[c] .. start[c+1])
    uint32_t next_cell;         //  while building
    const char **cell_names;    //  ids as name pointers (after wmap_finish)
    //  Optional image per cell (world files only): NULL when none.
    world_image_t *images;      //  `cells` entries, or NULL for no images at all
} wmap_t;

wmap_t *wmap_new (uint32_t width, uint32_t height);
void wmap_destroy (wmap_t **self_p);
//  Adds an object to a cell; cells must be filled in increasing order.
//  -1 with why on a bad name, a duplicate in the cell, or too many objects.
int wmap_add (wmap_t *self, uint32_t cell, const char *name, size_t len,
              char *why, size_t why_size);
void wmap_finish (wmap_t *self);
//  1..3 objects per cell from the built-in pool, drawn from seed.
wmap_t *wmap_generate (uint32_t width, uint32_t height, uint64_t seed);
//  A JSON world file (format in world_file.c). NULL with why on any error.
wmap_t *wmap_load (const char *path, world_kind_t *kind, char *why, size_t why_size);

//  The world object (world.c; its journal snapshot in world_snapshot.c).
#define WORLD_MAX_NEW (2 * WORLD_MAX_PER_CELL)     //  start cell + one move

typedef struct {
    uint32_t position;
} agent_t;

struct _world_t {
    state_t *state;
    world_kind_t kind;
    uint64_t seed;
    uint64_t map_seed;          //  the seed the current map was drawn from
    bool from_file;
    wmap_t *map;
    bool *explored;             //  per unique name
    size_t explored_count;
    zhashx_t *agents;           //  agent id -> agent_t
    uint32_t arrivals;          //  agents entered since the last reset
    world_start_t start;        //  where entering agents start
    uint64_t start_seed;        //  draws of the random placement
    const char *new_names [WORLD_MAX_NEW];
};

#endif
