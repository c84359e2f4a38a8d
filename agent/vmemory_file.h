/*  vmemory_file - the on-disk format of an agent's vector memory.

    Used by vmemory.c only. In DIR:
        index.faiss   faiss_write_index output
        texts.pmem    header (magic "PMEMTXT\0", version, dim, count, sizes,
                      FNV-1a 64 checksums of the payload and of index.faiss,
                      header checksum) + length-prefixed text records
        lock          flock()ed while open: one process per memory dir
    Save writes both files to temp names, fsyncs, then renames (index
    first, texts last); texts.pmem holds the index checksum, so a crash
    between the two renames is caught on load as a mismatch, never
    half-loaded. Load validates every count against the real file size
    before allocating and checks both checksums before FAISS reads a byte.
    Files are 0600, the directory 0700.

    Left for later (the 100k-memory save cost): make saves incremental.
    The sound design is an append-only log as the source of truth, each
    record = length + checksum + text + its vector (so a load never needs
    the embedder, which may be a remote server or not deterministic), with
    the FAISS index only a snapshot that names how many log records it
    covers (and the checksum of the last one). A save appends the new
    records and fdatasyncs (kilobytes, not 100 MB); the index is rewritten
    only when the uncovered tail passes a fraction of the total (amortised
    O(1) per add). A load reads the snapshot if it matches the log, else
    rebuilds from the log, then adds the tail's vectors; a torn last batch
    (bad checksum or short record) is copied aside and truncated with a
    warning. Not done here yet: it changes the format and needs a
    migration of texts.pmem memories.
*/
#ifndef PARLEY_VMEMORY_FILE_H
#define PARLEY_VMEMORY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <faiss/c_api/Index_c.h>

#define VMEMORY_FILE_FACTORY_MAX 64

//  What a load gives back; the caller takes ownership (or frees it with
//  vmemory_file_loaded_free).
typedef struct {
    char **texts;               //  texts [i] belongs to FAISS id i
    size_t count;
    FaissIndex *index;
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];
} vmemory_file_loaded_t;

//  What a save writes.
typedef struct {
    FaissIndex *index;
    char *const *texts;
    size_t count;
    int dim;
    const char *factory;
} vmemory_file_save_t;

//  mkdir -p DIR with mode 0700 for what it creates (warns if DIR is wider).
int vmemory_file_make_dir (const char *dir, char *err, size_t err_size);
//  Opens and flock()s DIR/lock; *fd_p is the descriptor (close releases it).
int vmemory_file_lock (const char *dir, int *fd_p, char *err, size_t err_size);
//  True if DIR/NAME exists.
bool vmemory_file_exists (const char *dir, const char *name);
#define VMEMORY_FILE_INDEX "index.faiss"
#define VMEMORY_FILE_TEXTS "texts.pmem"

//  Loads DIR (both files must exist). 0, or -1 with `err` filled and
//  nothing left allocated.
int vmemory_file_load (const char *dir, int dim, size_t max_entries,
                       vmemory_file_loaded_t *out, char *err, size_t err_size);
void vmemory_file_loaded_free (vmemory_file_loaded_t *loaded);

//  Writes both files atomically (see above). 0, or -1 with `err` filled.
int vmemory_file_save (const char *dir, const vmemory_file_save_t *what,
                       char *err, size_t err_size);

#endif
