// SPDX-License-Identifier: MIT
/*  journal - data directory, generations, recovery, appends and the
    policy's commit; see journal.h (the syncs and the journal's health are
    in journal_sync.c, compaction in journal_compact.c). What is slow:
    recovery reads every file once (one read per file).
*/
#include <dirent.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal_int.h"
#include "pclock.h"
#include "plog.h"

//  Test hook, unset outside tests: the compaction child waits this many
//  milliseconds before it writes, so a test can kill the broker while a
//  compaction runs.
#define JOURNAL_TEST_DELAY_ENV "PARLEY_TEST_COMPACT_DELAY_MS"

void
journal_path (journal_t *self, char *buf, size_t size, const char *kind, uint64_t gen)
{
    snprintf (buf, size, "%s/%s.%llu", self->dir, kind, (unsigned long long) gen);
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
    self->old_fd = -1;
    atomic_init (&self->healthy, true);
    atomic_init (&self->health_error, 0);
    atomic_init (&self->durable_seq, 0);
    atomic_init (&self->flushed_seq, 0);
    atomic_init (&self->unsynced, false);
    atomic_init (&self->thread_sync_errors, 0);
    pthread_mutex_init (&self->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->wake, &attr);
    pthread_condattr_destroy (&attr);
    const char *delay = getenv (JOURNAL_TEST_DELAY_ENV);
    if (delay && *delay)
        self->test_delay_ms = atoll (delay);
    char path [4096];
    snprintf (path, sizeof path, "%s/LOCK", dir);
    self->lock_fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (self->lock_fd < 0) {
        snprintf (why, why_size, "cannot open %s: %s", path, strerror (errno));
        self->lock_fd = -1;
        journal_destroy (&self);
        return NULL;
    }
    if (flock (self->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char holder [32] = "";
        ssize_t n = pread (self->lock_fd, holder, sizeof holder - 1, 0);
        holder [n > 0 ? n : 0] = 0;
        holder [strcspn (holder, "\n")] = 0;
        snprintf (why, why_size, "data directory %s is in use by another broker%s%s%s", dir,
                  *holder ? " (pid " : "", holder, *holder ? ")" : "");
        journal_destroy (&self);
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
    if (!self)
        return;
    journal_compact_wait (self);
    if (self->log && !atomic_load (&self->healthy) && self->heal_fn) {
        char why [256];
        if (journal_compact (self, self->heal_fn, self->heal_arg, why, sizeof why) == 0)
            journal_compact_wait (self);
        else
            plog_error ("cannot write a last snapshot: %s", why);
    }
    journal_syncer_stop (self);
    if (self->sync_fd >= 0)
        close (self->sync_fd);
    const char *what = "";
    if (self->log && !atomic_load (&self->healthy))
        plog_error ("stopping with an unhealthy journal: what was written since its last "
                    "good sync may not survive a power cut");
    else
    if (self->log && journal_presync (self, &what) != 0)
        plog_error ("%s: %s", what, strerror (errno));
    else
    if (self->log && jfile_sync (self->log) != 0)
        plog_error ("cannot sync %s: %s", jfile_path (self->log), strerror (errno));
    if (self->old_fd >= 0)
        close (self->old_fd);
    jfile_destroy (&self->log);
    pthread_mutex_destroy (&self->mutex);
    pthread_cond_destroy (&self->wake);
    if (self->lock_fd >= 0)
        close (self->lock_fd);
    free (self->sync_path);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

const char *
journal_dir (journal_t *self)
{
    assert (self);
    return self->dir;
}

static int
s_gen_cmp (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

//  Generations of the files named `kind`.<G> in the directory, sorted, in
//  *gens (the caller frees). The count, or -1 with errno.
static ssize_t
s_list (journal_t *self, const char *kind, uint64_t **gens)
{
    *gens = NULL;
    DIR *handle = opendir (self->dir);
    if (!handle)
        return -1;
    size_t count = 0, cap = 0, len = strlen (kind);
    struct dirent *entry;
    while ((entry = readdir (handle))) {
        const char *name = entry->d_name;
        if (strncmp (name, kind, len) != 0 || name [len] != '.')
            continue;
        char *end;
        unsigned long long gen = strtoull (name + len + 1, &end, 10);
        if (*end || end == name + len + 1)
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *grown = realloc (*gens, cap * sizeof (uint64_t));
            if (!grown) {
                free (*gens);
                *gens = NULL;
                closedir (handle);
                errno = ENOMEM;
                return -1;
            }
            *gens = grown;
        }
        (*gens) [count++] = gen;
    }
    closedir (handle);
    if (count)
        qsort (*gens, count, sizeof (uint64_t), s_gen_cmp);
    return (ssize_t) count;
}

//  A temporary file: a snapshot being written (<G>.tmp, or the older
//  name without G) or a file being rewritten by --repair.
static bool
s_temporary (const char *name)
{
    size_t len = strlen (name);
    return (strncmp (name, "snapshot.", 9) == 0 && len > 4 && strcmp (name + len - 4, ".tmp") == 0)
        || (len > 7 && strcmp (name + len - 7, ".repair") == 0);
}

void
journal_remove_before (journal_t *self, uint64_t gen, bool temporaries)
{
    const char *kinds [] = { "snapshot", "log" };
    char path [4096];
    for (int k = 0; k < 2; k++) {
        uint64_t *gens;
        ssize_t count = s_list (self, kinds [k], &gens);
        for (ssize_t i = 0; i < count && gens [i] < gen; i++) {
            journal_path (self, path, sizeof path, kinds [k], gens [i]);
            unlink (path);
        }
        free (gens);
    }
    if (!temporaries)
        return;
    DIR *handle = opendir (self->dir);
    struct dirent *entry;
    while (handle && (entry = readdir (handle)))
        if (s_temporary (entry->d_name)) {
            snprintf (path, sizeof path, "%s/%s", self->dir, entry->d_name);
            if (unlink (path) == 0)
                plog_info ("removed %s (left by a compaction or repair that did not finish)",
                           path);
        }
    if (handle)
        closedir (handle);
}

static void
s_report (const char *path, const jfile_report_t *report)
{
    unsigned long long cut = (unsigned long long) report->torn_bytes;
    if (report->tail == JFILE_TAIL_TORN)
        plog_warn ("%s: torn last record: %llu bytes dropped (a write cut short by a crash)",
                   path, cut);
    else
    if (report->tail == JFILE_TAIL_ZEROS)
        plog_warn ("%s: zero-filled tail: %llu bytes dropped after the last whole record "
                   "(blocks a power cut left unwritten)", path, cut);
    else
    if (report->tail == JFILE_TAIL_GARBAGE)
        plog_warn ("%s: unreadable tail: %llu bytes dropped after the last whole record, "
                   "no record in them (a write cut short by a crash or a power cut)", path, cut);
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
    char path [4096];
    uint64_t *gens;
    ssize_t snaps = s_list (self, "snapshot", &gens);
    if (snaps < 0) {
        snprintf (why, why_size, "cannot list %s: %s", self->dir, strerror (errno));
        return -1;
    }
    self->snapshot_gen = snaps ? gens [snaps - 1] : 0;
    free (gens);
    self->generation = self->snapshot_gen ? self->snapshot_gen : 1;
    jfile_report_t report;
    if (self->snapshot_gen) {
        journal_path (self, path, sizeof path, "snapshot", self->snapshot_gen);
        if (jfile_scan (path, repair, snapshot_fn, arg, &report, why, why_size) != JFILE_OK)
            return -1;
        s_report (path, &report);
        struct stat st;
        if (stat (path, &st) == 0)
            self->stats.snapshot_bytes = (uint64_t) st.st_size;
    }
    ssize_t logs = s_list (self, "log", &gens);
    if (logs < 0) {
        snprintf (why, why_size, "cannot list %s: %s", self->dir, strerror (errno));
        return -1;
    }
    for (ssize_t i = 0; i < logs; i++) {
        if (gens [i] < self->snapshot_gen)
            continue;
        journal_path (self, path, sizeof path, "log", gens [i]);
        if (jfile_scan (path, repair, log_fn, arg, &report, why, why_size) != JFILE_OK) {
            free (gens);
            return -1;
        }
        s_report (path, &report);
        self->generation = gens [i];
    }
    free (gens);
    journal_remove_before (self, self->snapshot_gen, true);
    journal_path (self, path, sizeof path, "log", self->generation);
    self->log = jfile_open (path, why, why_size);
    if (!self->log)
        return -1;
    //  What the last broker wrote and never synced (a kill -9) is on disk
    //  before this one builds on it.
    if (fdatasync (jfile_fd (self->log)) != 0 || journal_sync_dir (self) != 0) {
        snprintf (why, why_size, "cannot sync %s: %s", path, strerror (errno));
        return -1;
    }
    self->stats.generation = self->generation;
    if (self->fsync == JOURNAL_FSYNC_EVERYSEC && journal_syncer_start (self) != 0) {
        snprintf (why, why_size, "cannot start the journal's sync thread");
        return -1;
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
    jfile_part_t part = { payload, size };
    return journal_append_parts (self, &part, 1);
}

int
journal_append_parts (journal_t *self, const jfile_part_t *parts, size_t count)
{
    assert (self && self->log);
    size_t size = 0;
    for (size_t i = 0; i < count; i++)
        size += parts [i].size;
    if (jfile_append_parts (self->log, parts, count) != 0) {
        int error = errno;
        self->stats.write_errors++;
        //  Not only this record: a write of earlier gathered ones failed.
        if (jfile_failed (self->log)) {
            char what [4200];
            snprintf (what, sizeof what, "cannot write %s", jfile_path (self->log));
            journal_fail (self, error, what);
        }
        errno = error;
        return -1;
    }
    self->appended_seq++;
    self->stats.appended_bytes += JFILE_HEADER + size;
    return 0;
}

int
journal_flush (journal_t *self)
{
    assert (self);
    if (!self->log)
        return 0;
    if (jfile_pending (self->log) && jfile_flush (self->log) != 0) {
        int error = errno;
        self->stats.write_errors++;
        char what [4200];
        snprintf (what, sizeof what, "cannot write %s", jfile_path (self->log));
        journal_fail (self, error, what);
        errno = error;
        return -1;
    }
    //  Everything appended is in the file now (an append may have written
    //  earlier ones itself), unless a write failed.
    if (!jfile_failed (self->log) && atomic_load (&self->flushed_seq) != self->appended_seq) {
        atomic_store (&self->flushed_seq, self->appended_seq);
        //  Set after the write, so the syncer never clears it for bytes
        //  that were still in memory.
        atomic_store (&self->unsynced, true);
    }
    return 0;
}

bool
journal_holds_replies (journal_t *self)
{
    return self && self->fsync == JOURNAL_FSYNC_ALWAYS && self->log
        && self->appended_seq > atomic_load (&self->durable_seq);
}

int
journal_commit (journal_t *self)
{
    assert (self);
    if (self->fsync != JOURNAL_FSYNC_ALWAYS || !self->log)
        return 0;
    if (!atomic_load (&self->healthy)) {
        errno = EIO;
        return -1;
    }
    if (self->appended_seq == atomic_load (&self->durable_seq) && !jfile_dirty (self->log))
        return 0;
    int64_t started = pclock_mono_us ();
    const char *what = NULL;
    int rc = journal_presync (self, &what);
    if (rc == 0)
        rc = jfile_sync (self->log);
    int error = errno;
    pthread_mutex_lock (&self->mutex);
    journal_observe_sync (self, started);
    if (rc == 0) {
        atomic_store (&self->flushed_seq, self->appended_seq);
        journal_advance_locked (self, self->appended_seq, self->fail_epoch);
    }
    else {
        self->stats.sync_errors++;
        char line [4200];
        if (what)
            snprintf (line, sizeof line, "%s", what);
        else
            snprintf (line, sizeof line, "cannot sync %s", jfile_path (self->log));
        journal_fail_locked (self, error, line);
    }
    pthread_mutex_unlock (&self->mutex);
    errno = error;
    return rc;
}

void
journal_tick (journal_t *self)
{
    assert (self);
    self->stats.sync_errors += atomic_exchange (&self->thread_sync_errors, 0);
    journal_reap (self, false);
    if (atomic_load (&self->healthy) || self->child || !self->heal_fn || !self->log)
        return;
    int64_t now = pclock_mono_ms ();
    if (self->heal_tried_ms && now - self->heal_tried_ms < 1000)
        return;
    char why [256];
    if (journal_compact (self, self->heal_fn, self->heal_arg, why, sizeof why) != 0) {
        self->heal_failures++;
        //  Once, then at doubling intervals: a dead disk fails every second.
        if ((self->heal_failures & (self->heal_failures - 1)) == 0)
            plog_error ("cannot start the snapshot that heals the journal (%llu attempts): %s",
                        (unsigned long long) self->heal_failures, why);
    }
}

bool
journal_healthy (journal_t *self)
{
    assert (self);
    return atomic_load (&self->healthy);
}

int
journal_health_error (journal_t *self)
{
    assert (self);
    return atomic_load (&self->healthy) ? 0 : atomic_load (&self->health_error);
}

uint64_t
journal_appended_seq (journal_t *self)
{
    assert (self);
    return self->appended_seq;
}

uint64_t
journal_durable_seq (journal_t *self)
{
    assert (self);
    return atomic_load (&self->durable_seq);
}

void
journal_set_snapshot (journal_t *self, journal_snapshot_fn *fn, void *arg)
{
    assert (self);
    self->heal_fn = fn;
    self->heal_arg = arg;
}

void
journal_stats (journal_t *self, journal_stats_t *stats)
{
    assert (self && stats);
    *stats = self->stats;
    stats->sync_errors += atomic_load (&self->thread_sync_errors);
    stats->log_bytes = self->log ? jfile_size (self->log) : 0;
    stats->healthy = atomic_load (&self->healthy);
}

void
journal_sync_latency (journal_t *self, metrics_histogram_t *histogram)
{
    assert (self && histogram);
    pthread_mutex_lock (&self->mutex);
    *histogram = self->sync_latency;
    pthread_mutex_unlock (&self->mutex);
}
