// SPDX-License-Identifier: MIT
/*  journal - the broker's data directory: a snapshot plus the logs written
    after it, a lock, the fsync policy and compaction.

    Files in the directory (see docs/DURABILITY.md for why this design):
        LOCK            flock(2)ed while a broker uses the directory
        snapshot.<G>    the whole broker state before log <G> (written by
                        compaction; only ever appears complete, by rename)
        log.<G>         records appended after snapshot <G> (or from the
                        start when there is no snapshot), in jfile format
    Recovery reads the newest snapshot <G> and then every log <G>, <G+1>...
    in order. Compaction (Redis's AOF rewrite) starts log <G+1> and forks a
    child that writes snapshot <G+1> from the memory image it inherited;
    once it is renamed into place the files before <G+1> are removed. A
    crash at any point leaves either the old snapshot with all its logs, or
    the new one with its own: never a gap, never a record counted twice.

    Fsync policy (like Redis's appendfsync):
      ALWAYS    the records of a loop turn are fdatasync'ed before its
                replies go out (group commit: one sync per batch);
      EVERYSEC  a timer syncs once a second: a crash loses at most about the
                last second of acknowledged writes;
      NO        the kernel decides (typically within 30 s).
*/
#ifndef PARLEY_BROKER_JOURNAL_H
#define PARLEY_BROKER_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "jfile.h"
#include "metrics.h"

typedef enum {
    JOURNAL_FSYNC_ALWAYS = 0,
    JOURNAL_FSYNC_EVERYSEC,
    JOURNAL_FSYNC_NO
} journal_fsync_t;

typedef struct _journal_t journal_t;

//  Creates `dir` if needed and locks it. NULL with why (another broker
//  holds the lock, or the directory cannot be used).
journal_t *journal_open (const char *dir, journal_fsync_t fsync, uint64_t compact_min,
                         char *why, size_t why_size);
//  Syncs and closes (a running compaction child is waited for).
void journal_destroy (journal_t **self_p);
const char *journal_dir (journal_t *self);

//  Replays the snapshot's records (snapshot_fn, may see none) then the
//  logs' records (log_fn), cutting torn tails; then opens the log to
//  append to. Logs what it cut or repaired. -1 with why on corruption
//  (unless repair) or I/O errors.
int journal_recover (journal_t *self, bool repair, jfile_record_fn *snapshot_fn,
                     jfile_record_fn *log_fn, void *arg, char *why, size_t why_size);

//  Appends a record (its disk space reserved, its bytes gathered until
//  journal_flush). -1 (errno set, ENOSPC on a full disk) when it cannot
//  be appended: nothing of it stays.
int journal_append (journal_t *self, const void *payload, size_t size);
//  Makes sure a record of up to `size` bytes can be appended without
//  meeting a full disk (its blocks are allocated). -1 with errno (ENOSPC).
int journal_reserve (journal_t *self, size_t size);
//  Writes what journal_append gathered (one write(2)); the broker calls it
//  before any reply or event leaves and at the end of each loop turn, so
//  nothing is acknowledged or shown before it is in the page cache. 0, or
//  -1 with errno (the gathered records are then lost to the journal).
int journal_flush (journal_t *self);
//  True when replies must wait for journal_commit (ALWAYS with records
//  not yet synced).
bool journal_holds_replies (journal_t *self);
//  End of a loop turn: under ALWAYS, fdatasync. -1 if the sync failed.
int journal_commit (journal_t *self);
//  Once a second: EVERYSEC sync, and compaction bookkeeping.
void journal_tick (journal_t *self);

//  Compaction. The writer runs in a forked child with a copy of the
//  broker's memory and writes the whole state as records through
//  jfile_append; it returns 0 on success.
typedef int (journal_snapshot_fn) (jfile_t *file, void *arg);
//  True when the current log has outgrown the threshold (and no
//  compaction runs).
bool journal_wants_compaction (journal_t *self);
//  Starts a compaction now. -1 with why if it could not start.
int journal_compact (journal_t *self, journal_snapshot_fn *fn, void *arg,
                     char *why, size_t why_size);
//  Waits for a running compaction to finish (tests, shutdown).
void journal_compact_wait (journal_t *self);

typedef struct {
    uint64_t generation;
    uint64_t log_bytes;         //  current log
    uint64_t snapshot_bytes;    //  newest snapshot
    uint64_t compactions;       //  finished since start
    uint64_t write_errors;      //  appends that failed
    uint64_t sync_errors;
    uint64_t appended_bytes;    //  record bytes written (headers included) since start
} journal_stats_t;
void journal_stats (journal_t *self, journal_stats_t *stats);
//  How long the policy's syncs took (the EVERYSEC thread's, or ALWAYS's
//  once per loop turn); copied under the journal's mutex.
void journal_sync_latency (journal_t *self, metrics_histogram_t *histogram);

#endif
