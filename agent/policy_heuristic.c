// SPDX-License-Identifier: MIT
/*  policy_heuristic - the default policy: explores well, needs no server.

    What it knows about cells comes from structured facts only (team_facts:
    its own visits, teammates' positions in world.agent_positions, the
    team's team.visited / team.claims state and teammates' reports in the
    declared JSON format). It never scans free text: a retrieved memory
    that reads "forward leads toward position 9" is the agent's own past
    reasoning, not a fact about cell 9, and treating it as one made a lone
    agent drop its goals and wander.

    Goals, in the spirit of frontier allocation:
      - the goal is an unknown cell; it is kept until it becomes known or a
        teammate with priority claims it (priority: nearer to the cell,
        then the smaller id), so the agent does not dither;
      - a new goal is the nearest unknown cell that no teammate claims and
        that is not nearer to a teammate than to us - our share of a
        Voronoi split of the frontier, where a teammate with a claim stands
        on its claim; only when our share is empty do cells nearer to
        others count;
      - ties go to the cell with more known or off-map neighbours, which
        sweeps rows like a lawnmower instead of leaving holes behind, then
        to a seeded PRNG (splitmix64): same seed and inputs, same answers.
    The goal is announced as a claim in every report (team_facts.h) on the
    "explorers" channel, which it listens to.

    The answer is text in the reply format, built with answer_format(), so
    it is parsed like a model's.

    Cost: O(cells) per decision (goal choice) plus one O(cells) two-pass
    distance transform for the teammates (s_nearest).
*/
#include <assert.h>
#include <czmq.h>
#include "answer.h"
#include "conn_world.h"
#include "policy.h"
#include "team_facts.h"

#define NEAREST_CAP 250             //  teammate distance that stops mattering

typedef struct {
    uint64_t rng;
    char me[PROTO_MAX_NAME + 1];
    team_facts_t *own;              //  used when the input brings no facts
    uint64_t goal;                  //  TEAM_NO_CELL: none yet
    uint8_t *nearest;               //  per cell: distance to nearest teammate/claim
    size_t nearest_size;
    uint8_t *claimed;               //  per cell: a teammate claims it (s_pick_goal)
    size_t claimed_size;
    bool listening;
} heur_t;

static uint64_t
s_next (heur_t *self)
{
    uint64_t z = (self->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static bool
s_allowed (const policy_input_t *in, const char *action)
{
    for (size_t i = 0; i < in->action_count; i++)
        if (streq (in->actions[i], action))
            return true;
    return false;
}

//  Map geometry: a line of unknown length is one row as long as the map.
static uint64_t
s_width (team_facts_t *facts)
{
    uint64_t w = team_facts_width (facts);
    return w? w: (team_facts_cells (facts)? team_facts_cells (facts): 1);
}

static uint64_t
s_manhattan (team_facts_t *facts, uint64_t a, uint64_t b)
{
    uint64_t w = s_width (facts);
    uint64_t ax = a % w, ay = a / w, bx = b % w, by = b / w;
    return (ax > bx? ax - bx: bx - ax) + (ay > by? ay - by: by - ay);
}

//  Where move 0..3 (forward, backward, right, left) leads from `from`, or
//  false if off the map. On a line of unknown length forward always leads on.
static bool
s_target (team_facts_t *facts, uint64_t from, int move, uint64_t *to)
{
    uint64_t w = s_width (facts);
    bool open_line = team_facts_width (facts) == 0;
    uint64_t h = open_line? 1: (team_facts_cells (facts) + w - 1) / w;
    uint64_t x = from % w, y = from / w;
    if (move == 0 && (open_line || x + 1 < w))
        x++;
    else if (move == 1 && x > 0)
        x--;
    else if (move == 2 && y + 1 < h)
        y++;
    else if (move == 3 && y > 0)
        y--;
    else
        return false;
    *to = y * w + x;
    return true;
}

//  Fills self->nearest[u] with min(NEAREST_CAP, Manhattan distance from u
//  to the nearest teammate), a teammate that announced a claim counting as
//  standing on its claim: that is where it will be, while the cells around
//  where it stands now are behind it (without claims, its position stands
//  for it). Counting both as teammates gave each claim a territory nobody
//  swept. Measured with make bench-team, 3 agents, 10 seeds: 16x16 team
//  steps 95 -> 92, messages' share of total agent-steps 0.98 -> 0.93.
//  On an open grid the
//  Manhattan distance to the nearest source is what a multi-source BFS
//  gives, and two raster scans (down-right, then up-left) compute it in
//  O(cells). Saturating at the cap keeps it exact below the cap.
static void
s_nearest (heur_t *self, team_facts_t *facts)
{
    size_t cells = team_facts_cells (facts);
    if (self->nearest_size < cells) {
        self->nearest = (uint8_t *) realloc (self->nearest, cells);
        assert (self->nearest);
        self->nearest_size = cells;
    }
    uint8_t *d = self->nearest;
    memset (d, NEAREST_CAP, cells);
    const char *agent;
    uint64_t position;
    for (size_t i = 0; team_facts_mate_at (facts, i, &agent, &position); i++) {
        uint64_t cell = team_facts_claim_of (facts, agent);
        if (cell != TEAM_NO_CELL)
            position = cell;            //  where it goes, not where it is
        if (position < cells)
            d[position] = 0;
    }
    size_t w = (size_t) s_width (facts);
    size_t h = (cells + w - 1) / w;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w && y * w + x < cells; x++) {
            size_t u = y * w + x;
            if (x > 0 && d[u - 1] + 1 < d[u])
                d[u] = d[u - 1] + 1;
            if (y > 0 && d[u - w] + 1 < d[u])
                d[u] = d[u - w] + 1;
        }
    for (size_t y = h; y-- > 0; )
        for (size_t x = w; x-- > 0; ) {
            size_t u = y * w + x;
            if (u >= cells)
                continue;
            if (x + 1 < w && u + 1 < cells && d[u + 1] + 1 < d[u])
                d[u] = d[u + 1] + 1;
            if (u + w < cells && d[u + w] + 1 < d[u])
                d[u] = d[u + w] + 1;
        }
}

//  Known or off-map neighbours of u (0..4): the sweep's tie-break.
static int
s_enclosed (team_facts_t *facts, uint64_t u)
{
    int count = 0;
    for (int move = 0; move < 4; move++) {
        uint64_t to;
        count += !s_target (facts, u, move, &to)
              || to >= team_facts_cells (facts)
              || team_facts_cell (facts, to) != TEAM_CELL_UNKNOWN;
    }
    return count;
}

//  True when a teammate's claim on `goal` beats ours: it is nearer to the
//  cell (as it reported), or as near with the smaller id.
static bool
s_yield (heur_t *self, team_facts_t *facts, uint64_t me, uint64_t goal)
{
    const char *agent;
    uint64_t cell, at;
    uint64_t mine = s_manhattan (facts, me, goal);
    for (size_t i = 0; team_facts_claim_at (facts, i, &agent, &cell, &at); i++) {
        if (cell != goal)
            continue;
        if (at == TEAM_NO_CELL)         //  a claim from the state: where is it now?
            at = team_facts_mate_position (facts, agent);
        if (at == TEAM_NO_CELL)         //  nobody knows: ours stands
            continue;
        uint64_t theirs = s_manhattan (facts, at, goal);
        if (theirs < mine || (theirs == mine && strcmp (agent, self->me) < 0))
            return true;
    }
    return false;
}

//  The new goal (TEAM_NO_CELL when nothing is unknown). Lexicographic
//  score: (nearer to a teammate, distance, fewer enclosed neighbours,
//  nearer to teammates, jitter).
//  Marks in self->claimed the cells a teammate claims: one walk of the
//  claims instead of one per cell (team_facts_claimed_by).
static void
s_claimed (heur_t *self, team_facts_t *facts, size_t cells)
{
    if (self->claimed_size < cells) {
        self->claimed = (uint8_t *) realloc (self->claimed, cells);
        assert (self->claimed);
        self->claimed_size = cells;
    }
    memset (self->claimed, 0, cells);
    const char *agent;
    uint64_t cell, at;
    for (size_t i = 0; team_facts_claim_at (facts, i, &agent, &cell, &at); i++)
        if (cell < cells)
            self->claimed[cell] = 1;
}

static uint64_t
s_pick_goal (heur_t *self, team_facts_t *facts, uint64_t me)
{
    s_nearest (self, facts);
    uint64_t best = TEAM_NO_CELL, best_key = UINT64_MAX, best_jitter = 0;
    size_t cells = team_facts_cells (facts);
    s_claimed (self, facts, cells);
    uint64_t w = s_width (facts), mx = me % w, my = me / w;
    for (size_t u = 0; u < cells; u++) {
        if (team_facts_cell (facts, u) != TEAM_CELL_UNKNOWN || self->claimed[u])
            continue;
        uint64_t ux = u % w, uy = u / w;
        uint64_t d = (ux > mx? ux - mx: mx - ux) + (uy > my? uy - my: my - uy);
        bool theirs = self->nearest[u] < d;
        uint64_t high = ((uint64_t) theirs << 60) | (d << 11);
        //  The low bits cannot make up for worse high ones: the neighbour
        //  count (four map lookups) only for a cell that may still win.
        //  It was most of a step's time on a large map.
        if (high > (best_key | 0x7ff))
            continue;
        uint64_t key = high
                     | ((uint64_t) (4 - s_enclosed (facts, u)) << 8)
                     | (uint64_t) (NEAREST_CAP - self->nearest[u]);
        if (key > best_key)
            continue;
        uint64_t jitter = s_next (self);
        if (key < best_key || jitter < best_jitter) {
            best = u;
            best_key = key;
            best_jitter = jitter;
        }
    }
    return best;
}

//  The move toward the goal: one that gets nearer, preferring an unknown
//  cell on the way, then the PRNG. Without a goal, any possible move.
static const char *
s_move (heur_t *self, const policy_input_t *in, team_facts_t *facts, uint64_t me)
{
    static const char *const moves[] = { "forward", "backward", "right", "left" };
    const char *best = NULL;
    uint64_t best_key = UINT64_MAX, best_jitter = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t to;
        if (!s_allowed (in, moves[i]) || !s_target (facts, me, i, &to))
            continue;
        uint64_t key = 0;
        if (self->goal != TEAM_NO_CELL) {
            key = s_manhattan (facts, to, self->goal) * 2;
            key += team_facts_cell (facts, to) != TEAM_CELL_UNKNOWN;
        }
        uint64_t jitter = s_next (self);
        if (!best || key < best_key || (key == best_key && jitter < best_jitter)) {
            best = moves[i];
            best_key = key;
            best_jitter = jitter;
        }
    }
    return best;
}

static char *
s_decide (void *impl, const policy_input_t *in, char *err, size_t err_size)
{
    heur_t *self = (heur_t *) impl;
    const world_view_t *view = conn_world_view (in->world);
    if (!view->valid) {
        snprintf (err, err_size, "no observation of the world yet");
        return NULL;
    }
    team_facts_t *facts = in->facts;
    if (!facts) {
        facts = self->own;
        uint64_t w = conn_world_width (in->world), h = conn_world_height (in->world);
        team_facts_set_shape (facts, w, h? h: 1);
        team_facts_learn (facts, in->mailbox, in->state);
    }
    uint64_t me = view->position;
    team_facts_visit (facts, me);

    char seen[1024], why[256], thinking[1600];
    world_view_objects_text (view, seen, sizeof (seen));
    const char *action = NULL;
    if (view->done && s_allowed (in, "end")) {
        action = "end";
        self->goal = TEAM_NO_CELL;
        snprintf (why, sizeof (why), "the team has explored every object");
    }
    else {
        if (self->goal == TEAM_NO_CELL || team_facts_cell (facts, self->goal) != TEAM_CELL_UNKNOWN
        ||  s_yield (self, facts, me, self->goal))
            self->goal = s_pick_goal (self, facts, me);
        action = s_move (self, in, facts, me);
        if (action && self->goal != TEAM_NO_CELL)
            snprintf (why, sizeof (why), "%s leads toward position %" PRIu64
                      ", the nearest place nobody has explored or claimed", action, self->goal);
        else
        if (action)
            snprintf (why, sizeof (why), "every position is known; %s keeps looking for what is left",
                      action);
    }
    if (!action) {
        action = s_allowed (in, "stay")? "stay": "end";
        snprintf (why, sizeof (why), "no move is possible from here");
    }
    team_facts_set_own_claim (facts, self->goal);
    snprintf (thinking, sizeof (thinking), "At position %" PRIu64 " I see %s. %zu position(s) "
              "are still unexplored as far as I know; team coverage is %.0f%%.",
              me, seen, team_facts_unknown (facts), view->coverage * 100);
    const char *found[WORLD_MAX_VISIBLE];
    for (size_t i = 0; i < view->object_count; i++)
        found[i] = view->objects[i];
    char *report = team_facts_report (facts, me, found, view->object_count);
    answer_directive_t directives[2];
    size_t count = 0;
    if (!self->listening) {
        directives[count++] = (answer_directive_t) { ANSWER_LISTEN_TO, TEAM_CHANNEL, NULL };
        self->listening = true;
    }
    if (report)
        directives[count++] = (answer_directive_t) { ANSWER_MESSAGE_TO, TEAM_CHANNEL, report };
    char *text = answer_format (thinking, action, why, NULL, directives, count);
    free (report);
    if (!text)
        snprintf (err, err_size, "out of memory");
    return text;
}

static void
s_destroy (void *impl)
{
    heur_t *self = (heur_t *) impl;
    team_facts_destroy (&self->own);
    free (self->nearest);
    free (self->claimed);
    free (self);
}

//  It decides from the facts, the view and its goal: no AgentMemory context.
static const policy_ops_t s_ops = { .decide = s_decide, .destroy = s_destroy,
                                    .reads_context = false };

policy_t *
policy_heuristic_new (uint64_t seed, const char *agent_id)
{
    assert (agent_id);
    heur_t *self = (heur_t *) zmalloc (sizeof (heur_t));
    //  FNV-1a of the id, mixed into the seed: same --seed, different agents.
    uint64_t hash = 1469598103934665603ull;
    for (const char *p = agent_id; *p; p++)
        hash = (hash ^ (unsigned char) *p) * 1099511628211ull;
    self->rng = seed ^ hash;
    snprintf (self->me, sizeof (self->me), "%s", agent_id);
    self->own = team_facts_new (agent_id);
    self->goal = TEAM_NO_CELL;
    return policy_new ("heuristic", &s_ops, self);
}
