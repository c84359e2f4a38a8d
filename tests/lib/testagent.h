// SPDX-License-Identifier: MIT
/*  testagent - shared steps of the suites that run parley-agent as a
    process (check_agent_e2e, check_agent_lifecycle): reading its SUMMARY
    line, and mail waiting for it before it starts.
*/
#ifndef PARLEY_TESTAGENT_H
#define PARLEY_TESTAGENT_H

#include "testclient.h"

//  The value of "key=" in the SUMMARY line of an agent's output `out`, a
//  quoted one with its quotes (static buffer: one per expression). Fails
//  the running test when there is no such line or key.
const char *testagent_summary (const char *out, const char *key);
//  `count` messages for `to` (each `body`, or "m<i>" when `body` is NULL),
//  which is registered first (HELLO, then a BYE that keeps its mail). They
//  are sent by "Sender", whose client is returned still connected (the
//  caller destroys it).
testclient_t *testagent_mail_for (const char *router, const char *to, int count,
                                  const char *body);

#endif
