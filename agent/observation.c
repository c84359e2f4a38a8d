// SPDX-License-Identifier: MIT
/*  observation - one thing a connector noticed. See observation.h. */
#include <assert.h>
#include <czmq.h>
#include "observation.h"

struct _observation_t {
    char source[OBSERVATION_MAX_ID + 1];
    char type[OBSERVATION_MAX_ID + 1];
    observation_render_fn *render;
    void *data;
    observation_free_fn *free_fn;
    char *image;
};

observation_t *
observation_new (const char *source, const char *type,
                 observation_render_fn *render, void *data,
                 observation_free_fn *free_fn)
{
    assert (source && type && render);
    observation_t *self = (observation_t *) zmalloc (sizeof (observation_t));
    snprintf (self->source, sizeof (self->source), "%s", source);
    snprintf (self->type, sizeof (self->type), "%s", type);
    self->render = render;
    self->data = data;
    self->free_fn = free_fn;
    return self;
}

static char *
s_render_text (const void *data)
{
    return strdup ((const char *) data);
}

static void
s_free_text (void *data)
{
    free (data);
}

observation_t *
observation_new_text (const char *source, const char *type, const char *text)
{
    assert (text);
    return observation_new (source, type, s_render_text, strdup (text), s_free_text);
}

void
observation_destroy (observation_t **self_p)
{
    assert (self_p);
    observation_t *self = *self_p;
    if (self) {
        if (self->free_fn)
            self->free_fn (self->data);
        free (self->image);
        free (self);
        *self_p = NULL;
    }
}

void
observation_destroy_item (void **item)
{
    observation_destroy ((observation_t **) item);
}

const char *
observation_source (const observation_t *self)
{
    assert (self);
    return self->source;
}

const char *
observation_type (const observation_t *self)
{
    assert (self);
    return self->type;
}

void
observation_set_image (observation_t *self, const char *ref)
{
    assert (self);
    free (self->image);
    self->image = ref? strdup (ref): NULL;
}

char *
observation_render (const observation_t *self)
{
    assert (self);
    char *text = self->render (self->data);
    if (!text || !self->image)
        return text;
    char *both = zsys_sprintf ("%s [image: %s]", text, self->image);
    free (text);
    return both;
}
