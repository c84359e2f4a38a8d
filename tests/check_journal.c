// SPDX-License-Identifier: MIT
/*  check_journal - the journal's data directory under power cuts and
    failing disks, through the fault shim (tests/lib/tfault.h): the suite
    runs itself again with the shim loaded, so every fsync, fdatasync and
    write of the journal is watched and can be made to fail.

    - Under ALWAYS, a process appends and commits (crossing a compaction)
      and dies; the directory is cut to what was fdatasynced, with no
      tail, a zero-filled one and a garbage one: recovery finds every
      committed record, in order, and nothing of what was not. Under
      EVERYSEC, the records the sync thread counted as durable across a
      switch of logs (the old log's tail synced off the loop) survive.
    - A failed sync makes the journal unhealthy: no later sync of that log
      counts (a retried commit fails instead of reporting the dropped pages
      as durable), the durable sequence stops, and a snapshot of the whole
      state heals it; after a cut that also drops the pages the failed sync
      lost, every record is there. The same under EVERYSEC, where the
      failure happens in the sync thread and the heal waits while syncs
      still fail.
    - EVERYSEC keeps syncing when the wall clock is set far off.
    - 300 logs (compactions that kept failing) are all replayed, in order.
    - A compaction child keeps no descriptor of the broker and dies with
      it: the directory can be locked again at once after a kill -9.
*/
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/journal.h"
#include "pclock.h"
#include "lib/testsuite.h"
#include "lib/tfault.h"
#include "lib/tpid.h"
#include "lib/tproc.h"

//  The "state" of these tests: every record appended, in order. The
//  snapshot writer writes it whole (as the broker writes its state).
#define MAX_RECORDS 4096
static char s_records [MAX_RECORDS][16];
static int s_count;

//  In a forked child that must not use Check: the line that failed, as
//  its exit status.
#define CHILD_ASSERT(cond) \
    do { if (!(cond)) { fprintf (stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
                        _exit (__LINE__ % 250 + 1); } } while (0)

static int
s_write_state (jfile_t *file, void *arg)
{
    for (int i = 0; i < s_count; i++)
        if (jfile_append (file, s_records [i], strlen (s_records [i])) != 0)
            return -1;
    return 0;
}

static int
s_write_nothing (jfile_t *file, void *arg)
{
    return -1;
}

static int
s_append (journal_t *journal)
{
    snprintf (s_records [s_count], sizeof s_records [0], "r%d", s_count);
    int rc = journal_append (journal, s_records [s_count], strlen (s_records [s_count]));
    if (rc == 0)
        s_count++;
    return rc;
}

typedef struct {
    int count;
    char seen [MAX_RECORDS][16];
} recovered_t;

static int
s_collect (const void *payload, size_t size, void *arg)
{
    recovered_t *r = arg;
    ck_assert_int_lt (r->count, MAX_RECORDS);
    ck_assert_uint_lt (size, sizeof r->seen [0]);
    memcpy (r->seen [r->count], payload, size);
    r->seen [r->count][size] = 0;
    r->count++;
    return 0;
}

static journal_t *
s_open (const char *dir, journal_fsync_t policy, recovered_t *recovered)
{
    char why [512];
    journal_t *journal = journal_open (dir, policy, 1u << 30, why, sizeof why);
    ck_assert_msg (journal, "%s", why);
    static recovered_t ignored;
    recovered_t *into = recovered ? recovered : &ignored;
    into->count = 0;
    ck_assert_msg (journal_recover (journal, false, s_collect, s_collect, into, why,
                                    sizeof why) == 0, "%s", why);
    return journal;
}

//  Recovered records are exactly r0 .. r<count-1>.
static void
s_expect (const recovered_t *recovered, int count)
{
    ck_assert_int_eq (recovered->count, count);
    for (int i = 0; i < count; i++) {
        char want [16];
        snprintf (want, sizeof want, "r%d", i);
        ck_assert_str_eq (recovered->seen [i], want);
    }
}

//  In a forked child: the journal in `dir`, opened and recovered (what
//  it holds is not looked at).
static journal_t *
s_child_open (const char *dir, journal_fsync_t policy)
{
    char why [512];
    journal_t *journal = journal_open (dir, policy, 1u << 30, why, sizeof why);
    CHILD_ASSERT (journal);
    recovered_t *none = calloc (1, sizeof (recovered_t));
    CHILD_ASSERT (journal_recover (journal, false, s_collect, s_collect, none, why,
                                   sizeof why) == 0);
    return journal;
}

//  The journal in `dir`, opened again, recovers exactly r0 .. r<count-1>.
static void
s_expect_reopened (const char *dir, journal_fsync_t policy, int count)
{
    recovered_t *recovered = calloc (1, sizeof (recovered_t));
    journal_t *journal = s_open (dir, policy, recovered);
    s_expect (recovered, count);
    journal_destroy (&journal);
    free (recovered);
}

//  A power cut: `dir` keeps what was synced, then a `tail` of `size`.
static void
s_cut (tfault_t *fault, const char *dir, tfault_tail_t tail, size_t size)
{
    char why [512];
    ck_assert_msg (tfault_cut (fault, dir, tail, size, why, sizeof why) == 0, "%s", why);
}

static void
s_wait_child (pid_t pid)
{
    int status = 0;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                   "the journal process failed (status %d)", status);
}

//  ---------------------------------------------------------------------

//  In a child: 50 committed batches of 7 with a compaction after the
//  25th, then 5 records written but never committed; no close (a crash).
static void
s_commit_then_die (const char *dir)
{
    char why [512];
    journal_t *journal = s_child_open (dir, JOURNAL_FSYNC_ALWAYS);
    for (int batch = 0; batch < 50; batch++) {
        for (int i = 0; i < 7; i++)
            CHILD_ASSERT (s_append (journal) == 0);
        CHILD_ASSERT (journal_commit (journal) == 0);
        CHILD_ASSERT (journal_durable_seq (journal) == journal_appended_seq (journal));
        if (batch == 24) {
            CHILD_ASSERT (journal_compact (journal, s_write_state, NULL, why, sizeof why) == 0);
            journal_compact_wait (journal);
        }
    }
    for (int i = 0; i < 5; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_flush (journal) == 0);
    CHILD_ASSERT (journal_durable_seq (journal) == 350);
    _exit (0);
}

START_TEST (test_power_cut_always)
{
    tfault_tail_t tails [] = { TFAULT_TAIL_NONE, TFAULT_TAIL_ZEROS, TFAULT_TAIL_GARBAGE };
    size_t sizes [] = { 0, 4096, 100 };
    for (int t = 0; t < 3; t++) {
        tproc_dir_t *tmp = tproc_dir_new ();
        char *dir = tproc_dir_path (tmp, "data");
        tfault_t *fault = tfault_attach (dir);
        ck_assert_ptr_nonnull (fault);
        s_count = 0;
        pid_t pid = fork ();
        if (pid == 0)
            s_commit_then_die (dir);
        s_wait_child (pid);
        s_cut (fault, dir, tails [t], sizes [t]);
        //  Exactly what was committed: the 5 unsynced records are gone.
        s_expect_reopened (dir, JOURNAL_FSYNC_ALWAYS, 350);
        tfault_destroy (&fault);
        free (dir);
        tproc_dir_destroy (&tmp);
    }
}
END_TEST

//  Waits until `journal`'s durable sequence reaches `seq` (5 s).
static bool
s_wait_durable (journal_t *journal, uint64_t seq)
{
    int64_t deadline = pclock_mono_ms () + 5000;
    while (journal_durable_seq (journal) < seq && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    return journal_durable_seq (journal) >= seq;
}

//  In a child, under EVERYSEC: records, a compaction whose child never
//  gets to write (the test hook holds it back), more records, until the
//  sync thread says all are durable; then a crash. The old log's tail
//  was never synced by the loop: the thread must have synced it, and the
//  new log's name, before it counted the new log's records.
static void
s_switch_then_die (const char *dir)
{
    char why [512];
    journal_t *journal = s_child_open (dir, JOURNAL_FSYNC_EVERYSEC);
    for (int i = 0; i < 100; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_flush (journal) == 0);
    CHILD_ASSERT (journal_compact (journal, s_write_state, NULL, why, sizeof why) == 0);
    for (int i = 0; i < 100; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_flush (journal) == 0);
    CHILD_ASSERT (s_wait_durable (journal, 200));
    _exit (0);
}

START_TEST (test_power_cut_everysec_switch)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = tfault_attach (dir);
    s_count = 0;
    setenv ("PARLEY_TEST_COMPACT_DELAY_MS", "60000", 1);
    pid_t pid = fork ();
    if (pid == 0)
        s_switch_then_die (dir);
    unsetenv ("PARLEY_TEST_COMPACT_DELAY_MS");
    s_wait_child (pid);
    s_cut (fault, dir, TFAULT_TAIL_GARBAGE, 300);
    s_expect_reopened (dir, JOURNAL_FSYNC_EVERYSEC, 200);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  In a child: a sync fails mid-way; nothing is durable until the
//  snapshot; then the process dies.
static void
s_fail_then_heal (const char *dir, tfault_t *fault)
{
    journal_t *journal = s_child_open (dir, JOURNAL_FSYNC_ALWAYS);
    journal_set_snapshot (journal, s_write_state, NULL);
    for (int i = 0; i < 10; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_commit (journal) == 0);
    CHILD_ASSERT (journal_durable_seq (journal) == 10);
    tfault_fail_sync (fault, 1);
    for (int i = 0; i < 10; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_commit (journal) == -1);
    CHILD_ASSERT (tfault_failed_syncs (fault) == 1);
    CHILD_ASSERT (!journal_healthy (journal));
    CHILD_ASSERT (journal_health_error (journal) == EIO);
    //  The disk answers again, but a retry would report the pages the
    //  failed sync dropped as durable: it is not tried.
    CHILD_ASSERT (journal_commit (journal) == -1);
    CHILD_ASSERT (journal_durable_seq (journal) == 10);
    CHILD_ASSERT (journal_holds_replies (journal));
    for (int i = 0; i < 10; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_flush (journal) == 0);
    CHILD_ASSERT (journal_durable_seq (journal) == 10);
    journal_stats_t stats;
    journal_stats (journal, &stats);
    CHILD_ASSERT (stats.sync_errors == 1 && !stats.healthy);
    //  The heal: a snapshot of everything.
    journal_tick (journal);
    journal_compact_wait (journal);
    CHILD_ASSERT (journal_healthy (journal));
    CHILD_ASSERT (journal_durable_seq (journal) == 30);
    CHILD_ASSERT (!journal_holds_replies (journal));
    journal_stats (journal, &stats);
    CHILD_ASSERT (stats.heals == 1 && stats.healthy);
    for (int i = 0; i < 10; i++)
        CHILD_ASSERT (s_append (journal) == 0);
    CHILD_ASSERT (journal_commit (journal) == 0);
    CHILD_ASSERT (journal_durable_seq (journal) == 40);
    _exit (0);
}

START_TEST (test_sync_failure_heals)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = tfault_attach (dir);
    s_count = 0;
    pid_t pid = fork ();
    if (pid == 0)
        s_fail_then_heal (dir, fault);
    s_wait_child (pid);
    //  The cut zeroes what the failed sync may have dropped (r10..r19 in
    //  log.1): only the snapshot brings them back.
    s_cut (fault, dir, TFAULT_TAIL_ZEROS, 4096);
    s_expect_reopened (dir, JOURNAL_FSYNC_ALWAYS, 40);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST


START_TEST (test_everysec_failure_heals)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = tfault_attach (dir);
    s_count = 0;
    journal_t *journal = s_open (dir, JOURNAL_FSYNC_EVERYSEC, NULL);
    journal_set_snapshot (journal, s_write_state, NULL);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_append (journal), 0);
    ck_assert_int_eq (journal_flush (journal), 0);
    ck_assert (s_wait_durable (journal, 10));
    //  Every sync fails from now on, the heal's too.
    tfault_fail_sync (fault, -1);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_append (journal), 0);
    ck_assert_int_eq (journal_flush (journal), 0);
    int64_t deadline = pclock_mono_ms () + 5000;
    while (journal_healthy (journal) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    ck_assert (!journal_healthy (journal));
    ck_assert_int_eq (journal_health_error (journal), EIO);
    ck_assert_uint_eq (journal_durable_seq (journal), 10);
    journal_tick (journal);
    journal_compact_wait (journal);
    ck_assert (!journal_healthy (journal));
    journal_stats_t stats;
    journal_stats (journal, &stats);
    ck_assert_uint_ge (stats.sync_errors, 1);
    ck_assert_uint_eq (stats.heals, 0);
    //  The disk is well again: the next heal (at most a second after the
    //  last try) brings everything back.
    tfault_fail_sync (fault, 0);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (s_append (journal), 0);
    ck_assert_int_eq (journal_flush (journal), 0);
    deadline = pclock_mono_ms () + 10000;
    while (!journal_healthy (journal) && pclock_mono_ms () < deadline) {
        journal_tick (journal);
        journal_compact_wait (journal);
        pclock_sleep_ms (20);
    }
    ck_assert (journal_healthy (journal));
    ck_assert_uint_eq (journal_durable_seq (journal), 30);
    journal_destroy (&journal);
    s_expect_reopened (dir, JOURNAL_FSYNC_EVERYSEC, 30);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  The wall clock an hour ahead: a wait computed on it would last an
//  hour; the sync thread's is on the monotonic clock.
START_TEST (test_everysec_wall_clock)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = tfault_attach (dir);
    tfault_realtime_offset (fault, 3600);
    s_count = 0;
    journal_t *journal = s_open (dir, JOURNAL_FSYNC_EVERYSEC, NULL);
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < 10; i++)
            ck_assert_int_eq (s_append (journal), 0);
        ck_assert_int_eq (journal_flush (journal), 0);
        ck_assert_msg (s_wait_durable (journal, (uint64_t) round * 10),
                       "round %d: not synced within 5 s", round);
    }
    tfault_realtime_offset (fault, 0);
    journal_destroy (&journal);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  300 logs, as compactions that keep failing leave them: all replayed,
//  in order.
START_TEST (test_many_logs)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    s_count = 0;
    journal_t *journal = s_open (dir, JOURNAL_FSYNC_NO, NULL);
    char why [512];
    for (int i = 0; i < 300; i++) {
        ck_assert_int_eq (s_append (journal), 0);
        ck_assert_int_eq (journal_compact (journal, s_write_nothing, NULL, why, sizeof why), 0);
        journal_compact_wait (journal);
    }
    journal_stats_t stats;
    journal_stats (journal, &stats);
    ck_assert_uint_eq (stats.generation, 301);
    ck_assert_uint_eq (stats.compactions, 0);
    journal_destroy (&journal);
    recovered_t *recovered = calloc (1, sizeof (recovered_t));
    journal = s_open (dir, JOURNAL_FSYNC_NO, recovered);
    s_expect (recovered, 300);
    //  Appends go on in the newest.
    journal_stats (journal, &stats);
    ck_assert_uint_eq (stats.generation, 301);
    journal_destroy (&journal);
    free (recovered);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  In a child: holds the directory, starts a compaction whose child
//  waits (test hook), tells the test both pids, and waits to be killed.
static void
s_compact_and_wait (const char *dir, int out)
{
    char why [512];
    journal_t *journal = s_child_open (dir, JOURNAL_FSYNC_ALWAYS);
    CHILD_ASSERT (s_append (journal) == 0 && journal_commit (journal) == 0);
    CHILD_ASSERT (journal_compact (journal, s_write_state, NULL, why, sizeof why) == 0);
    //  The compaction child is the only child.
    pid_t pids [2] = { getpid (), 0 };
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) getpid (), (int) getpid ());
    FILE *file = fopen (path, "r");
    CHILD_ASSERT (file && fscanf (file, "%d", &pids [1]) == 1);
    fclose (file);
    CHILD_ASSERT (write (out, pids, sizeof pids) == sizeof pids);
    pause ();
    _exit (0);
}

START_TEST (test_compaction_child_dies_with_broker)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    s_count = 0;
    setenv ("PARLEY_TEST_COMPACT_DELAY_MS", "30000", 1);
    int pipe_fds [2];
    ck_assert_int_eq (pipe (pipe_fds), 0);
    pid_t test = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        //  Gone with the test, whatever happens to it.
        if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != test)
            _exit (1);
        close (pipe_fds [0]);
        s_compact_and_wait (dir, pipe_fds [1]);
    }
    close (pipe_fds [1]);
    unsetenv ("PARLEY_TEST_COMPACT_DELAY_MS");
    pid_t pids [2];
    ck_assert_int_eq (read (pipe_fds [0], pids, sizeof pids), (ssize_t) sizeof pids);
    close (pipe_fds [0]);
    ck_assert_int_eq (pids [0], pid);
    pid_t child = pids [1];
    //  The compaction child closes all but stdin, stdout and stderr.
    int fds [256], count = 0;
    int64_t deadline = pclock_mono_ms () + 5000;
    while ((count = tpid_fds (child, fds, 256)) != 3 && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    //  kill -9 of the "broker": the directory can be used at once.
    int64_t killed = pclock_mono_ms ();
    kill (pid, SIGKILL);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (count == 3, "the compaction child held %d descriptors", count);
    for (int i = 0; i < 3; i++)
        ck_assert_int_lt (fds [i], 3);
    journal_t *journal = NULL;
    char why [512];
    while (!journal && pclock_mono_ms () - killed < 5000) {
        journal = journal_open (dir, JOURNAL_FSYNC_ALWAYS, 1u << 30, why, sizeof why);
        if (!journal)
            pclock_sleep_ms (10);
    }
    int64_t took = pclock_mono_ms () - killed;
    ck_assert_msg (journal, "still locked after 5 s: %s", why);
    ck_assert_msg (took < 1000, "locked for %lld ms after the kill", (long long) took);
    deadline = pclock_mono_ms () + 5000;
    while (!tpid_dead (child) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    ck_assert_msg (tpid_dead (child), "the compaction child %d outlived its broker", (int) child);
    recovered_t *recovered = calloc (1, sizeof (recovered_t));
    ck_assert_msg (journal_recover (journal, false, s_collect, s_collect, recovered, why,
                                    sizeof why) == 0, "%s", why);
    s_expect (recovered, 1);
    journal_destroy (&journal);
    free (recovered);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

int
main (int argc, char **argv)
{
    tfault_reexec (argv);
    Suite *suite = suite_create ("journal");
    TCase *tc = tcase_create ("journal");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_power_cut_always);
    tcase_add_test (tc, test_power_cut_everysec_switch);
    tcase_add_test (tc, test_sync_failure_heals);
    tcase_add_test (tc, test_everysec_failure_heals);
    tcase_add_test (tc, test_everysec_wall_clock);
    tcase_add_test (tc, test_many_logs);
    tcase_add_test (tc, test_compaction_child_dies_with_broker);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
