/*  policy_heuristic - the default policy: explores well, needs no server.

    It keeps a map of which positions are known: visited by this agent, or
    reported by teammates. It learns from the same context a model gets:
      - its own moves (the world connector's position each step);
      - retrieved memories ("At position 3, I saw ...");
      - messages ("... at position 5 ... Visited positions: 4 5 6.");
      - world.agent_positions (where teammates stand now).
    Each candidate move is scored by the distance from where it leads to the
    nearest unknown position, plus a penalty when a teammate is closer to
    that position than we are (they will get there first). Lowest score
    wins; ties are broken by a seeded PRNG (splitmix64), so the same seed
    and the same inputs give the same answers.

    It tells the team what it found the first time it stands somewhere, and
    listens to the "explorers" channel. The answer is text in the reply
    format, built with answer_format(), so it is parsed like a model's.

    Cost: O(cells) per candidate move (4) plus one O(cells) distance
    transform for the teammates (see s_nearest); 50 agents on 64x64 were
    spending most of their CPU here when it was cells x teammates x moves.
*/
#include <assert.h>
#include <ctype.h>
#include <czmq.h>
#include "answer.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "policy.h"

#define MAX_CELLS (1024 * 1024)
#define REPORT_VISITED 32           //  positions listed in one report
#define TEAM_PENALTY 4
#define NEAREST_CAP 64               //  teammate distance that stops mattering

enum { CELL_UNKNOWN = 0, CELL_MINE = 1, CELL_TEAM = 2 };

typedef struct {
    uint64_t rng;
    uint8_t *cells;
    size_t cell_count;
    uint64_t width, height;
    uint64_t *visited;              //  own visits, in order (ring of REPORT_VISITED)
    size_t visited_count;
    bool listening;
    uint8_t *cells_reported;        //  1 where we told the team already
    uint8_t *nearest;               //  per cell: distance to nearest teammate, capped
    size_t nearest_size;
} heur_t;

static uint64_t
s_next (heur_t *self)
{
    uint64_t z = (self->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

//  Grows the map to hold `count` cells (new cells unknown).
static void
s_resize (heur_t *self, size_t count)
{
    if (count <= self->cell_count || count > MAX_CELLS)
        return;
    self->cells = (uint8_t *) realloc (self->cells, count);
    self->cells_reported = (uint8_t *) realloc (self->cells_reported, count);
    assert (self->cells && self->cells_reported);
    memset (self->cells + self->cell_count, 0, count - self->cell_count);
    memset (self->cells_reported + self->cell_count, 0, count - self->cell_count);
    self->cell_count = count;
}

static void
s_mark (heur_t *self, uint64_t position, uint8_t how)
{
    if (self->width == 0)           //  unknown line length: grow as we learn
        s_resize (self, (size_t) position + 2);
    if (position < self->cell_count && self->cells[position] == CELL_UNKNOWN)
        self->cells[position] = how;
}

//  Marks every "position N" and every number after "visited positions:".
static void
s_scan (heur_t *self, const char *text)
{
    for (const char *p = text; p && *p; p++) {
        if (strncasecmp (p, "visited positions:", 18) == 0) {
            const char *q = p + 18;
            while (*q == ' ' || *q == ',' || isdigit ((unsigned char) *q)) {
                if (isdigit ((unsigned char) *q)) {
                    char *end;
                    s_mark (self, strtoull (q, &end, 10), CELL_TEAM);
                    q = end;
                }
                else
                    q++;
            }
            p = q - 1;
        }
        else
        if (strncasecmp (p, "position ", 9) == 0 && isdigit ((unsigned char) p[9])) {
            char *end;
            s_mark (self, strtoull (p + 9, &end, 10), CELL_TEAM);
            p = end - 1;
        }
    }
}

static void
s_learn (heur_t *self, const policy_input_t *in)
{
    for (size_t i = 0; i < in->memory_count; i++)
        s_scan (self, in->memories[i]);
    for (size_t i = 0; in->mailbox && i < conn_mailbox_count (in->mailbox); i++)
        s_scan (self, conn_mailbox_at (in->mailbox, i)->text);
    const char *agent;
    uint64_t position;
    for (size_t i = 0; in->state && conn_state_agent_at (in->state, i, &agent, &position); i++)
        s_mark (self, position, CELL_TEAM);
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
s_width (heur_t *self)
{
    return self->width? self->width: self->cell_count;
}

static uint64_t
s_manhattan (heur_t *self, uint64_t a, uint64_t b)
{
    uint64_t w = s_width (self);
    uint64_t ax = a % w, ay = a / w, bx = b % w, by = b / w;
    return (ax > bx? ax - bx: bx - ax) + (ay > by? ay - by: by - ay);
}

//  Where `action` leads from `from`, or false if off the map. `move` is
//  0..3 (forward, backward, right, left): no string compares here.
static bool
s_target (heur_t *self, uint64_t from, int move, uint64_t *to)
{
    uint64_t w = s_width (self);
    uint64_t h = self->width? self->height: 1;
    uint64_t x = from % w, y = from / w;
    if (move == 0 && (self->width == 0 || x + 1 < w))
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
    if (self->width == 0)
        s_resize (self, (size_t) *to + 2);
    return true;
}

//  Fills self->nearest[u] with min(NEAREST_CAP, Manhattan distance from u
//  to the nearest teammate). Before, every candidate move looped over every
//  unknown cell x every teammate with a strcmp inside (~800k checks a step
//  for 50 agents on 64x64); now it is one pass over the teammates (the only
//  strcmp, to skip ourselves) and a two-pass distance transform: on an open
//  grid the Manhattan distance to the nearest source is exactly what a
//  multi-source BFS gives, and two raster scans (down-right, then up-left)
//  compute it in O(cells). Saturating at the cap keeps it exact below the
//  cap, which is all the score uses.
static void
s_nearest (heur_t *self, const policy_input_t *in)
{
    size_t cells = self->cell_count;
    if (self->nearest_size < cells) {
        self->nearest = (uint8_t *) realloc (self->nearest, cells);
        assert (self->nearest);
        self->nearest_size = cells;
    }
    uint8_t *d = self->nearest;
    memset (d, NEAREST_CAP, cells);
    const char *agent;
    uint64_t position;
    for (size_t i = 0; in->state && conn_state_agent_at (in->state, i, &agent, &position); i++)
        if (position < cells && !streq (agent, in->agent_id))
            d[position] = 0;
    size_t w = (size_t) s_width (self);
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

//  Score of standing at `at` (lower is better): for the best unknown cell
//  u, 2 x our distance to it, plus a penalty when a teammate is at least as
//  close to u as we are, minus how far the nearest teammate is from u
//  (capped): we head for what is near us and far from the others.
//  INT64_MAX when nothing is unknown. `goal` gets u. O(cells), using
//  self->nearest from s_nearest().
static int64_t
s_score (heur_t *self, uint64_t me, uint64_t at, uint64_t *goal)
{
    int64_t best = INT64_MAX;
    const uint8_t *nearest = self->nearest;
    for (size_t u = 0; u < self->cell_count; u++) {
        if (self->cells[u] != CELL_UNKNOWN)
            continue;
        uint64_t mine = s_manhattan (self, me, u);
        int64_t score = 2 * (int64_t) s_manhattan (self, at, u) - (int64_t) nearest[u];
        if (nearest[u] <= mine)
            score += TEAM_PENALTY;
        if (score < best) {
            best = score;
            *goal = u;
        }
    }
    return best;
}

//  Picks the move; fills `why`. NULL when no move is possible.
static const char *
s_choose (heur_t *self, const policy_input_t *in, uint64_t me, char *why, size_t why_size)
{
    static const char *const moves[] = { "forward", "backward", "right", "left" };
    //  Targets first: on a line of unknown length a move may grow the map,
    //  and the distances must cover every cell that is scored.
    uint64_t to[4];
    bool possible[4];
    for (int i = 0; i < 4; i++)
        possible[i] = s_allowed (in, moves[i]) && s_target (self, me, i, &to[i]);
    s_nearest (self, in);
    const char *best = NULL;
    int64_t best_score = INT64_MAX;
    uint64_t best_goal = 0, best_jitter = 0;
    for (int i = 0; i < 4; i++) {
        if (!possible[i])
            continue;
        uint64_t goal = 0;
        int64_t score = s_score (self, me, to[i], &goal);
        uint64_t jitter = s_next (self);
        if (!best || score < best_score || (score == best_score && jitter < best_jitter)) {
            best = moves[i];
            best_score = score;
            best_goal = goal;
            best_jitter = jitter;
        }
    }
    if (best && best_score != INT64_MAX)
        snprintf (why, why_size, "%s leads toward position %" PRIu64
                  ", the nearest place nobody has explored", best, best_goal);
    else
    if (best)
        snprintf (why, why_size, "every position is known; %s keeps looking for what is left", best);
    return best;
}

static size_t
s_unknown (heur_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->cell_count; i++)
        count += self->cells[i] == CELL_UNKNOWN;
    return count;
}

//  "I am at position P and found: a, b. Visited positions: 0 1 2." or NULL
//  when this position was reported already.
static char *
s_report (heur_t *self, uint64_t me, const world_view_t *view)
{
    if (me >= self->cell_count || self->cells_reported[me])
        return NULL;
    self->cells_reported[me] = 1;
    char seen[1024], visited[REPORT_VISITED * 12] = "";
    world_view_objects_text (view, seen, sizeof (seen));
    size_t used = 0;
    size_t first = self->visited_count > REPORT_VISITED? self->visited_count - REPORT_VISITED: 0;
    for (size_t i = first; i < self->visited_count; i++)
        used += snprintf (visited + used, sizeof (visited) - used, "%s%" PRIu64,
                          used? " ": "", self->visited[i % REPORT_VISITED]);
    return zsys_sprintf ("I am at position %" PRIu64 " and found: %s. Visited positions: %s.",
                         me, seen, visited);
}

static void
s_visit (heur_t *self, uint64_t me)
{
    if (self->width == 0)
        s_resize (self, (size_t) me + 2);
    if (me >= self->cell_count || self->cells[me] == CELL_MINE)
        return;
    self->cells[me] = CELL_MINE;
    self->visited[self->visited_count++ % REPORT_VISITED] = me;
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
    self->width = conn_world_width (in->world);
    self->height = conn_world_height (in->world)? conn_world_height (in->world): 1;
    if (self->width)
        s_resize (self, (size_t) (self->width * self->height));
    uint64_t me = view->position;
    s_visit (self, me);
    s_learn (self, in);

    char seen[1024], why[256], thinking[1600];
    world_view_objects_text (view, seen, sizeof (seen));
    const char *action = NULL;
    if (view->done && s_allowed (in, "end")) {
        action = "end";
        snprintf (why, sizeof (why), "the team has explored every object");
    }
    else
        action = s_choose (self, in, me, why, sizeof (why));
    if (!action) {
        action = s_allowed (in, "stay")? "stay": "end";
        snprintf (why, sizeof (why), "no move is possible from here");
    }
    snprintf (thinking, sizeof (thinking), "At position %" PRIu64 " I see %s. %zu position(s) "
              "are still unexplored as far as I know; team coverage is %.0f%%.",
              me, seen, s_unknown (self), view->coverage * 100);
    char *message = s_report (self, me, view);
    answer_directive_t directives[2];
    size_t count = 0;
    if (!self->listening) {
        directives[count++] = (answer_directive_t) { ANSWER_LISTEN_TO, HEURISTIC_CHANNEL, NULL };
        self->listening = true;
    }
    char *note = NULL;
    if (streq (action, "end")) {
        note = zsys_sprintf ("%s is done at position %" PRIu64 ".", in->agent_id, me);
        directives[count++] = (answer_directive_t) { ANSWER_MESSAGE_TO, HEURISTIC_CHANNEL, note };
    }
    char *text = answer_format (thinking, action, why, message, directives, count);
    free (message);
    free (note);
    if (!text)
        snprintf (err, err_size, "out of memory");
    return text;
}

static void
s_destroy (void *impl)
{
    heur_t *self = (heur_t *) impl;
    free (self->cells);
    free (self->cells_reported);
    free (self->nearest);
    free (self->visited);
    free (self);
}

static const policy_ops_t s_ops = { .decide = s_decide, .destroy = s_destroy };

policy_t *
policy_heuristic_new (uint64_t seed, const char *agent_id)
{
    heur_t *self = (heur_t *) zmalloc (sizeof (heur_t));
    //  FNV-1a of the id, mixed into the seed: same --seed, different agents.
    uint64_t hash = 1469598103934665603ull;
    for (const char *p = agent_id; p && *p; p++)
        hash = (hash ^ (unsigned char) *p) * 1099511628211ull;
    self->rng = seed ^ hash;
    self->visited = (uint64_t *) zmalloc (REPORT_VISITED * sizeof (uint64_t));
    return policy_new ("heuristic", &s_ops, self);
}
