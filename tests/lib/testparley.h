// SPDX-License-Identifier: MIT
/*  testparley - Check-asserting shortcuts for suites that watch the broker
    through libparley (parley_client_t), as an operator tool does.

    A test's own eyes on the broker are an observer: it says HELLO with
    `observe`, so it is no registered agent, keeps no liveness, and shows
    up in no list the test compares. Each helper fails the running test
    when the broker does not answer.
*/
#ifndef PARLEY_TESTPARLEY_H
#define PARLEY_TESTPARLEY_H

#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"

//  An observer named `name`, connected to `router`. `timeout_ms` > 0 sets
//  its reply timeout (and 200 ms between HELLO attempts); otherwise the
//  library's defaults stay.
parley_client_t *testparley_observer (const char *router, const char *name, int64_t timeout_ms);
//  The agents registered now, as "A,B," in `list` (cut to `size`).
void testparley_registered (parley_client_t *eyes, char *list, size_t size);

#endif
