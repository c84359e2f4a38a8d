// SPDX-License-Identifier: MIT
/*  embedder - text to a fixed-dimension, L2-normalised float vector.

    Two kinds behind one interface:

    - "builtin" (default, no server): hashed features of the lowercased text
      -- word unigrams, word bigrams and character trigrams -- added into
      `dim` buckets with a signed hash (FNV-1a 64; one bit picks the sign so
      collisions cancel on average instead of piling up), then L2-normalised.
      Deterministic across runs and machines. Texts sharing words land near
      each other under cosine; it knows nothing of synonyms.
    - "http": an OpenAI-compatible /v1/embeddings client (Ollama, llama.cpp,
      vLLM, OpenAI). The response is validated strictly: one item per input,
      each `index` in range and unique, each vector of exactly `dim` finite
      numbers. Vectors are L2-normalised here, since servers differ.

    Vectors are normalised so that inner product == cosine (see vmemory.h).
    An all-zero vector (empty text) stays all zero.
*/
#ifndef PARLEY_EMBEDDER_H
#define PARLEY_EMBEDDER_H

#include <stdbool.h>
#include <stddef.h>
#include "http.h"

typedef struct _embedder_t embedder_t;

#define EMBEDDER_DEFAULT_DIM 256
#define EMBEDDER_MAX_DIM 8192
//  Texts longer than this are cut (builtin) before hashing; counted.
#define EMBEDDER_MAX_TEXT_BYTES (64 * 1024)

typedef struct {
    const char *url;        //  --embed-url; NULL or "" = builtin
    const char *model;      //  --embed-model; required with url
    const char *api_key;    //  NULL: $PARLEY_EMBED_API_KEY, then $OPENAI_API_KEY
    int dim;                //  builtin: default 256. http: expected dimension,
                            //  0 = learn it with one probe request in embedder_new
    size_t max_batch;       //  inputs per HTTP request, default 64
    http_options_t http;
} embedder_options_t;

void embedder_options_default (embedder_options_t *opts);

//  NULL with `err` filled on bad options, or (http, dim 0) a failed probe.
embedder_t *embedder_new (const embedder_options_t *opts, char *err, size_t err_size);
void embedder_destroy (embedder_t **self_p);

int embedder_dim (embedder_t *self);
//  "builtin" or "http".
const char *embedder_kind (embedder_t *self);
//  The --embed-model of an http embedder; NULL for the builtin one.
const char *embedder_model (embedder_t *self);
//  One request to an http embedder's server ("dimension probe"): 0 if it
//  answers vectors of embedder_dim() numbers, -1 with `err` saying what it
//  answered instead (another dimension: a wrong --embed-dim or model).
//  Always 0 for the builtin embedder.
int embedder_probe (embedder_t *self, char *err, size_t err_size);

//  `out` holds embedder_dim() floats. 0 on success, -1 with `err` filled.
int embedder_embed (embedder_t *self, const char *text, float *out,
                    char *err, size_t err_size);

//  `out` holds count * embedder_dim() floats, row i for texts[i]. Batched
//  into requests of at most max_batch inputs. All or nothing: on -1 `out`
//  content is unspecified.
int embedder_embed_batch (embedder_t *self, const char *const *texts, size_t count,
                          float *out, char *err, size_t err_size);

//  The builtin embedding as a pure function (used by the class; exposed for
//  tests and benches). `dim` in [1, EMBEDDER_MAX_DIM].
void embed_builtin (const char *text, size_t len, float *out, int dim);

//  Scales `v` to unit length; returns false (and leaves it) if its norm is 0
//  or not finite.
bool embed_normalize (float *v, int dim);

//  Inner product of two vectors (cosine when both are normalised).
float embed_dot (const float *a, const float *b, int dim);

#endif
