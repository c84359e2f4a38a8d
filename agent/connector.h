// SPDX-License-Identifier: MIT
/*  connector - a module with an id that watches one part of the agent's
    environment.

    A connector keeps its own previous state. capture() refreshes the
    current state from its source (the broker, for the built-in ones);
    observe() diffs current against previous, appends observations to a
    list and makes current the new previous; render() gives the current
    state as text for the context.

    The built-in connectors (conn_world, conn_mailbox, conn_state) can also
    be fed directly, without a broker, which is how their diffs are tested.

    A connector's render may fail (NULL); AgentMemory turns that into an
    error line. capture() failing leaves the previous state in place.
*/
#ifndef PARLEY_CONNECTOR_H
#define PARLEY_CONNECTOR_H

#include <czmq.h>
#include "observation.h"

typedef struct _connector_t connector_t;

typedef struct {
    //  Refresh from the source; 0 ok, -1 with err filled. NULL: fed only.
    int (*capture) (void *impl, char *err, size_t err_size);
    //  Diff and roll previous := current; append observation_t * to `out`.
    void (*observe) (void *impl, const char *id, zlistx_t *out);
    //  Current state as a new string ("" when there is nothing), NULL on failure.
    char *(*render) (void *impl);
    void (*destroy) (void *impl);
} connector_ops_t;

#define CONNECTOR_MAX_ID 32

//  Takes ownership of `impl` (released by ops->destroy).
connector_t *connector_new (const char *id, const connector_ops_t *ops, void *impl);
void connector_destroy (connector_t **self_p);

const char *connector_id (const connector_t *self);
void *connector_impl (connector_t *self);

int connector_capture (connector_t *self, char *err, size_t err_size);
//  Returns the number of observations appended to `out`.
size_t connector_observe (connector_t *self, zlistx_t *out);
char *connector_render (connector_t *self);

//  A new list whose destructor destroys observations.
zlistx_t *connector_observation_list (void);

#endif
