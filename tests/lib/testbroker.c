// SPDX-License-Identifier: MIT
/*  testbroker - spawn/stop the real broker. See testbroker.h. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pclock.h"
#include "testbroker.h"

#define TESTBROKER_MAX_ARGS 64

struct _testbroker_t {
    pid_t pid;
    bool reaped;
    int status;
    char dir [256];
    char ready [300];
    char logfile [300];
    char router [256];
    char pub [256];
    char tap [256];
};

static bool
s_read_ready (testbroker_t *self)
{
    FILE *file = fopen (self->ready, "r");
    if (!file)
        return false;
    char line [512];
    while (fgets (line, sizeof line, file)) {
        line [strcspn (line, "\n")] = 0;
        char *eq = strchr (line, '=');
        if (!eq)
            continue;
        *eq = 0;
        const char *value = eq + 1;
        if (strcmp (line, "router") == 0)
            snprintf (self->router, sizeof self->router, "%s", value);
        else if (strcmp (line, "pub") == 0)
            snprintf (self->pub, sizeof self->pub, "%s", value);
        else if (strcmp (line, "tap") == 0)
            snprintf (self->tap, sizeof self->tap, "%s", value);
    }
    fclose (file);
    return self->router [0] && self->pub [0];
}

static void
s_exec (testbroker_t *self, const char *const *args)
{
    const char *bindir = getenv ("PARLEY_BIN_DIR");
    char binary [512];
    snprintf (binary, sizeof binary, "%s/parley-broker", bindir ? bindir : "bin");
    const char *argv [TESTBROKER_MAX_ARGS + 16];
    size_t argc = 0;
    argv [argc++] = binary;
    argv [argc++] = "--router";
    argv [argc++] = "tcp://127.0.0.1:*";
    argv [argc++] = "--pub";
    argv [argc++] = "tcp://127.0.0.1:*";
    argv [argc++] = "--tap";
    argv [argc++] = "tcp://127.0.0.1:*";
    argv [argc++] = "--advertise-host";
    argv [argc++] = "127.0.0.1";
    argv [argc++] = "--ready-file";
    argv [argc++] = self->ready;
    //  In memory unless the test gives its own --data-dir (a later flag
    //  wins). The benches set PARLEY_TESTBROKER_DURABLE=1 (scripts/bench.sh):
    //  their figures are the product's default, a journal in a data
    //  directory (here the broker's own temporary one) with fsync everysec.
    char data [320];
    const char *durable = getenv ("PARLEY_TESTBROKER_DURABLE");
    snprintf (data, sizeof data, "%s/data", self->dir);
    argv [argc++] = "--data-dir";
    argv [argc++] = durable && strcmp (durable, "1") == 0 ? data : "none";
    for (size_t i = 0; args && args [i] && i < TESTBROKER_MAX_ARGS; i++)
        argv [argc++] = args [i];
    argv [argc] = NULL;
    int fd = open (self->logfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2 (fd, STDERR_FILENO);
        dup2 (fd, STDOUT_FILENO);
        close (fd);
    }
    execv (binary, (char *const *) argv);
    fprintf (stderr, "testbroker: cannot run %s: %s\n", binary, strerror (errno));
    _exit (127);
}

testbroker_t *
testbroker_start (const char *const *args)
{
    testbroker_t *self = calloc (1, sizeof (testbroker_t));
    assert (self);
    snprintf (self->dir, sizeof self->dir, "%s/parley-test-XXXXXX",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    if (!mkdtemp (self->dir)) {
        free (self);
        return NULL;
    }
    snprintf (self->ready, sizeof self->ready, "%s/ready", self->dir);
    snprintf (self->logfile, sizeof self->logfile, "%s/broker.log", self->dir);
    pid_t parent = getpid ();
    self->pid = fork ();
    assert (self->pid >= 0);
    if (self->pid == 0) {
        //  A test that fails or times out is killed by Check before it can
        //  stop its broker: the broker goes with it instead of running on
        //  as an orphan.
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != parent)
            _exit (126);
        s_exec (self, args);
    }
    int64_t deadline = pclock_mono_ms () + 30000;
    while (pclock_mono_ms () < deadline) {
        if (s_read_ready (self))
            return self;
        if (testbroker_wait (self, 0) != -2)
            break;              //  it exited
        pclock_sleep_ms (10);
    }
    fprintf (stderr, "testbroker: the broker did not come up\n");
    testbroker_log (self);
    testbroker_stop (&self);
    return NULL;
}

static int
s_result (int status)
{
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return -1;
}

int
testbroker_wait (testbroker_t *self, int timeout_ms)
{
    assert (self);
    if (self->reaped)
        return s_result (self->status);
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    while (true) {
        pid_t rc = waitpid (self->pid, &self->status, WNOHANG);
        if (rc == self->pid) {
            self->reaped = true;
            return s_result (self->status);
        }
        if (rc == -1)
            return -1;
        if (pclock_mono_ms () >= deadline)
            return -2;
        pclock_sleep_ms (5);
    }
}

void
testbroker_signal (testbroker_t *self, int signum)
{
    assert (self);
    if (!self->reaped)
        kill (self->pid, signum);
}

static int
s_remove_entry (const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void) sb; (void) type; (void) ftw;
    return remove (path);
}

static void
s_remove_dir (testbroker_t *self)
{
    char path [512];
    //  The journal of a durable (bench) broker.
    snprintf (path, sizeof path, "%s/data", self->dir);
    if (access (path, F_OK) == 0)
        nftw (path, s_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    const char *files [] = { "ready", "broker.log" };
    for (size_t i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/%s", self->dir, files [i]);
        unlink (path);
    }
    rmdir (self->dir);
}

int
testbroker_stop (testbroker_t **self_p)
{
    assert (self_p);
    testbroker_t *self = *self_p;
    if (!self)
        return -1;
    testbroker_signal (self, SIGTERM);
    int result = testbroker_wait (self, 30000);
    if (result == -2) {
        fprintf (stderr, "testbroker: the broker ignored SIGTERM; killing it\n");
        kill (self->pid, SIGKILL);
        waitpid (self->pid, &self->status, 0);
        result = -1;
    }
    //  A sanitizer report or a crash is worth seeing.
    if (result != 0)
        testbroker_log (self);
    s_remove_dir (self);
    free (self);
    *self_p = NULL;
    return result;
}

const char *testbroker_router (testbroker_t *self) { return self->router; }
const char *testbroker_pub (testbroker_t *self) { return self->pub; }
const char *testbroker_tap (testbroker_t *self) { return self->tap; }
pid_t testbroker_pid (testbroker_t *self) { return self->pid; }
const char *testbroker_dir (testbroker_t *self) { return self->dir; }

void
testbroker_log (testbroker_t *self)
{
    FILE *file = fopen (self->logfile, "r");
    if (!file)
        return;
    char line [1024];
    fprintf (stderr, "---- broker log %s ----\n", self->logfile);
    while (fgets (line, sizeof line, file))
        fputs (line, stderr);
    fprintf (stderr, "---- end of broker log ----\n");
    fclose (file);
}

bool
testbroker_log_contains (testbroker_t *self, const char *text)
{
    FILE *file = fopen (self->logfile, "r");
    if (!file)
        return false;
    char line [2048];
    bool found = false;
    while (!found && fgets (line, sizeof line, file))
        found = strstr (line, text) != NULL;
    fclose (file);
    return found;
}

void
testbroker_kill (testbroker_t **self_p)
{
    assert (self_p && *self_p);
    testbroker_signal (*self_p, SIGKILL);
    testbroker_wait (*self_p, 10000);
    testbroker_stop (self_p);
}
