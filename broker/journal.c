// SPDX-License-Identifier: MIT
/*  journal - data directory, generations, fsync policy, compaction; see
    journal.h. What is slow: recovery reads every file once (one read per
    file); compaction writes the whole state, but in a forked child, so the
    loop only pays for fork(2) (page tables) and the rename.
*/
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal.h"
#include "pclock.h"
#include "plog.h"

struct _journal_t {
    char *dir;
    int lock_fd;
    journal_fsync_t fsync;
    uint64_t compact_min;       //  a log smaller than this is never compacted
    uint64_t generation;        //  of the log appended to
    uint64_t snapshot_gen;      //  newest complete snapshot (0: none)
    jfile_t *log;
    pid_t child;                //  compaction child, 0 when none
    uint64_t child_gen;         //  the snapshot it writes
    journal_stats_t stats;
    //  EVERYSEC: a thread syncs once a second, as Redis does, so a slow
    //  fdatasync never stalls the loop. It syncs its own dup of the log's
    //  descriptor; the loop swaps that under the mutex when the log changes.
    pthread_t syncer;
    bool syncer_running;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    bool stopping;
    int sync_fd;
    atomic_bool unsynced;
    atomic_uint_fast64_t sync_failures;
    //  Sync durations (metrics): written by whichever thread syncs, under
    //  the mutex; an uncontended lock costs nothing next to an fdatasync.
    metrics_histogram_t sync_latency;
};

static void
s_observe_sync (journal_t *self, int64_t started_us)
{
    int64_t took = pclock_mono_us () - started_us;
    metrics_histogram_observe (&self->sync_latency, took > 0 ? (uint64_t) took : 0);
}

static void *
s_syncer (void *arg)
{
    journal_t *self = arg;
    pthread_mutex_lock (&self->mutex);
    while (!self->stopping) {
        struct timespec until;
        clock_gettime (CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait (&self->wake, &self->mutex, &until);
        if (self->sync_fd >= 0 && atomic_exchange (&self->unsynced, false)) {
            //  The sync runs on a descriptor of its own, without the mutex:
            //  the loop takes the mutex to switch logs and to read the
            //  latency histogram, and a slow disk must not stall it there.
            int fd = dup (self->sync_fd);
            pthread_mutex_unlock (&self->mutex);
            int64_t started = pclock_mono_us ();
            if (fd < 0 || fdatasync (fd) != 0) {
                atomic_fetch_add (&self->sync_failures, 1);
                atomic_store (&self->unsynced, true);
            }
            if (fd >= 0)
                close (fd);
            pthread_mutex_lock (&self->mutex);
            s_observe_sync (self, started);
        }
    }
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

//  Points the syncer at the current log (after open or a switch).
static void
s_syncer_follow (journal_t *self)
{
    pthread_mutex_lock (&self->mutex);
    if (self->sync_fd >= 0)
        close (self->sync_fd);
    self->sync_fd = self->log ? dup (jfile_fd (self->log)) : -1;
    pthread_mutex_unlock (&self->mutex);
}

static void
s_path (journal_t *self, char *buf, size_t size, const char *kind, uint64_t gen)
{
    snprintf (buf, size, "%s/%s.%llu", self->dir, kind, (unsigned long long) gen);
}

static void
s_sync_dir (journal_t *self)
{
    int fd = open (self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync (fd);
        close (fd);
    }
}

journal_t *
journal_open (const char *dir, journal_fsync_t fsync_policy, uint64_t compact_min,
              char *why, size_t why_size)
{
    assert (dir);
    if (mkdir (dir, 0700) != 0 && errno != EEXIST) {
        snprintf (why, why_size, "cannot create data directory %s: %s", dir, strerror (errno));
        return NULL;
    }
    journal_t *self = calloc (1, sizeof (journal_t));
    if (!self || !(self->dir = strdup (dir))) {
        free (self);
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    self->fsync = fsync_policy;
    self->compact_min = compact_min;
    self->sync_fd = -1;
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->wake, NULL);
    char path [4096];
    snprintf (path, sizeof path, "%s/LOCK", dir);
    self->lock_fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (self->lock_fd < 0) {
        snprintf (why, why_size, "cannot open %s: %s", path, strerror (errno));
        free (self->dir);
        free (self);
        return NULL;
    }
    if (flock (self->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char holder [32] = "";
        ssize_t n = pread (self->lock_fd, holder, sizeof holder - 1, 0);
        holder [n > 0 ? n : 0] = 0;
        holder [strcspn (holder, "\n")] = 0;
        snprintf (why, why_size, "data directory %s is in use by another broker%s%s%s", dir,
                  *holder ? " (pid " : "", holder, *holder ? ")" : "");
        close (self->lock_fd);
        free (self->dir);
        free (self);
        return NULL;
    }
    char pid [32];
    int len = snprintf (pid, sizeof pid, "%d\n", (int) getpid ());
    if (ftruncate (self->lock_fd, 0) != 0 || pwrite (self->lock_fd, pid, (size_t) len, 0) != len)
        plog_warn ("cannot write the pid into %s: %s", path, strerror (errno));
    return self;
}

void
journal_destroy (journal_t **self_p)
{
    assert (self_p);
    journal_t *self = *self_p;
    if (self) {
        journal_compact_wait (self);
        if (self->syncer_running) {
            pthread_mutex_lock (&self->mutex);
            self->stopping = true;
            pthread_cond_signal (&self->wake);
            pthread_mutex_unlock (&self->mutex);
            pthread_join (self->syncer, NULL);
        }
        if (self->sync_fd >= 0)
            close (self->sync_fd);
        pthread_mutex_destroy (&self->mutex);
        pthread_cond_destroy (&self->wake);
        if (self->log && jfile_sync (self->log) != 0)
            plog_error ("cannot sync %s: %s", jfile_path (self->log), strerror (errno));
        jfile_destroy (&self->log);
        close (self->lock_fd);
        free (self->dir);
        free (self);
        *self_p = NULL;
    }
}

const char *
journal_dir (journal_t *self)
{
    assert (self);
    return self->dir;
}

//  Generations of the files named `kind`.<G> in the directory, sorted.
static size_t
s_list (journal_t *self, const char *kind, uint64_t *gens, size_t max)
{
    DIR *handle = opendir (self->dir);
    if (!handle)
        return 0;
    size_t count = 0, len = strlen (kind);
    struct dirent *entry;
    while ((entry = readdir (handle)) && count < max) {
        const char *name = entry->d_name;
        if (strncmp (name, kind, len) != 0 || name [len] != '.')
            continue;
        char *end;
        unsigned long long gen = strtoull (name + len + 1, &end, 10);
        if (*end == 0 && end != name + len + 1)
            gens [count++] = gen;
    }
    closedir (handle);
    for (size_t i = 1; i < count; i++)
        for (size_t j = i; j > 0 && gens [j - 1] > gens [j]; j--) {
            uint64_t swap = gens [j];
            gens [j] = gens [j - 1];
            gens [j - 1] = swap;
        }
    return count;
}

//  Removes snapshots and logs older than `gen`, and stray temporaries.
static void
s_remove_before (journal_t *self, uint64_t gen)
{
    uint64_t gens [256];
    const char *kinds [] = { "snapshot", "log" };
    char path [4096];
    for (int k = 0; k < 2; k++) {
        size_t count = s_list (self, kinds [k], gens, 256);
        for (size_t i = 0; i < count && gens [i] < gen; i++) {
            s_path (self, path, sizeof path, kinds [k], gens [i]);
            unlink (path);
        }
    }
    snprintf (path, sizeof path, "%s/snapshot.tmp", self->dir);
    unlink (path);
}

static void
s_report (const char *path, const jfile_report_t *report)
{
    if (report->torn_bytes)
        plog_warn ("%s: torn last record: %llu bytes dropped (a write cut short by a crash)",
                   path, (unsigned long long) report->torn_bytes);
    if (report->lost_records)
        plog_warn ("%s: --repair skipped %llu corrupt records (%llu bytes) from offset %llu; "
                   "what they recorded is lost", path,
                   (unsigned long long) report->lost_records,
                   (unsigned long long) report->lost_bytes,
                   (unsigned long long) report->bad_offset);
}

int
journal_recover (journal_t *self, bool repair, jfile_record_fn *snapshot_fn,
                 jfile_record_fn *log_fn, void *arg, char *why, size_t why_size)
{
    assert (self && !self->log);
    uint64_t gens [256];
    char path [4096];
    size_t snaps = s_list (self, "snapshot", gens, 256);
    self->snapshot_gen = snaps ? gens [snaps - 1] : 0;
    self->generation = self->snapshot_gen ? self->snapshot_gen : 1;
    jfile_report_t report;
    if (self->snapshot_gen) {
        s_path (self, path, sizeof path, "snapshot", self->snapshot_gen);
        if (jfile_scan (path, repair, snapshot_fn, arg, &report, why, why_size) != JFILE_OK)
            return -1;
        s_report (path, &report);
        struct stat st;
        if (stat (path, &st) == 0)
            self->stats.snapshot_bytes = (uint64_t) st.st_size;
    }
    size_t logs = s_list (self, "log", gens, 256);
    for (size_t i = 0; i < logs; i++) {
        if (gens [i] < self->snapshot_gen)
            continue;
        s_path (self, path, sizeof path, "log", gens [i]);
        if (jfile_scan (path, repair, log_fn, arg, &report, why, why_size) != JFILE_OK)
            return -1;
        s_report (path, &report);
        self->generation = gens [i];
    }
    s_remove_before (self, self->snapshot_gen);
    s_path (self, path, sizeof path, "log", self->generation);
    self->log = jfile_open (path, why, why_size);
    if (!self->log)
        return -1;
    s_sync_dir (self);
    self->stats.generation = self->generation;
    if (self->fsync == JOURNAL_FSYNC_EVERYSEC) {
        s_syncer_follow (self);
        if (pthread_create (&self->syncer, NULL, s_syncer, self) != 0) {
            snprintf (why, why_size, "cannot start the journal's sync thread");
            return -1;
        }
        self->syncer_running = true;
    }
    return 0;
}

int
journal_reserve (journal_t *self, size_t size)
{
    assert (self && self->log);
    if (jfile_reserve (self->log, JFILE_HEADER + size) != 0) {
        self->stats.write_errors++;
        return -1;
    }
    return 0;
}

int
journal_append (journal_t *self, const void *payload, size_t size)
{
    assert (self && self->log);
    if (jfile_append (self->log, payload, size) != 0) {
        self->stats.write_errors++;
        return -1;
    }
    self->stats.appended_bytes += JFILE_HEADER + size;
    return 0;
}

int
journal_flush (journal_t *self)
{
    assert (self);
    if (!self->log || !jfile_pending (self->log))
        return 0;
    if (jfile_flush (self->log) != 0) {
        self->stats.write_errors++;
        return -1;
    }
    //  Set after the write, so the syncer never clears it for bytes that
    //  were still in memory.
    atomic_store (&self->unsynced, true);
    return 0;
}

bool
journal_holds_replies (journal_t *self)
{
    return self && self->fsync == JOURNAL_FSYNC_ALWAYS && self->log && jfile_dirty (self->log);
}

int
journal_commit (journal_t *self)
{
    assert (self);
    if (self->fsync != JOURNAL_FSYNC_ALWAYS || !self->log || !jfile_dirty (self->log))
        return 0;
    int64_t started = pclock_mono_us ();
    int rc = jfile_sync (self->log);
    pthread_mutex_lock (&self->mutex);
    s_observe_sync (self, started);
    pthread_mutex_unlock (&self->mutex);
    if (rc != 0) {
        self->stats.sync_errors++;
        return -1;
    }
    return 0;
}

//  A finished child: install its snapshot, drop what it replaces.
static void
s_reap (journal_t *self, bool block)
{
    if (!self->child)
        return;
    int status = 0;
    pid_t done = waitpid (self->child, &status, block ? 0 : WNOHANG);
    if (done == 0)
        return;
    self->child = 0;
    char tmp [4096], path [4096];
    snprintf (tmp, sizeof tmp, "%s/snapshot.tmp", self->dir);
    s_path (self, path, sizeof path, "snapshot", self->child_gen);
    if (done < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        plog_error ("compaction to %s failed (status %d); the logs are kept", path, status);
        unlink (tmp);
        return;
    }
    if (rename (tmp, path) != 0) {
        plog_error ("cannot rename %s to %s: %s", tmp, path, strerror (errno));
        unlink (tmp);
        return;
    }
    s_sync_dir (self);
    self->snapshot_gen = self->child_gen;
    s_remove_before (self, self->snapshot_gen);
    struct stat st;
    if (stat (path, &st) == 0)
        self->stats.snapshot_bytes = (uint64_t) st.st_size;
    self->stats.compactions++;
    plog_info ("compacted into %s (%llu bytes)", path,
               (unsigned long long) self->stats.snapshot_bytes);
}

void
journal_tick (journal_t *self)
{
    assert (self);
    uint64_t failures = atomic_exchange (&self->sync_failures, 0);
    if (failures) {
        self->stats.sync_errors += failures;
        plog_error ("cannot sync %s (the once-a-second sync failed %llu times)",
                    jfile_path (self->log), (unsigned long long) failures);
    }
    s_reap (self, false);
}

bool
journal_wants_compaction (journal_t *self)
{
    assert (self);
    if (self->child || !self->log)
        return false;
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
    //  What the child's snapshot will contain must be durable in the old
    //  log before the new log starts (a crash now replays both).
    if (jfile_sync (self->log) != 0) {
        snprintf (why, why_size, "cannot sync %s: %s", jfile_path (self->log), strerror (errno));
        return -1;
    }
    uint64_t next = self->generation + 1;
    char path [4096];
    s_path (self, path, sizeof path, "log", next);
    jfile_t *log = jfile_open (path, why, why_size);
    if (!log)
        return -1;
    s_sync_dir (self);
    fflush (NULL);
    pid_t pid = fork ();
    if (pid < 0) {
        snprintf (why, why_size, "cannot fork the compaction: %s", strerror (errno));
        jfile_destroy (&log);
        unlink (path);
        return -1;
    }
    if (pid == 0) {
        //  The child: only plain memory reads and file writes; no zmq, no
        //  atexit handlers (_exit). Background work: it yields the CPU to
        //  the broker (which may be pinned to the same core).
        if (nice (19) == -1)
            (void) 0;
        char tmp [4096];
        snprintf (tmp, sizeof tmp, "%s/snapshot.tmp", self->dir);
        unlink (tmp);
        char child_why [256];
        jfile_t *file = jfile_open (tmp, child_why, sizeof child_why);
        int rc = file && fn (file, arg) == 0 && jfile_sync (file) == 0 ? 0 : 1;
        _exit (rc);
    }
    self->child = pid;
    self->child_gen = next;
    jfile_destroy (&self->log);
    self->log = log;
    self->generation = next;
    self->stats.generation = next;
    if (self->syncer_running)
        s_syncer_follow (self);
    return 0;
}

void
journal_compact_wait (journal_t *self)
{
    assert (self);
    s_reap (self, true);
}

void
journal_stats (journal_t *self, journal_stats_t *stats)
{
    assert (self && stats);
    *stats = self->stats;
    stats->log_bytes = self->log ? jfile_size (self->log) : 0;
}

void
journal_sync_latency (journal_t *self, metrics_histogram_t *histogram)
{
    assert (self && histogram);
    pthread_mutex_lock (&self->mutex);
    *histogram = self->sync_latency;
    pthread_mutex_unlock (&self->mutex);
}
