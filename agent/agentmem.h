// SPDX-License-Identifier: MIT
/*  agentmem - AgentMemory: thoughts and turns, and the context
    built from them.

    A thought is a line of the agent's reasoning; a turn is an action and
    the observations it caused. Retention keeps the history short enough for
    a prompt, per observation type:
      - limit: keep only the newest N observations of a type ("thought" is
        the type of thoughts), older ones are dropped from their turns;
      - dedupe: an observation (or thought) whose text equals an older
        retained one of the same type replaces it (the older is dropped).
    Plus an overall cap on entries (oldest dropped first). Dropped items are
    counted.

    agentmem_build_context() renders, exactly:

        History:
        - Turn 1: start
            Started at position 0. I see: lamp.
        - Thought 2: Forward looks unexplored.
        - Turn 3: forward (reason: nobody has been east)
            Moved from position 0 to position 1. I see: desk.

        Current state:
        [world]
        Position: 1 ...
        [mailbox]
        Communication information:
        ...

    "(nothing yet)" stands for an empty history. The current state comes
    from every connector in the order given; a connector that renders ""
    is left out, one that fails shows "[Error: could not render state for
    ID]" and an observation that fails shows "[Error: could not render an
    observation from ID]" -- never a crash.
*/
#ifndef PARLEY_AGENTMEM_H
#define PARLEY_AGENTMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "connector.h"

typedef struct _agentmem_t agentmem_t;

#define AGENTMEM_DEFAULT_MAX_ENTRIES 24
#define AGENTMEM_MAX_RULES 32

agentmem_t *agentmem_new (void);
void agentmem_destroy (agentmem_t **self_p);

//  Retention for one type; limit 0 = unlimited. Replaces an earlier rule
//  for the same type. false if AGENTMEM_MAX_RULES rules exist already.
bool agentmem_set_retention (agentmem_t *self, const char *type, size_t limit, bool dedupe);
void agentmem_set_max_entries (agentmem_t *self, size_t max_entries);

void agentmem_record_thought (agentmem_t *self, const char *text);
//  Moves every observation out of `observations` (the list is left empty).
void agentmem_record_turn (agentmem_t *self, const char *action, zlistx_t *observations);

//  The context text above (caller frees).
char *agentmem_build_context (agentmem_t *self, connector_t *const *connectors, size_t count);
//  Only the "History:" part / only the "Current state:" part.
char *agentmem_render_history (agentmem_t *self);
char *agentmem_render_state (connector_t *const *connectors, size_t count);

size_t agentmem_entries (agentmem_t *self);
size_t agentmem_thoughts (agentmem_t *self);
size_t agentmem_turns (agentmem_t *self);
//  Observations and thoughts dropped by retention, entries by the cap.
uint64_t agentmem_dropped (agentmem_t *self);

#endif
