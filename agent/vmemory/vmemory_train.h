// SPDX-License-Identifier: MIT
/*  vmemory_train - trains an ivf memory's IVF index away from the step.

    k-means over tens of thousands of vectors takes seconds (longer than
    the broker's liveness window on a loaded machine), so an agent must
    not do it between two steps. vmemory_train_start copies the vectors
    of the index in use, and a thread trains a new IVF index on a strided
    sample of them (k-means, 10 iterations: FAISS's default for IVF) and
    adds them all, while the memory goes on adding to and searching the
    old index. vmemory_train_finish, once the thread is done, adds to the
    new index the vectors the old one got meanwhile and hands it over.

    Honest costs: the copy (4 * dim bytes per entry: 100 MB at 100k
    entries of dim 256) is made in the caller's thread (a memcpy-like
    pass, tens of ms at 100k) and held until the finish; the thread costs
    O(sample * nlist * dim) + O(N * nlist * dim) of one core. Its OpenMP
    thread count is the caller's (vmemory.h).
*/
#ifndef PARLEY_VMEMORY_TRAIN_H
#define PARLEY_VMEMORY_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <faiss/c_api/Index_c.h>

typedef struct _vmemory_train_t vmemory_train_t;

//  Starts training an IVF index of `nlist` lists for the vectors `index`
//  holds now: in a thread when `background`, else before returning. NULL
//  with `err` filled (out of memory, FAISS cannot read the vectors, no
//  thread).
vmemory_train_t *vmemory_train_start (FaissIndex *index, size_t nlist, bool background,
                                      char *err, size_t err_size);

//  True once the training has ended (well or not): finish will not wait.
bool vmemory_train_done (vmemory_train_t *self);

//  Waits for the training, adds the vectors `index` (the one given to
//  start, grown since) got after the start, and returns the new index,
//  tuned for search, with its descriptor in `desc`
//  (VMEMORY_INDEX_DESC_MAX + 1 bytes). NULL with `err` filled when the
//  training or the adds failed. Destroys the trainer either way.
FaissIndex *vmemory_train_finish (vmemory_train_t **self_p, FaissIndex *index, char *desc,
                                  char *err, size_t err_size);

//  Waits for the thread and throws its work away.
void vmemory_train_destroy (vmemory_train_t **self_p);

#endif
