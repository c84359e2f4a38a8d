// SPDX-License-Identifier: MIT
/*  core_int - the core record, shared by the core's own files (core.c,
    core_send.c, core_dump.c, core_snapshot.c). Not a public API.
*/
#ifndef PARLEY_CORE_INT_H
#define PARLEY_CORE_INT_H

#include <czmq.h>
#include "core.h"
#include "channels.h"
#include "replay.h"

struct _core_t {
    core_limits_t limits;
    const scenario_t *scenario;
    agents_t *agents;
    mailroom_t *mailroom;
    state_t *state;
    world_t *world;             //  NULL: the scenario says world: none
    workflow_t *workflow;       //  NULL without a scenario workflow
    uint64_t origin;
    uint64_t ops;               //  operations applied
};

//  OP_SEND (core_send.c).
perr_t core_send (core_t *self, agent_t *from, const op_t *op, core_outcome_t *out);

#endif
