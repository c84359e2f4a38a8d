// SPDX-License-Identifier: MIT
/*  check_broker_step - STEP over the wire (PROTOCOL.md, STEP): the parts
    apply in the order ack -> messages -> ops -> action -> mail; a resend
    of the same step is answered the same and applies nothing twice (its
    mail read afresh); each part reports its own failure while the others
    apply; what no part can carry refuses the whole STEP; a STEP survives a
    broker restart as the requests it replaces do; `stream` reads on where
    the last STEP stopped (a resend from acked); and libparley's
    parley_client_step gives the typed parts, one request a step.
*/
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "parley/client.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  What a test STEP carries; zero/NULL parts are left out.
typedef struct {
    uint64_t step;              //  0: no step field
    uint64_t ack;               //  0: none
    const char *to, *channel, *body;        //  one message (to or channel)
    const char *to2, *body2;                //  and a second one, direct
    const char *add_key;        //  ops: declare add_key "add", update +1
    const char *bad_key;        //  ops: set bad_key 1, then an op that fails
    const char *action;
    bool perceive;
    uint64_t fetch;
    bool stream;                //  with fetch
} step_t;

static pmsg_t *
s_step (testclient_t *client, const step_t *s)
{
    size_t messages = (s->body ? 1 : 0) + (s->body2 ? 1 : 0);
    size_t fields = (s->step ? 1 : 0) + (s->ack ? 1 : 0) + (messages ? 1 : 0)
                  + (s->add_key || s->bad_key ? 1 : 0) + (s->action ? 1 : 0)
                  + (s->perceive ? 1 : 0) + (s->fetch ? 1 : 0) + (s->stream ? 1 : 0);
    penc_t *enc = testclient_begin (client, PMSG_STEP, fields);
    msgpack_packer *pk = penc_packer (enc);
    if (s->step)
        penc_kv_uint (enc, "step", s->step);
    if (s->ack)
        penc_kv_uint (enc, "ack", s->ack);
    if (messages) {
        penc_key (enc, "messages");
        msgpack_pack_array (pk, (uint32_t) messages);
        if (s->body) {
            msgpack_pack_map (pk, 2);
            penc_kv_cstr (enc, s->to ? "to" : "channel", s->to ? s->to : s->channel);
            penc_kv_cstr (enc, "body", s->body);
        }
        if (s->body2) {
            msgpack_pack_map (pk, 2);
            penc_kv_cstr (enc, "to", s->to2);
            penc_kv_cstr (enc, "body", s->body2);
        }
    }
    if (s->add_key) {
        penc_key (enc, "ops");
        msgpack_pack_array (pk, 2);
        msgpack_pack_map (pk, 3);
        penc_kv_cstr (enc, "op", "declare");
        penc_kv_cstr (enc, "key", s->add_key);
        penc_kv_cstr (enc, "reducer", "add");
        msgpack_pack_map (pk, 3);
        penc_kv_cstr (enc, "op", "update");
        penc_kv_cstr (enc, "key", s->add_key);
        penc_kv_uint (enc, "value", 1);
    }
    else
    if (s->bad_key) {
        //  A good op, then one that must fail (clear of a key that does
        //  not exist): the batch is all or nothing.
        penc_key (enc, "ops");
        msgpack_pack_array (pk, 2);
        msgpack_pack_map (pk, 3);
        penc_kv_cstr (enc, "op", "set");
        penc_kv_cstr (enc, "key", s->bad_key);
        penc_kv_uint (enc, "value", 1);
        msgpack_pack_map (pk, 2);
        penc_kv_cstr (enc, "op", "clear");
        penc_kv_cstr (enc, "key", "step.no.such.key");
    }
    if (s->action)
        penc_kv_cstr (enc, "action", s->action);
    if (s->perceive)
        penc_kv_bool (enc, "perceive", true);
    if (s->fetch)
        penc_kv_uint (enc, "fetch", s->fetch);
    if (s->stream)
        penc_kv_bool (enc, "stream", true);
    return testclient_call (client);
}

static const msgpack_object *
s_part (const pmsg_t *reply, const char *name)
{
    const msgpack_object *part = pmsg_field (reply, name);
    return part && part->type == MSGPACK_OBJECT_MAP ? part : NULL;
}

//  The value of state key `key` as an unsigned number (UINT64_MAX: absent).
static uint64_t
s_state_uint (testclient_t *client, const char *key)
{
    penc_t *enc = testclient_begin (client, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), 1);
    penc_cstr (enc, key);
    pmsg_t *state = testclient_call (client);
    EXPECT (state, PMSG_STATE);
    uint64_t value = UINT64_MAX;
    const msgpack_object *entry = testclient_array_at (state, "entries", 0);
    if (entry)
        value = pobj_uint (entry, "value", UINT64_MAX);
    pmsg_destroy (&state);
    return value;
}

//  The mail seqs an agent has queued (a plain FETCH without ack).
static size_t
s_queued (testclient_t *client)
{
    pmsg_t *mail = testclient_fetch (client, 0, 0);
    EXPECT (mail, PMSG_MAIL);
    size_t count = testclient_array_size (mail, "messages");
    pmsg_destroy (&mail);
    return count;
}

static uint64_t
s_acts (testclient_t *client, const char *id)
{
    pmsg_t *list = testclient_call0 (client, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    const msgpack_object *info = testcheck_find_agent (list, id);
    ck_assert_ptr_nonnull (info);
    uint64_t acts = pobj_uint (info, "acts", 0);
    pmsg_destroy (&list);
    return acts;
}

START_TEST (test_order_of_application)
{
    const char *args [] = { "--grid", "4x4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    pmsg_t *reply;
    penc_t *enc = testclient_begin (a, PMSG_LISTEN, 1);
    penc_kv_cstr (enc, "channel", "team");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    //  Mail for A from B, to acknowledge in the STEP.
    reply = testclient_send_one (b, "A", false, "old");
    EXPECT (reply, PMSG_SENT);
    const msgpack_object *seq0 = testclient_array_at (reply, "seqs", 0);
    uint64_t old_seq = seq0 ? seq0->via.u64 : 0;
    ck_assert_uint_gt (old_seq, 0);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_queued (a), 1);    //  handed out: an ack may now release it
    testsub_t *sub = testsub_new (testbroker_pub (broker), "state.");
    //  Prove the subscription live: a write of our own comes through.
    pmsg_t *update = NULL;
    for (int i = 0; i < 100 && !update; i++) {
        step_t probe = { .add_key = "step.probe" };
        reply = s_step (a, &probe);
        EXPECT (reply, PMSG_STEPPED);
        pmsg_destroy (&reply);
        update = testsub_recv (sub, NULL, 0, 100);
    }
    ck_assert_ptr_nonnull (update);
    pmsg_destroy (&update);
    while ((update = testsub_recv (sub, NULL, 0, 200)))
        pmsg_destroy (&update);

    //  ack -> messages -> ops -> action -> mail, in one STEP.
    step_t s = { .step = 1, .ack = old_seq, .channel = "team", .body = "to my channel",
                 .to2 = "B", .body2 = "hello B", .add_key = "step.count",
                 .action = "forward", .fetch = 10 };
    reply = s_step (a, &s);
    EXPECT (reply, PMSG_STEPPED);
    ck_assert_uint_eq (pmsg_uint (reply, "step", 0), 1);
    ck_assert (!pmsg_bool (reply, "replayed", false));
    //  The ack came first: acked moved, the old message is not in the mail.
    ck_assert_uint_eq (pmsg_uint (reply, "acked", 0), old_seq);
    //  The messages came before the mail: the post to A's own channel is there.
    const msgpack_object *sent = s_part (reply, "sent");
    ck_assert_ptr_nonnull (sent);
    ck_assert_uint_eq (pobj_uint (sent, "accepted", 0), 2);
    ck_assert_uint_eq (testclient_array_size (reply, "mail"), 1);
    const msgpack_object *mail = testclient_array_at (reply, "mail", 0);
    ck_assert (pobj_streq (pobj_get (mail, "body"), "to my channel"));
    ck_assert (pobj_streq (pobj_get (mail, "channel"), "team"));
    ck_assert_uint_gt (pobj_uint (mail, "seq", 0), old_seq);
    ck_assert_uint_eq (pmsg_uint (reply, "pending", 99), 0);
    //  The ops applied, and before the action: their state seq is below
    //  the seq of the move's world.agent_positions update.
    const msgpack_object *written = s_part (reply, "written");
    ck_assert_ptr_nonnull (written);
    uint64_t ops_seq = pobj_uint (written, "seq", 0);
    ck_assert_uint_gt (ops_seq, 0);
    const msgpack_object *obs = s_part (reply, "observation");
    ck_assert_ptr_nonnull (obs);
    ck_assert (pobj_streq (pobj_get (obs, "outcome"), "moved"));
    ck_assert_ptr_null (pmsg_field (reply, "ops_error"));
    ck_assert_ptr_null (pmsg_field (reply, "action_error"));
    pmsg_destroy (&reply);
    uint64_t count_seq = 0, position_seq = 0;
    char topic [128];
    while ((update = testsub_recv (sub, topic, sizeof topic, 500))) {
        if (strcmp (topic, "state.step.count") == 0)
            count_seq = pmsg_uint (update, "seq", 0);
        if (strcmp (topic, "state.world.agent_positions") == 0 && !position_seq)
            position_seq = pmsg_uint (update, "seq", 0);
        pmsg_destroy (&update);
        if (count_seq && position_seq)
            break;
    }
    ck_assert_uint_eq (count_seq, ops_seq);
    ck_assert_uint_gt (position_seq, count_seq);
    ck_assert_uint_eq (s_state_uint (a, "step.count"), 1);
    ck_assert_uint_eq (s_queued (b), 1);
    testsub_destroy (&sub);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_resend_applies_nothing_twice)
{
    const char *args [] = { "--grid", "4x4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    step_t s = { .step = 7, .to = "B", .body = "once", .add_key = "step.once",
                 .action = "forward", .fetch = 10 };
    pmsg_t *first = s_step (a, &s);
    EXPECT (first, PMSG_STEPPED);
    //  Mail for A arrives between the two copies: the resend reads it.
    pmsg_t *reply = testclient_send_one (b, "A", false, "later");
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    pmsg_t *again = s_step (a, &s);
    EXPECT (again, PMSG_STEPPED);
    ck_assert (pmsg_bool (again, "replayed", false));
    ck_assert_uint_eq (pmsg_uint (again, "step", 0), 7);
    //  The same parts.
    const msgpack_object *sent1 = s_part (first, "sent"), *sent2 = s_part (again, "sent");
    ck_assert_ptr_nonnull (sent2);
    ck_assert_uint_eq (pobj_uint (sent1, "accepted", 0), pobj_uint (sent2, "accepted", 9));
    const msgpack_object *seqs1 = pobj_get (sent1, "seqs"), *seqs2 = pobj_get (sent2, "seqs");
    ck_assert_uint_eq (seqs1->via.array.ptr [0].via.u64, seqs2->via.array.ptr [0].via.u64);
    ck_assert_uint_eq (pobj_uint (s_part (first, "written"), "seq", 0),
                       pobj_uint (s_part (again, "written"), "seq", 1));
    ck_assert_uint_eq (pobj_uint (s_part (first, "observation"), "position", 0),
                       pobj_uint (s_part (again, "observation"), "position", 1));
    //  Mail read afresh: the first had none, the resend has the new one.
    ck_assert_uint_eq (testclient_array_size (first, "mail"), 0);
    ck_assert_uint_eq (testclient_array_size (again, "mail"), 1);
    uint64_t position = pobj_uint (s_part (first, "observation"), "position", 0);
    pmsg_destroy (&first);
    pmsg_destroy (&again);
    //  Nothing twice: one message for B, the counter at 1, one move.
    ck_assert_uint_eq (s_queued (b), 1);
    ck_assert_uint_eq (s_state_uint (a, "step.once"), 1);
    ck_assert_uint_eq (s_acts (a, "A"), 1);
    pmsg_t *obs = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (obs, PMSG_OBSERVATION);
    ck_assert_uint_eq (pmsg_uint (obs, "position", 0), position);
    pmsg_destroy (&obs);
    //  A new step applies again; a STEP without step forgets the memory.
    s.step = 8;
    reply = s_step (a, &s);
    EXPECT (reply, PMSG_STEPPED);
    ck_assert (!pmsg_bool (reply, "replayed", false));
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_state_uint (a, "step.once"), 2);
    step_t plain = { .fetch = 1 };
    reply = s_step (a, &plain);
    EXPECT (reply, PMSG_STEPPED);
    pmsg_destroy (&reply);
    reply = s_step (a, &s);             //  step 8 again: applied, not a resend
    EXPECT (reply, PMSG_STEPPED);
    ck_assert (!pmsg_bool (reply, "replayed", false));
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_state_uint (a, "step.once"), 3);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_partial_failures)
{
    const char *args [] = { "--world-size", "5", "--max-batch", "4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    //  One message to nobody, one to B; ops that fail; a move a line has
    //  not got: each part says how it went, the good ones apply.
    step_t s = { .step = 1, .to = "Nobody", .body = "lost", .to2 = "B", .body2 = "kept",
                 .bad_key = "step.partial", .action = "left", .fetch = 5 };
    pmsg_t *reply = s_step (a, &s);
    EXPECT (reply, PMSG_STEPPED);
    const msgpack_object *sent = s_part (reply, "sent");
    ck_assert_ptr_nonnull (sent);
    ck_assert_uint_eq (pobj_uint (sent, "accepted", 0), 1);
    const msgpack_object *errors = pobj_get (sent, "errors");
    ck_assert (errors && errors->via.array.size == 1);
    ck_assert_uint_eq (pobj_uint (&errors->via.array.ptr [0], "code", 0), PERR_UNKNOWN_RECIPIENT);
    ck_assert_ptr_null (pmsg_field (reply, "written"));
    const msgpack_object *ops_error = s_part (reply, "ops_error");
    ck_assert_ptr_nonnull (ops_error);
    ck_assert_uint_eq (pobj_uint (ops_error, "code", 0), PERR_NO_SUCH_KEY);
    ck_assert (pobj_streq (pobj_get (ops_error, "error"), "NO_SUCH_KEY"));
    ck_assert_ptr_null (pmsg_field (reply, "observation"));
    const msgpack_object *action_error = s_part (reply, "action_error");
    ck_assert_ptr_nonnull (action_error);
    ck_assert_uint_eq (pobj_uint (action_error, "code", 0), PERR_BAD_ACTION);
    ck_assert (pmsg_field (reply, "mail"));
    pmsg_destroy (&reply);
    //  All or none: the good op before the failing one did not apply.
    ck_assert_uint_eq (s_state_uint (a, "step.partial"), UINT64_MAX);
    ck_assert_uint_eq (s_queued (b), 1);
    ck_assert_uint_eq (s_acts (a, "A"), 0);
    //  A part error is not an ERROR reply: STATS errors did not count it.
    pmsg_t *stats = testclient_call0 (a, PMSG_STATS);
    EXPECT (stats, PMSG_STATS_REPLY);
    ck_assert_uint_eq (pmsg_uint (stats, "errors", 99), 0);
    pmsg_destroy (&stats);

    //  What no part can carry refuses the whole STEP: more messages than
    //  max_batch (nothing applied, nothing remembered).
    penc_t *enc = testclient_begin (a, PMSG_STEP, 3);
    penc_kv_uint (enc, "step", 2);
    penc_kv_cstr (enc, "action", "forward");
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 5);
    for (int i = 0; i < 5; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        penc_kv_cstr (enc, "to", "B");
        penc_kv_cstr (enc, "body", "x");
    }
    reply = testclient_call (a);
    EXPECT_ERROR (reply, PERR_TOO_LARGE);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (s_queued (b), 1);
    ck_assert_uint_eq (s_acts (a, "A"), 0);
    //  A field of the wrong type refuses it too (the decoder's rule).
    enc = testclient_begin (a, PMSG_STEP, 1);
    penc_kv_cstr (enc, "fetch", "ten");
    reply = testclient_call (a);
    EXPECT_ERROR (reply, PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    //  Before HELLO: NOT_HELLO.
    testclient_t *stranger = testclient_new (testbroker_router (broker));
    enc = testclient_begin (stranger, PMSG_STEP, 1);
    penc_kv_cstr (enc, "action", "forward");
    reply = testclient_call (stranger);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    testclient_destroy (&stranger);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_step_is_journaled)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *data = tproc_dir_path (dir, "data");
    const char *args [] = { "--data-dir", data, "--grid", "4x4", "--fsync", "always", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    step_t s = { .step = 3, .to = "B", .body = "kept", .add_key = "step.durable",
                 .action = "forward" };
    pmsg_t *reply = s_step (a, &s);
    EXPECT (reply, PMSG_STEPPED);
    ck_assert_ptr_nonnull (s_part (reply, "observation"));
    pmsg_destroy (&reply);
    //  BYE gives the ids up (registrations and mail stay): HELLO again
    //  after the restart needs no token.
    reply = testclient_call0 (a, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    reply = testclient_call0 (b, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
    broker = testcheck_start (args);
    b = testcheck_agent (broker, "B");
    ck_assert_uint_eq (s_queued (b), 1);
    ck_assert_uint_eq (s_state_uint (b, "step.durable"), 1);
    ck_assert_uint_eq (s_acts (b, "A"), 1);
    pmsg_t *list = testclient_call0 (b, PMSG_AGENTS);
    EXPECT (list, PMSG_AGENT_LIST);
    ck_assert_uint_eq (pobj_uint (testcheck_find_agent (list, "A"), "step", 0), 3);
    pmsg_destroy (&list);
    testclient_destroy (&b);
    testcheck_stop (&broker);
    free (data);
    tproc_dir_destroy (&dir);
}
END_TEST

//  The body of the first mail item of a STEPPED ("" when none).
static const char *
s_first_body (const pmsg_t *reply, char *buf, size_t size)
{
    const msgpack_object *mail = testclient_array_at (reply, "mail", 0);
    if (!mail || !pobj_strcpy (mail, "body", buf, size))
        buf [0] = 0;
    return buf;
}

START_TEST (test_stream_fetch)
{
    //  With stream, each STEP's mail continues after what the last one
    //  handed out, while nothing is acknowledged; a resend reads from
    //  acked again, so the mail of a lost reply comes back.
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    const char *bodies [] = { "one", "two", "three" };
    for (int i = 0; i < 3; i++) {
        pmsg_t *sent = testclient_send_one (b, "A", false, bodies [i]);
        EXPECT (sent, PMSG_SENT);
        pmsg_destroy (&sent);
    }
    char body [32];
    step_t s = { .step = 1, .fetch = 1, .stream = true };
    pmsg_t *reply = s_step (a, &s);
    EXPECT (reply, PMSG_STEPPED);
    ck_assert_str_eq (s_first_body (reply, body, sizeof body), "one");
    ck_assert_uint_eq (pmsg_uint (reply, "pending", 0), 2);
    pmsg_destroy (&reply);
    s.step = 2;
    reply = s_step (a, &s);
    ck_assert_str_eq (s_first_body (reply, body, sizeof body), "two");
    pmsg_destroy (&reply);
    reply = s_step (a, &s);             //  step 2 again: a resend, read from acked
    ck_assert (pmsg_bool (reply, "replayed", false));
    ck_assert_str_eq (s_first_body (reply, body, sizeof body), "one");
    pmsg_destroy (&reply);
    //  Without stream, from acked as a plain FETCH.
    step_t plain = { .step = 3, .fetch = 1 };
    reply = s_step (a, &plain);
    ck_assert_str_eq (s_first_body (reply, body, sizeof body), "one");
    pmsg_destroy (&reply);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

//  libparley: the typed parts, and one request for one step.
START_TEST (test_client_step)
{
    const char *args [] = { "--grid", "4x4", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *b = testcheck_agent (broker, "B");
    parley_client_t *client = parley_client_new (testbroker_router (broker), "C");
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    pmsg_t *reply = testclient_send_one (b, "C", false, "for C");
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
    parley_stepped_t *out = NULL;
    parley_step_t *first = parley_step_new ();
    parley_step_set_perceive (first, true);
    parley_step_set_fetch (first, 8, false);
    ck_assert_int_eq (parley_client_step (client, first, &out), PARLEY_OK);
    parley_step_destroy (&first);
    ck_assert (parley_stepped_observation (out) && !parley_stepped_sent (out)
               && !parley_stepped_written (out));
    ck_assert_str_eq (parley_observation_outcome (parley_stepped_observation (out)), "perceived");
    const parley_mail_t *mail = parley_stepped_mail (out);
    ck_assert_ptr_nonnull (mail);
    ck_assert_uint_eq (parley_mail_count (mail), 1);
    ck_assert_str_eq (parley_message_from (parley_mail_at (mail, 0)), "B");
    uint64_t seq = parley_message_seq (parley_mail_at (mail, 0));

    uint64_t before = parley_client_counter (client, PARLEY_COUNTER_REQUESTS);
    uint8_t one [9];
    size_t one_size = parley_pack_int (one, sizeof one, 1);
    parley_step_t *step = parley_step_new ();
    parley_step_set_number (step, 1);
    parley_step_set_ack (step, seq);
    parley_ops_declare (parley_step_ops (step), "client.count", "add");
    parley_ops_update (parley_step_ops (step), "client.count", one, one_size);
    parley_outbox_to (parley_step_messages (step), "B", "hi", 2);
    parley_outbox_to (parley_step_messages (step), "Nobody", "no", 2);
    ck_assert_int_eq (parley_step_set_action (step, "right"), PARLEY_OK);
    parley_step_set_fetch (step, 8, false);
    ck_assert_int_eq (parley_client_step (client, step, &out), PARLEY_OK);
    uint64_t after = parley_client_counter (client, PARLEY_COUNTER_REQUESTS);
    ck_assert_uint_eq (after - before, 1);
    ck_assert_uint_eq (parley_stepped_step (out), 1);
    ck_assert (!parley_stepped_replayed (out));
    const parley_sent_t *sent = parley_stepped_sent (out);
    ck_assert_ptr_nonnull (sent);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    ck_assert_uint_eq (parley_sent_count (sent), 2);
    ck_assert_uint_gt (parley_sent_seq (sent, 0), 0);
    ck_assert_uint_eq (parley_sent_seq (sent, 1), 0);
    ck_assert_uint_eq (parley_sent_error_count (sent), 1);
    ck_assert_int_eq (parley_failure_code (parley_sent_error_at (sent, 0)),
                      PARLEY_ERR_UNKNOWN_RECIPIENT);
    ck_assert_ptr_nonnull (parley_stepped_written (out));
    ck_assert_uint_eq (parley_written_changed (parley_stepped_written (out)), 1);
    ck_assert_int_eq (parley_stepped_ops_code (out), 0);
    ck_assert_ptr_nonnull (parley_stepped_observation (out));
    ck_assert_str_eq (parley_observation_outcome (parley_stepped_observation (out)), "moved");
    ck_assert_int_eq (parley_stepped_action_code (out), 0);
    ck_assert_ptr_nonnull (parley_stepped_mail (out));
    ck_assert_uint_eq (parley_mail_count (parley_stepped_mail (out)), 0);
    ck_assert_uint_eq (parley_stepped_acked (out), seq);
    //  A refused part comes back typed, the call itself succeeds.
    parley_step_reset (step);
    parley_step_set_number (step, 2);
    ck_assert_int_eq (parley_step_set_action (step, "jump"), PARLEY_OK);
    ck_assert_int_eq (parley_client_step (client, step, &out), PARLEY_OK);
    ck_assert (!parley_stepped_observation (out));
    ck_assert_int_eq (parley_stepped_action_code (out), PARLEY_ERR_BAD_ACTION);
    ck_assert (*parley_stepped_action_message (out));
    //  Arguments the client refuses before sending: a message without a
    //  recipient is refused by the step's outbox, and so the step.
    parley_step_reset (step);
    parley_step_set_number (step, 3);
    ck_assert_int_eq (parley_outbox_to (parley_step_messages (step), NULL, "x", 1),
                      PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_step (client, step, &out), PARLEY_ERR_INVALID);
    parley_step_destroy (&step);
    parley_stepped_destroy (&out);
    parley_client_destroy (&client);
    testclient_destroy (&b);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("broker_step");
    TCase *tc = tcase_create ("step");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_order_of_application);
    tcase_add_test (tc, test_resend_applies_nothing_twice);
    tcase_add_test (tc, test_partial_failures);
    tcase_add_test (tc, test_step_is_journaled);
    tcase_add_test (tc, test_stream_fetch);
    tcase_add_test (tc, test_client_step);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
