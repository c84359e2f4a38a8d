// SPDX-License-Identifier: MIT
/*  testpush - a consumer over a raw DEALER for the pushed-delivery suite
    (check_push): see testpush.h.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pclock.h"
#include "testcheck.h"
#include "testpush.h"

testpush_t *
testpush_new (testclient_t *client)
{
    testpush_t *self = calloc (1, sizeof *self);
    self->client = client;
    return self;
}

void
testpush_destroy (testpush_t **self_p)
{
    testpush_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++)
        free (self->bodies [i]);
    free (self->bodies);
    free (self->seqs);
    free (self->sizes);
    pmsg_destroy (&self->reply);
    testclient_destroy (&self->client);
    free (self);
    *self_p = NULL;
}

//  Pushed and not acknowledged, as far as this consumer knows: the seqs
//  above its last ack, each once (a restart pushes some again). They are
//  the tail of the list, as seqs only go back at a restart from the ack.
static void
s_unacked (testpush_t *self, size_t *count, uint64_t *bytes)
{
    *count = 0;
    *bytes = 0;
    for (size_t i = self->count; i-- > 0 && self->seqs [i] > self->acked; ) {
        bool again = false;
        for (size_t k = i + 1; k < self->count && !again; k++)
            again = self->seqs [k] == self->seqs [i];
        if (!again) {
            (*count)++;
            *bytes += self->sizes [i];
        }
    }
}

static void
s_take_push (testpush_t *self, const pmsg_t *push)
{
    ck_assert_uint_eq (pmsg_id (push), 0);
    const msgpack_object *messages = pmsg_field (push, "messages");
    ck_assert (messages && messages->type == MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_gt (messages->via.array.size, 0);
    for (uint32_t i = 0; i < messages->via.array.size; i++) {
        const msgpack_object *item = &messages->via.array.ptr [i];
        if (self->count == self->cap) {
            self->cap = self->cap ? self->cap * 2 : 64;
            self->seqs = realloc (self->seqs, self->cap * sizeof (uint64_t));
            self->sizes = realloc (self->sizes, self->cap * sizeof (size_t));
            self->bodies = realloc (self->bodies, self->cap * sizeof (char *));
        }
        size_t len = 0;
        const char *body = pobj_str (item, "body", &len);
        self->seqs [self->count] = pobj_uint (item, "seq", 0);
        self->sizes [self->count] = len;
        self->bodies [self->count] = strndup (body ? body : "", len);
        self->count++;
    }
    self->frames++;
    //  The window: never more unacknowledged pushed messages than the
    //  credit, nor more bytes than credit_bytes unless it is one message.
    size_t out;
    uint64_t bytes;
    s_unacked (self, &out, &bytes);
    ck_assert_msg (out <= self->credit, "%zu unacknowledged pushed with credit %llu", out,
                   (unsigned long long) self->credit);
    ck_assert_msg (out <= 1 || bytes <= self->credit_bytes,
                   "%llu bytes unacknowledged with credit_bytes %llu",
                   (unsigned long long) bytes, (unsigned long long) self->credit_bytes);
}

//  Takes one frame within `ms`: a push is taken in (true); any other frame
//  is kept in self->reply (true). False when nothing came.
bool
testpush_pump (testpush_t *self, int ms)
{
    pmsg_t *msg = testclient_recv (self->client, ms);
    if (!msg)
        return false;
    if (pmsg_type (msg) == PMSG_MAIL_PUSH) {
        s_take_push (self, msg);
        pmsg_destroy (&msg);
    }
    else {
        pmsg_destroy (&self->reply);
        self->reply = msg;
    }
    return true;
}

//  Pumps until `count` messages were received; fails at the deadline.
void
testpush_wait_count (testpush_t *self, size_t count)
{
    //  The deadline is for progress: a slow build (valgrind) that keeps
    //  pushing is not a failure, a broker that stops pushing is.
    int64_t until = pclock_mono_ms () + TESTPUSH_DEADLINE_MS;
    while (self->count < count) {
        int64_t left = until - pclock_mono_ms ();
        ck_assert_msg (left > 0, "%zu messages pushed, %zu expected, none for %d ms",
                       self->count, count, TESTPUSH_DEADLINE_MS);
        size_t before = self->count;
        testpush_pump (self, (int) (left < 200 ? left : 200));
        if (self->count > before)
            until = pclock_mono_ms () + TESTPUSH_DEADLINE_MS;
    }
}

//  Pumps for `ms`; the count must not grow past `count` (for a window
//  that is full: a push beyond it would come within this time).
void
testpush_expect_no_more (testpush_t *self, size_t count, int ms)
{
    int64_t until = pclock_mono_ms () + ms;
    int64_t left;
    while ((left = until - pclock_mono_ms ()) > 0)
        testpush_pump (self, (int) left);
    ck_assert_msg (self->count == count, "%zu messages pushed, %zu expected", self->count,
                   count);
}

//  Sends a request built on the consumer's client and pumps until its
//  reply comes (pushes may come before it); the reply is returned.
pmsg_t *
testpush_call (testpush_t *self)
{
    ck_assert_int_eq (testclient_send (self->client), 0);
    uint64_t id = testclient_last_id (self->client);
    int64_t until = pclock_mono_ms () + TESTPUSH_DEADLINE_MS;
    while (pclock_mono_ms () < until) {
        if (!testpush_pump (self, 200) || !self->reply)
            continue;
        pmsg_t *reply = self->reply;
        self->reply = NULL;
        if (pmsg_id (reply) == id)
            return reply;
        pmsg_destroy (&reply);
    }
    ck_abort_msg ("no reply to request %llu", (unsigned long long) id);
    return NULL;
}

void
testpush_consume (testpush_t *self, uint64_t credit, uint64_t credit_bytes)
{
    penc_t *enc = testclient_begin (self->client, PMSG_CONSUME, credit_bytes ? 2 : 1);
    penc_kv_uint (enc, "credit", credit);
    if (credit_bytes)
        penc_kv_uint (enc, "credit_bytes", credit_bytes);
    pmsg_t *reply = testpush_call (self);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    self->credit = credit;
    self->credit_bytes = credit_bytes ? credit_bytes : 8 * 1024 * 1024;
}

void
testpush_ack (testpush_t *self, uint64_t seq)
{
    penc_t *enc = testclient_begin (self->client, PMSG_ACK, 1);
    penc_kv_uint (enc, "seq", seq);
    pmsg_t *reply = testpush_call (self);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    if (seq > self->acked)
        self->acked = seq;
}

//  SEND of `count` messages to `to` with bodies "<prefix><i>"; `wait_ms`
//  0 so a full inbox answers at once (a field brokers without it ignore).
uint64_t
testpush_send_many (testclient_t *client, const char *to, const char *prefix, int first, int count,
             size_t *accepted)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 2);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    char body [64];
    for (int i = 0; i < count; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", to);
        snprintf (body, sizeof body, "%s%d", prefix, first + i);
        penc_kv_cstr (enc, "body", body);
    }
    penc_kv_uint (enc, "wait_ms", 0);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_SENT);
    if (accepted)
        *accepted = pmsg_uint (reply, "accepted", 0);
    const msgpack_object *seqs = pmsg_field (reply, "seqs");
    uint64_t last = seqs->via.array.ptr [seqs->via.array.size - 1].via.u64;
    pmsg_destroy (&reply);
    return last;
}

//  A HELLO on a fresh connection; the resume token WELCOME gave is kept in
//  `token` (plain mode), or sent when `token` is already set.
testclient_t *
testpush_hello_token (testbroker_t *broker, const char *id, char *token, size_t size)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (client, PMSG_HELLO, *token ? 2 : 1);
    penc_kv_cstr (enc, "agent", id);
    if (*token)
        penc_kv_cstr (enc, "token", token);
    pmsg_t *welcome = testclient_call (client);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_strcpy (welcome, "token", token, size);
    pmsg_destroy (&welcome);
    return client;
}
