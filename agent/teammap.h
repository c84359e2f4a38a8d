// SPDX-License-Identifier: MIT
/*  teammap - which positions of the world the team has visited, as far
    as this agent knows: its own positions, and every teammate position the
    shared state (world.agent_positions) has shown it. For the prompt's map
    line: "Visited by the team: 0-3, 5. Not yet visited: 4, 6-9."

    A bitmap of width * height cells; worlds larger than TEAMMAP_MAX_CELLS
    are not tracked (the map line then gives only the size), so a huge
    world costs nothing here.
*/
#ifndef PARLEY_TEAMMAP_H
#define PARLEY_TEAMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEAMMAP_MAX_CELLS (1u << 20)

typedef struct _teammap_t teammap_t;

teammap_t *teammap_new (void);
void teammap_destroy (teammap_t **self_p);

//  Sets the world's size (forgets what was visited when it changes).
void teammap_set_shape (teammap_t *self, uint64_t width, uint64_t height);
//  False when the world is too large (or has no size yet).
bool teammap_tracked (const teammap_t *self);
void teammap_visit (teammap_t *self, uint64_t position);
bool teammap_visited (const teammap_t *self, uint64_t position);
size_t teammap_visited_count (const teammap_t *self);
uint64_t teammap_cells (const teammap_t *self);

//  The visited (or not visited) positions as ranges, "0-3, 5, 7-9", at
//  most `max_ranges` of them, then ", ... (N more)"; "none" when empty.
//  A new string, caller frees.
char *teammap_ranges (const teammap_t *self, bool visited, size_t max_ranges);

#endif
