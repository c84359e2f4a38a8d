// SPDX-License-Identifier: MIT
/*  tproc - child processes for tests; see tproc.h.

    Output is kept in growing buffers capped at TPROC_MAX_OUTPUT each; past
    the cap the rest is read and discarded, so a runaway child cannot exhaust
    the test's memory, and the pipe never fills (which would block it).
*/
#include <czmq.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pclock.h"
#include "tproc.h"

#define TPROC_MAX_OUTPUT (64 * 1024 * 1024)

struct _tproc_dir_t {
    char name [256];
};

tproc_dir_t *
tproc_dir_new (void)
{
    tproc_dir_t *self = (tproc_dir_t *) zmalloc (sizeof (tproc_dir_t));
    const char *tmp = getenv ("TMPDIR");
    snprintf (self->name, sizeof self->name, "%s/parley-test-XXXXXX", tmp && *tmp? tmp: "/tmp");
    if (!mkdtemp (self->name)) {
        free (self);
        return NULL;
    }
    return self;
}

static int
s_remove (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    return remove (path);
}

int
tproc_remove_tree (const char *path)
{
    assert (path);
    struct stat st;
    if (lstat (path, &st) != 0)
        return errno == ENOENT? 0: -1;
    return nftw (path, s_remove, 16, FTW_DEPTH | FTW_PHYS) == 0? 0: -1;
}

void
tproc_dir_destroy (tproc_dir_t **self_p)
{
    assert (self_p);
    tproc_dir_t *self = *self_p;
    if (!self)
        return;
    tproc_remove_tree (self->name);
    free (self);
    *self_p = NULL;
}

const char *tproc_dir_name (tproc_dir_t *self) { assert (self); return self->name; }

char *
tproc_dir_path (tproc_dir_t *self, const char *name)
{
    assert (self);
    return zsys_sprintf ("%s/%s", self->name, name);
}

char *
tproc_dir_endpoint (tproc_dir_t *self, const char *name)
{
    assert (self);
    return zsys_sprintf ("ipc://%s/%s", self->name, name);
}

typedef struct {
    int fd;
    char *data;
    size_t size;
    size_t capacity;
} s_stream_t;

struct _tproc_t {
    pid_t pid;
    s_stream_t out, err;
    bool exited;
    int status;
};

static void
s_stream_read (s_stream_t *stream)
{
    char buffer [65536];
    ssize_t got = read (stream->fd, buffer, sizeof buffer);
    if (got <= 0) {
        if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            close (stream->fd);
            stream->fd = -1;
        }
        return;
    }
    if (stream->size + (size_t) got > TPROC_MAX_OUTPUT)
        return;
    if (stream->size + (size_t) got + 1 > stream->capacity) {
        stream->capacity = (stream->size + (size_t) got + 1) * 2;
        stream->data = (char *) realloc (stream->data, stream->capacity);
        assert (stream->data);
    }
    memcpy (stream->data + stream->size, buffer, (size_t) got);
    stream->size += (size_t) got;
    stream->data [stream->size] = 0;
}

tproc_t *
tproc_start (const char *const *argv, bool bin_dir, const char *const *env)
{
    assert (argv && argv [0]);
    char *program = NULL;
    if (bin_dir) {
        const char *dir = getenv ("PARLEY_BIN_DIR");
        program = zsys_sprintf ("%s/%s", dir? dir: "bin", argv [0]);
    }
    else
        program = strdup (argv [0]);
    int out [2], err [2];
    if (pipe (out) || pipe (err)) {
        free (program);
        return NULL;
    }
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != parent)
            _exit (126);
        int null = open ("/dev/null", O_RDONLY);
        dup2 (null, 0);
        dup2 (out [1], 1);
        dup2 (err [1], 2);
        close (out [0]); close (out [1]); close (err [0]); close (err [1]);
        for (int i = 0; env && env [i]; i++)
            putenv ((char *) env [i]);
        execvp (program, (char *const *) argv);
        fprintf (stderr, "cannot run %s: %s\n", program, strerror (errno));
        _exit (127);
    }
    free (program);
    close (out [1]);
    close (err [1]);
    if (pid < 0) {
        close (out [0]);
        close (err [0]);
        return NULL;
    }
    tproc_t *self = (tproc_t *) zmalloc (sizeof (tproc_t));
    self->pid = pid;
    self->out.fd = out [0];
    self->err.fd = err [0];
    self->out.data = strdup ("");
    self->err.data = strdup ("");
    self->out.capacity = self->err.capacity = 1;
    return self;
}

void
tproc_destroy (tproc_t **self_p)
{
    assert (self_p);
    tproc_t *self = *self_p;
    if (!self)
        return;
    if (!tproc_exited (self)) {
        kill (self->pid, SIGKILL);
        waitpid (self->pid, NULL, 0);
    }
    if (self->out.fd >= 0)
        close (self->out.fd);
    if (self->err.fd >= 0)
        close (self->err.fd);
    free (self->out.data);
    free (self->err.data);
    free (self);
    *self_p = NULL;
}

pid_t tproc_pid (tproc_t *self) { assert (self); return self->pid; }
const char *tproc_out (tproc_t *self) { assert (self); return self->out.data; }
const char *tproc_err (tproc_t *self) { assert (self); return self->err.data; }
int tproc_status (tproc_t *self) { assert (self); return self->exited? self->status: -1; }

bool
tproc_read (tproc_t *self, int timeout_ms)
{
    assert (self);
    struct pollfd fds [2];
    s_stream_t *streams [2];
    nfds_t count = 0;
    if (self->out.fd >= 0) {
        fds [count] = (struct pollfd) { self->out.fd, POLLIN, 0 };
        streams [count++] = &self->out;
    }
    if (self->err.fd >= 0) {
        fds [count] = (struct pollfd) { self->err.fd, POLLIN, 0 };
        streams [count++] = &self->err;
    }
    if (count == 0)
        return false;
    if (poll (fds, count, timeout_ms) > 0)
        for (nfds_t i = 0; i < count; i++)
            if (fds [i].revents)
                s_stream_read (streams [i]);
    return self->out.fd >= 0 || self->err.fd >= 0;
}

//  By the clock: tproc_read returns whenever output arrives, so a count of
//  reads says nothing about how long a chatty child had.
static bool
s_wait_for (tproc_t *self, s_stream_t *stream, const char *needle, int timeout_ms)
{
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    while (!strstr (stream->data, needle)) {
        int64_t left = deadline - pclock_mono_ms ();
        if (left <= 0 || !tproc_read (self, (int) (left < 100? left: 100)))
            return strstr (stream->data, needle) != NULL;
    }
    return true;
}

bool
tproc_wait_for (tproc_t *self, const char *needle, int timeout_ms)
{
    assert (self && needle);
    return s_wait_for (self, &self->out, needle, timeout_ms);
}

bool
tproc_wait_for_err (tproc_t *self, const char *needle, int timeout_ms)
{
    assert (self && needle);
    return s_wait_for (self, &self->err, needle, timeout_ms);
}

void
tproc_signal (tproc_t *self, int signum)
{
    assert (self);
    if (!self->exited)
        kill (self->pid, signum);
}

static void
s_collect (tproc_t *self, int status)
{
    self->exited = true;
    if (WIFEXITED (status))
        self->status = WEXITSTATUS (status);
    else
    if (WIFSIGNALED (status))
        self->status = 128 + WTERMSIG (status);
    else
        self->status = -1;
}

bool
tproc_exited (tproc_t *self)
{
    assert (self);
    if (self->exited)
        return true;
    int status;
    if (waitpid (self->pid, &status, WNOHANG) == self->pid)
        s_collect (self, status);
    return self->exited;
}

int
tproc_wait (tproc_t *self, int timeout_ms)
{
    assert (self);
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    while (pclock_mono_ms () < deadline) {
        if (!tproc_read (self, 100) && tproc_exited (self))
            return self->status;
        //  A child may exit while a grandchild still holds the pipes.
        if (tproc_exited (self) && self->out.fd < 0)
            return self->status;
    }
    if (tproc_exited (self))
        return self->status;
    kill (self->pid, SIGKILL);
    int status;
    waitpid (self->pid, &status, 0);
    self->exited = true;
    self->status = -1;
    return -1;
}

tproc_t *
tproc_run (const char *const *argv, bool bin_dir)
{
    tproc_t *self = tproc_start (argv, bin_dir, NULL);
    if (self)
        tproc_wait (self, 60000);
    return self;
}

tproc_t *
tproc_tap (const char *const *args)
{
    const char *argv [64] = { "parley-tap" };
    int n = 1;
    for (int i = 0; args [i] && n < 63; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    return tproc_run (argv, true);
}

int
tproc_count_lines (const char *text)
{
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    return lines;
}

json_t *
tproc_json_lines (const char *text)
{
    json_t *array = json_array ();
    const char *line = text;
    while (*line) {
        const char *end = strchr (line, '\n');
        size_t len = end? (size_t) (end - line): strlen (line);
        json_error_t error;
        json_t *value = json_loadb (line, len, 0, &error);
        if (!value) {
            fprintf (stderr, "not JSON (%s): %.*s\n", error.text, (int) len, line);
            json_decref (array);
            return NULL;
        }
        json_array_append_new (array, value);
        line += len + (end? 1: 0);
    }
    return array;
}

bool
tproc_write_file (const char *path, const char *text)
{
    FILE *file = fopen (path, "wb");
    if (!file)
        return false;
    size_t len = strlen (text);
    bool ok = fwrite (text, 1, len, file) == len;
    return fclose (file) == 0 && ok;
}

tproc_t *
tproc_agent (const char *router, const char *id, const char *memdir, const char *log_level,
             const char *const *extra)
{
    assert (router && id && memdir && log_level);
    const char *argv [48] = { "parley-agent", "--broker", router, "--id", id,
                              "--memory-dir", memdir, "--log-level", log_level };
    size_t argc = 9;
    for (size_t i = 0; extra && extra [i] && argc < 45; i++)
        argv [argc++] = extra [i];
    argv [argc] = NULL;
    return tproc_start (argv, true, NULL);
}
