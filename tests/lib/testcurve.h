// SPDX-License-Identifier: MIT
/*  testcurve - a CURVE broker for tests, and the keys it accepts.

    Keys are made with pcurve_keygen (what parley-keygen runs) in a fresh
    directory per test: DIR/keys holds the pairs, DIR/allow the public
    halves the broker accepts. One broker at a time per test process.
*/
#ifndef PARLEY_TESTCURVE_H
#define PARLEY_TESTCURVE_H

#include <stdbool.h>
#include "testbroker.h"
#include "testclient.h"

//  A key pair DIR/keys/NAME; `allowed` also copies the public half into the
//  allowlist. Returns the pair's path (a static buffer: copy it).
const char *testcurve_key (const char *name, const char *agents, unsigned rights, bool allowed);
//  A CURVE broker with its own pair and an (initially empty) allowlist,
//  and `args` (NULL-terminated, may be NULL) on its command line.
void testcurve_start (const char *const *args);
void testcurve_stop (void);
testbroker_t *testcurve_broker (void);
const char *testcurve_server (void);    //  the broker's public certificate
const char *testcurve_allow (void);     //  the allowlist directory
const char *testcurve_keys (void);
//  A client of the broker's ROUTER with the pair at `key`.
testclient_t *testcurve_client (const char *key);

#endif
