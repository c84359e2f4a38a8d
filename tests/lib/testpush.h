// SPDX-License-Identifier: MIT
/*  testpush - a consumer over a raw DEALER (testclient) for the pushed
    delivery suite: pushed frames (MAIL_PUSH, id 0) and replies come on one
    socket, so the pump sorts them, keeps every message pushed, and checks
    at every push that the window the consumer asked for holds, counting
    only the acks it has sent. Each helper fails the running Check test
    (ck_assert) when the broker does something other than what it must.
    Every wait is a deadline by the clock.
*/
#ifndef PARLEY_TESTPUSH_H
#define PARLEY_TESTPUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"
#include "testbroker.h"
#include "testclient.h"

#define TESTPUSH_DEADLINE_MS 20000

//  A consumer's view: what it received, what it acknowledged, and the
//  window it asked for (checked at every push).
typedef struct {
    testclient_t *client;
    uint64_t credit, credit_bytes;
    uint64_t *seqs;             //  every seq received, in order
    size_t *sizes;
    char **bodies;
    size_t count, cap;
    uint64_t acked;             //  the highest ack sent
    size_t frames;              //  MAIL_PUSH frames
    pmsg_t *reply;              //  the last non-push frame
} testpush_t;

//  A consumer on `client`, which it owns from then on.
testpush_t *testpush_new (testclient_t *client);
void testpush_destroy (testpush_t **self_p);
//  One frame within `ms`: a push is taken in; any other frame is kept in
//  self->reply. False when nothing came.
bool testpush_pump (testpush_t *self, int ms);
//  Pumps until `count` messages were pushed; fails when none came for
//  TESTPUSH_DEADLINE_MS.
void testpush_wait_count (testpush_t *self, size_t count);
//  Pumps for `ms`; fails if the count is not then exactly `count`.
void testpush_expect_no_more (testpush_t *self, size_t count, int ms);
//  Sends what testclient_begin built and pumps until its reply comes.
pmsg_t *testpush_call (testpush_t *self);
//  CONSUME (credit_bytes 0: left out), checked OK; the window is kept
//  for the checks.
void testpush_consume (testpush_t *self, uint64_t credit, uint64_t credit_bytes);
//  ACK, checked OK.
void testpush_ack (testpush_t *self, uint64_t seq);
//  SEND of `count` messages to `to`, bodies "<prefix><first + i>",
//  `wait_ms` 0 (a full inbox answers at once); returns the last seq, and
//  the accepted count in *accepted (may be NULL).
uint64_t testpush_send_many (testclient_t *client, const char *to, const char *prefix,
                             int first, int count, size_t *accepted);
//  HELLO on a fresh connection with `token` when set; keeps WELCOME's.
testclient_t *testpush_hello_token (testbroker_t *broker, const char *id, char *token,
                                    size_t size);

#endif
