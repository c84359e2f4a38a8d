// SPDX-License-Identifier: MIT
/*  observation - one thing a connector noticed, able to render itself.

    An observation carries its source connector's id and its own
    data, and renders itself. In C the data is a pointer plus a render
    callback (and a destructor); observation_new_text() covers the common
    case of a ready sentence. A render callback may fail (return NULL): the
    caller then shows an error line instead of the observation, and nothing
    crashes.

    `type` names the kind ("world.moved", "mail.message", ...): AgentMemory
    applies its retention (limit, dedupe) per type. An observation may carry
    an image reference (a path or URL) for multimodal models; the text
    rendering mentions it.
*/
#ifndef PARLEY_OBSERVATION_H
#define PARLEY_OBSERVATION_H

typedef struct _observation_t observation_t;

//  Renders `data` to a new string (caller frees), or NULL on failure.
typedef char *(observation_render_fn) (const void *data);
typedef void (observation_free_fn) (void *data);

#define OBSERVATION_MAX_ID 64

//  Takes ownership of `data` (freed with `free_fn`, may be NULL).
observation_t *observation_new (const char *source, const char *type,
                                observation_render_fn *render, void *data,
                                observation_free_fn *free_fn);
//  Convenience: an observation whose rendering is `text` (copied).
observation_t *observation_new_text (const char *source, const char *type,
                                     const char *text);
void observation_destroy (observation_t **self_p);
//  For zlistx destructors.
void observation_destroy_item (void **item);

const char *observation_source (const observation_t *self);
const char *observation_type (const observation_t *self);

//  Optional image reference (copied); NULL clears it.
void observation_set_image (observation_t *self, const char *ref);

//  The text (caller frees), "[image: REF]" appended when there is an image;
//  NULL if the render callback failed.
char *observation_render (const observation_t *self);

#endif
