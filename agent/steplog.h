// SPDX-License-Identifier: MIT
/*  steplog - the agent's recent steps, one short record each, for the
    prompt's history: what it did, from where to where, what it saw there
    and whether the world refused the move.

    AgentMemory's turns carry every observation of a step (mail too), which
    made the history the longest part of a prompt; a model needs one line
    per step. The log keeps the newest STEPLOG_MAX steps in a ring.

        3. forward 2 -> 3, saw desk, lamp
        4. backward at 0: blocked (edge of the map)
        5. stay at 3, saw nothing
        6. forward 3 -> 4, saw bed; not delivered: message to Bbo (no such agent or channel)

    A step's note says what else the world refused that step (messages the
    broker could not deliver), so the model reads it where it reads the step.
*/
#ifndef PARLEY_STEPLOG_H
#define PARLEY_STEPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STEPLOG_MAX 64
#define STEPLOG_SEEN_MAX 160            //  the objects' text is cut beyond
#define STEPLOG_NOTE_MAX 240

typedef struct {
    uint64_t step;
    char action[32];
    uint64_t from, to;
    char outcome[16];                   //  moved, edge, stayed (the ACT's outcome)
    char seen[STEPLOG_SEEN_MAX];        //  objects at `to`, "" when none
    char note[STEPLOG_NOTE_MAX];        //  "" or what else was refused
} steplog_entry_t;

typedef struct _steplog_t steplog_t;

steplog_t *steplog_new (void);
void steplog_destroy (steplog_t **self_p);

//  Adds a step (the oldest falls out past STEPLOG_MAX).
void steplog_add (steplog_t *self, const steplog_entry_t *entry);
size_t steplog_count (const steplog_t *self);
//  Entry `index`, 0 = the oldest kept; NULL past the end.
const steplog_entry_t *steplog_at (const steplog_t *self, size_t index);

//  The one-line rendering above (no newline); a new string, caller frees.
char *steplog_line (const steplog_entry_t *entry);

#endif
