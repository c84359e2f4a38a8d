// SPDX-License-Identifier: MIT
/*  journal_compact - compaction: a forked child writes the whole state
    into snapshot <G+1> while the loop goes on appending to log <G+1>.
    The same snapshot heals an unhealthy journal (journal.h).

    What the loop pays, and only that: creating log <G+1> (no sync) and
    fork(2), which copies the page tables (30 to 70 ms for a broker of
    830 MB resident on a 2-core VM, 1 to 4 ms when its heap is on
    transparent huge pages); then, while the child lives, a
    copy-on-write fault for every page the loop writes first; and a
    waitpid when the child is done. Everything slow on a disk happens
    elsewhere: the old log's unsynced tail and the new log's name are
    synced by whoever syncs the log next (the EVERYSEC thread, ALWAYS's
    commit at the end of a turn, where its old log is already clean) or,
    under NO, by the child; the child writes and syncs the snapshot,
    renames it into place, syncs the directory and removes the files it
    replaces (unlinking a large file frees its blocks there and then: 60
    to 170 ms for a 50 MB log on a busy disk, when the loop did it). Each
    compaction logs its costs (journal_stats: start_us, fork_us,
    compaction_faults, install_us). The child runs at nice 19, so on a
    machine with one free core the loop keeps it.

    The child's exit status says how far it got: 0 done, 1 the snapshot
    could not be written, 3 the broker died before it started, 4 the old
    log or the directory could not be synced (NO), 5 the rename failed,
    6 the directory could not be synced after the rename.
*/
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "journal_int.h"
#include "pclock.h"
#include "plog.h"

static long
s_page_faults (void)
{
    struct rusage usage;
    return getrusage (RUSAGE_SELF, &usage) == 0 ? usage.ru_minflt + usage.ru_majflt : 0;
}

//  Closes every descriptor from `from` on: close_range(2), or one by one
//  from /proc/self/fd on kernels before 5.9.
static void
s_close_from (int from)
{
    if (close_range ((unsigned) from, ~0u, 0) == 0)
        return;
    DIR *handle = opendir ("/proc/self/fd");
    if (!handle)
        return;
    int own = dirfd (handle);
    struct dirent *entry;
    //  Closing while reading the directory is allowed; the listing may
    //  then skip entries, so read it again until nothing is left.
    bool closed = true;
    while (closed) {
        closed = false;
        rewinddir (handle);
        while ((entry = readdir (handle))) {
            int fd = atoi (entry->d_name);
            if (fd >= from && fd != own && entry->d_name [0] != '.') {
                close (fd);
                closed = true;
            }
        }
    }
    closedir (handle);
}

enum {
    CHILD_DONE = 0,
    CHILD_WRITE_FAILED = 1,
    CHILD_ORPHAN = 3,
    CHILD_PRESYNC_FAILED = 4,
    CHILD_RENAME_FAILED = 5,
    CHILD_DIR_FAILED = 6
};

static void
s_tmp_path (journal_t *self, char *buf, size_t size, uint64_t gen)
{
    snprintf (buf, size, "%s/snapshot.%llu.tmp", self->dir, (unsigned long long) gen);
}

//  The child: only plain memory reads and file work; no zmq, no plog
//  (another thread may have held its lock at the fork), no atexit
//  handlers (_exit). `old_log`: the log to sync first (NO), or NULL.
static void
s_child (journal_t *self, pid_t parent, uint64_t gen, const char *old_log,
         journal_snapshot_fn *fn, void *arg)
{
    //  Dies with the broker; a broker that died before this line was run
    //  is no longer our parent.
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (CHILD_ORPHAN);
    //  Nothing of the broker's: not the LOCK's descriptor (a restart must
    //  not find the directory in use), not the listening sockets (nor
    //  their ports), not the logs.
    s_close_from (3);
    //  Background work: it yields the CPU to the broker (which may be
    //  pinned to the same core).
    if (nice (19) == -1)
        (void) 0;
    if (old_log) {
        int fd = open (old_log, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fdatasync (fd) != 0 || journal_sync_dir (self) != 0)
            _exit (CHILD_PRESYNC_FAILED);
        close (fd);
    }
    if (self->test_delay_ms > 0)
        pclock_sleep_ms (self->test_delay_ms);
    char tmp [4096], path [4096], why [256];
    s_tmp_path (self, tmp, sizeof tmp, gen);
    journal_path (self, path, sizeof path, "snapshot", gen);
    unlink (tmp);
    jfile_t *file = jfile_open (tmp, why, sizeof why);
    if (!file || fn (file, arg) != 0 || jfile_sync (file) != 0)
        _exit (CHILD_WRITE_FAILED);
    if (rename (tmp, path) != 0)
        _exit (CHILD_RENAME_FAILED);
    if (journal_sync_dir (self) != 0)
        _exit (CHILD_DIR_FAILED);
    //  The snapshot is in place for good: what it replaces can go.
    journal_remove_before (self, gen, false);
    _exit (CHILD_DONE);
}

bool
journal_wants_compaction (journal_t *self)
{
    assert (self);
    if (self->child || !self->log)
        return false;
    //  Unhealthy: a snapshot is what heals it (at most once a second).
    if (!atomic_load (&self->healthy))
        return !self->heal_tried_ms || pclock_mono_ms () - self->heal_tried_ms >= 1000;
    uint64_t size = jfile_size (self->log);
    //  As Redis's auto-aof-rewrite: past a minimum, and once the log is as
    //  large as the snapshot it follows (so storage stays within about
    //  twice the live data).
    return size >= self->compact_min && size >= self->stats.snapshot_bytes;
}

int
journal_compact (journal_t *self, journal_snapshot_fn *fn, void *arg,
                 char *why, size_t why_size)
{
    assert (self && fn && self->log && !self->child);
    int64_t begun = pclock_mono_us ();
    bool healthy = atomic_load (&self->healthy);
    if (!healthy)
        self->heal_tried_ms = pclock_mono_ms ();
    else
    if (self->fsync == JOURNAL_FSYNC_ALWAYS) {
        //  What the child's snapshot will contain must be durable in the
        //  old log before the new log's records are (a crash replays
        //  both): ALWAYS synced it at the end of the last turn, so this
        //  only covers what the timer appended since. The other policies
        //  leave it to whoever syncs next (see the doc block).
        if (jfile_sync (self->log) == 0) {
            pthread_mutex_lock (&self->mutex);
            atomic_store (&self->flushed_seq, self->appended_seq);
            journal_advance_locked (self, self->appended_seq, self->fail_epoch);
            pthread_mutex_unlock (&self->mutex);
        }
        else {
            int error = errno;
            self->stats.sync_errors++;
            char what [4200];
            snprintf (what, sizeof what, "cannot sync %s", jfile_path (self->log));
            journal_fail (self, error, what);
            self->heal_tried_ms = pclock_mono_ms ();
            healthy = false;
        }
    }
    uint64_t next = self->generation + 1;
    char path [4096], old_log [4096];
    journal_path (self, path, sizeof path, "log", next);
    snprintf (old_log, sizeof old_log, "%s", jfile_path (self->log));
    jfile_t *log = jfile_open (path, why, why_size);
    if (!log)
        return -1;
    //  In the file now: the syncs to come cover everything appended so
    //  far.
    if (jfile_flush (self->log) != 0) {
        int error = errno;
        self->stats.write_errors++;
        snprintf (why, why_size, "cannot write %s: %s", old_log, strerror (error));
        journal_fail (self, error, why);
        healthy = false;
    }
    fflush (NULL);
    pid_t parent = getpid ();
    long faults = s_page_faults ();
    int64_t started = pclock_mono_us ();
    pid_t pid = fork ();
    if (pid == 0)
        s_child (self, parent, next,
                 healthy && self->fsync == JOURNAL_FSYNC_NO ? old_log : NULL, fn, arg);
    int64_t forked = pclock_mono_us ();
    if (pid < 0) {
        snprintf (why, why_size, "cannot fork the compaction: %s", strerror (errno));
        jfile_destroy (&log);
        unlink (path);
        return -1;
    }
    self->child = pid;
    self->child_gen = next;
    self->child_seq = self->appended_seq;
    self->child_started_us = started;
    self->child_faults_before = faults;
    self->stats.fork_us = (uint64_t) (forked - started);
    pthread_mutex_lock (&self->mutex);
    self->child_epoch = self->fail_epoch;
    //  The new log's name must be on disk before its records count.
    self->dir_pending = self->fsync != JOURNAL_FSYNC_NO;
    pthread_mutex_unlock (&self->mutex);
    jfile_destroy (&self->log);
    self->log = log;
    self->generation = next;
    self->stats.generation = next;
    atomic_store (&self->flushed_seq, self->appended_seq);
    if (self->syncer_running)
        journal_syncer_follow (self, healthy);
    self->stats.start_us = (uint64_t) (pclock_mono_us () - begun);
    plog_info ("compaction started: snapshot.%llu written by pid %d (%.1f ms in the loop, "
               "the fork %.1f ms)%s", (unsigned long long) next, (int) pid,
               (double) self->stats.start_us / 1000, (double) self->stats.fork_us / 1000,
               healthy ? "" : " to heal the journal");
    return 0;
}

//  A snapshot is in place and the directory synced: if no failure came
//  since its fork, the journal is healthy again once the new log (which
//  holds what came after the fork) is synced too.
static void
s_heal (journal_t *self, const char *path)
{
    int rc = jfile_sync (self->log);
    int error = errno;
    pthread_mutex_lock (&self->mutex);
    if (rc != 0) {
        self->stats.sync_errors++;
        char what [4200];
        snprintf (what, sizeof what, "cannot sync %s", jfile_path (self->log));
        journal_fail_locked (self, error, what);
    }
    else
    if (self->child_epoch == self->fail_epoch) {
        atomic_store (&self->healthy, true);
        atomic_store (&self->health_error, 0);
        atomic_store (&self->flushed_seq, self->appended_seq);
        journal_advance_locked (self, self->appended_seq, self->fail_epoch);
        self->stats.heals++;
        self->heal_failures = 0;
        self->heal_tried_ms = 0;
        plog_info ("the journal is healthy again: the whole state is in %s, synced; "
                   "changes are accepted", path);
    }
    pthread_mutex_unlock (&self->mutex);
}

void
journal_reap (journal_t *self, bool block)
{
    if (!self->child)
        return;
    int status = 0;
    pid_t done;
    do
        done = waitpid (self->child, &status, block ? 0 : WNOHANG);
    while (done < 0 && errno == EINTR);
    if (done == 0)
        return;
    int64_t begun = pclock_mono_us ();
    self->child = 0;
    self->stats.compaction_ms = (uint64_t) (pclock_mono_us () - self->child_started_us) / 1000;
    long faults = s_page_faults () - self->child_faults_before;
    self->stats.compaction_faults = faults > 0 ? (uint64_t) faults : 0;
    char tmp [4096], path [4096];
    s_tmp_path (self, tmp, sizeof tmp, self->child_gen);
    journal_path (self, path, sizeof path, "snapshot", self->child_gen);
    int code = done > 0 && WIFEXITED (status) ? WEXITSTATUS (status) : -1;
    if (code == CHILD_PRESYNC_FAILED || code == CHILD_DIR_FAILED) {
        //  The child cannot say why; EIO is what a failed sync means.
        self->stats.sync_errors++;
        char what [4200];
        snprintf (what, sizeof what, "the compaction could not sync %s",
                  code == CHILD_DIR_FAILED ? self->dir : "the previous log");
        journal_fail (self, EIO, what);
    }
    if (code == CHILD_DIR_FAILED) {
        //  In place but perhaps not on disk: the older files stay.
        self->snapshot_gen = self->child_gen;
        return;
    }
    if (code != CHILD_DONE) {
        plog_error ("compaction to %s failed (status %d%s); the logs are kept", path, status,
                    code == CHILD_RENAME_FAILED ? ": cannot rename" : "");
        unlink (tmp);
        return;
    }
    self->snapshot_gen = self->child_gen;
    struct stat st;
    if (stat (path, &st) == 0)
        self->stats.snapshot_bytes = (uint64_t) st.st_size;
    self->stats.compactions++;
    self->stats.install_us = (uint64_t) (pclock_mono_us () - begun);
    plog_info ("compacted into %s (%llu bytes) in %llu ms; the fork took %.1f ms, the broker "
               "had %llu page faults meanwhile, installing took %.1f ms", path,
               (unsigned long long) self->stats.snapshot_bytes,
               (unsigned long long) self->stats.compaction_ms,
               (double) self->stats.fork_us / 1000,
               (unsigned long long) self->stats.compaction_faults,
               (double) self->stats.install_us / 1000);
    if (!atomic_load (&self->healthy))
        s_heal (self, path);
}

void
journal_compact_wait (journal_t *self)
{
    assert (self);
    journal_reap (self, true);
}
