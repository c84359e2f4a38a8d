// SPDX-License-Identifier: MIT
/*  conn_state - the "state" connector: shared-state keys the agent reads.

    Captures the configured keys from the client's state replica (no
    request; conn_state_use_replica), or else with one GET (by default
    world.explored_by_all and world.agent_positions). A key marked
    conn_state_read_once is read when the replica starts and then never
    again (the agent's way not to follow a key its policy does not read). Each value is kept as
    text (a compact rendering of the msgpack value); the two world keys are
    also kept typed, for the heuristic policy.

    Diff gives observations of type state.<key>:
      world.explored_by_all  "The team has now explored 5 objects; new: lamp, desk."
      world.agent_positions  "Teammates: Agent2 at 4, Agent3 at 7."
      other keys             "<key> is now <value>."

    Render: one line per key that exists, e.g.
        Explored by all (5): lamp, desk, chair, sofa, cup
        Agent positions: Agent1 at 3, Agent2 at 4
*/
#ifndef PARLEY_CONN_STATE_H
#define PARLEY_CONN_STATE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"
#include "connector.h"

#define STATE_MAX_KEYS 8
#define STATE_MAX_TEXT 4096         //  rendering of one value, cut beyond
#define STATE_MAX_AGENTS 256        //  positions kept

#define STATE_KEY_EXPLORED "world.explored_by_all"
#define STATE_KEY_POSITIONS "world.agent_positions"
//  The team's keys (team_facts.h, docs/TEAM.md), kept typed too.
#define STATE_KEY_TEAM_VISITED "team.visited"
#define STATE_KEY_TEAM_CLAIMS "team.claims"
#define STATE_MAX_VISITED 65536     //  team.visited positions kept

//  `keys` NULL means the two world keys. At most STATE_MAX_KEYS are used.
connector_t *conn_state_new (parley_client_t *link, const char *const *keys, size_t count);

//  Sets a key's current value (NULL: the key does not exist).
void conn_state_feed (connector_t *self, const char *key, const msgpack_object *value);

//  Typed views of the world keys (current state).
bool conn_state_explored_has (connector_t *self, const char *name);
//  false past the end.
bool conn_state_agent_at (connector_t *self, size_t index, const char **agent, uint64_t *position);
//  team.visited: the positions (valid until the next capture/feed).
size_t conn_state_team_visited (connector_t *self, const uint64_t **positions);
//  team.claims: i-th entry; *present false when the agent released (nil).
bool conn_state_team_claim_at (connector_t *self, size_t index, const char **agent,
                               uint64_t *position, bool *present);
//  True if `key` is one of the keys this connector reads.
bool conn_state_has_key (connector_t *self, const char *key);
//  `key` (one of the configured keys) is read once, by conn_state_follow,
//  and not followed: its value stays what it was then.
void conn_state_read_once (connector_t *self, const char *key);
//  Turns the link's state replica on for exactly the configured keys
//  (each its own prefix) but those read once, which it reads now with a
//  SNAPSHOT each; 0, or -1 when the broker did not answer.
int conn_state_follow (connector_t *self);
//  Captures read the link's state replica (conn_state_follow) instead of
//  sending GET.
void conn_state_use_replica (connector_t *self, bool on);

#endif
