/*  vmemory - an agent's private vector memory: FAISS index + texts.
    See vmemory.h for the contract; the file format is in vmemory_file.c.

    Honest costs: vmemory_save rewrites both files (O(entries)); at 100k
    entries of dim 256 that is ~100 MB of index. Call it every few steps
    and at exit, not after every add (vmemory_file.h says what an
    incremental save would look like). Flat search is a linear scan:
    O(entries * dim) per query.
*/
#include "vmemory.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>

#include "plog.h"
#include "vmemory_file.h"

struct _vmemory_t {
    FaissIndex *index;
    char **texts;               //  texts [i] belongs to FAISS id i
    size_t count, cap;
    int dim;
    char *dir;                  //  NULL: RAM only
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];
    size_t max_text_bytes, max_entries;
    uint64_t truncated;
    bool dirty;
    int lock_fd;
};

static pthread_once_t s_threads_once = PTHREAD_ONCE_INIT;

static void
s_default_threads (void)
{
    //  See vmemory.h: one thread unless the operator asked otherwise.
    const char *parley = getenv ("PARLEY_OMP_THREADS");
    if (parley && atoi (parley) > 0)
        omp_set_num_threads (atoi (parley));
    else
    if (!getenv ("OMP_NUM_THREADS"))
        omp_set_num_threads (1);
}

void
vmemory_set_threads (int threads)
{
    pthread_once (&s_threads_once, s_default_threads);
    if (threads > 0)
        omp_set_num_threads (threads);
}

void
vmemory_options_default (vmemory_options_t *opts)
{
    assert (opts);
    memset (opts, 0, sizeof *opts);
    opts->factory = "Flat";
    opts->max_text_bytes = VMEMORY_DEFAULT_MAX_TEXT;
    opts->max_entries = 10 * 1000 * 1000;
}

static int
s_grow (vmemory_t *self, size_t need)
{
    if (need <= self->cap)
        return 0;
    size_t cap = self->cap ? self->cap : 64;
    while (cap < need)
        cap *= 2;
    char **texts = realloc (self->texts, cap * sizeof *texts);
    if (!texts)
        return -1;
    self->texts = texts;
    self->cap = cap;
    return 0;
}

//  Takes what vmemory_file_load read.
static int
s_load (vmemory_t *self, char *err, size_t err_size)
{
    vmemory_file_loaded_t loaded;
    if (vmemory_file_load (self->dir, self->dim, self->max_entries, &loaded, err, err_size) != 0)
        return -1;
    self->texts = loaded.texts;
    self->count = self->cap = loaded.count;
    self->index = loaded.index;
    snprintf (self->factory, sizeof self->factory, "%s", loaded.factory);
    return 0;
}

vmemory_t *
vmemory_open (const vmemory_options_t *opts, char *err, size_t err_size)
{
    assert (opts);
    assert (err && err_size);
    err [0] = 0;
    vmemory_set_threads (0);
    vmemory_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->lock_fd = -1;
    self->dim = opts->dim;
    self->max_text_bytes = opts->max_text_bytes ? opts->max_text_bytes : VMEMORY_DEFAULT_MAX_TEXT;
    if (self->max_text_bytes > VMEMORY_MAX_TEXT_LIMIT)
        self->max_text_bytes = VMEMORY_MAX_TEXT_LIMIT;
    self->max_entries = opts->max_entries ? opts->max_entries : 10 * 1000 * 1000;
    if (self->max_entries > VMEMORY_MAX_ENTRIES)
        self->max_entries = VMEMORY_MAX_ENTRIES;
    const char *factory = opts->factory && *opts->factory ? opts->factory : "Flat";
    if (self->dim <= 0 || strlen (factory) > VMEMORY_FILE_FACTORY_MAX) {
        snprintf (err, err_size, "invalid memory options (dim %d, factory \"%s\")", self->dim, factory);
        goto err;
    }
    snprintf (self->factory, sizeof self->factory, "%s", factory);
    if (opts->dir) {
        self->dir = strdup (opts->dir);
        if (!self->dir || vmemory_file_make_dir (self->dir, err, err_size) != 0
        ||  vmemory_file_lock (self->dir, &self->lock_fd, err, err_size) != 0)
            goto err;
        bool has_texts = vmemory_file_exists (self->dir, VMEMORY_FILE_TEXTS);
        bool has_index = vmemory_file_exists (self->dir, VMEMORY_FILE_INDEX);
        if (has_texts != has_index) {
            snprintf (err, err_size, "memory dir %s has %s but not %s", self->dir,
                      has_texts ? VMEMORY_FILE_TEXTS : VMEMORY_FILE_INDEX,
                      has_texts ? VMEMORY_FILE_INDEX : VMEMORY_FILE_TEXTS);
            goto err;
        }
        if (has_texts)
            return s_load (self, err, err_size) == 0 ? self : (vmemory_destroy (&self), NULL);
    }
    if (faiss_index_factory (&self->index, self->dim, factory, METRIC_INNER_PRODUCT) != 0) {
        snprintf (err, err_size, "FAISS refuses index factory \"%s\": %s", factory, faiss_get_last_error ());
        goto err;
    }
    if (!faiss_Index_is_trained (self->index)) {
        snprintf (err, err_size, "index factory \"%s\" needs training, which vmemory does not do; "
                  "use Flat or HNSWn", factory);
        goto err;
    }
    return self;
err:
    vmemory_destroy (&self);
    return NULL;
}

void
vmemory_destroy (vmemory_t **self_p)
{
    assert (self_p);
    vmemory_t *self = *self_p;
    if (!self)
        return;
    if (self->index)
        faiss_Index_free (self->index);
    for (size_t i = 0; i < self->count; i++)
        free (self->texts [i]);
    free (self->texts);
    if (self->lock_fd >= 0)
        close (self->lock_fd);      //  releases the flock
    free (self->dir);
    free (self);
    *self_p = NULL;
}

int
vmemory_add (vmemory_t *self, const float *vec, const char *text, char *err, size_t err_size)
{
    assert (self);
    assert (vec);
    assert (err && err_size);
    if (!text)
        text = "";
    if (self->count >= self->max_entries) {
        snprintf (err, err_size, "memory is full (%zu entries)", self->max_entries);
        return -1;
    }
    for (int i = 0; i < self->dim; i++)
        if (!isfinite (vec [i])) {
            snprintf (err, err_size, "vector has a non-finite component at %d", i);
            return -1;
        }
    size_t len = strlen (text);
    if (len > self->max_text_bytes) {
        len = self->max_text_bytes;
        while (len > 0 && ((unsigned char) text [len] & 0xC0) == 0x80)
            len--;              //  do not cut a UTF-8 sequence in half
        self->truncated++;
    }
    char *copy = malloc (len + 1);
    if (!copy || s_grow (self, self->count + 1) != 0) {
        free (copy);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    memcpy (copy, text, len);
    copy [len] = 0;
    if (faiss_Index_add (self->index, 1, vec) != 0) {
        free (copy);
        snprintf (err, err_size, "FAISS add failed: %s", faiss_get_last_error ());
        return -1;
    }
    self->texts [self->count++] = copy;
    self->dirty = true;
    return 0;
}

int
vmemory_search (vmemory_t *self, const float *query, size_t top_k, vmemory_hit_t *hits,
                char *err, size_t err_size)
{
    assert (self);
    assert (query);
    assert (hits || top_k == 0);
    if (top_k > VMEMORY_MAX_TOP_K)
        top_k = VMEMORY_MAX_TOP_K;
    if (top_k > self->count)
        top_k = self->count;
    if (top_k == 0)
        return 0;
    float distances [VMEMORY_MAX_TOP_K];
    faiss_idx_t labels [VMEMORY_MAX_TOP_K];
    if (faiss_Index_search (self->index, 1, query, (faiss_idx_t) top_k, distances, labels) != 0) {
        snprintf (err, err_size, "FAISS search failed: %s", faiss_get_last_error ());
        return -1;
    }
    int found = 0;
    for (size_t i = 0; i < top_k; i++) {
        if (labels [i] < 0 || (size_t) labels [i] >= self->count)
            continue;           //  HNSW may return fewer than k
        hits [found].id = labels [i];
        hits [found].score = distances [i];
        hits [found].text = self->texts [labels [i]];
        found++;
    }
    return found;
}

int
vmemory_save (vmemory_t *self, char *err, size_t err_size)
{
    assert (self);
    assert (err && err_size);
    if (!self->dir || !self->dirty)
        return 0;
    vmemory_file_save_t what = { .index = self->index, .texts = self->texts,
                                 .count = self->count, .dim = self->dim,
                                 .factory = self->factory };
    if (vmemory_file_save (self->dir, &what, err, err_size) != 0)
        return -1;
    self->dirty = false;
    return 0;
}

size_t
vmemory_count (vmemory_t *self)
{
    assert (self);
    return self->count;
}

int
vmemory_dim (vmemory_t *self)
{
    assert (self);
    return self->dim;
}

const char *
vmemory_text (vmemory_t *self, size_t id)
{
    assert (self);
    return id < self->count ? self->texts [id] : NULL;
}

const char *
vmemory_factory (vmemory_t *self)
{
    assert (self);
    return self->factory;
}

uint64_t
vmemory_truncated (vmemory_t *self)
{
    assert (self);
    return self->truncated;
}
