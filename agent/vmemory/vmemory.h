// SPDX-License-Identifier: MIT
/*  vmemory - an agent's private vector memory: FAISS index + texts.

    One vmemory_t per agent. Vectors go into a FAISS index of the kind
    the caller picks (flat, exact, the default; hnsw or ivf, approximate:
    vmemory_index.h says what each costs and why its parameters) with
    METRIC_INNER_PRODUCT; callers pass L2-normalised vectors (embedder.h),
    so scores are cosine similarities in [-1, 1]. The text of entry i is
    kept beside vector i (FAISS id == position in the text array).

    Persistence (when a directory is given), in DIR:
        memory.log    the source of truth, append-only: one record per
                      entry with its text AND its vector, each with a
                      length and a checksum (vmemory_log.h)
        index.faiss   a snapshot of the FAISS index naming how many log
                      records it covers and the checksum of the last one
                      (vmemory_snap.h); only a cache of the log
        lock          flock()ed while open: one process per memory dir
    vmemory_save appends the entries added since the last save and
    fdatasyncs: kilobytes, not the whole memory. It rewrites the snapshot
    only when the records it does not cover reach a quarter of the memory
    (vmemory.c says why a quarter). Load reads the snapshot if it matches
    the log, else rebuilds the index from the log's vectors, then adds the
    tail's vectors; the embedder is never needed. A torn tail (crash in
    the middle of an append) is copied to memory.log.torn-* and cut off
    with a warning; every earlier entry is kept. Corruption in the middle
    of the log, a bad header or another dimension is an error with a
    clear sentence (vmemory_open returns NULL); the caller decides -- the
    agent logs it, calls vmemory_move_aside() and starts fresh. Every
    count and length is checked against the file size before allocating.
    A memory in the old format (texts.pmem + index.faiss) is migrated on
    first open (vmemory_migrate.h); the old files stay as *.migrated.

    Privacy: the directory is created 0700 and the files 0600.

    Threads: FAISS uses OpenMP. vmemory_new() sets the OpenMP thread count
    to 1 once per process unless PARLEY_OMP_THREADS / OMP_NUM_THREADS says
    otherwise: searches are single queries (FAISS does not split one query
    across threads for Flat/HNSW), and many agents share few cores, where
    spinning OpenMP workers only steal CPU from each other.

    Memory cost per entry: the vector (4*dim bytes; hnsw adds about
    2*32*4 bytes of links, ivf 8 bytes of id map) + the text (one malloc, bytes + 1) + an
    8-byte pointer. Texts longer than max_text_bytes are cut (counted).
*/
#ifndef PARLEY_VMEMORY_H
#define PARLEY_VMEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vmemory_index.h"

typedef struct _vmemory_t vmemory_t;

#define VMEMORY_DEFAULT_TOP_K 3
#define VMEMORY_MAX_TOP_K 256
#define VMEMORY_DEFAULT_MAX_TEXT 4096
//  Hard ceilings a file may not exceed, whatever its header claims.
#define VMEMORY_MAX_ENTRIES (64u * 1024 * 1024)
#define VMEMORY_MAX_TEXT_LIMIT (1024 * 1024)

typedef struct {
    const char *dir;            //  memory directory; NULL = in RAM only
    int dim;                    //  vector dimension, required (> 0)
    vmemory_index_kind_t index; //  default VMEMORY_INDEX_FLAT
    size_t max_text_bytes;      //  longer texts are cut; default 4096
    size_t max_entries;         //  add fails beyond this; default 10M
    size_t snapshot_min;        //  uncovered log records before a snapshot
                                //  rewrite is considered; default 1024
} vmemory_options_t;

typedef struct {
    int64_t id;                 //  position of the entry
    float score;                //  inner product (cosine for unit vectors)
    const char *text;           //  owned by the memory; valid until destroy
} vmemory_hit_t;

void vmemory_options_default (vmemory_options_t *opts);

//  Opens the memory: loads DIR if it holds a memory, else starts empty
//  (creating DIR 0700 if needed). NULL with `err` filled if the files are
//  corrupt, truncated, of another dimension or locked by another process.
vmemory_t *vmemory_open (const vmemory_options_t *opts, char *err, size_t err_size);
void vmemory_destroy (vmemory_t **self_p);

//  Adds one entry. `vec` has dim floats. 0, or -1 with `err` filled (full,
//  non-finite vector, FAISS error). The entry is in RAM only until save
//  (its log record, text + vector, waits in a buffer).
int vmemory_add (vmemory_t *self, const float *vec, const char *text,
                 char *err, size_t err_size);

//  The longest text an add keeps (max_text_bytes).
size_t vmemory_max_text (vmemory_t *self);
//  How many of the `len` bytes of `text` an add keeps: all of them up to
//  max_text_bytes, else that many less the bytes of a UTF-8 sequence the
//  cut would split.
size_t vmemory_text_fit (vmemory_t *self, const char *text, size_t len);

//  Up to `top_k` best entries, best first, into `hits` (room for top_k).
//  Returns the number of hits (0 when empty), or -1 with `err` filled.
int vmemory_search (vmemory_t *self, const float *query, size_t top_k,
                    vmemory_hit_t *hits, char *err, size_t err_size);

//  Appends the entries added since the last save to the log and
//  fdatasyncs; sometimes rewrites the snapshot (see above). No-op (0) when
//  there is no directory or nothing was added since the last save. On -1
//  the entries stay buffered for the next save.
int vmemory_save (vmemory_t *self, char *err, size_t err_size);

size_t vmemory_count (vmemory_t *self);
//  Text of entry `id`, or NULL if out of range.
const char *vmemory_text (vmemory_t *self, size_t id);
//  The FAISS factory string of the index in use: "Flat", "HNSW32",
//  "IVF512,Flat" (an ivf memory is "Flat" until trained).
const char *vmemory_factory (vmemory_t *self);
vmemory_index_kind_t vmemory_index_kind (vmemory_t *self);
//  IVF trainings done since open (the first one and retrains).
uint64_t vmemory_trainings (vmemory_t *self);
//  ivf: waits for a training under way (vmemory_add starts them in a
//  thread) and applies it, and does any further one now due, so the
//  index is what the memory's size calls for. Nothing for other kinds.
void vmemory_train_wait (vmemory_t *self);
//  Texts cut to max_text_bytes since open.
uint64_t vmemory_truncated (vmemory_t *self);

//  Bytes cut from a torn log tail when this memory was opened (0: none).
uint64_t vmemory_torn_bytes (vmemory_t *self);
//  Log records the snapshot on disk covers.
uint64_t vmemory_snapshot_covers (vmemory_t *self);

//  Renames the memory files in `dir` (memory.log, index.faiss, an old
//  texts.pmem, embedder.id) to NAME.bad-<unix seconds>, or
//  NAME.bad-<seconds>-<n> when that set exists already, so a fresh memory
//  can start there, keeping the bad ones for a post-mortem. Never replaces
//  a file. 0 on success (also when there was nothing to move), -1 with
//  `err` filled.
int vmemory_move_aside (const char *dir, char *err, size_t err_size);

//  Sets the OpenMP thread count FAISS uses (process-wide). vmemory_open
//  calls this once with the default described above.
void vmemory_set_threads (int threads);

#endif
