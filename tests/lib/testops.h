// SPDX-License-Identifier: MIT
/*  testops - helpers of the operations suites (check_ops: systemd units and
    `make install`; check_ops_docker: compose file, Dockerfile, scripts).

    These suites run real tools (systemd-analyze, make, docker-compose,
    dpkg) on the repository's files. testops_setup finds the repository
    (PARLEY_TEST_DIR/..) and the binaries under test (PARLEY_BIN_DIR) as
    absolute paths, since the tools run in other directories.
*/
#ifndef PARLEY_TESTOPS_H
#define PARLEY_TESTOPS_H

#include <check.h>

//  Directories are kept shorter than PATH_MAX so a directory plus a file
//  name always fits a PATH_MAX buffer.
#define TESTOPS_DIR_MAX 1024

typedef struct {
    int status;         //  exit code, or 128 + signal, or 127 if not run
    char *output;       //  stdout and stderr together (caller frees)
} testops_result_t;

//  Resolves the repository and binary directories; fails the running test
//  without PARLEY_TEST_DIR and PARLEY_BIN_DIR. Call first in each test.
void testops_setup (void);
const char *testops_root (void);       //  the repository
const char *testops_bin (void);        //  the binaries under test

//  Runs argv (NULL-terminated, argv [0] looked up in PATH) in `cwd` (NULL:
//  here) to completion, capturing stdout and stderr together. A nested
//  make does not join the running make's jobserver.
testops_result_t testops_run (const char *cwd, char *const argv []);
//  Fails the running test, naming the Debian package, if `tool` is not in
//  PATH: scripts/deps.sh installs every tool, and a check that silently
//  did nothing would hide a broken file.
void testops_require_tool (const char *tool, const char *package);

#endif
