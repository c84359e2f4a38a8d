// SPDX-License-Identifier: MIT
/*  vmemory_train - IVF training in a thread. See vmemory_train.h.

    The thread touches only what it owns: the copy of the vectors and the
    new index. The old index stays the caller's alone, so nothing is
    locked; `done` (atomic) is the only word both sides read.
*/
#include "vmemory_train.h"
#include "vmemory_index.h"

#include <assert.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>

#define S_CHUNK 4096

struct _vmemory_train_t {
    pthread_t thread;
    bool threaded;
    atomic_bool done;
    int threads;                //  the caller's OpenMP thread count
    int dim;
    size_t nlist;
    float *vectors;             //  copy of the first `count` vectors
    size_t count;
    size_t moved;               //  vectors of the old index in the new one
    FaissIndex *index;          //  the new index; NULL when training failed
    char err [256];
};

//  Trains and fills the new index from the copy.
static void
s_train (vmemory_train_t *self)
{
    char name [VMEMORY_INDEX_DESC_MAX + 1];
    snprintf (name, sizeof name, "IVF%zu,Flat", self->nlist);
    FaissIndex *index = NULL;
    if (faiss_index_factory (&index, self->dim, name, METRIC_INNER_PRODUCT) != 0) {
        snprintf (self->err, sizeof self->err, "FAISS refuses %s: %s", name, faiss_get_last_error ());
        return;
    }
    //  A strided sample, so old and new memories are both represented.
    size_t sample = self->nlist * VMEMORY_IVF_SAMPLE_PER_LIST;
    if (sample > self->count)
        sample = self->count;
    size_t row = (size_t) self->dim;
    float *x = malloc (sizeof (float) * row * sample);
    if (!x) {
        snprintf (self->err, sizeof self->err, "out of memory");
        faiss_Index_free (index);
        return;
    }
    for (size_t i = 0; i < sample; i++)
        memcpy (x + i * row, self->vectors + (i * self->count / sample) * row, sizeof (float) * row);
    int rc = faiss_Index_train (index, (faiss_idx_t) sample, x);
    free (x);
    if (rc != 0)
        snprintf (self->err, sizeof self->err, "FAISS cannot train %s: %s", name,
                  faiss_get_last_error ());
    else
    if (vmemory_index_tune (index, VMEMORY_INDEX_IVF, self->err, sizeof self->err) != 0)
        rc = -1;
    else
    if (faiss_Index_add (index, (faiss_idx_t) self->count, self->vectors) != 0) {
        snprintf (self->err, sizeof self->err, "FAISS add failed: %s", faiss_get_last_error ());
        rc = -1;
    }
    if (rc != 0)
        faiss_Index_free (index);
    else {
        self->index = index;
        self->moved = self->count;
    }
}

static void *
s_thread (void *arg)
{
    vmemory_train_t *self = (vmemory_train_t *) arg;
    //  OpenMP's thread count is per thread: a new one starts at the default.
    omp_set_num_threads (self->threads);
    s_train (self);
    atomic_store (&self->done, true);
    return NULL;
}

vmemory_train_t *
vmemory_train_start (FaissIndex *index, size_t nlist, bool background, char *err, size_t err_size)
{
    assert (index && nlist > 0);
    vmemory_train_t *self = calloc (1, sizeof *self);
    size_t count = (size_t) faiss_Index_ntotal (index);
    int dim = faiss_Index_d (index);
    float *vectors = self ? malloc (sizeof (float) * (size_t) dim * (count ? count : 1)) : NULL;
    if (!vectors) {
        free (self);
        snprintf (err, err_size, "out of memory for a copy of %zu vectors", count);
        return NULL;
    }
    self->vectors = vectors;
    self->count = count;
    self->dim = dim;
    self->nlist = nlist;
    self->threads = omp_get_max_threads ();
    atomic_init (&self->done, false);
    if (faiss_Index_reconstruct_n (index, 0, (faiss_idx_t) count, vectors) != 0) {
        snprintf (err, err_size, "FAISS cannot read the vectors back: %s", faiss_get_last_error ());
        vmemory_train_destroy (&self);
        return NULL;
    }
    if (background && pthread_create (&self->thread, NULL, s_thread, self) == 0) {
        self->threaded = true;
        return self;
    }
    s_train (self);             //  asked for, or no thread to be had
    atomic_store (&self->done, true);
    return self;
}

bool
vmemory_train_done (vmemory_train_t *self)
{
    assert (self);
    return atomic_load (&self->done);
}

static void
s_join (vmemory_train_t *self)
{
    if (self->threaded) {
        pthread_join (self->thread, NULL);
        self->threaded = false;
    }
}

int
vmemory_train_catch_up (vmemory_train_t *self, FaissIndex *index, size_t max,
                        char *err, size_t err_size)
{
    assert (self && index);
    s_join (self);
    if (!self->index) {
        snprintf (err, err_size, "%s", self->err);
        return -1;
    }
    //  The entries added to the old index since the start, read back into
    //  the copy's buffer (no longer needed) a chunk at a time.
    size_t total = (size_t) faiss_Index_ntotal (index);
    size_t chunk = self->count < S_CHUNK ? self->count : S_CHUNK;
    if (chunk == 0)
        chunk = 1;              //  the buffer has at least one row
    while (max > 0 && self->moved < total) {
        size_t n = total - self->moved;
        if (n > chunk)
            n = chunk;
        if (n > max)
            n = max;
        if (faiss_Index_reconstruct_n (index, (faiss_idx_t) self->moved, (faiss_idx_t) n,
                                       self->vectors) != 0
        ||  faiss_Index_add (self->index, (faiss_idx_t) n, self->vectors) != 0) {
            snprintf (err, err_size, "FAISS cannot move the newest vectors: %s",
                      faiss_get_last_error ());
            return -1;
        }
        self->moved += n;
        max -= n;
    }
    return self->moved == total ? 1 : 0;
}

FaissIndex *
vmemory_train_take (vmemory_train_t **self_p, char *desc)
{
    assert (self_p && *self_p && desc);
    vmemory_train_t *self = *self_p;
    assert (self->index);
    FaissIndex *fresh = self->index;
    self->index = NULL;
    snprintf (desc, VMEMORY_INDEX_DESC_MAX + 1, "IVF%zu,Flat", self->nlist);
    vmemory_train_destroy (self_p);
    return fresh;
}

void
vmemory_train_destroy (vmemory_train_t **self_p)
{
    assert (self_p);
    vmemory_train_t *self = *self_p;
    if (!self)
        return;
    s_join (self);
    if (self->index)
        faiss_Index_free (self->index);
    free (self->vectors);
    free (self);
    *self_p = NULL;
}
