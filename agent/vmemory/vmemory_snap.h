// SPDX-License-Identifier: MIT
/*  vmemory_snap - index.faiss, a snapshot of the FAISS index of a memory.

    DIR/index.faiss:
        header  magic "PMEMIDX\0" 8 | version u32 | dim u32 | log id u64
                | records covered u64 | checksum of the last covered log
                record u64 | index bytes u64 | FNV-1a 64 of the index bytes
                | factory length u32 | factory 64 | FNV-1a 64 of the above
        index   faiss_write_index output: the index of log records
                [0, covered)
    The snapshot is only a cache: the log is the truth. It is used when
    (log id, covered, last checksum) match the log; otherwise the caller
    rebuilds the index from the log. Written to a temp file, fsynced and
    renamed, so it is either the old snapshot or the new one. Its checksum
    is checked before FAISS reads a byte (FAISS trusts sizes in its files).
*/
#ifndef PARLEY_VMEMORY_SNAP_H
#define PARLEY_VMEMORY_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <faiss/c_api/Index_c.h>
#include "vmemory_file.h"

typedef struct {
    uint64_t log_id;            //  the log it belongs to
    uint64_t covered;           //  log records in the index
    uint64_t last_fnv;          //  checksum of log record covered - 1
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];
} vmemory_snap_info_t;

//  Writes DIR/index.faiss atomically. 0, or -1 with `err` filled.
int vmemory_snap_write (const char *dir, FaissIndex *index, const vmemory_snap_info_t *info,
                        char *err, size_t err_size);

//  Reads DIR/index.faiss: 0 with the index (ntotal == covered, dim and
//  metric checked) and `info`; -1 with `err` saying why it is unusable.
int vmemory_snap_read (const char *dir, int dim, size_t max_entries, vmemory_snap_info_t *info,
                       FaissIndex **index_p, char *err, size_t err_size);

#endif
