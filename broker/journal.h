// SPDX-License-Identifier: MIT
/*  journal - the broker's data directory: a snapshot plus the logs written
    after it, a lock, the fsync policy, compaction, and the journal's
    health.

    Files in the directory (see docs/DURABILITY.md for why this design):
        LOCK            flock(2)ed while a broker uses the directory
        snapshot.<G>    the whole broker state before log <G> (written by
                        compaction; only ever appears complete, by rename)
        snapshot.<G>.tmp  a snapshot being written (removed at start)
        log.<G>         records appended after snapshot <G> (or from the
                        start when there is no snapshot), in jfile format
    Recovery reads the newest snapshot <G> and then every log <G>, <G+1>...
    in order, however many there are. Compaction (Redis's AOF rewrite)
    starts log <G+1> and forks a child that writes snapshot <G+1> from the
    memory image it inherited, renames it into place, syncs the directory
    and removes the files before <G+1>; the loop only forks (see
    journal_compact.c for what it costs). The old log's unsynced tail and
    the new log's name are synced before any record of the new log counts
    as durable. A crash at any point leaves either the old snapshot with
    all its logs, or the new one with its own: never a gap, never a record
    counted twice.

    The compaction child keeps nothing of the broker but memory: right
    after fork it closes every descriptor but stdin, stdout and stderr
    (the LOCK's, the listening sockets', the logs'), asks the kernel to
    kill it when the broker dies (PR_SET_PDEATHSIG), and opens only its
    snapshot file. So a broker killed mid-compaction can be restarted at
    once: no orphan holds the lock or a port, and the new broker removes
    the orphan's temporary file.

    Fsync policy (like Redis's appendfsync):
      ALWAYS    the records of a loop turn are fdatasync'ed before its
                replies go out (group commit: one sync per batch);
      EVERYSEC  a thread syncs once a second (its wait is on the monotonic
                clock, so setting the wall clock back does not stop it): a
                crash of the machine loses at most about the last second
                of acknowledged writes;
      NO        the kernel decides (typically within 30 s).

    Sequence numbers. Every appended record gets the next number:
    journal_appended_seq () is the last one. journal_durable_seq () is the
    last one known to be on disk: advanced by a successful fdatasync of
    the log (journal_commit under ALWAYS, the EVERYSEC thread, compaction's
    sync of the old log, close) to what had been written before it began,
    and by a synced snapshot to what it holds. Both only grow. The edge
    tags what a turn produced (replies, events, pushes) with
    journal_appended_seq () after the turn's appends and releases it once
    journal_durable_seq () reaches the tag (under ALWAYS journal_commit
    brings it there at once when the disk is well; EVERYSEC and NO
    release after journal_flush, by their promise).

    Health. A failed sync (of either policy, of the log, of a snapshot or
    of the directory) or a failed write makes the journal unhealthy: the
    bytes written since the last good sync cannot be trusted any more
    (after a failed fdatasync the kernel may drop the dirty pages and
    still report the next sync as successful), so no later sync of that
    file counts. journal_healthy () is then false, the failure is counted
    (sync_errors or write_errors) and logged once with its reason, and
    journal_durable_seq () stops. The edge refuses changes (ERROR STORAGE;
    reads go on) and holds what it has not released. The journal heals
    itself only by writing the whole state again, as compaction does: the
    state in memory is the truth. journal_tick starts such a snapshot at
    most once a second (with the writer given to journal_set_snapshot)
    into a new generation; once it is renamed into place, the directory
    and the new log synced, and no failure happened since its fork, the
    journal is healthy again (logged), and journal_durable_seq () covers
    every record appended so far: the held replies can go. The old files,
    with their untrusted tails, are removed as after any compaction.

    Threads: everything runs on the broker's loop thread, but the EVERYSEC
    thread; journal_healthy, journal_durable_seq and journal_health_error
    may be called from any thread.
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
//  Syncs and closes (a running compaction child is waited for). When the
//  journal is unhealthy and a snapshot writer is set, one last snapshot
//  of the whole state is written first, so a clean stop loses nothing.
void journal_destroy (journal_t **self_p);
const char *journal_dir (journal_t *self);

//  Replays the snapshot's records (snapshot_fn, may see none) then the
//  logs' records (log_fn), cutting damaged tails (a torn record, zeros,
//  garbage: jfile.h); removes stale temporary files; then opens the log
//  to append to. Logs what it cut or repaired. -1 with why on corruption
//  (unless repair) or I/O errors.
int journal_recover (journal_t *self, bool repair, jfile_record_fn *snapshot_fn,
                     jfile_record_fn *log_fn, void *arg, char *why, size_t why_size);

//  Appends a record (its disk space reserved, its bytes gathered until
//  journal_flush); it gets the next sequence number. -1 (errno set,
//  ENOSPC on a full disk) when it cannot be appended: nothing of it
//  stays, and no number is used.
int journal_append (journal_t *self, const void *payload, size_t size);
//  The same, the record given in parts held end to end (jfile.h).
int journal_append_parts (journal_t *self, const jfile_part_t *parts, size_t count);
//  Makes sure a record of up to `size` bytes can be appended without
//  meeting a full disk (its blocks are allocated). -1 with errno (ENOSPC).
int journal_reserve (journal_t *self, size_t size);
//  Writes what journal_append gathered (one write(2)); the broker calls it
//  before any reply or event leaves and at the end of each loop turn, so
//  nothing is acknowledged or shown before it is in the page cache. 0, or
//  -1 with errno (the gathered records are then lost to the file, and the
//  journal is unhealthy until a snapshot holds them).
int journal_flush (journal_t *self);
//  True when replies must wait for journal_commit (ALWAYS with records
//  not yet synced).
bool journal_holds_replies (journal_t *self);
//  End of a loop turn: under ALWAYS, fdatasync. 0 when every record
//  appended so far is durable (journal_durable_seq () ==
//  journal_appended_seq ()), or under the other policies; -1 if the sync
//  failed now or the journal is unhealthy (errno EIO then, no sync is
//  tried).
int journal_commit (journal_t *self);
//  Once a second: the EVERYSEC thread's failures are counted and logged,
//  a finished compaction is installed, and an unhealthy journal starts a
//  snapshot to heal (at most once a second).
void journal_tick (journal_t *self);

//  Health and durability (see the doc block).
bool journal_healthy (journal_t *self);
//  The errno of the failure that made the journal unhealthy; 0 when
//  healthy.
int journal_health_error (journal_t *self);
//  The number of the last record appended (0: none yet).
uint64_t journal_appended_seq (journal_t *self);
//  The number of the last record known to be on disk.
uint64_t journal_durable_seq (journal_t *self);

//  Compaction. The writer runs in a forked child with a copy of the
//  broker's memory and writes the whole state as records through
//  jfile_append; it returns 0 on success. It must see every appended
//  record's effect: compaction runs between operations (journal_tick and
//  journal_compact are called outside a request's handling).
typedef int (journal_snapshot_fn) (jfile_t *file, void *arg);
//  The writer journal_tick uses to heal an unhealthy journal (and
//  journal_destroy for its last snapshot). Without one, only
//  journal_compact can heal it.
void journal_set_snapshot (journal_t *self, journal_snapshot_fn *fn, void *arg);
//  True when the current log has outgrown the threshold (and no
//  compaction runs).
bool journal_wants_compaction (journal_t *self);
//  Starts a compaction now. -1 with why if it could not start. When the
//  old log cannot be synced the journal becomes unhealthy and the
//  compaction goes on, as the snapshot that heals it.
int journal_compact (journal_t *self, journal_snapshot_fn *fn, void *arg,
                     char *why, size_t why_size);
//  Waits for a running compaction to finish (tests, shutdown).
void journal_compact_wait (journal_t *self);

typedef struct {
    uint64_t generation;
    uint64_t log_bytes;         //  current log
    uint64_t snapshot_bytes;    //  newest snapshot
    uint64_t compactions;       //  finished since start
    uint64_t write_errors;      //  appends and writes that failed
    uint64_t sync_errors;       //  syncs that failed (log, snapshot, directory)
    uint64_t appended_bytes;    //  record bytes written (headers included) since start
    bool healthy;               //  journal_healthy
    uint64_t heals;             //  snapshots that made the journal healthy again
    //  The last compaction: what it cost the loop.
    uint64_t start_us;          //  starting it: the old log's sync, the new log, the fork
    uint64_t fork_us;           //  the fork(2) call (page tables)
    uint64_t install_us;        //  installing the snapshot: rename, directory sync, removals
    uint64_t compaction_ms;     //  from fork to the snapshot in place
    uint64_t compaction_faults; //  the broker's page faults meanwhile (mostly copy-on-write)
} journal_stats_t;
void journal_stats (journal_t *self, journal_stats_t *stats);
//  How long the policy's syncs took (the EVERYSEC thread's, or ALWAYS's
//  once per loop turn); copied under the journal's mutex.
void journal_sync_latency (journal_t *self, metrics_histogram_t *histogram);

#endif
