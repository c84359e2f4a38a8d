// SPDX-License-Identifier: MIT
/*  testmail - helpers the broker's mail suites share (check_broker_mail,
    check_broker_channels): SEND of one message, FETCH into a comma-joined
    list of bodies, a STATS counter, LISTEN (an agent that said HELLO is
    testcheck_agent). Each helper fails the running Check test (ck_assert) when the
    broker answers something other than what it must, so tests read as the
    scenario they check.
*/
#ifndef PARLEY_TESTMAIL_H
#define PARLEY_TESTMAIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"
#include "testbroker.h"
#include "testclient.h"
#include "testcheck.h"

//  Sends one message; returns its seq (0 if rejected).
uint64_t testmail_send (testclient_t *client, const char *to, bool channel, const char *body);
//  FETCH (plain, or `stream: true`); writes the bodies joined by ',' into
//  out; returns the count. With last_seq, checks seqs increase and leaves
//  the last one there.
size_t testmail_fetch (testclient_t *client, uint64_t ack, size_t max, char *out, size_t size,
                       uint64_t *last_seq);
size_t testmail_fetch_stream (testclient_t *client, uint64_t ack, size_t max, char *out,
                              size_t size, uint64_t *last_seq);
//  One STATS_REPLY counter.
uint64_t testmail_stat (testclient_t *client, const char *name);
//  LISTEN or UNLISTEN `channel`; the caller checks and destroys the reply.
pmsg_t *testmail_channel_call (testclient_t *client, pmsg_type_t verb, const char *channel);
//  LISTEN, UNLISTEN (OK checked).
void testmail_listen (testclient_t *client, const char *channel);
void testmail_unlisten (testclient_t *client, const char *channel);
//  A MAIL reply's messages as "seq:body,seq:body,..." (at most 64 KiB;
//  caller frees), to compare the mail of two lives of a broker.
char *testmail_listing (const pmsg_t *mail);

#endif
