// SPDX-License-Identifier: MIT
/*  vmemory_migrate - converts an old-format memory (texts.pmem +
    index.faiss, vmemory_file.h) to the log (vmemory_log.h), on first open.

    The vectors come back from the old index with faiss reconstruct (exact
    for Flat and HNSWn,Flat, the factories vmemory offers). An index that
    cannot reconstruct is an error and the old files are left untouched:
    vmemory has no embedder to re-embed the texts with (the agent's may be
    remote), so it does not guess.

    Order, so a crash at any point loses nothing:
      1. read and verify the old files (checksums, sizes);
      2. write every record to memory.log.tmp in chunks, fsync, rename to
         memory.log, fsync the dir: the log is durable;
      3. only then rename index.faiss and texts.pmem to *.migrated (kept,
         for a post-mortem or a downgrade; delete them by hand);
      4. write the old index, already in RAM, as the first snapshot.
    A crash between 2 and 3 leaves memory.log beside the old files: the
    next open sees the log, finishes step 3 and rebuilds the index from
    the log (vmemory_migrate_finish).
*/
#ifndef PARLEY_VMEMORY_MIGRATE_H
#define PARLEY_VMEMORY_MIGRATE_H

#include <stddef.h>
#include "vmemory_file.h"
#include "vmemory_log.h"

//  Steps 1-4. On success *log_p is the new log and `old` holds the texts
//  and the index (the caller takes both). -1 with `err` filled otherwise.
int vmemory_migrate (const char *dir, int dim, size_t max_entries, vmemory_log_t **log_p,
                     vmemory_file_loaded_t *old, char *err, size_t err_size);

//  Step 3 for a dir that has memory.log and still an old texts.pmem.
int vmemory_migrate_finish (const char *dir, char *err, size_t err_size);

#endif
