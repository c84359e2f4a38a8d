// SPDX-License-Identifier: MIT
/*  tproc - test helpers: run binaries under test as child processes.

    For tests that exercise a binary the way a user does (parley-tap, the
    network-namespace script): start it with arguments, read what it prints
    on stdout and stderr, signal it, and wait for it with a deadline that
    kills it instead of hanging the suite. Children get PR_SET_PDEATHSIG, so
    a test that fails (Check forks each test) takes its children with it.

    Also a temporary directory that is removed with everything in it, for
    record files and ipc:// endpoints, so suites can run concurrently. It is
    made under $TMPDIR, which testsuite_run points at the suite's own
    temporary root (testsuite.h): a test that fails or times out (Check
    kills its forked process before destroy runs) leaves its folder there,
    and the root goes when the suite ends.
*/
#ifndef PARLEY_TPROC_H
#define PARLEY_TPROC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

//  A temporary directory "$TMPDIR/parley-test-XXXXXX" (/tmp without
//  TMPDIR), removed recursively by destroy.
typedef struct _tproc_dir_t tproc_dir_t;
tproc_dir_t *tproc_dir_new (void);
void tproc_dir_destroy (tproc_dir_t **self_p);
const char *tproc_dir_name (tproc_dir_t *self);
//  "<dir>/<name>" and "ipc://<dir>/<name>"; the caller frees.
char *tproc_dir_path (tproc_dir_t *self, const char *name);
char *tproc_dir_endpoint (tproc_dir_t *self, const char *name);
//  Removes `path` and everything under it (symlinks are not followed).
//  0 on success (or if it did not exist), -1 otherwise.
int tproc_remove_tree (const char *path);

//  A running child.
typedef struct _tproc_t tproc_t;
//  argv [0] is looked up in $PARLEY_BIN_DIR when `bin_dir`, else in PATH.
//  NULL-terminated argv. Extra environment "NAME=value" strings in `env`
//  (NULL-terminated, may be NULL).
tproc_t *tproc_start (const char *const *argv, bool bin_dir, const char *const *env);
//  parley-agent from PARLEY_BIN_DIR as `id` on `router`, its memory in
//  `memdir`, logging at `log_level`, then the flags in `extra` (NULL-ended,
//  may be NULL; at most 36). NULL if it cannot be started.
tproc_t *tproc_agent (const char *router, const char *id, const char *memdir,
                      const char *log_level, const char *const *extra);
void tproc_destroy (tproc_t **self_p);          //  kills it if still running
pid_t tproc_pid (tproc_t *self);
//  Reads what is available for up to timeout_ms; false once stdout and
//  stderr are both closed.
bool tproc_read (tproc_t *self, int timeout_ms);
//  Reads until `needle` appears in stdout or timeout_ms passes.
bool tproc_wait_for (tproc_t *self, const char *needle, int timeout_ms);
//  The same for stderr (where the binaries log).
bool tproc_wait_for_err (tproc_t *self, const char *needle, int timeout_ms);
const char *tproc_out (tproc_t *self);
const char *tproc_err (tproc_t *self);
void tproc_signal (tproc_t *self, int signum);
//  True once the child has exited (non-blocking); collects its status.
bool tproc_exited (tproc_t *self);
//  Reads until EOF and waits; after timeout_ms kills it (SIGKILL).
//  Returns the exit code, 128 + signal if killed by one, -1 on timeout.
int tproc_wait (tproc_t *self, int timeout_ms);

//  Runs to completion (60 s deadline) and returns the finished child.
tproc_t *tproc_run (const char *const *argv, bool bin_dir);
//  Runs $PARLEY_BIN_DIR/parley-tap with these arguments (NULL-terminated).
tproc_t *tproc_tap (const char *const *args);
int tproc_status (tproc_t *self);               //  after tproc_wait / tproc_run

//  Small text helpers.
int tproc_count_lines (const char *text);
//  Every line parsed as JSON, as an array; NULL (and the line on stderr)
//  if any line is not JSON.
json_t *tproc_json_lines (const char *text);
bool tproc_write_file (const char *path, const char *text);

#endif
