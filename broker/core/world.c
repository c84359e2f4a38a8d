// SPDX-License-Identifier: MIT
/*  world - the exploration world: agents, moves, exploration, coverage,
    and its mirror in the shared state. See world.h for the rules.

    Every call that changes the world first writes the state batch that
    mirrors the change (state_apply_raw), and only then updates the world's
    own tables, so a state error leaves both as they were. The world.*
    keys are outside the clients' state limits (state.h), so a client
    that fills the store cannot make a step or a leave fail; the world's
    own bounds (WORLD_MAX_CELLS, the agent limit) keep them in check.
    A call that writes nothing resets the state's change records, so the
    daemon never republishes the previous batch.
*/
#include "world_int.h"
#include <string.h>

#define KEY_OBJECTS   "world.objects"
#define KEY_POSITIONS "world.agent_positions"
#define KEY_EXPLORED  "world.explored_by_all"

static const char *s_actions [WORLD_ACTION__COUNT] = {
    "forward", "backward", "left", "right", "stay"
};

bool
world_action_from_name (const char *name, size_t len, world_action_t *action)
{
    for (int i = 0; name && i < WORLD_ACTION__COUNT; i++)
        if (strlen (s_actions [i]) == len && memcmp (s_actions [i], name, len) == 0) {
            *action = (world_action_t) i;
            return true;
        }
    return false;
}

const char *
world_action_name (world_action_t action)
{
    return (unsigned) action < WORLD_ACTION__COUNT? s_actions [action]: "?";
}

static void
s_agent_free (void **item)
{
    free (*item);
    *item = NULL;
}

// ---------------------------------------------------------------------------
//  State mirror

//  world.objects: map position -> [names]
static void
s_pack_objects (const wmap_t *map, msgpack_packer *pk)
{
    msgpack_pack_map (pk, map->cells);
    for (size_t cell = 0; cell < map->cells; cell++) {
        msgpack_pack_uint32 (pk, (uint32_t) cell);
        uint32_t first = map->start [cell], end = map->start [cell + 1];
        msgpack_pack_array (pk, end - first);
        for (uint32_t i = first; i < end; i++)
            msgpack_pack_str_with_body (pk, map->cell_names [i], strlen (map->cell_names [i]));
    }
}

//  One batch that installs `map` with no agents and nothing explored.
static perr_t
s_write_fresh (state_t *state, const wmap_t *map, char *why, size_t why_size)
{
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    s_pack_objects (map, &pk);
    state_raw_op_t ops [] = {
        { STATE_OP_DECLARE, KEY_OBJECTS, STATE_REPLACE, NULL, 0 },
        { STATE_OP_SET, KEY_OBJECTS, STATE_REPLACE, sbuf.data, sbuf.size },
        { STATE_OP_DECLARE, KEY_POSITIONS, STATE_MERGE, NULL, 0 },
        { STATE_OP_CLEAR, KEY_POSITIONS, STATE_MERGE, NULL, 0 },
        { STATE_OP_DECLARE, KEY_EXPLORED, STATE_UNION, NULL, 0 },
        { STATE_OP_CLEAR, KEY_EXPLORED, STATE_UNION, NULL, 0 },
    };
    perr_t rc = state_apply_raw (state, ops, sizeof (ops) / sizeof (ops [0]), NULL,
                                 why, why_size);
    msgpack_sbuffer_destroy (&sbuf);
    return rc;
}

//  One batch for a step: the agent's position (if it entered or moved) and
//  the names it newly explored (if any).
static perr_t
s_write_step (world_t *self, const char *agent, bool position_changed, uint32_t position,
            size_t new_count, char *why, size_t why_size)
{
    if (!position_changed && new_count == 0) {
        state_changes_reset (self->state);
        return PERR_NONE;
    }
    msgpack_sbuffer where, names;
    msgpack_sbuffer_init (&where);
    msgpack_sbuffer_init (&names);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &where, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 1);
    msgpack_pack_str_with_body (&pk, agent, strlen (agent));
    msgpack_pack_uint32 (&pk, position);
    msgpack_packer_init (&pk, &names, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, new_count);
    for (size_t i = 0; i < new_count; i++)
        msgpack_pack_str_with_body (&pk, self->new_names [i], strlen (self->new_names [i]));
    state_raw_op_t ops [2];
    size_t count = 0;
    if (position_changed)
        ops [count++] = (state_raw_op_t) { STATE_OP_UPDATE, KEY_POSITIONS, STATE_MERGE,
                                           where.data, where.size };
    if (new_count)
        ops [count++] = (state_raw_op_t) { STATE_OP_UPDATE, KEY_EXPLORED, STATE_UNION,
                                           names.data, names.size };
    perr_t rc = state_apply_raw (self->state, ops, count, NULL, why, why_size);
    msgpack_sbuffer_destroy (&where);
    msgpack_sbuffer_destroy (&names);
    return rc;
}

// ---------------------------------------------------------------------------
//  Construction

static world_t *
s_world_install (state_t *state, wmap_t *map, world_kind_t kind, uint64_t seed,
               bool from_file, char *why, size_t why_size)
{
    if (!map)
        return NULL;
    //  Protected before the first write, so the world's keys are the
    //  broker's (outside the clients' state limits, state.h) from birth.
    state_protect_prefix (state, "world.");
    if (s_write_fresh (state, map, why, why_size)) {
        wmap_destroy (&map);
        return NULL;
    }
    world_t *self = (world_t *) zmalloc (sizeof (world_t));
    assert (self);
    self->state = state;
    self->kind = kind;
    self->seed = seed;
    self->map_seed = seed;
    self->from_file = from_file;
    self->map = map;
    self->explored = (bool *) calloc (map->name_count + 1, sizeof (bool));
    self->agents = zhashx_new ();
    assert (self->explored && self->agents);
    zhashx_set_destructor (self->agents, s_agent_free);
    return self;
}

world_t *
world_new (state_t *state, const world_config_t *config, char *why, size_t why_size)
{
    assert (state);
    world_config_t defaults = { WORLD_LINE, WORLD_DEFAULT_WIDTH, 1, 0 };
    world_config_t c = config? *config: defaults;
    if (!c.width)
        c.width = WORLD_DEFAULT_WIDTH;
    if (c.kind == WORLD_LINE)
        c.height = 1;
    else
    if (!c.height)
        c.height = c.width;
    if (c.kind != WORLD_LINE && c.kind != WORLD_GRID) {
        snprintf (why, why_size, "world kind must be line or grid");
        return NULL;
    }
    if (c.width > WORLD_MAX_SIDE || c.height > WORLD_MAX_SIDE
    ||  (size_t) c.width * c.height > WORLD_MAX_CELLS) {
        snprintf (why, why_size, "a world of %u x %u is over the limit of %d positions",
                  c.width, c.height, WORLD_MAX_CELLS);
        return NULL;
    }
    wmap_t *map = wmap_generate (c.width, c.height, c.seed);
    if (!map)
        snprintf (why, why_size, "out of memory generating the world");
    return s_world_install (state, map, c.kind, c.seed, false, why, why_size);
}

world_t *
world_load (state_t *state, const char *path, char *why, size_t why_size)
{
    assert (state && path);
    world_kind_t kind = WORLD_LINE;
    wmap_t *map = wmap_load (path, &kind, why, why_size);
    return s_world_install (state, map, kind, 0, true, why, why_size);
}

void
world_destroy (world_t **self_p)
{
    assert (self_p);
    world_t *self = *self_p;
    if (!self)
        return;
    wmap_destroy (&self->map);
    free (self->explored);
    zhashx_destroy (&self->agents);
    free (self);
    *self_p = NULL;
}

perr_t
world_reset (world_t *self, const uint64_t *seed, char *why, size_t why_size)
{
    assert (self);
    uint64_t new_seed = seed? *seed: self->seed;
    wmap_t *map = self->map;
    if (!self->from_file) {
        map = wmap_generate (self->map->width, self->map->height, new_seed);
        if (!map) {
            snprintf (why, why_size, "out of memory generating the world");
            return PERR_INTERNAL;
        }
    }
    bool *explored = (bool *) calloc (map->name_count + 1, sizeof (bool));
    perr_t rc = explored? s_write_fresh (self->state, map, why, why_size): PERR_INTERNAL;
    if (rc) {
        free (explored);
        if (map != self->map)
            wmap_destroy (&map);
        return rc;
    }
    if (map != self->map)
        wmap_destroy (&self->map);
    self->map = map;
    self->map_seed = new_seed;
    free (self->explored);
    self->explored = explored;
    self->explored_count = 0;
    self->arrivals = 0;
    zhashx_purge (self->agents);
    return PERR_NONE;
}

// ---------------------------------------------------------------------------
//  Agents and steps

void
world_set_start (world_t *self, world_start_t start, uint64_t seed)
{
    assert (self);
    self->start = start;
    self->start_seed = seed;
}

bool
world_start_from_name (const char *name, world_start_t *start)
{
    static const char *const names [] = { "spread", "same", "random" };
    for (int i = 0; name && i < 3; i++)
        if (streq (name, names [i])) {
            *start = (world_start_t) i;
            return true;
        }
    return false;
}

static uint32_t
s_start_position (const world_t *self, uint32_t arrival)
{
    uint32_t width = self->map->width, height = self->map->height;
    if (self->start == WORLD_START_SAME)
        return 0;
    if (self->start == WORLD_START_RANDOM) {
        uint64_t z = self->start_seed + (arrival + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return (uint32_t) (z % self->map->cells);
    }
    uint32_t x = (uint32_t) (((uint64_t) arrival * width / 3) % width);
    uint32_t y = (uint32_t) (((uint64_t) arrival * height / 3) % height);
    return y * width + x;
}

//  Adds the not-yet-explored names at `position` to new_names (once each).
static size_t
s_collect_new (world_t *self, uint32_t position, size_t count)
{
    const wmap_t *map = self->map;
    for (uint32_t i = map->start [position]; i < map->start [position + 1]; i++) {
        uint32_t id = map->ids [i];
        bool listed = self->explored [id];
        for (size_t k = 0; k < count && !listed; k++)
            listed = self->new_names [k] == map->names [id];
        if (!listed && count < WORLD_MAX_NEW)
            self->new_names [count++] = map->names [id];
    }
    return count;
}

static void
s_mark_explored (world_t *self, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        uintptr_t at = (uintptr_t) zhashx_lookup (self->map->intern, self->new_names [k]);
        assert (at);
        if (!self->explored [at - 1]) {
            self->explored [at - 1] = true;
            self->explored_count++;
        }
    }
}

//  The move of `action` from position, or false at the edge.
static bool
s_move (const world_t *self, world_action_t action, uint32_t *position)
{
    uint32_t width = self->map->width, height = self->map->height;
    uint32_t x = *position % width, y = *position / width;
    switch (action) {
        case WORLD_FORWARD:  if (x + 1 >= width) return false; x++; break;
        case WORLD_BACKWARD: if (x == 0) return false; x--; break;
        case WORLD_RIGHT:    if (y + 1 >= height) return false; y++; break;
        case WORLD_LEFT:     if (y == 0) return false; y--; break;
        default: break;
    }
    *position = y * width + x;
    return true;
}

static void
s_fill_obs (world_t *self, uint32_t position, const char *outcome, size_t new_count,
          bool was_done, world_obs_t *obs)
{
    const wmap_t *map = self->map;
    memset (obs, 0, sizeof (*obs));
    obs->position = position;
    obs->x = position % map->width;
    obs->y = position / map->width;
    obs->objects = world_objects_at (self, position, &obs->object_count);
    obs->outcome = outcome;
    obs->new_objects = self->new_names;
    obs->new_count = new_count;
    obs->explored = self->explored_count;
    obs->objects_total = map->name_count;
    obs->coverage = world_coverage (self);
    obs->done = world_done (self);
    if (map->images && map->images [position].data)
        obs->image = &map->images [position];
    obs->completed = obs->done && !was_done;
}

//  PERCEIVE (action NULL) or ACT: one step, all or nothing.
static perr_t
s_step (world_t *self, const char *agent, const world_action_t *action,
      world_obs_t *obs, char *why, size_t why_size)
{
    if (!agent || !*agent || strlen (agent) > PROTO_MAX_NAME) {
        snprintf (why, why_size, "agent id must be 1-%d bytes", PROTO_MAX_NAME);
        return PERR_BAD_FIELD;
    }
    if (action && self->kind == WORLD_LINE
    &&  (*action == WORLD_LEFT || *action == WORLD_RIGHT)) {
        snprintf (why, why_size, "'%s' needs a grid world; this world is a line "
                  "(use forward, backward or stay)", world_action_name (*action));
        return PERR_BAD_ACTION;
    }
    agent_t *known = (agent_t *) zhashx_lookup (self->agents, agent);
    bool entering = known == NULL;
    uint32_t position = known? known->position: s_start_position (self, self->arrivals);
    size_t new_count = entering? s_collect_new (self, position, 0): 0;
    const char *outcome = "perceived";
    bool moved = false;
    if (action && *action == WORLD_STAY)
        outcome = "stayed";
    else
    if (action) {
        moved = s_move (self, *action, &position);
        outcome = moved? "moved": "edge";
    }
    new_count = s_collect_new (self, position, new_count);
    bool was_done = world_done (self);
    perr_t rc = s_write_step (self, agent, entering || moved, position, new_count,
                            why, why_size);
    if (rc)
        return rc;
    if (entering) {
        known = (agent_t *) zmalloc (sizeof (agent_t));
        zhashx_insert (self->agents, agent, known);
        self->arrivals++;
    }
    known->position = position;
    s_mark_explored (self, new_count);
    s_fill_obs (self, position, outcome, new_count, was_done, obs);
    return PERR_NONE;
}

perr_t
world_perceive (world_t *self, const char *agent, world_obs_t *obs,
                char *why, size_t why_size)
{
    assert (self && obs);
    return s_step (self, agent, NULL, obs, why, why_size);
}

perr_t
world_act (world_t *self, const char *agent, const char *action, size_t len,
           world_obs_t *obs, char *why, size_t why_size)
{
    assert (self && obs);
    world_action_t parsed;
    if (!world_action_from_name (action, len, &parsed)) {
        snprintf (why, why_size, "unknown action '%.*s' (forward, backward, left, "
                  "right or stay)", (int) (len > 64? 64: len), action? action: "");
        return PERR_BAD_ACTION;
    }
    return s_step (self, agent, &parsed, obs, why, why_size);
}

bool
world_leave (world_t *self, const char *agent, char *why, size_t why_size)
{
    assert (self && agent);
    if (!zhashx_lookup (self->agents, agent)) {
        snprintf (why, why_size, "agent '%s' is not in the world", agent);
        state_changes_reset (self->state);
        return false;
    }
    //  merge cannot remove a key: rewrite the whole map with `set`
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, zhashx_size (self->agents) - 1);
    for (agent_t *a = (agent_t *) zhashx_first (self->agents); a;
         a = (agent_t *) zhashx_next (self->agents)) {
        const char *name = (const char *) zhashx_cursor (self->agents);
        if (streq (name, agent))
            continue;
        msgpack_pack_str_with_body (&pk, name, strlen (name));
        msgpack_pack_uint32 (&pk, a->position);
    }
    state_raw_op_t op = { STATE_OP_SET, KEY_POSITIONS, STATE_MERGE, sbuf.data, sbuf.size };
    perr_t rc = state_apply_raw (self->state, &op, 1, NULL, why, why_size);
    msgpack_sbuffer_destroy (&sbuf);
    if (rc)
        return false;
    zhashx_delete (self->agents, agent);
    return true;
}

// ---------------------------------------------------------------------------
//  Encoders and introspection

static void
s_pack_names (penc_t *enc, const char *const *names, size_t count)
{
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++)
        penc_cstr (enc, names [i]);
}

void
world_encode_observation (const world_obs_t *obs, penc_t *enc)
{
    assert (obs && enc);
    penc_kv_uint (enc, "position", obs->position);
    penc_kv_uint (enc, "x", obs->x);
    penc_kv_uint (enc, "y", obs->y);
    penc_key (enc, "objects");
    s_pack_names (enc, obs->objects, obs->object_count);
    penc_kv_cstr (enc, "outcome", obs->outcome);
    penc_key (enc, "new_objects");
    s_pack_names (enc, obs->new_objects, obs->new_count);
    penc_kv_uint (enc, "explored", obs->explored);
    penc_kv_uint (enc, "objects_total", obs->objects_total);
    penc_kv_num (enc, "coverage", obs->coverage);
    penc_kv_bool (enc, "done", obs->done);
    if (obs->image) {
        penc_key (enc, "image");
        msgpack_pack_bin (penc_packer (enc), obs->image->size);
        msgpack_pack_bin_body (penc_packer (enc), obs->image->data, obs->image->size);
        penc_kv_cstr (enc, "image_type", obs->image->type);
    }
}

size_t
world_observation_fields (const world_obs_t *obs)
{
    assert (obs);
    return WORLD_OBSERVATION_FIELDS + (obs->image ? 2 : 0);
}

void
world_encode_summary (world_t *self, penc_t *enc)
{
    assert (self && enc);
    msgpack_pack_map (penc_packer (enc), 7);
    penc_kv_cstr (enc, "kind", self->kind == WORLD_GRID? "grid": "line");
    penc_kv_uint (enc, "width", self->map->width);
    penc_kv_uint (enc, "height", self->map->height);
    penc_kv_uint (enc, "objects_total", self->map->name_count);
    penc_kv_uint (enc, "explored", self->explored_count);
    penc_kv_num (enc, "coverage", world_coverage (self));
    penc_kv_bool (enc, "done", world_done (self));
}

void
world_encode_event (world_t *self, const char *event, penc_t *enc)
{
    assert (self && event && enc);
    penc_kv_cstr (enc, "event", event);
    penc_kv_num (enc, "coverage", world_coverage (self));
    penc_kv_uint (enc, "explored", self->explored_count);
    penc_kv_uint (enc, "objects_total", self->map->name_count);
}

world_kind_t world_kind (world_t *self) { return self->kind; }
uint64_t world_seed (world_t *self) { return self->seed; }
uint32_t world_width (world_t *self) { return self->map->width; }
uint32_t world_height (world_t *self) { return self->map->height; }
size_t world_objects_total (world_t *self) { return self->map->name_count; }
size_t world_explored (world_t *self) { return self->explored_count; }
size_t world_agents (world_t *self) { return zhashx_size (self->agents); }

double
world_coverage (world_t *self)
{
    size_t total = self->map->name_count;
    return total? (double) self->explored_count / (double) total: 1.0;
}

bool
world_done (world_t *self)
{
    return self->explored_count == self->map->name_count;
}

const char *const *
world_objects_at (world_t *self, uint32_t position, size_t *count)
{
    assert (self && count);
    *count = 0;
    if (position >= self->map->cells)
        return NULL;
    *count = self->map->start [position + 1] - self->map->start [position];
    return self->map->cell_names + self->map->start [position];
}

bool
world_position_of (world_t *self, const char *agent, uint32_t *position)
{
    agent_t *known = (agent_t *) zhashx_lookup (self->agents, agent);
    if (known && position)
        *position = known->position;
    return known != NULL;
}
