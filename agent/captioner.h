// SPDX-License-Identifier: MIT
/*  captioner - turns an image into `visible_caption`, the sentence the
    first source document queries memory with, through an OpenAI-compatible
    multimodal chat model (--caption-url, --caption-model).

    One request per new image: captions are cached by the image's id
    (world_image_view_t.id), so an agent that walks back to a place it has
    seen, or stands still, asks nothing. The cache holds CAPTIONER_CACHE
    captions; when full it is emptied (a world with more distinct images
    than that pays a caption again, never unbounded memory). A caption is
    one line: newlines become spaces, and it is cut at CAPTIONER_MAX_TEXT.

    The request: one user message, "text" part CAPTIONER_INSTRUCTION and an
    "image_url" part with the image as a base64 data URL (llm.h).

    A caption server that fails is not asked again for CAPTIONER_PAUSE_MS
    (logged once per pause), so a dead server does not cost every step its
    retries; the steps go on without a caption meanwhile.
*/
#ifndef PARLEY_CAPTIONER_H
#define PARLEY_CAPTIONER_H

#include <stddef.h>
#include "conn_world.h"
#include "llm.h"

#define CAPTIONER_CACHE 1024
#define CAPTIONER_MAX_TEXT 300
#define CAPTIONER_PAUSE_MS 30000
#define CAPTIONER_INSTRUCTION "Describe what this image shows in one short sentence, " \
                              "naming the objects you can see."

typedef struct _captioner_t captioner_t;

//  Takes ownership of `llm` (its url and model are the caption server's).
captioner_t *captioner_new (llm_t *llm);
void captioner_destroy (captioner_t **self_p);

//  The caption of `image` (owned by the captioner, valid until destroy),
//  or NULL with `err` filled when the model gave none.
const char *captioner_caption (captioner_t *self, const world_image_view_t *image,
                               char *err, size_t err_size);

//  Requests made and cache hits, for tests and the summary.
void captioner_counts (captioner_t *self, uint64_t *requests, uint64_t *hits);

#endif
