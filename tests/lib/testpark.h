// SPDX-License-Identifier: MIT
/*  testpark - helpers the backpressure suites share (check_confirm,
    check_parking): a SEND posted without waiting for its answer (which
    may be parked, or a CONFIRM), a STATS field that must be there, and an
    inbox filled to the broker's --max-inbox. Each fails the running Check
    test when the broker answers something other than what it must.
*/
#ifndef PARLEY_TESTPARK_H
#define PARLEY_TESTPARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "testclient.h"

//  Sends a SEND of `count` messages to `to` (bodies "<prefix>0", ...),
//  `pipelined` if asked, and `wait_ms` when wait >= 0. Returns its id;
//  the answer is not awaited.
uint64_t testpark_send (testclient_t *client, const char *to, const char *prefix, size_t count,
                        bool pipelined, int64_t wait);
//  A STATS_REPLY field; the test fails when it is absent.
uint64_t testpark_stat (testclient_t *client, const char *name);
//  SENDs `count` messages "fill0".. to `to` with wait_ms 0 and checks that
//  all were accepted (a broker started with --max-inbox `count`).
void testpark_fill (testclient_t *client, const char *to, size_t count);

#endif
