// SPDX-License-Identifier: MIT
/*  limits - the limits the core's operations are applied under.

    They are part of the core's state, not of the process: an operation's
    outcome depends on them (an inbox full at 1,000 messages refuses the
    1,001st), so a replay must apply each operation under the limits it
    was first applied under, whatever the flags of the broker that
    replays. The edge journals OP_LIMITS whenever a start brings limits
    that differ from the journal's; the core applies them from there on.
*/
#ifndef PARLEY_CORE_LIMITS_H
#define PARLEY_CORE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include "mailroom.h"
#include "state.h"

typedef struct {
    size_t max_agents;
    mailroom_limits_t mail;
    state_limits_t state;
    uint32_t max_turns;             //  the workflow's
    uint32_t max_revisions;
    size_t checkpoints;             //  kept
} core_limits_t;

//  One map value (for OP_LIMITS and the snapshot).
void limits_encode (const core_limits_t *limits, msgpack_packer *pk);
//  From that map: every field present and in range, or false with why.
bool limits_decode (const msgpack_object *obj, core_limits_t *limits, char *why, size_t why_size);
bool limits_equal (const core_limits_t *a, const core_limits_t *b);

#endif
