// SPDX-License-Identifier: MIT
/*  team_facts - cells and claims from structured facts. See team_facts.h.

    Reports are parsed with jansson, bounded (TEAM_MAX_REPORT bytes, at most
    TEAM_MAX_VISITED positions and TEAM_MAX_FOUND names are used); anything
    that is not a version-1 report object is ignored, never an error: the
    mailbox also carries what models write.

    Teammates and claims are found by name through a hash each: a team of N
    teaches N positions and N claims a step, and a linear search made that
    N x N string compares.
*/
#include <assert.h>
#include <czmq.h>
#include <jansson.h>
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "team_facts.h"
#include "textbuf.h"

#define MAX_MATES 256
#define LINE_NEAR 6                 //  unknown cells named in the line
#define LINE_CLAIMS 12              //  claims named in the line (a prompt's budget)

typedef struct {
    char agent[PROTO_MAX_NAME + 1];
    uint64_t cell;                  //  TEAM_NO_CELL: released
    uint64_t at;                    //  where it was when it claimed
} claim_t;

typedef struct {
    char agent[PROTO_MAX_NAME + 1];
    uint64_t position;
    bool from_state;                //  this step's world.agent_positions
} mate_t;

struct _team_facts_t {
    char me[PROTO_MAX_NAME + 1];
    uint64_t width, height;
    uint8_t *cells;
    size_t cell_count;
    claim_t claims[TEAM_MAX_CLAIMS];    //  never removed: a released one has no cell
    size_t claim_count;
    zhashx_t *claim_index;              //  agent -> its slot in claims, + 1
    size_t live_at, live_slot;          //  team_facts_claim_at's last answer (+ 1)
    mate_t mates[MAX_MATES];
    size_t mate_count;
    zhashx_t *mate_index;               //  agent -> its slot in mates, + 1
    uint64_t own_claim, reported_claim, synced_claim;
    uint64_t *unreported;           //  own visits since the last report
    size_t unreported_count;
    uint64_t *unsynced;             //  own visits since the last state write
    size_t unsynced_count;
    size_t found_count;
};

team_facts_t *
team_facts_new (const char *me)
{
    assert (me);
    team_facts_t *self = (team_facts_t *) zmalloc (sizeof (team_facts_t));
    snprintf (self->me, sizeof (self->me), "%s", me);
    self->own_claim = self->reported_claim = self->synced_claim = TEAM_NO_CELL;
    self->unreported = (uint64_t *) zmalloc (TEAM_MAX_VISITED * sizeof (uint64_t));
    self->unsynced = (uint64_t *) zmalloc (TEAM_MAX_VISITED * sizeof (uint64_t));
    self->claim_index = zhashx_new ();
    self->mate_index = zhashx_new ();
    return self;
}

void
team_facts_destroy (team_facts_t **self_p)
{
    assert (self_p);
    team_facts_t *self = *self_p;
    if (self) {
        free (self->cells);
        free (self->unreported);
        free (self->unsynced);
        zhashx_destroy (&self->claim_index);
        zhashx_destroy (&self->mate_index);
        free (self);
        *self_p = NULL;
    }
}

//  Grows the map to `count` cells (new ones unknown); false beyond the cap.
static bool
s_grow (team_facts_t *self, size_t count)
{
    if (count <= self->cell_count)
        return true;
    if (count > TEAM_MAX_CELLS)
        return false;
    self->cells = (uint8_t *) realloc (self->cells, count);
    assert (self->cells);
    memset (self->cells + self->cell_count, TEAM_CELL_UNKNOWN, count - self->cell_count);
    self->cell_count = count;
    return true;
}

void
team_facts_set_shape (team_facts_t *self, uint64_t width, uint64_t height)
{
    assert (self);
    if (width == self->width && height == self->height)
        return;
    self->width = width;
    self->height = width? (height? height: 1): 1;
    if (width && width * self->height <= TEAM_MAX_CELLS)
        s_grow (self, (size_t) (width * self->height));
}

uint64_t team_facts_width (team_facts_t *self) { return self->width; }
size_t team_facts_cells (team_facts_t *self) { return self->cell_count; }
size_t team_facts_found_count (team_facts_t *self) { return self->found_count; }
uint64_t team_facts_own_claim (team_facts_t *self) { return self->own_claim; }

team_cell_t
team_facts_cell (team_facts_t *self, uint64_t position)
{
    return position < self->cell_count? (team_cell_t) self->cells[position]: TEAM_CELL_UNKNOWN;
}

size_t
team_facts_unknown (team_facts_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->cell_count; i++)
        count += self->cells[i] == TEAM_CELL_UNKNOWN;
    return count;
}

//  A position is usable when it is on the map, or (line of unknown length)
//  the map can grow to hold it with one unknown cell beyond.
static bool
s_cover (team_facts_t *self, uint64_t position)
{
    if (self->width)
        return position < self->cell_count;
    return position < TEAM_MAX_CELLS - 1 && s_grow (self, (size_t) position + 2);
}

static void
s_push (uint64_t *ring, size_t *count, uint64_t position)
{
    if (*count < TEAM_MAX_VISITED)
        ring[(*count)++] = position;
    else {      //  keep the latest: drop the oldest
        memmove (ring, ring + 1, (TEAM_MAX_VISITED - 1) * sizeof (uint64_t));
        ring[TEAM_MAX_VISITED - 1] = position;
    }
}

bool
team_facts_visit (team_facts_t *self, uint64_t position)
{
    assert (self);
    if (!s_cover (self, position) || self->cells[position] == TEAM_CELL_MINE)
        return false;
    self->cells[position] = TEAM_CELL_MINE;
    s_push (self->unreported, &self->unreported_count, position);
    s_push (self->unsynced, &self->unsynced_count, position);
    return true;
}

void
team_facts_mark (team_facts_t *self, uint64_t position)
{
    assert (self);
    if (s_cover (self, position) && self->cells[position] == TEAM_CELL_UNKNOWN)
        self->cells[position] = TEAM_CELL_TEAM;
}

// ---------------------------------------------------------------------------
//  Teammates: positions and claims

//  The teammate's record, or NULL (with `create`: a new one, NULL when full).
static mate_t *
s_find_mate (team_facts_t *self, const char *agent, bool create)
{
    size_t slot = (size_t) (uintptr_t) zhashx_lookup (self->mate_index, agent);
    if (slot)
        return &self->mates[slot - 1];
    if (!create || self->mate_count == MAX_MATES)
        return NULL;
    mate_t *mate = &self->mates[self->mate_count++];
    memset (mate, 0, sizeof (*mate));
    snprintf (mate->agent, sizeof (mate->agent), "%s", agent);
    zhashx_insert (self->mate_index, mate->agent, (void *) (uintptr_t) self->mate_count);
    return mate;
}

static mate_t *
s_mate (team_facts_t *self, const char *agent)
{
    return s_find_mate (self, agent, true);
}

static void
s_mate_at (team_facts_t *self, const char *agent, uint64_t position, bool from_state)
{
    if (streq (agent, self->me))
        return;
    mate_t *mate = s_mate (self, agent);
    if (mate && (from_state || !mate->from_state)) {
        mate->position = position;
        mate->from_state = from_state;
    }
    team_facts_mark (self, position);
}

size_t team_facts_mate_count (team_facts_t *self) { return self->mate_count; }

bool
team_facts_mate_at (team_facts_t *self, size_t index, const char **agent, uint64_t *position)
{
    if (index >= self->mate_count)
        return false;
    *agent = self->mates[index].agent;
    *position = self->mates[index].position;
    return true;
}

static claim_t *
s_claim (team_facts_t *self, const char *agent, bool create)
{
    size_t slot = (size_t) (uintptr_t) zhashx_lookup (self->claim_index, agent);
    if (slot)
        return &self->claims[slot - 1];
    if (!create || self->claim_count == TEAM_MAX_CLAIMS)
        return NULL;
    claim_t *claim = &self->claims[self->claim_count++];
    snprintf (claim->agent, sizeof (claim->agent), "%s", agent);
    claim->cell = claim->at = TEAM_NO_CELL;
    zhashx_insert (self->claim_index, claim->agent, (void *) (uintptr_t) self->claim_count);
    self->live_at = 0;
    return claim;
}

void
team_facts_claim (team_facts_t *self, const char *agent, uint64_t cell, uint64_t at)
{
    assert (self && agent);
    if (streq (agent, self->me))
        return;
    claim_t *claim = s_claim (self, agent, true);
    if (claim) {
        claim->cell = cell;
        claim->at = at;
        self->live_at = 0;
    }
}

void
team_facts_release (team_facts_t *self, const char *agent)
{
    assert (self && agent);
    claim_t *claim = s_claim (self, agent, false);
    if (claim) {
        claim->cell = TEAM_NO_CELL;
        self->live_at = 0;
    }
}

void
team_facts_set_online (team_facts_t *self, const char *const *agents, size_t count)
{
    assert (self);
    zhashx_t *online = zhashx_new ();
    for (size_t k = 0; k < count; k++)
        zhashx_update (online, agents[k], (void *) 1);
    for (size_t i = 0; i < self->claim_count; i++)
        if (!zhashx_lookup (online, self->claims[i].agent))
            self->claims[i].cell = TEAM_NO_CELL;
    self->live_at = 0;
    //  A teammate that is gone stands nowhere either.
    size_t kept = 0;
    zhashx_purge (self->mate_index);
    for (size_t i = 0; i < self->mate_count; i++)
        if (zhashx_lookup (online, self->mates[i].agent)) {
            self->mates[kept] = self->mates[i];
            kept++;
            zhashx_insert (self->mate_index, self->mates[kept - 1].agent, (void *) (uintptr_t) kept);
        }
    self->mate_count = kept;
    zhashx_destroy (&online);
}

size_t
team_facts_claim_count (team_facts_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->claim_count; i++)
        count += self->claims[i].cell != TEAM_NO_CELL;
    return count;
}

//  Callers walk the live claims with index 0, 1, 2, ...: the walk goes on
//  from the last answer instead of starting over (live_at, live_slot: the
//  index and slot of that answer, + 1; 0 when a claim changed since).
bool
team_facts_claim_at (team_facts_t *self, size_t index, const char **agent,
                     uint64_t *cell, uint64_t *at)
{
    size_t i = 0, left = index;
    if (self->live_at && index + 1 >= self->live_at) {
        i = self->live_slot - 1;
        left = index + 1 - self->live_at;
    }
    for (; i < self->claim_count; i++) {
        if (self->claims[i].cell == TEAM_NO_CELL)
            continue;
        if (left-- == 0) {
            *agent = self->claims[i].agent;
            *cell = self->claims[i].cell;
            *at = self->claims[i].at;
            self->live_at = index + 1;
            self->live_slot = i + 1;
            return true;
        }
    }
    return false;
}

uint64_t
team_facts_claim_of (team_facts_t *self, const char *agent)
{
    assert (self && agent);
    claim_t *claim = s_claim (self, agent, false);
    return claim? claim->cell: TEAM_NO_CELL;
}

uint64_t
team_facts_mate_position (team_facts_t *self, const char *agent)
{
    assert (self && agent);
    mate_t *mate = s_find_mate (self, agent, false);
    return mate? mate->position: TEAM_NO_CELL;
}

const char *
team_facts_claimed_by (team_facts_t *self, uint64_t cell)
{
    for (size_t i = 0; i < self->claim_count; i++)
        if (self->claims[i].cell == cell)
            return self->claims[i].agent;
    return NULL;
}

void
team_facts_set_own_claim (team_facts_t *self, uint64_t cell)
{
    self->own_claim = cell;
}

// ---------------------------------------------------------------------------
//  Learning

static bool
s_uint (json_t *value, uint64_t *out)
{
    if (!json_is_integer (value) || json_integer_value (value) < 0)
        return false;
    *out = (uint64_t) json_integer_value (value);
    return true;
}

bool
team_facts_read_report (team_facts_t *self, const char *from, const char *body, size_t len)
{
    assert (self && from && body);
    if (len == 0 || len > TEAM_MAX_REPORT || body[0] != '{' || streq (from, self->me))
        return false;
    json_t *root = json_loadb (body, len, JSON_REJECT_DUPLICATES, NULL);
    uint64_t version = 0;
    if (!json_is_object (root) || !s_uint (json_object_get (root, "team"), &version)
    ||  version != 1) {
        json_decref (root);
        return false;
    }
    uint64_t at = TEAM_NO_CELL, cell;
    if (s_uint (json_object_get (root, "at"), &at))
        s_mate_at (self, from, at, false);
    json_t *claim = json_object_get (root, "claim");
    if (json_is_null (claim))
        team_facts_release (self, from);
    else
    if (s_uint (claim, &cell))
        team_facts_claim (self, from, cell, at);
    json_t *visited = json_object_get (root, "visited");
    for (size_t i = 0; json_is_array (visited) && i < json_array_size (visited)
                       && i < TEAM_MAX_VISITED; i++)
        if (s_uint (json_array_get (visited, i), &cell))
            team_facts_mark (self, cell);
    json_t *found = json_object_get (root, "found");
    for (size_t i = 0; json_is_array (found) && i < json_array_size (found)
                       && i < TEAM_MAX_FOUND; i++)
        self->found_count += json_is_string (json_array_get (found, i));
    json_decref (root);
    return true;
}

void
team_facts_learn (team_facts_t *self, connector_t *mailbox, connector_t *state)
{
    assert (self);
    const char *agent;
    uint64_t position, cell;
    for (size_t i = 0; i < self->mate_count; i++)
        self->mates[i].from_state = false;
    for (size_t i = 0; state && conn_state_agent_at (state, i, &agent, &position); i++)
        s_mate_at (self, agent, position, true);
    const uint64_t *visited = NULL;
    size_t count = state? conn_state_team_visited (state, &visited): 0;
    for (size_t i = 0; i < count; i++)
        team_facts_mark (self, visited[i]);
    bool present;
    for (size_t i = 0; state && conn_state_team_claim_at (state, i, &agent, &cell, &present); i++) {
        if (streq (agent, self->me))
            continue;
        //  The state lags the messages: it only adds claims we have no word of.
        if (!s_claim (self, agent, false) && present)
            team_facts_claim (self, agent, cell, TEAM_NO_CELL);
    }
    for (size_t i = 0; mailbox && i < conn_mailbox_count (mailbox); i++) {
        const mail_view_t *m = conn_mailbox_at (mailbox, i);
        team_facts_read_report (self, m->from, m->text, strlen (m->text));
    }
}

// ---------------------------------------------------------------------------
//  Telling

char *
team_facts_report (team_facts_t *self, uint64_t at, const char *const *found, size_t found_count)
{
    assert (self);
    if (self->unreported_count == 0 && self->own_claim == self->reported_claim)
        return NULL;
    json_t *root = json_object ();
    json_object_set_new (root, "team", json_integer (1));
    json_object_set_new (root, "at", json_integer ((json_int_t) at));
    json_object_set_new (root, "claim", self->own_claim == TEAM_NO_CELL
                         ? json_null (): json_integer ((json_int_t) self->own_claim));
    json_t *visited = json_array ();
    for (size_t i = 0; i < self->unreported_count; i++)
        json_array_append_new (visited, json_integer ((json_int_t) self->unreported[i]));
    json_object_set_new (root, "visited", visited);
    json_t *names = json_array ();
    for (size_t i = 0; i < found_count && i < TEAM_MAX_FOUND; i++)
        json_array_append_new (names, json_string (found[i]));
    json_object_set_new (root, "found", names);
    char *text = json_dumps (root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref (root);
    self->unreported_count = 0;
    self->reported_claim = self->own_claim;
    return text;
}

size_t
team_facts_unsynced (team_facts_t *self, const uint64_t **positions)
{
    *positions = self->unsynced;
    return self->unsynced_count;
}

void
team_facts_unsynced_clear (team_facts_t *self)
{
    self->unsynced_count = 0;
    self->synced_claim = self->own_claim;
}

bool
team_facts_claim_changed (team_facts_t *self)
{
    return self->own_claim != self->synced_claim;
}

static uint64_t
s_distance (team_facts_t *self, uint64_t a, uint64_t b)
{
    uint64_t w = self->width? self->width: (self->cell_count? self->cell_count: 1);
    uint64_t ax = a % w, ay = a / w, bx = b % w, by = b / w;
    return (ax > bx? ax - bx: bx - ax) + (ay > by? ay - by: by - ay);
}

char *
team_facts_line (team_facts_t *self, uint64_t me)
{
    assert (self);
    textbuf_t *buf = textbuf_new ();
    size_t unknown = team_facts_unknown (self);
    textbuf_addf (buf, "Team map: %zu of %zu cells known", self->cell_count - unknown,
                  self->cell_count);
    if (unknown) {
        //  The LINE_NEAR nearest unknown cells, nearest first (ties by number).
        uint64_t near[LINE_NEAR], dist[LINE_NEAR];
        size_t n = 0;
        for (size_t u = 0; u < self->cell_count; u++) {
            if (self->cells[u] != TEAM_CELL_UNKNOWN)
                continue;
            uint64_t d = s_distance (self, me, u);
            if (n == LINE_NEAR && d >= dist[n - 1])
                continue;
            size_t k = n < LINE_NEAR? n++: n - 1;
            while (k > 0 && dist[k - 1] > d) {
                near[k] = near[k - 1];
                dist[k] = dist[k - 1];
                k--;
            }
            near[k] = u;
            dist[k] = d;
        }
        textbuf_add (buf, "; unknown near you:");
        for (size_t i = 0; i < n; i++)
            textbuf_addf (buf, "%s %" PRIu64, i? ",": "", near[i]);
    }
    const char *agent;
    uint64_t cell, at;
    textbuf_add (buf, "; claims:");
    size_t claims = 0;
    for (size_t i = 0; team_facts_claim_at (self, i, &agent, &cell, &at); i++)
        if (claims++ < LINE_CLAIMS)
            textbuf_addf (buf, "%s %s->%" PRIu64, claims > 1? ",": "", agent, cell);
    if (!claims)
        textbuf_add (buf, " none");
    else
    if (claims > LINE_CLAIMS)
        textbuf_addf (buf, ", ... (%zu more)", claims - LINE_CLAIMS);
    if (self->own_claim != TEAM_NO_CELL)
        textbuf_addf (buf, "; yours: %" PRIu64, self->own_claim);
    textbuf_add (buf, ".");
    return textbuf_detach (&buf);
}
