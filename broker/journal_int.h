// SPDX-License-Identifier: MIT
/*  journal_int - what journal.c (directory, recovery, appends, commit),
    journal_sync.c (the syncs and the journal's health) and
    journal_compact.c (the snapshot child and its installation) share.
    Not part of the journal's interface.
*/
#ifndef PARLEY_BROKER_JOURNAL_INT_H
#define PARLEY_BROKER_JOURNAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "journal.h"

struct _journal_t {
    char *dir;
    int lock_fd;
    journal_fsync_t fsync;
    uint64_t compact_min;       //  a log smaller than this is never compacted
    uint64_t generation;        //  of the log appended to
    uint64_t snapshot_gen;      //  newest complete snapshot (0: none)
    jfile_t *log;
    journal_stats_t stats;
    uint64_t appended_seq;      //  the last record's number (loop thread)
    //  Health: written under the mutex (by the loop and the EVERYSEC
    //  thread), read anywhere. fail_epoch counts failures: a snapshot heals
    //  only if none happened since its fork.
    atomic_bool healthy;
    atomic_int health_error;
    atomic_uint_fast64_t durable_seq;
    atomic_uint_fast64_t flushed_seq;   //  written to the current log's file
    uint64_t fail_epoch;
    uint64_t heal_failures;     //  heal attempts that failed in a row
    int64_t heal_tried_ms;      //  the last attempt (monotonic)
    journal_snapshot_fn *heal_fn;
    void *heal_arg;
    //  Compaction child.
    pid_t child;                //  0 when none
    uint64_t child_gen;         //  the snapshot it writes
    uint64_t child_epoch;       //  fail_epoch at its fork
    uint64_t child_seq;         //  appended_seq at its fork: what it holds
    int64_t child_started_us;
    long child_faults_before;   //  the broker's page faults at its fork
    int64_t test_delay_ms;      //  test hook: the child waits this long first
    //  EVERYSEC: a thread syncs once a second, as Redis does, so a slow
    //  fdatasync never stalls the loop. It syncs its own dup of the log's
    //  descriptor; the loop swaps that under the mutex when the log changes.
    pthread_t syncer;
    bool syncer_running;
    pthread_mutex_t mutex;
    pthread_cond_t wake;        //  on CLOCK_MONOTONIC
    bool stopping;
    int sync_fd;
    char *sync_path;            //  for the thread's log line
    //  What a switch of logs leaves to be synced before the new log's
    //  records count (mutex): the old log's unsynced tail (EVERYSEC: its
    //  descriptor, synced by the thread) and the new log's name (the
    //  directory; ALWAYS and EVERYSEC). Done by whoever syncs next, off the
    //  loop under EVERYSEC; NO leaves both to the compaction child.
    int old_fd;
    bool dir_pending;
    atomic_bool unsynced;
    atomic_uint_fast64_t thread_sync_errors;
    //  Sync durations (metrics): written by whichever thread syncs, under
    //  the mutex; an uncontended lock costs nothing next to an fdatasync.
    metrics_histogram_t sync_latency;
};

//  journal_sync.c: a sync's duration into the histogram (mutex held).
void journal_observe_sync (journal_t *self, int64_t started_us);
//  The EVERYSEC thread, following the current log.
int journal_syncer_start (journal_t *self);
void journal_syncer_stop (journal_t *self);

//  "<dir>/<kind>.<gen>".
void journal_path (journal_t *self, char *buf, size_t size, const char *kind, uint64_t gen);
//  fsync of the directory (names created, renamed or removed): 0 or -1
//  with errno.
int journal_sync_dir (journal_t *self);
//  A failed sync or write (errno `error`; `what` says of what): the
//  journal is unhealthy. Logged on the change from healthy. Call with
//  the mutex held.
void journal_fail_locked (journal_t *self, int error, const char *what);
void journal_fail (journal_t *self, int error, const char *what);
//  Records up to `seq` are on disk, if no failure happened since
//  `epoch` and the journal is healthy. Mutex held.
void journal_advance_locked (journal_t *self, uint64_t seq, uint64_t epoch);
//  Points the EVERYSEC thread at the current log (after a switch); with
//  `keep_old` the log it synced so far is to be synced once more, before
//  the new one (the switch's pending work).
void journal_syncer_follow (journal_t *self, bool keep_old);
//  The switch's pending work, done in the calling thread (without the
//  mutex): 0, or -1 with errno and *what (static text).
int journal_presync (journal_t *self, const char **what);
//  Removes snapshots and logs older than `gen`, and (with `temporaries`,
//  logged) temporary files. Without logging it runs in the compaction
//  child.
void journal_remove_before (journal_t *self, uint64_t gen, bool temporaries);
//  journal_compact.c: reaps a finished child (blocking or not) and
//  installs its snapshot; heals the journal when it may.
void journal_reap (journal_t *self, bool block);

#endif
