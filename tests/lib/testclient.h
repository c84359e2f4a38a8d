// SPDX-License-Identifier: MIT
/*  testclient - a DEALER client for tests: build a request, get the reply.

    Requests are built with the real encoder (penc) and replies go through
    the real strict decoder (pmsg_decode), so every reply a test sees has
    also passed the protocol's schema check.

        testclient_t *client = testclient_new (testbroker_router (broker));
        pmsg_t *welcome = testclient_hello (client, "Agent1");
        penc_t *enc = testclient_begin (client, PMSG_FETCH, 1);
        penc_kv_uint (enc, "max", 10);
        pmsg_t *mail = testclient_call (client);    //  NULL on timeout
        pmsg_destroy (&mail);

    Replies must match the request id (the broker answers in order); a
    mismatch is reported on stderr and returns NULL. For bad-input tests,
    testclient_send_raw / _send_frames send arbitrary bytes, and
    testclient_recv takes whatever comes back.

    testsub_t is the event side: a SUB socket on a topic prefix.
*/
#ifndef PARLEY_TESTCLIENT_H
#define PARLEY_TESTCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"

#define TESTCLIENT_TIMEOUT_MS 15000

typedef struct _testclient_t testclient_t;

testclient_t *testclient_new (const char *endpoint);
//  A CURVE client: own pair `key` (FILE + FILE_secret) and the broker's
//  public certificate (both NULL: plain). NULL if a key file is unusable.
//  A client whose socket holds at most `rcvhwm` unread replies (0: no bound).
testclient_t *testclient_new_hwm (const char *endpoint, const char *key, const char *server_key,
                                  int rcvhwm);
testclient_t *testclient_new_curve (const char *endpoint, const char *key,
                                    const char *server_key);
void testclient_destroy (testclient_t **self_p);

//  Starts a request with a fresh id and `fields` own fields; returns the
//  encoder to write them with.
penc_t *testclient_begin (testclient_t *self, pmsg_type_t type, size_t fields);
//  Starts a WRITE of one `set` of `key`; returns the encoder, whose next
//  write is the value (penc_kv_cstr (enc, "value", ...), or penc_key then
//  the value packed).
penc_t *testclient_begin_set (testclient_t *self, const char *key);
//  The id the last testclient_begin used.
uint64_t testclient_last_id (testclient_t *self);
//  Sends what testclient_begin built; no wait.
int testclient_send (testclient_t *self);
//  Sends and waits for the reply with the same id (TESTCLIENT_TIMEOUT_MS).
pmsg_t *testclient_call (testclient_t *self);
//  A request without fields (HEARTBEAT, AGENTS, STATS, PERCEIVE...).
pmsg_t *testclient_call0 (testclient_t *self, pmsg_type_t type);

//  Raw frames, for bad-input tests.
int testclient_send_raw (testclient_t *self, const void *data, size_t size);
int testclient_send_frames (testclient_t *self, const void *const *datas,
                            const size_t *sizes, size_t count);
//  The next reply, decoded (an empty delimiter frame before it, as a
//  REQ-style envelope gets, is skipped); NULL on timeout or if it does not
//  decode.
pmsg_t *testclient_recv (testclient_t *self, int timeout_ms);

//  Shortcuts. Each returns the decoded reply (caller destroys it).
pmsg_t *testclient_hello (testclient_t *self, const char *agent);
//  SEND of one message: `to` an agent or "all", or channel if is_channel.
pmsg_t *testclient_send_one (testclient_t *self, const char *target, bool is_channel,
                             const char *body);
//  FETCH with an optional ack (0: none) and max (0: default).
pmsg_t *testclient_fetch (testclient_t *self, uint64_t ack, size_t max);

//  ERROR's code, or PERR_NONE if the reply is not an ERROR (or is NULL:
//  then -1).
int testclient_error_code (const pmsg_t *reply);
//  "WELCOME", or "ERROR NOT_HELLO: say HELLO...", or "no reply": for
//  assertion messages. Static buffer: one call per expression.
const char *testclient_describe (const pmsg_t *reply);
//  The number of elements of an array field (0 if absent).
size_t testclient_array_size (const pmsg_t *reply, const char *field);
//  Element `index` of an array field (NULL if out of range).
const msgpack_object *testclient_array_at (const pmsg_t *reply, const char *field, size_t index);

//  ---------------------------------------------------------------------
typedef struct _testsub_t testsub_t;

//  Subscribes to `prefix` on a PUB/XPUB endpoint.
testsub_t *testsub_new (const char *endpoint, const char *prefix);
testsub_t *testsub_new_curve (const char *endpoint, const char *prefix, const char *key,
                              const char *server_key);
void testsub_destroy (testsub_t **self_p);
//  The next event; its topic is copied to `topic` (may be NULL). NULL on
//  timeout.
pmsg_t *testsub_recv (testsub_t *self, char *topic, size_t topic_size, int timeout_ms);
//  PUB/SUB joins asynchronously: this publishes nothing itself, so callers
//  wait for a known event (e.g. their own first STATE_UPDATE) instead, or
//  take a SUB from testcheck_sub, live when it returns.
//  Adds or drops a topic prefix on the same SUB socket.
void testsub_subscribe (testsub_t *self, const char *prefix);
void testsub_unsubscribe (testsub_t *self, const char *prefix);

#endif
