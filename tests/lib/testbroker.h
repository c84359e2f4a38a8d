// SPDX-License-Identifier: MIT
/*  testbroker - runs the real bin/parley-broker as a child process for tests.

    The broker binds every socket on an ephemeral loopback port
    (tcp://127.0.0.1:*) and writes its bound endpoints to a ready file in a
    private temporary directory, so any number of suites can run at once.
    Its log goes to broker.log in that directory (testbroker_log prints it).

        const char *args [] = { "--overflow", "drop-oldest", NULL };
        testbroker_t *broker = testbroker_start (args);
        ... connect to testbroker_router (broker) ...
        int status = testbroker_stop (&broker);     //  SIGTERM; exit code

    The binary is $PARLEY_BIN_DIR/parley-broker.
*/
#ifndef PARLEY_TESTBROKER_H
#define PARLEY_TESTBROKER_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct _testbroker_t testbroker_t;

//  Extra arguments (NULL-terminated, may be NULL). NULL if the broker did
//  not come up within 30 s (its log is printed to stderr).
testbroker_t *testbroker_start (const char *const *args);
//  SIGTERM, wait up to 30 s (then SIGKILL). Returns the exit code, or
//  128 + signal if it died from a signal, -1 if it had to be killed.
int testbroker_stop (testbroker_t **self_p);
//  Sends a signal without waiting.
void testbroker_signal (testbroker_t *self, int signum);
//  Waits up to timeout_ms for the process to end; same result as stop, or
//  -2 if it is still running.
int testbroker_wait (testbroker_t *self, int timeout_ms);
//  kill -9 (a crash), waits up to 10 s for it to end, and releases it.
void testbroker_kill (testbroker_t **self_p);

const char *testbroker_router (testbroker_t *self);
const char *testbroker_pub (testbroker_t *self);
const char *testbroker_tap (testbroker_t *self);
pid_t testbroker_pid (testbroker_t *self);
const char *testbroker_dir (testbroker_t *self);
//  Prints the broker's log to stderr (for failing tests).
void testbroker_log (testbroker_t *self);
//  True if the log contains `text`.
bool testbroker_log_contains (testbroker_t *self, const char *text);

#endif
