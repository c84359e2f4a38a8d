// SPDX-License-Identifier: MIT
/*  journal_sync - the journal's syncs and health: the EVERYSEC thread,
    the work a switch of logs leaves for the next sync, the change to
    unhealthy on a failure and the durable sequence; see journal.h. What
    is slow: fdatasync, always outside the mutex; a failed sync's log
    line and state change happen once, not per request.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "journal_int.h"
#include "pclock.h"
#include "plog.h"

void
journal_observe_sync (journal_t *self, int64_t started_us)
{
    int64_t took = pclock_mono_us () - started_us;
    metrics_histogram_observe (&self->sync_latency, took > 0 ? (uint64_t) took : 0);
}

void
journal_fail_locked (journal_t *self, int error, const char *what)
{
    self->fail_epoch++;
    if (atomic_exchange (&self->healthy, false)) {
        atomic_store (&self->health_error, error ? error : EIO);
        plog_error ("%s: %s; the journal is unhealthy: changes are refused until the whole "
                    "state is written again into a new snapshot (tried once a second)",
                    what, strerror (error ? error : EIO));
    }
}

void
journal_fail (journal_t *self, int error, const char *what)
{
    pthread_mutex_lock (&self->mutex);
    journal_fail_locked (self, error, what);
    pthread_mutex_unlock (&self->mutex);
}

void
journal_advance_locked (journal_t *self, uint64_t seq, uint64_t epoch)
{
    if (atomic_load (&self->healthy) && epoch == self->fail_epoch
    &&  seq > atomic_load (&self->durable_seq))
        atomic_store (&self->durable_seq, seq);
}

int
journal_presync (journal_t *self, const char **what)
{
    pthread_mutex_lock (&self->mutex);
    int old = self->old_fd;
    bool dir = self->dir_pending;
    self->old_fd = -1;
    self->dir_pending = false;
    pthread_mutex_unlock (&self->mutex);
    int rc = 0, error = 0;
    if (old >= 0) {
        if (fdatasync (old) != 0) {
            rc = -1;
            error = errno;
            *what = "cannot sync the previous log";
        }
        close (old);
    }
    if (rc == 0 && dir && journal_sync_dir (self) != 0) {
        rc = -1;
        error = errno;
        *what = "cannot sync the data directory";
    }
    errno = error;
    return rc;
}

static void *
s_syncer (void *arg)
{
    journal_t *self = arg;
    pthread_mutex_lock (&self->mutex);
    while (!self->stopping) {
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait (&self->wake, &self->mutex, &until);
        //  An unhealthy log is not synced again (a success would mean
        //  nothing); the snapshot that heals the journal syncs its own.
        if (self->sync_fd < 0 || !atomic_load (&self->healthy)
        ||  !(atomic_exchange (&self->unsynced, false) || self->old_fd >= 0
           || self->dir_pending))
            continue;
        //  The sync runs on a descriptor of its own, without the mutex:
        //  the loop takes the mutex to switch logs and to read the
        //  latency histogram, and a slow disk must not stall it there.
        //  What was written before it starts is what it makes durable.
        uint64_t seq = atomic_load (&self->flushed_seq);
        uint64_t epoch = self->fail_epoch;
        int fd = dup (self->sync_fd);
        pthread_mutex_unlock (&self->mutex);
        int64_t started = pclock_mono_us ();
        const char *what = "the once-a-second sync failed";
        int rc = journal_presync (self, &what);
        if (rc == 0 && (fd < 0 || fdatasync (fd) != 0))
            rc = -1;
        int error = errno;
        if (fd >= 0)
            close (fd);
        pthread_mutex_lock (&self->mutex);
        journal_observe_sync (self, started);
        if (rc == 0)
            journal_advance_locked (self, seq, epoch);
        else {
            atomic_fetch_add (&self->thread_sync_errors, 1);
            char line [4200];
            snprintf (line, sizeof line, "%s (%s)", what,
                      self->sync_path ? self->sync_path : "the log");
            journal_fail_locked (self, error, line);
        }
    }
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

void
journal_syncer_follow (journal_t *self, bool keep_old)
{
    pthread_mutex_lock (&self->mutex);
    int previous = self->old_fd;
    self->old_fd = -1;
    if (self->sync_fd >= 0) {
        if (keep_old)
            self->old_fd = self->sync_fd;
        else
            close (self->sync_fd);
    }
    self->sync_fd = self->log ? dup (jfile_fd (self->log)) : -1;
    free (self->sync_path);
    self->sync_path = self->log ? strdup (jfile_path (self->log)) : NULL;
    pthread_mutex_unlock (&self->mutex);
    //  Two switches within a second: the older log is synced here (rare;
    //  its records come before the next one's).
    if (previous >= 0) {
        if (keep_old && fdatasync (previous) != 0) {
            self->stats.sync_errors++;
            journal_fail (self, errno, "cannot sync the log before the previous one");
        }
        close (previous);
    }
}

int
journal_sync_dir (journal_t *self)
{
    int fd = open (self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync (fd);
    int error = errno;
    close (fd);
    errno = error;
    return rc;
}

int
journal_syncer_start (journal_t *self)
{
    journal_syncer_follow (self, false);
    if (pthread_create (&self->syncer, NULL, s_syncer, self) != 0)
        return -1;
    self->syncer_running = true;
    return 0;
}

void
journal_syncer_stop (journal_t *self)
{
    if (!self->syncer_running)
        return;
    pthread_mutex_lock (&self->mutex);
    self->stopping = true;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->mutex);
    pthread_join (self->syncer, NULL);
    self->syncer_running = false;
}
