// SPDX-License-Identifier: MIT
/*  vmemory_train - trains an ivf memory's IVF index away from the step.

    k-means over tens of thousands of vectors takes seconds (longer than
    the broker's liveness window on a loaded machine), so an agent must
    not do it between two steps. vmemory_train_start copies the vectors
    of the index in use, and a thread trains a new IVF index on a strided
    sample of them (k-means, 10 iterations: FAISS's default for IVF) and
    adds them all, while the memory goes on adding to and searching the
    old index. Once the thread is done, vmemory_train_catch_up adds to the
    new index the vectors the old one got meanwhile, a few per call (an
    agent that stepped fast during a long training may have thousands,
    and each costs a search of the nlist centroids), and
    vmemory_train_take hands it over when it holds them all.

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

//  Waits for the training, then adds to the new index up to `max` of the
//  vectors `index` (the one given to start, grown since) got after the
//  start. 1 when the new index holds all of them (take it), 0 when more
//  remain (call again), -1 with `err` filled when the training or an add
//  failed (destroy the trainer).
int vmemory_train_catch_up (vmemory_train_t *self, FaissIndex *index, size_t max,
                            char *err, size_t err_size);

//  The new index, tuned for search, after catch_up said 1; its
//  descriptor into `desc` (VMEMORY_INDEX_DESC_MAX + 1 bytes). Destroys
//  the trainer.
FaissIndex *vmemory_train_take (vmemory_train_t **self_p, char *desc);

//  Waits for the thread and throws its work away.
void vmemory_train_destroy (vmemory_train_t **self_p);

#endif
