// SPDX-License-Identifier: MIT
/*  check_sdnotify - the broker and the agent under a Type=notify unit, as
    systemd sees them: a real AF_UNIX datagram socket named by
    $NOTIFY_SOCKET receives what libsystemd's sd_notify sends, and journald
    priorities appear when stderr is the stream $JOURNAL_STREAM names.

    The broker: READY=1 once it serves (its ready file, written after the
    sockets are bound and the journal recovered, exists by then), WATCHDOG=1
    at half of $WATCHDOG_USEC when that is set for it, STOPPING=1 on
    SIGTERM. The agent: READY=1 after its WELCOME, STOPPING=1 at the end.
*/
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  A notify socket in a fresh directory, named in $NOTIFY_SOCKET.
typedef struct {
    tproc_dir_t *dir;
    int fd;
    char log [8192];            //  every datagram, each followed by '|'
} s_notify_t;

static void
s_notify_open (s_notify_t *self)
{
    memset (self, 0, sizeof *self);
    self->dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (self->dir);
    char *path = tproc_dir_path (self->dir, "notify");
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    ck_assert_uint_lt (strlen (path), sizeof addr.sun_path);
    strcpy (addr.sun_path, path);
    self->fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge (self->fd, 0);
    ck_assert_int_eq (bind (self->fd, (struct sockaddr *) &addr, sizeof addr), 0);
    ck_assert_int_eq (setenv ("NOTIFY_SOCKET", path, 1), 0);
    free (path);
}

static void
s_notify_close (s_notify_t *self)
{
    unsetenv ("NOTIFY_SOCKET");
    unsetenv ("WATCHDOG_USEC");
    unsetenv ("WATCHDOG_PID");
    close (self->fd);
    tproc_dir_destroy (&self->dir);
}

//  Receives datagrams until the log holds `count` copies of `state` or
//  timeout_ms passes. True if it got them.
static bool
s_notify_wait (s_notify_t *self, const char *state, int count, int timeout_ms)
{
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    for (;;) {
        int seen = 0;
        for (const char *at = self->log; (at = strstr (at, state)); at += strlen (state))
            seen++;
        if (seen >= count)
            return true;
        int64_t left = deadline - pclock_mono_ms ();
        if (left <= 0)
            return false;
        struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
        if (poll (&pfd, 1, (int) left) <= 0)
            continue;
        char datagram [1024];
        ssize_t n = recv (self->fd, datagram, sizeof datagram - 1, 0);
        ck_assert_int_gt (n, 0);
        datagram [n] = 0;
        size_t used = strlen (self->log);
        ck_assert_uint_lt (used + (size_t) n + 2, sizeof self->log);
        snprintf (self->log + used, sizeof self->log - used, "%s|", datagram);
    }
}

static bool
s_exists (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0;
}

START_TEST (test_broker_ready_watchdog_stopping)
{
    s_notify_t notify;
    s_notify_open (&notify);
    //  100 ms between pings: half of the 200 ms systemd would allow.
    setenv ("WATCHDOG_USEC", "200000", 1);
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    ck_assert_msg (s_notify_wait (&notify, "READY=1", 1, 10000), "no READY=1: %s", notify.log);
    //  READY names what serves, and came after the sockets were bound.
    ck_assert_ptr_nonnull (strstr (notify.log, "READY=1\nSTATUS=serving 0 agents|"));
    char ready [1100];
    snprintf (ready, sizeof ready, "%s/ready", testbroker_dir (broker));
    ck_assert (s_exists (ready));
    ck_assert_msg (s_notify_wait (&notify, "WATCHDOG=1", 3, 10000), "no watchdog: %s", notify.log);
    ck_assert_ptr_null (strstr (notify.log, "STOPPING=1"));
    ck_assert_int_eq (testbroker_stop (&broker), 0);
    ck_assert_msg (s_notify_wait (&notify, "STOPPING=1", 1, 1000), "no STOPPING=1: %s", notify.log);
    //  READY first, STOPPING last.
    ck_assert (strstr (notify.log, "READY=1") == notify.log);
    const char *stopping = strstr (notify.log, "STOPPING=1|");
    ck_assert_str_eq (stopping, "STOPPING=1|");
    s_notify_close (&notify);
}
END_TEST

//  No watchdog unless systemd asks for one for this very process: without
//  $WATCHDOG_USEC, or with $WATCHDOG_PID naming another process.
START_TEST (test_broker_watchdog_only_when_asked)
{
    for (int round = 0; round < 2; round++) {
        s_notify_t notify;
        s_notify_open (&notify);
        if (round == 1) {
            setenv ("WATCHDOG_USEC", "20000", 1);
            setenv ("WATCHDOG_PID", "1", 1);
        }
        testbroker_t *broker = testbroker_start (NULL);
        ck_assert_ptr_nonnull (broker);
        ck_assert_msg (s_notify_wait (&notify, "READY=1", 1, 10000), "no READY=1: %s", notify.log);
        ck_assert_int_eq (testbroker_stop (&broker), 0);
        ck_assert_msg (s_notify_wait (&notify, "STOPPING=1", 1, 1000), "no STOPPING=1: %s",
                       notify.log);
        ck_assert_msg (!strstr (notify.log, "WATCHDOG"), "round %d: %s", round, notify.log);
        s_notify_close (&notify);
    }
}
END_TEST

//  The agent is ready once the broker welcomed it, not when it starts.
START_TEST (test_agent_ready_after_welcome)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    s_notify_t notify;
    s_notify_open (&notify);
    char *memory = tproc_dir_path (notify.dir, "memory");
    const char *argv [] = { "parley-agent", "--broker", testbroker_router (broker),
                            "--id", "Agent1", "--memory-dir", memory, "--max-steps", "3",
                            "--step-delay-ms", "10", NULL };
    tproc_t *agent = tproc_start (argv, true, NULL);
    ck_assert_ptr_nonnull (agent);
    ck_assert_msg (s_notify_wait (&notify, "STOPPING=1", 1, 60000), "agent said: %s\n%s",
                   notify.log, tproc_err (agent));
    ck_assert_int_eq (tproc_wait (agent, 30000), 0);
    ck_assert_str_eq (notify.log, "READY=1\nSTATUS=connected|STOPPING=1|");
    //  Its log says it connected before it told systemd so.
    ck_assert_ptr_nonnull (strstr (tproc_err (agent), "connected to "));
    tproc_destroy (&agent);
    free (memory);
    s_notify_close (&notify);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  A broker whose stderr is the stream $JOURNAL_STREAM names marks each
//  line with its priority; the same broker with stderr elsewhere does not.
START_TEST (test_broker_journal_priorities)
{
    const char *journal [] = { "sh", "-c",
        "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) "
        "exec \"$PARLEY_BIN_DIR/parley-broker\" --data-dir none --router ipc:///nonexistent/parley/x", NULL };
    tproc_t *run = tproc_run (journal, false);
    ck_assert_ptr_nonnull (run);
    ck_assert_int_ne (tproc_status (run), 0);
    ck_assert_msg (testsuite_matches (tproc_err (run), "^<3>[0-9-]+T[0-9:.]+Z ERROR parley-broker"
                                      "\\[[0-9]+\\]: cannot start: "), "%s", tproc_err (run));
    tproc_destroy (&run);

    const char *other [] = { "sh", "-c",
        "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/1) "
        "exec \"$PARLEY_BIN_DIR/parley-broker\" --data-dir none --router ipc:///nonexistent/parley/x", NULL };
    run = tproc_run (other, false);
    ck_assert_ptr_nonnull (run);
    ck_assert_int_ne (tproc_status (run), 0);
    ck_assert_msg (testsuite_matches (tproc_err (run), "^[0-9-]+T[0-9:.]+Z ERROR parley-broker"
                                      "\\[[0-9]+\\]: cannot start: "), "%s", tproc_err (run));
    tproc_destroy (&run);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("sdnotify");
    TCase *tc = tcase_create ("broker");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_broker_ready_watchdog_stopping);
    tcase_add_test (tc, test_broker_watchdog_only_when_asked);
    tcase_add_test (tc, test_broker_journal_priorities);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("agent");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_agent_ready_after_welcome);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
