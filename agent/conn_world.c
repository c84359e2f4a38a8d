// SPDX-License-Identifier: MIT
/*  conn_world - position and visible objects. See conn_world.h.

    "Seen" objects are kept in a zhashx (names are short, a world has tens
    to thousands of objects) plus a zlistx for first-seen order.
*/
#include <assert.h>
#include "conn_world.h"
#include "plog.h"
#include "textbuf.h"

typedef struct {
    parley_client_t *link;
    world_view_t current, previous;
    char kind[16];
    uint64_t width, height;
    zhashx_t *seen;             //  name -> "" (set)
    zlistx_t *seen_order;       //  names, first-seen order
    zlistx_t *found_now;        //  names new to us in the current view
    bool observed;              //  current has been diffed by s_observe
    uint8_t *image_data;        //  the current view's image, or NULL
    world_image_view_t image;
    uint64_t observed_image;    //  id of the last image rendered as an observation
} world_t;

static void
s_add_found (world_t *self, const world_view_t *view)
{
    zlistx_purge (self->found_now);
    for (size_t i = 0; i < view->object_count; i++) {
        const char *name = view->objects[i];
        if (zhashx_lookup (self->seen, name))
            continue;
        zhashx_insert (self->seen, name, (void *) "");
        zlistx_add_end (self->seen_order, (void *) name);
        zlistx_add_end (self->found_now, (void *) name);
    }
}

void
world_view_objects_text (const world_view_t *view, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < view->object_count && used < size; i++)
        used += snprintf (buf + used, size - used, "%s%s", i? ", ": "", view->objects[i]);
    if (view->object_count == 0)
        snprintf (buf, size, "nothing");
}

static char *
s_list_text (zlistx_t *list)
{
    textbuf_t *buf = textbuf_new ();
    for (const char *name = zlistx_first (list); name; name = zlistx_next (list)) {
        if (textbuf_len (buf))
            textbuf_add (buf, ", ");
        textbuf_add (buf, name);
    }
    return textbuf_detach (&buf);
}

static void
s_add (zlistx_t *out, const char *id, const char *type, char *text)
{
    zlistx_add_end (out, observation_new_text (id, type, text));
    free (text);
}

static void
s_observe (void *impl, const char *id, zlistx_t *out)
{
    world_t *self = (world_t *) impl;
    world_view_t *cur = &self->current, *prev = &self->previous;
    if (!cur->valid)
        return;
    char seen[1024];
    world_view_objects_text (cur, seen, sizeof (seen));
    if (!prev->valid)
        s_add (out, id, "world.start",
               zsys_sprintf ("Started at position %" PRIu64 ". I see: %s.", cur->position, seen));
    else
    if (cur->position != prev->position)
        s_add (out, id, "world.moved",
               zsys_sprintf ("Moved from position %" PRIu64 " to position %" PRIu64 ". I see: %s.",
                             prev->position, cur->position, seen));
    else
    if (streq (cur->outcome, "edge"))
        s_add (out, id, "world.blocked",
               zsys_sprintf ("Could not move: still at position %" PRIu64 " (edge).", cur->position));
    if (zlistx_size (self->found_now) > 0) {
        char *names = s_list_text (self->found_now);
        s_add (out, id, "world.found", zsys_sprintf ("New objects here: %s.", names));
        free (names);
        zlistx_purge (self->found_now);
    }
    if (cur->objects_total > 0 && (!prev->valid || cur->explored != prev->explored))
        s_add (out, id, "world.coverage",
               zsys_sprintf ("Team coverage is now %.0f%% (%" PRIu64 " of %" PRIu64 " objects).",
                             cur->coverage * 100, cur->explored, cur->objects_total));
    if (cur->done && !(prev->valid && prev->done))
        s_add (out, id, "world.done", strdup ("Everything in the world has been explored."));
    if (self->image_data && self->image.id != self->observed_image) {
        s_add (out, id, "world.image",
               zsys_sprintf ("The view changed: a new %s image (%zu bytes).",
                             self->image.type, self->image.size));
        self->observed_image = self->image.id;
    }
    *prev = *cur;
    self->observed = true;
}

static char *
s_render (void *impl)
{
    world_t *self = (world_t *) impl;
    const world_view_t *cur = &self->current;
    if (!cur->valid)
        return strdup ("Position: unknown (not perceived yet)");
    char seen[1024];
    world_view_objects_text (cur, seen, sizeof (seen));
    char shape[64] = "";
    if (self->width > 0 && streq (self->kind, "grid"))
        snprintf (shape, sizeof (shape), " (x %" PRIu64 ", y %" PRIu64 " on a %" PRIu64 "x%" PRIu64
                  " grid)", cur->x, cur->y, self->width, self->height);
    else
    if (self->width > 0)
        snprintf (shape, sizeof (shape), " (line of %" PRIu64 " positions)", self->width);
    return zsys_sprintf ("Position: %" PRIu64 "%s\nVisible objects: %s\n"
                         "Team coverage: %.0f%% (%" PRIu64 " of %" PRIu64 " objects explored)%s",
                         cur->position, shape, seen, cur->coverage * 100, cur->explored,
                         cur->objects_total, cur->done? "\nThe world is fully explored.": "");
}

//  An OBSERVATION -> view. Objects past WORLD_MAX_VISIBLE are left out
//  (and logged): a position holds 1-3 objects in the standard world.
static void
s_parse (const parley_observation_t *obs, world_view_t *view)
{
    memset (view, 0, sizeof (*view));
    view->valid = true;
    view->position = parley_observation_position (obs);
    view->x = parley_observation_x (obs);
    view->y = parley_observation_y (obs);
    const char *outcome = parley_observation_outcome (obs);
    snprintf (view->outcome, sizeof (view->outcome), "%.15s", *outcome? outcome: "perceived");
    view->explored = parley_observation_explored (obs);
    view->objects_total = parley_observation_objects_total (obs);
    view->coverage = parley_observation_coverage (obs);
    view->done = parley_observation_done (obs);
    for (size_t i = 0; i < parley_observation_object_count (obs); i++) {
        if (view->object_count == WORLD_MAX_VISIBLE) {
            plog_warn ("more than %d objects in view; the rest are ignored", WORLD_MAX_VISIBLE);
            break;
        }
        snprintf (view->objects [view->object_count++], WORLD_MAX_NAME + 1, "%s",
                  parley_observation_object (obs, i));
    }
}

//  The view's image: a copy of the bytes, and a hash that names them.
static void
s_set_image (world_t *self, const uint8_t *data, size_t size, const char *type)
{
    free (self->image_data);
    self->image_data = NULL;
    memset (&self->image, 0, sizeof (self->image));
    if (!data || size == 0 || size > WORLD_IMAGE_MAX || !type)
        return;
    self->image_data = (uint8_t *) malloc (size);
    if (!self->image_data)
        return;                 //  out of memory: the view has no image
    memcpy (self->image_data, data, size);
    self->image.data = self->image_data;
    self->image.size = size;
    snprintf (self->image.type, sizeof (self->image.type), "%s", type);
    //  FNV-1a 64: a key that tells one image from another (change
    //  detection, caption cache), not a defence against a forger.
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ data[i]) * 0x100000001b3ull;
    self->image.id = hash;
}

//  OBSERVATION's image and image_type (the client keeps only a sane
//  pair), copied: the observation's bytes live only until the next call.
static void
s_parse_image (world_t *self, const parley_observation_t *obs)
{
    if (parley_observation_image (obs))
        s_set_image (self, (const uint8_t *) parley_observation_image (obs),
                     parley_observation_image_size (obs), parley_observation_image_type (obs));
    else
        s_set_image (self, NULL, 0, NULL);
}

//  A PERCEIVE that follows an ACT before the connector was diffed must
//  not erase what the move did: its "perceived" would replace the ACT's
//  "edge", and a refused move would never be observed. The act's outcome
//  is carried over until s_observe has seen it.
static void
s_feed (world_t *self, const world_view_t *view)
{
    char carried[sizeof (self->current.outcome)] = "";
    if (self->current.valid && !self->observed && streq (view->outcome, "perceived")
    &&  !streq (self->current.outcome, "perceived")
    &&  self->current.position == view->position)
        snprintf (carried, sizeof (carried), "%s", self->current.outcome);
    self->current = *view;
    self->current.valid = true;
    self->observed = false;
    if (*carried)
        snprintf (self->current.outcome, sizeof (self->current.outcome), "%s", carried);
    s_add_found (self, &self->current);
}

static int
s_capture (void *impl, char *err, size_t err_size)
{
    world_t *self = (world_t *) impl;
    if (!self->link)
        return 0;
    parley_observation_t *obs = NULL;
    parley_err_t rc = parley_client_perceive (self->link, &obs);
    if (rc != PARLEY_OK) {
        snprintf (err, err_size, "%s: %s", parley_strerror (rc),
                  parley_client_error_text (self->link));
        parley_observation_destroy (&obs);
        return -1;
    }
    world_view_t view;
    s_parse (obs, &view);
    s_feed (self, &view);
    s_parse_image (self, obs);
    parley_observation_destroy (&obs);
    return 0;
}

static void
s_destroy (void *impl)
{
    world_t *self = (world_t *) impl;
    zhashx_destroy (&self->seen);
    zlistx_destroy (&self->seen_order);
    zlistx_destroy (&self->found_now);
    free (self->image_data);
    free (self);
}

static const connector_ops_t s_ops = {
    .capture = s_capture, .observe = s_observe, .render = s_render, .destroy = s_destroy
};

connector_t *
conn_world_new (parley_client_t *link)
{
    world_t *self = (world_t *) zmalloc (sizeof (world_t));
    self->link = link;
    strcpy (self->kind, "line");
    self->seen = zhashx_new ();
    self->seen_order = zlistx_new ();
    zlistx_set_duplicator (self->seen_order, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (self->seen_order, (zlistx_destructor_fn *) zstr_free);
    self->found_now = zlistx_new ();
    zlistx_set_duplicator (self->found_now, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (self->found_now, (zlistx_destructor_fn *) zstr_free);
    return connector_new ("world", &s_ops, self);
}

void
conn_world_set_shape (connector_t *self, const char *kind, uint64_t width, uint64_t height)
{
    world_t *world = (world_t *) connector_impl (self);
    snprintf (world->kind, sizeof (world->kind), "%s", kind && *kind? kind: "line");
    world->width = width;
    world->height = height;
}

void
conn_world_feed (connector_t *self, const world_view_t *view)
{
    assert (view);
    s_feed ((world_t *) connector_impl (self), view);
}

void
conn_world_feed_observation (connector_t *self, const parley_observation_t *obs)
{
    assert (obs);
    world_view_t view;
    s_parse (obs, &view);
    s_feed ((world_t *) connector_impl (self), &view);
    s_parse_image ((world_t *) connector_impl (self), obs);
}

const world_view_t *
conn_world_view (connector_t *self)
{
    return &((world_t *) connector_impl (self))->current;
}

size_t
conn_world_seen_count (connector_t *self)
{
    return zlistx_size (((world_t *) connector_impl (self))->seen_order);
}

const char *
conn_world_seen_at (connector_t *self, size_t index)
{
    zlistx_t *list = ((world_t *) connector_impl (self))->seen_order;
    const char *name = zlistx_first (list);
    for (size_t i = 0; name && i < index; i++)
        name = zlistx_next (list);
    return name;
}

uint64_t
conn_world_width (connector_t *self)
{
    return ((world_t *) connector_impl (self))->width;
}

uint64_t
conn_world_height (connector_t *self)
{
    return ((world_t *) connector_impl (self))->height;
}

const char *
conn_world_kind (connector_t *self)
{
    return ((world_t *) connector_impl (self))->kind;
}

const world_image_view_t *
conn_world_image (connector_t *self)
{
    world_t *world = (world_t *) connector_impl (self);
    return world->image_data? &world->image: NULL;
}

void
conn_world_feed_image (connector_t *self, const uint8_t *data, size_t size, const char *type)
{
    s_set_image ((world_t *) connector_impl (self), data, size, type);
}
