// SPDX-License-Identifier: MIT
/*  observation - parley_observation_t, what PERCEIVE, ACT and STEP say of
    the world (parley/world.h). Object names go into the result's arena
    with a table of their offsets; the image stays in the frame.
*/
#include <assert.h>
#include <string.h>
#include "arena.h"
#include "mem.h"
#include "observation_int.h"

struct _parley_observation_t {
    client_arena_t *arena;
    pmsg_t *reply;              //  what `image` points into, when owned
    uint64_t position, x, y;
    char outcome [PARLEY_NAME_MAX + 1];
    size_t objects, object_count;   //  a table of offsets, in the arena
    size_t fresh, fresh_count;
    uint64_t explored, objects_total;
    double coverage;
    bool done;
    const void *image;
    size_t image_size;
    char image_type [8];
};

parley_observation_t *
client_observation_new (void)
{
    parley_observation_t *self = (parley_observation_t *)
        client_mem_zalloc (sizeof (parley_observation_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_observation_destroy (parley_observation_t **self_p)
{
    assert (self_p);
    parley_observation_t *self = *self_p;
    if (self) {
        pmsg_destroy (&self->reply);
        client_arena_destroy (&self->arena);
        client_mem_free (self);
        *self_p = NULL;
    }
}

parley_err_t
client_observation_decode (parley_observation_t *self, pmsg_t **reply_p,
                           const msgpack_object *map)
{
    assert (self && map);
    client_arena_t *arena = self->arena;
    pmsg_t *reply = self->reply;
    self->reply = NULL;
    pmsg_destroy (&reply);
    client_arena_reset (arena);
    memset (self, 0, sizeof (*self));
    self->arena = arena;
    self->position = pobj_uint (map, "position", 0);
    self->x = pobj_uint (map, "x", self->position);
    self->y = pobj_uint (map, "y", 0);
    pobj_strcpy (map, "outcome", self->outcome, sizeof self->outcome);
    self->explored = pobj_uint (map, "explored", 0);
    self->objects_total = pobj_uint (map, "objects_total", 0);
    self->coverage = pobj_num (map, "coverage", 0);
    self->done = pobj_bool (map, "done", false);
    self->objects = client_arena_strings (arena, pobj_get (map, "objects"), &self->object_count);
    self->fresh = client_arena_strings (arena, pobj_get (map, "new_objects"), &self->fresh_count);
    if (client_arena_failed (arena)) {
        memset (self, 0, sizeof (*self));
        self->arena = arena;
        return PARLEY_ERR_NOMEM;
    }
    //  Only with a type the protocol names.
    const msgpack_object *image = pobj_get (map, "image");
    char type [sizeof self->image_type] = "";
    pobj_strcpy (map, "image_type", type, sizeof type);
    if (image && image->type == MSGPACK_OBJECT_BIN && image->via.bin.size > 0
    &&  (strcmp (type, "png") == 0 || strcmp (type, "jpeg") == 0)) {
        self->image = image->via.bin.ptr;
        self->image_size = image->via.bin.size;
        memcpy (self->image_type, type, sizeof type);
    }
    if (reply_p) {
        self->reply = *reply_p;
        *reply_p = NULL;
    }
    return PARLEY_OK;
}

#define S_FIELD(type, field) \
    type parley_observation_##field (const parley_observation_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (uint64_t, position)
S_FIELD (uint64_t, x)
S_FIELD (uint64_t, y)
S_FIELD (size_t, object_count)
S_FIELD (uint64_t, explored)
S_FIELD (uint64_t, objects_total)
S_FIELD (double, coverage)
S_FIELD (bool, done)
S_FIELD (const void *, image)
S_FIELD (size_t, image_size)

const char *
parley_observation_outcome (const parley_observation_t *self)
{
    assert (self);
    return self->outcome;
}

const char *
parley_observation_object (const parley_observation_t *self, size_t index)
{
    assert (self);
    return client_arena_string_at (self->arena, self->objects, self->object_count, index);
}

size_t
parley_observation_new_count (const parley_observation_t *self)
{
    assert (self);
    return self->fresh_count;
}

const char *
parley_observation_new_object (const parley_observation_t *self, size_t index)
{
    assert (self);
    return client_arena_string_at (self->arena, self->fresh, self->fresh_count, index);
}

const char *
parley_observation_image_type (const parley_observation_t *self)
{
    assert (self);
    return self->image_type;
}
