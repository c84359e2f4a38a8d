// SPDX-License-Identifier: MIT
/*  state_reducer - the names of the shared state's reducers: how a WRITE's
    `update` combines with a key's value (PROTOCOL.md, WRITE). Shared by
    state (which keeps each key's reducer) and reducer (which implements
    them), so that neither has to include the other.
*/
#ifndef PARLEY_STATE_REDUCER_H
#define PARLEY_STATE_REDUCER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    STATE_REPLACE = 0,
    STATE_APPEND,
    STATE_UNION,
    STATE_MERGE,
    STATE_ADD,
    STATE_REDUCER__COUNT
} state_reducer_t;

//  Wire names: "replace", "append", "union", "merge", "add".
const char *state_reducer_name (state_reducer_t reducer);
bool state_reducer_from_name (const char *name, size_t len, state_reducer_t *reducer);

#endif
