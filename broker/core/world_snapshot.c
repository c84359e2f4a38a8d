// SPDX-License-Identifier: MIT
/*  world_snapshot - the world in the broker's journal snapshot: the seed of
    its current map, the explored names and the agents' positions (its
    world.* state keys travel with the state snapshot). See world.h. */
#include <string.h>

#include "world_int.h"

static int
s_id_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

//  The agents in id order (the table's own order depends on its history),
//  so a snapshot and the canonical dump (core_dump) are the same bytes.
void
world_snapshot_encode (world_t *self, msgpack_packer *pk)
{
    assert (self && pk);
    size_t count = zhashx_size (self->agents);
    const char **ids = malloc ((count ? count : 1) * sizeof (char *));
    assert (ids);
    size_t n = 0;
    for (void *agent = zhashx_first (self->agents); agent; agent = zhashx_next (self->agents))
        ids [n++] = zhashx_cursor (self->agents);
    qsort (ids, n, sizeof (char *), s_id_cmp);
    msgpack_pack_array (pk, 5);
    msgpack_pack_uint64 (pk, self->map_seed);
    msgpack_pack_uint32 (pk, self->arrivals);
    msgpack_pack_uint32 (pk, (uint32_t) self->map->name_count);
    msgpack_pack_array (pk, (uint32_t) self->explored_count);
    for (size_t i = 0; i < self->map->name_count; i++)
        if (self->explored [i])
            msgpack_pack_uint32 (pk, (uint32_t) i);
    msgpack_pack_array (pk, (uint32_t) n);
    for (size_t i = 0; i < n; i++) {
        agent_t *agent = zhashx_lookup (self->agents, ids [i]);
        msgpack_pack_array (pk, 2);
        msgpack_pack_str_with_body (pk, ids [i], strlen (ids [i]));
        msgpack_pack_uint32 (pk, agent->position);
    }
    free (ids);
}

static bool
s_uint (const msgpack_object *o, uint64_t *value)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return false;
    *value = o->via.u64;
    return true;
}

int
world_snapshot_restore (world_t *self, const msgpack_object *obj, char *why, size_t why_size)
{
    assert (self && obj);
    uint64_t map_seed, arrivals, names;
    if (obj->type != MSGPACK_OBJECT_ARRAY || obj->via.array.size != 5
    ||  !s_uint (&obj->via.array.ptr [0], &map_seed)
    ||  !s_uint (&obj->via.array.ptr [1], &arrivals)
    ||  !s_uint (&obj->via.array.ptr [2], &names)
    ||  obj->via.array.ptr [3].type != MSGPACK_OBJECT_ARRAY
    ||  obj->via.array.ptr [4].type != MSGPACK_OBJECT_ARRAY) {
        snprintf (why, why_size, "world record has the wrong shape");
        return -1;
    }
    //  The snapshot's map, drawn again, is installed only once it is known
    //  to fit: the explored table is sized by its names.
    wmap_t *map = self->map;
    if (!self->from_file && map_seed != self->map_seed) {
        map = wmap_generate (self->map->width, self->map->height, map_seed);
        if (!map) {
            snprintf (why, why_size, "out of memory drawing the world");
            return -1;
        }
    }
    if (names != map->name_count) {
        snprintf (why, why_size, "the world's map changed since the snapshot (%llu object "
                  "names then, %zu now): its progress cannot be restored",
                  (unsigned long long) names, map->name_count);
        if (map != self->map)
            wmap_destroy (&map);
        return -1;
    }
    if (map != self->map) {
        wmap_destroy (&self->map);
        self->map = map;
        self->map_seed = map_seed;
    }
    bool *explored = (bool *) calloc (self->map->name_count + 1, sizeof (bool));
    assert (explored);
    size_t count = 0;
    const msgpack_object_array *list = &obj->via.array.ptr [3].via.array;
    for (uint32_t i = 0; i < list->size; i++) {
        uint64_t index;
        if (s_uint (&list->ptr [i], &index) && index < names && !explored [index]) {
            explored [index] = true;
            count++;
        }
    }
    free (self->explored);
    self->explored = explored;
    self->explored_count = count;
    self->arrivals = (uint32_t) arrivals;
    zhashx_purge (self->agents);
    list = &obj->via.array.ptr [4].via.array;
    for (uint32_t i = 0; i < list->size; i++) {
        const msgpack_object *pair = &list->ptr [i];
        uint64_t position;
        if (pair->type != MSGPACK_OBJECT_ARRAY || pair->via.array.size != 2
        ||  pair->via.array.ptr [0].type != MSGPACK_OBJECT_STR
        ||  pair->via.array.ptr [0].via.str.size > PROTO_MAX_NAME
        ||  !s_uint (&pair->via.array.ptr [1], &position) || position >= self->map->cells)
            continue;
        char id [PROTO_MAX_NAME + 1];
        memcpy (id, pair->via.array.ptr [0].via.str.ptr, pair->via.array.ptr [0].via.str.size);
        id [pair->via.array.ptr [0].via.str.size] = 0;
        agent_t *agent = (agent_t *) zmalloc (sizeof (agent_t));
        assert (agent);
        agent->position = (uint32_t) position;
        //  An id listed twice (a damaged record): the first place stands.
        if (zhashx_insert (self->agents, id, agent) != 0)
            free (agent);
    }
    return 0;
}

