// SPDX-License-Identifier: MIT
/*  vmemory_log - the append-only memory log, source of truth of a memory.

    DIR/memory.log:
        header  magic "PMEMLOG\0" 8 | version u32 | dim u32 | log id u64
                | factory length u32 | factory 64 | FNV-1a 64 of the above
        records record i = length u32 | seq u64 (= i) | batch u64 (seq of
                the first record of the save that wrote it) | text (length
                bytes) | vector (dim little-endian float32) | FNV-1a 64 of
                all of the record's bytes before it
    All integers little-endian. The record carries the vector so a load
    never needs the embedder (it may be remote, or not deterministic). The
    log id is random per log: a snapshot names (log id, records covered,
    checksum of the last covered record), so a snapshot of another log or
    of an older/longer life of this one is recognised as not matching.

    Appends are buffered in RAM (vmemory_log_append) and written with one
    pwrite + fdatasync by vmemory_log_sync: a save costs the new records'
    bytes, not the memory's size. The first sync of a new log writes
    header + records to memory.log.tmp, fsyncs and renames it, so a log
    never exists without a valid header.

    Load (vmemory_log_load) maps the file read-only and checks every record
    (lengths against the file size before anything is allocated, sequence,
    checksum). At the first bad record it decides:
      - a valid record of a later save follows it (found by scanning
        forward for a record with later sequence and batch numbers and a
        good checksum): the bad record was fdatasynced before that save,
        so the log is corrupt in the middle -> error; the caller moves the
        files aside;
      - otherwise: a torn tail (a crash mid-append; valid records of the
        same unfinished save may follow, its pages land in any order). The bytes
        from the bad record on are copied to memory.log.torn-<time>-<offset>,
        the log is truncated there, and a warning says so. Earlier records
        are intact. (Corruption of the very last record looks the same and
        is handled the same way: it is copied aside, never silently lost.)
*/
#ifndef PARLEY_VMEMORY_LOG_H
#define PARLEY_VMEMORY_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <faiss/c_api/Index_c.h>

typedef struct _vmemory_log_t vmemory_log_t;

//  What vmemory_log_load found.
typedef struct {
    uint64_t want;              //  in: the record whose checksum to report
    char **texts;               //  out: texts [i] of record i, caller owns
    size_t count;               //  out: valid records
    uint64_t want_fnv;          //  out: checksum of record `want` (if < count)
    uint64_t torn_bytes;        //  out: bytes cut from a torn tail (0: none)
} vmemory_log_scan_t;

//  A new empty log for DIR; nothing is written before the first sync.
vmemory_log_t *vmemory_log_new (const char *dir, int dim, const char *factory);
void vmemory_log_destroy (vmemory_log_t **self_p);
//  A new log that syncs to memory.log.tmp and becomes memory.log only
//  when published (the migration writes a whole memory that way, in
//  chunks, so a crash never leaves a partial log under the real name).
vmemory_log_t *vmemory_log_new_staged (const char *dir, int dim, const char *factory);
//  Syncs, then fsyncs and renames a staged log to memory.log (durable).
int vmemory_log_publish (vmemory_log_t *self, char *err, size_t err_size);

//  Opens DIR/memory.log and checks it as described above; texts go to
//  `scan`. 0, or -1 with `err` filled and nothing left allocated.
int vmemory_log_load (const char *dir, int dim, size_t max_entries, vmemory_log_t **self_p,
                      vmemory_log_scan_t *scan, char *err, size_t err_size);
void vmemory_log_scan_free (vmemory_log_scan_t *scan);

//  Adds the vectors of records [from, count) to `index`, in batches.
int vmemory_log_add_vectors (vmemory_log_t *self, uint64_t from, FaissIndex *index,
                             char *err, size_t err_size);

//  Buffers one record (text of `len` bytes, dim floats).
int vmemory_log_append (vmemory_log_t *self, const char *text, size_t len, const float *vec,
                        char *err, size_t err_size);
//  Forgets the record just buffered (its FAISS add failed).
void vmemory_log_drop_last (vmemory_log_t *self);
//  Writes the buffered records and fdatasyncs. On failure the file is cut
//  back to its last durable size and the records stay buffered.
int vmemory_log_sync (vmemory_log_t *self, char *err, size_t err_size);

//  Records buffered, not yet durable.
uint64_t vmemory_log_pending (vmemory_log_t *self);
//  Checksum of the last durable record (0 when none).
uint64_t vmemory_log_last_fnv (vmemory_log_t *self);
uint64_t vmemory_log_id (vmemory_log_t *self);
//  The FAISS factory string the header names: the index the memory had
//  when its log was created. Informational only: each run picks its own
//  index kind (vmemory_index.h) and rebuilds from the log if it differs.
const char *vmemory_log_factory (vmemory_log_t *self);

#endif
