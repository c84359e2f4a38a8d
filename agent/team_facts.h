// SPDX-License-Identifier: MIT
/*  team_facts - what an agent knows about the cells of the world and about
    its teammates' intentions, from structured facts only.

    Sources (never free text such as memories or the agent's own reasons):
      - the agent's own visits (team_facts_visit);
      - the broker's world state: world.agent_positions (where teammates
        stand; unless the agent runs with --no-shared-positions);
      - the team's shared state: team.visited (union of positions) and
        team.claims (map agent -> claimed position or nil);
      - teammates' reports on the "explorers" channel, in the declared
        format below (anything else in the mailbox is ignored here).

    Report format (one message body, JSON, documented in docs/TEAM.md):

        {"team":1,"at":12,"claim":40,"visited":[10,11,12],"found":["lamp"]}

      team     1 (the format version; anything else is not a report)
      at       where the sender stands (uint)
      claim    the cell it heads for (uint), or null: it claims nothing
      visited  cells it visited since its last report (<= TEAM_MAX_VISITED)
      found    objects it saw at `at` (<= TEAM_MAX_FOUND names)

    Claims: a teammate's claim holds until it reports another one or null,
    or until it is no longer online (team_facts_set_online, from AGENTS):
    a teammate that left or expired releases its claim.

    Rendering: team_facts_line() gives one compact line for a prompt.

    Cost: one byte per cell (at most TEAM_MAX_CELLS); claims and
    teammates are bounded (TEAM_MAX_CLAIMS) and found by name in O(1);
    walking the claims with team_facts_claim_at (0, 1, 2, ...) is O(claims);
    a report is parsed once.
*/
#ifndef PARLEY_TEAM_FACTS_H
#define PARLEY_TEAM_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "connector.h"

#define TEAM_CHANNEL "explorers"
#define TEAM_MAX_CELLS (1024 * 1024)    //  a line of unknown length grows up to this
#define TEAM_MAX_CLAIMS 256             //  teammates whose claims are kept
#define TEAM_MAX_VISITED 64             //  positions in one report
#define TEAM_MAX_FOUND 16               //  object names in one report
#define TEAM_MAX_REPORT 8192            //  bytes of a report body that is parsed
#define TEAM_NO_CELL UINT64_MAX
//  Shared-state keys: STATE_KEY_TEAM_VISITED (union), STATE_KEY_TEAM_CLAIMS
//  (merge), in conn_state.h.

typedef enum {
    TEAM_CELL_UNKNOWN = 0,
    TEAM_CELL_MINE,                     //  visited by this agent
    TEAM_CELL_TEAM                      //  a teammate was there
} team_cell_t;

typedef struct _team_facts_t team_facts_t;

team_facts_t *team_facts_new (const char *me);
void team_facts_destroy (team_facts_t **self_p);

//  Grid width x height; width 0 is a line of unknown length that grows as
//  positions are learnt.
void team_facts_set_shape (team_facts_t *self, uint64_t width, uint64_t height);
uint64_t team_facts_width (team_facts_t *self);       //  0 until known
size_t team_facts_cells (team_facts_t *self);
team_cell_t team_facts_cell (team_facts_t *self, uint64_t position);
size_t team_facts_unknown (team_facts_t *self);

//  Own visit; true when the cell was not visited by us before.
bool team_facts_visit (team_facts_t *self, uint64_t position);
//  A teammate was at `position`.
void team_facts_mark (team_facts_t *self, uint64_t position);

//  Learns from the state connector (positions if it has them, team.*
//  keys) and the mailbox (reports from others; NULL skips it).
void team_facts_learn (team_facts_t *self, connector_t *mailbox, connector_t *state);

//  Reads one message body; true if it was a report in the declared format.
bool team_facts_read_report (team_facts_t *self, const char *from, const char *body, size_t len);

//  Claims. A claim by ourselves is kept apart (team_facts_own_claim).
void team_facts_claim (team_facts_t *self, const char *agent, uint64_t cell, uint64_t at);
void team_facts_release (team_facts_t *self, const char *agent);
//  The online teammates (from AGENTS): every other claim is released.
void team_facts_set_online (team_facts_t *self, const char *const *agents, size_t count);
size_t team_facts_claim_count (team_facts_t *self);
//  i-th live claim of a teammate; false past the end.
bool team_facts_claim_at (team_facts_t *self, size_t index, const char **agent,
                          uint64_t *cell, uint64_t *at);
//  The agent that claims `cell` (not us), or NULL.
const char *team_facts_claimed_by (team_facts_t *self, uint64_t cell);
//  The cell `agent` claims, or TEAM_NO_CELL (none, released, or us).
uint64_t team_facts_claim_of (team_facts_t *self, const char *agent);

void team_facts_set_own_claim (team_facts_t *self, uint64_t cell);
uint64_t team_facts_own_claim (team_facts_t *self);

//  Teammates' last known positions (state, else their reports).
size_t team_facts_mate_count (team_facts_t *self);
bool team_facts_mate_at (team_facts_t *self, size_t index, const char **agent, uint64_t *position);
//  Where teammate `agent` was last known to stand, or TEAM_NO_CELL.
uint64_t team_facts_mate_position (team_facts_t *self, const char *agent);

//  Object names teammates reported in `found`, counted (a model reads the
//  names themselves in the mailbox part of its context).
size_t team_facts_found_count (team_facts_t *self);

//  The report to send now (caller frees), or NULL when there is nothing
//  new since the last one. `found` are the objects seen at `at`.
char *team_facts_report (team_facts_t *self, uint64_t at, const char *const *found,
                         size_t found_count);
//  Own visits not yet written to team.visited; the caller writes them and
//  then calls team_facts_unsynced_clear. Returns the count.
size_t team_facts_unsynced (team_facts_t *self, const uint64_t **positions);
void team_facts_unsynced_clear (team_facts_t *self);
bool team_facts_claim_changed (team_facts_t *self);     //  since the last state write

//  One compact line for a prompt, e.g.
//  "Team map: 40 of 64 cells known; unknown near you: 13, 14, 22;
//   claims: Agent2->45, Agent3->12." (caller frees)
char *team_facts_line (team_facts_t *self, uint64_t me);

#endif
