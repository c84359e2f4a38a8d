// SPDX-License-Identifier: MIT
/*  vmemory_index - the kinds of FAISS index a memory can search with,
    their parameters, and IVF's training.

    Three kinds, all on METRIC_INNER_PRODUCT over unit vectors:
      flat  exact: every query scans every vector, O(N * dim). The
            default: at the sizes of a team's memories (hundreds to a few
            thousand entries) it costs well under a millisecond and gives
            the true nearest neighbours, which the approximate kinds only
            probably do.
      hnsw  a graph (HNSW, M = 32 links per node, efConstruction = 40,
            efSearch = 128): a query visits a few thousand vectors
            whatever N is. No training; an add costs a graph insertion
            (0.15 ms at 10k entries of dim 256 here, up to ~1 ms at 100k
            on a loaded machine, against 3 us for flat) and each entry
            about 2 * M * 4 bytes of links beside its vector.
      ivf   inverted lists (IVFn,Flat): k-means cells, a query scans the
            nprobe cells nearest to it. It needs training, so it starts
            as Flat and is trained once the memory holds
            VMEMORY_IVF_TRAIN_MIN vectors; nlist is the largest power of
            two <= min(2 * sqrt(N), N / 39) (39 points per cell is FAISS's
            own floor for k-means), nprobe = max(8, nlist / 16). It is
            retrained, from its own vectors, when the N it holds calls
            for twice its nlist (N about x4). Training runs in a thread
            while the memory goes on searching the old index
            (vmemory_train.h).
    Why those numbers (measured with bench_vmemory on the benchmark's
    memories, which repeat the same words a lot, and on 30k of them for
    HNSW's): M 16 costs more per query for the same recall; efConstruction
    80 quadruples the add and does not raise recall there; efSearch 128
    against 64 costs ~1.5x per query (still a fraction of a millisecond)
    for a few points of recall (0.964 -> 0.974 at 30k, 0.906 -> 0.966 at
    100k). For ivf, nprobe nlist / 16 kept recall@3 at 0.995 (10k) and
    1.000 (100k), and halves the query of nlist / 8 (2.6 -> 1.1 ms at
    100k). docs/MEMORY.md has the figures.

    A descriptor names the index a memory holds, as FAISS's factory string
    ("Flat", "HNSW32", "IVF512,Flat"); the snapshot file records it, so a
    snapshot of another kind (the kind was switched between runs) is not
    used and the index is rebuilt from the log.
*/
#ifndef PARLEY_VMEMORY_INDEX_H
#define PARLEY_VMEMORY_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <faiss/c_api/Index_c.h>

typedef enum {
    VMEMORY_INDEX_FLAT = 0,
    VMEMORY_INDEX_HNSW,
    VMEMORY_INDEX_IVF
} vmemory_index_kind_t;

#define VMEMORY_HNSW_M 32
#define VMEMORY_HNSW_EF_CONSTRUCTION 40
#define VMEMORY_HNSW_EF_SEARCH 128
#define VMEMORY_IVF_TRAIN_MIN 4096
#define VMEMORY_IVF_POINTS_PER_LIST 39
#define VMEMORY_IVF_MAX_NLIST 4096
#define VMEMORY_IVF_NPROBE_DIVISOR 16
//  Training sample: at most this many vectors per list (k-means cost is
//  sample * nlist * dim * 10 iterations).
#define VMEMORY_IVF_SAMPLE_PER_LIST 64
#define VMEMORY_INDEX_DESC_MAX 64

//  "flat", "hnsw" or "ivf", in any case. false for anything else.
bool vmemory_index_kind_parse (const char *name, vmemory_index_kind_t *kind);
const char *vmemory_index_kind_name (vmemory_index_kind_t kind);

//  A new empty index of `kind` (ivf: Flat until trained), its descriptor
//  into `desc` (VMEMORY_INDEX_DESC_MAX + 1 bytes). NULL with `err` filled.
FaissIndex *vmemory_index_new (vmemory_index_kind_t kind, int dim, char *desc,
                               char *err, size_t err_size);

//  True when an index described by `desc` serves `kind` (an ivf memory
//  takes a Flat or any IVFn,Flat one).
bool vmemory_index_fits (vmemory_index_kind_t kind, const char *desc);

//  Sets the search parameters of `kind` on a new or loaded index
//  (efSearch, nprobe); nothing for flat. 0, or -1 with `err` filled.
int vmemory_index_tune (FaissIndex *index, vmemory_index_kind_t kind, char *err, size_t err_size);

//  The nlist an IVF index over `count` vectors should have (0: too few,
//  stay Flat).
size_t vmemory_index_ivf_nlist (size_t count);
//  The nlist of `index` (0 when it is not IVF).
size_t vmemory_index_nlist (FaissIndex *index);

#endif
