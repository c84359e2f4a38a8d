// SPDX-License-Identifier: MIT
/*  openai_server - starts tests/openai_server.py; see openai_server.h.  */
#include "openai_server.h"
#include <check.h>
#include "agent/http.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t s_pid = -1;
static int s_stdin_fd = -1;
static char s_url [64];

const char *
openai_server_start (void)
{
    const char *dir = getenv ("PARLEY_TEST_DIR");
    char script [4096];
    snprintf (script, sizeof script, "%s/openai_server.py", dir ? dir : "tests");
    int in [2], out [2];
    if (pipe (in) != 0 || pipe (out) != 0) {
        perror ("pipe");
        exit (1);
    }
    s_pid = fork ();
    if (s_pid < 0) {
        perror ("fork");
        exit (1);
    }
    if (s_pid == 0) {
        dup2 (in [0], 0);
        dup2 (out [1], 1);
        close (in [0]); close (in [1]); close (out [0]); close (out [1]);
        execlp ("python3", "python3", script, (char *) NULL);
        perror ("exec python3");
        _exit (127);
    }
    close (in [0]);
    close (out [1]);
    s_stdin_fd = in [1];
    char line [32] = "";
    ssize_t n = 0, got;
    while (n < (ssize_t) sizeof line - 1 && (got = read (out [0], line + n, 1)) == 1 && line [n] != '\n')
        n++;
    line [n] = 0;
    close (out [0]);
    int port = atoi (line);
    if (port <= 0) {
        fprintf (stderr, "openai_server: %s did not print a port\n", script);
        exit (1);
    }
    snprintf (s_url, sizeof s_url, "http://127.0.0.1:%d", port);
    return s_url;
}

void
openai_server_stop (void)
{
    if (s_pid <= 0)
        return;
    close (s_stdin_fd);
    int status;
    if (waitpid (s_pid, &status, 0) < 0)
        kill (s_pid, SIGKILL);
    s_pid = -1;
}

//  One GET of the server's own paths, as JSON (the caller decrefs).
static json_t *
s_get (const char *path)
{
    char url [512];
    snprintf (url, sizeof url, "%s%s", s_url, path);
    http_t *http = http_new (url, NULL, NULL);
    ck_assert_ptr_nonnull (http);
    json_t *doc = NULL;
    char err [256];
    ck_assert_msg (http_get_json (http, url, 10000, &doc, err, sizeof err) == 0, "%s", err);
    http_destroy (&http);
    return doc;
}

json_t *
openai_server_requests (const char *model)
{
    char path [300];
    snprintf (path, sizeof path, "/requests/%s", model);
    json_t *doc = s_get (path);
    json_t *list = json_incref (json_object_get (doc, "requests"));
    ck_assert (json_is_array (list));
    json_decref (doc);
    return list;
}

void
openai_server_set_down (const char *tag, bool down)
{
    char path [300];
    snprintf (path, sizeof path, "/control/%s/%s", down ? "down" : "up", tag);
    json_decref (s_get (path));
}
