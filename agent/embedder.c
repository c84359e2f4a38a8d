// SPDX-License-Identifier: MIT
/*  embedder - text to unit vectors: builtin hashed n-grams or /v1/embeddings.
    See embedder.h for the contract.

    Builtin features and weights (chosen by hand, tested for "similar texts
    land near each other", not tuned on any data set):
      word unigram   1.0   (a small stop-word list gets 0.25: every memory
                            text says "At position .. I saw .. I decided
                            to", and those words should not dominate)
      word bigram    0.7   (order: "chair lamp" vs "lamp chair" differ)
      char trigram   0.35  (per word, padded with '#': "lamps" ~ "lamp")
    A word is a run of ASCII letters/digits or bytes >= 0x80 (UTF-8 kept
    whole, lowercasing is ASCII only). Each feature is hashed with FNV-1a 64
    salted by its kind; the low bits pick the bucket, the top bit the sign.
*/
#include "embedder.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _embedder_t {
    int dim;
    bool builtin;
    char *model;
    size_t max_batch;
    http_t *http;
};

#define S_MAX_WORD 64           //  longer words are cut for hashing

static const char *s_stop_words [] = {
    "a", "an", "the", "i", "to", "at", "of", "and", "or", "in", "on", "is",
    "it", "do", "what", "with", "about", "know", "see", "saw", "decided",
    NULL
};

void
embedder_options_default (embedder_options_t *opts)
{
    assert (opts);
    memset (opts, 0, sizeof *opts);
    opts->dim = EMBEDDER_DEFAULT_DIM;
    opts->max_batch = 64;
    http_options_default (&opts->http);
}

static uint64_t
s_fnv (uint64_t hash, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        hash ^= (unsigned char) data [i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

static void
s_add_feature (float *out, int dim, char kind, const char *a, size_t alen,
               const char *b, size_t blen, float weight)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    hash = s_fnv (hash, &kind, 1);
    hash = s_fnv (hash, a, alen);
    if (b) {
        hash = s_fnv (hash, " ", 1);
        hash = s_fnv (hash, b, blen);
    }
    //  Final mix so the low bits depend on every input byte.
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdull;
    hash ^= hash >> 33;
    size_t bucket = (size_t) (hash % (uint64_t) dim);
    out [bucket] += (hash >> 63) ? -weight : weight;
}

static bool
s_is_stop_word (const char *word, size_t len)
{
    for (size_t i = 0; s_stop_words [i]; i++)
        if (strlen (s_stop_words [i]) == len && memcmp (s_stop_words [i], word, len) == 0)
            return true;
    return false;
}

static bool
s_is_word_byte (unsigned char c)
{
    return isalnum (c) || c >= 0x80;
}

void
embed_builtin (const char *text, size_t len, float *out, int dim)
{
    assert (out);
    assert (dim > 0 && dim <= EMBEDDER_MAX_DIM);
    memset (out, 0, sizeof (float) * (size_t) dim);
    if (!text)
        return;
    if (len > EMBEDDER_MAX_TEXT_BYTES)
        len = EMBEDDER_MAX_TEXT_BYTES;
    char prev [S_MAX_WORD];
    size_t prev_len = 0;
    size_t pos = 0;
    while (pos < len) {
        while (pos < len && !s_is_word_byte ((unsigned char) text [pos]))
            pos++;
        if (pos >= len)
            break;
        //  Word, lowercased, padded with '#' for the trigrams.
        char word [S_MAX_WORD + 2];
        size_t wlen = 0;
        word [0] = '#';
        while (pos < len && s_is_word_byte ((unsigned char) text [pos])) {
            if (wlen < S_MAX_WORD)
                word [1 + wlen++] = (char) tolower ((unsigned char) text [pos]);
            pos++;
        }
        word [1 + wlen] = '#';
        const char *w = word + 1;
        float weight = s_is_stop_word (w, wlen) ? 0.25f : 1.0f;
        s_add_feature (out, dim, 'w', w, wlen, NULL, 0, weight);
        if (prev_len)
            s_add_feature (out, dim, 'b', prev, prev_len, w, wlen, 0.7f);
        for (size_t i = 0; i + 3 <= wlen + 2; i++)
            s_add_feature (out, dim, 't', word + i, 3, NULL, 0, 0.35f);
        memcpy (prev, w, wlen);
        prev_len = wlen;
    }
    embed_normalize (out, dim);
}

bool
embed_normalize (float *v, int dim)
{
    double sum = 0;
    for (int i = 0; i < dim; i++)
        sum += (double) v [i] * v [i];
    if (!(sum > 0) || !isfinite (sum))
        return false;
    float scale = (float) (1.0 / sqrt (sum));
    for (int i = 0; i < dim; i++)
        v [i] *= scale;
    return true;
}

float
embed_dot (const float *a, const float *b, int dim)
{
    double sum = 0;
    for (int i = 0; i < dim; i++)
        sum += (double) a [i] * b [i];
    return (float) sum;
}

//  One /v1/embeddings request for `count` texts into `out` (count * dim).
//  With self->dim == 0 the dimension is learnt from this answer.
static int
s_http_request (embedder_t *self, const char *const *texts, size_t count,
                float *out, char *err, size_t err_size)
{
    int rc = -1;
    bool *seen = NULL;
    json_t *response = NULL;
    json_t *input = json_array ();
    json_t *body = json_pack ("{s:s, s:o}", "model", self->model, "input", input);
    if (!body) {
        snprintf (err, err_size, "cannot build the embeddings request");
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (json_array_append_new (input, json_string (texts [i] ? texts [i] : "")) != 0) {
            //  json_string refuses invalid UTF-8.
            snprintf (err, err_size, "text %zu is not valid UTF-8", i);
            goto done;
        }
    if (http_post_json (self->http, body, &response, err, err_size) != 0)
        goto done;
    json_t *data = json_object_get (response, "data");
    if (!json_is_array (data)) {
        snprintf (err, err_size, "embeddings response has no \"data\" array");
        goto done;
    }
    if (json_array_size (data) != count) {
        snprintf (err, err_size, "embeddings response has %zu vectors for %zu inputs",
                  json_array_size (data), count);
        goto done;
    }
    seen = calloc (count, sizeof *seen);
    if (!seen) {
        snprintf (err, err_size, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *item = json_array_get (data, i);
        json_t *vector = json_object_get (item, "embedding");
        json_t *index = json_object_get (item, "index");
        size_t slot = i;
        if (index) {
            if (!json_is_integer (index) || json_integer_value (index) < 0
            ||  (size_t) json_integer_value (index) >= count) {
                snprintf (err, err_size, "embeddings item %zu has an invalid index", i);
                goto done;
            }
            slot = (size_t) json_integer_value (index);
        }
        if (seen [slot]) {
            snprintf (err, err_size, "embeddings response repeats index %zu", slot);
            goto done;
        }
        seen [slot] = true;
        if (!json_is_array (vector)) {
            snprintf (err, err_size, "embeddings item %zu has no \"embedding\" array", i);
            goto done;
        }
        size_t n = json_array_size (vector);
        if (self->dim == 0) {
            if (n == 0 || n > EMBEDDER_MAX_DIM) {
                snprintf (err, err_size, "embedding dimension %zu is outside 1..%d", n, EMBEDDER_MAX_DIM);
                goto done;
            }
            self->dim = (int) n;
        }
        if (n != (size_t) self->dim) {
            snprintf (err, err_size, "embedding %zu has dimension %zu, expected %d "
                      "(check --embed-model / --embed-dim)", slot, n, self->dim);
            goto done;
        }
        float *row = out + slot * (size_t) self->dim;
        for (size_t j = 0; j < n; j++) {
            json_t *value = json_array_get (vector, j);
            double x = json_number_value (value);
            if (!json_is_number (value) || !isfinite (x) || fabs (x) > 3.0e38) {
                snprintf (err, err_size, "embedding %zu has a non-finite or non-numeric "
                          "component at %zu", slot, j);
                goto done;
            }
            row [j] = (float) x;
        }
        embed_normalize (row, self->dim);
    }
    rc = 0;
done:
    free (seen);
    json_decref (body);
    json_decref (response);
    return rc;
}

embedder_t *
embedder_new (const embedder_options_t *opts, char *err, size_t err_size)
{
    assert (opts);
    assert (err && err_size);
    err [0] = 0;
    embedder_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->dim = opts->dim;
    self->max_batch = opts->max_batch ? opts->max_batch : 64;
    self->builtin = !opts->url || !*opts->url;
    if (self->dim < 0 || self->dim > EMBEDDER_MAX_DIM || (self->builtin && self->dim == 0)) {
        snprintf (err, err_size, "embedding dimension %d is outside 1..%d", opts->dim, EMBEDDER_MAX_DIM);
        goto err;
    }
    if (self->builtin)
        return self;
    if (!opts->model || !*opts->model) {
        snprintf (err, err_size, "--embed-url needs --embed-model");
        goto err;
    }
    char *url = http_endpoint (opts->url, "embeddings");
    if (!url) {
        snprintf (err, err_size, "--embed-url \"%s\" is not an http:// or https:// URL", opts->url);
        goto err;
    }
    static const char *const key_vars [] = { "PARLEY_EMBED_API_KEY", "OPENAI_API_KEY", NULL };
    const char *key = opts->api_key ? opts->api_key : http_env_key (key_vars);
    self->http = http_new (url, key, &opts->http);
    free (url);
    self->model = strdup (opts->model);
    if (!self->http || !self->model) {
        snprintf (err, err_size, "cannot initialise the HTTP client");
        goto err;
    }
    if (self->dim == 0) {
        float probe [EMBEDDER_MAX_DIM];
        const char *text = "dimension probe";
        char why [512];
        if (s_http_request (self, &text, 1, probe, why, sizeof why) != 0) {
            snprintf (err, err_size, "cannot learn the embedding dimension: %s", why);
            goto err;
        }
    }
    return self;
err:
    embedder_destroy (&self);
    return NULL;
}

void
embedder_destroy (embedder_t **self_p)
{
    assert (self_p);
    embedder_t *self = *self_p;
    if (!self)
        return;
    http_destroy (&self->http);
    free (self->model);
    free (self);
    *self_p = NULL;
}

int
embedder_dim (embedder_t *self)
{
    assert (self);
    return self->dim;
}

const char *
embedder_kind (embedder_t *self)
{
    assert (self);
    return self->builtin ? "builtin" : "http";
}

const char *
embedder_model (embedder_t *self)
{
    assert (self);
    return self->builtin ? NULL : self->model;
}

int
embedder_probe (embedder_t *self, char *err, size_t err_size)
{
    assert (self);
    if (self->builtin)
        return 0;
    float *probe = calloc ((size_t) self->dim, sizeof *probe);
    if (!probe) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    const char *text = "dimension probe";
    int rc = s_http_request (self, &text, 1, probe, err, err_size);
    free (probe);
    return rc;
}

int
embedder_embed (embedder_t *self, const char *text, float *out, char *err, size_t err_size)
{
    return embedder_embed_batch (self, &text, 1, out, err, err_size);
}

int
embedder_embed_batch (embedder_t *self, const char *const *texts, size_t count,
                      float *out, char *err, size_t err_size)
{
    assert (self);
    assert (texts || count == 0);
    assert (out || count == 0);
    assert (err && err_size);
    err [0] = 0;
    if (self->builtin) {
        for (size_t i = 0; i < count; i++)
            embed_builtin (texts [i], texts [i] ? strlen (texts [i]) : 0,
                           out + i * (size_t) self->dim, self->dim);
        return 0;
    }
    for (size_t done = 0; done < count; ) {
        size_t n = count - done < self->max_batch ? count - done : self->max_batch;
        if (s_http_request (self, texts + done, n, out + done * (size_t) self->dim,
                            err, err_size) != 0)
            return -1;
        done += n;
    }
    return 0;
}
