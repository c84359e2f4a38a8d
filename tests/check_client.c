// SPDX-License-Identifier: MIT
/*  check_client - libparley, the C client, against the real broker: every
    request with its typed result and typed errors (SEND's resolve, the
    model report, the OBSERVATION's image too), requests pipelined
    (posted, collected by ticket, failed together when lost), reconnects with
    re-LISTEN, the state replica, mail wake-ups through the event fd, and
    the installed library: header, shared (with soname) and static
    library, parley.pc, and examples/c/example.c built outside the tree
    with exactly `cc example.c $(pkg-config --cflags --libs parley)`.
*/
#include <check.h>
#include <poll.h>
#include <czmq.h>
#include "parley/client.h"
#include "perr.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 15000

static parley_client_t *
connected (const char *router, const char *id)
{
    parley_client_t *client = parley_client_new (router, id);
    parley_client_add_cap (client, "test");
    //  Long: a reply late on a loaded machine must not become a timeout
    //  and a new session (an epoch) the assertions do not expect.
    parley_client_set_timeout (client, DEADLINE_MS, 200);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

START_TEST (test_mail_requests)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *alpha = connected (testbroker_router (broker), "Alpha");
    const parley_welcome_t *w = parley_client_welcome (alpha);
    ck_assert (*w->pub);
    ck_assert_uint_gt (w->heartbeat_ms, 0);
    ck_assert_uint_gt (w->origin, 0);
    ck_assert_uint_eq (parley_client_epoch (alpha), 1);

    //  One accepted, one refused: the refusal is typed, per item.
    parley_outgoing_t items [] = {
        { .to = "Alpha", .body = "one", .body_len = 3 },
        { .to = "Nobody", .body = "two", .body_len = 3 },
    };
    parley_sent_t sent;
    ck_assert_int_eq (parley_client_send (alpha, items, 2, &sent), PARLEY_OK);
    ck_assert_uint_eq (sent.accepted, 1);
    ck_assert_uint_eq (sent.count, 2);
    ck_assert_uint_gt (sent.seqs [0], 0);
    ck_assert_uint_eq (sent.seqs [1], 0);
    ck_assert_uint_eq (sent.error_count, 1);
    ck_assert_uint_eq (sent.errors [0].index, 1);
    ck_assert_int_eq (sent.errors [0].code, PARLEY_ERR_UNKNOWN_RECIPIENT);
    //  Checked before anything is sent.
    parley_outgoing_t bad = { .to = "Alpha", .channel = "x", .body = "b", .body_len = 1 };
    ck_assert_int_eq (parley_client_send (alpha, &bad, 1, NULL), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_send (alpha, items, 0, NULL), PARLEY_ERR_INVALID);

    parley_mail_batch_t mail;
    ck_assert_int_eq (parley_client_fetch (alpha, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 1);
    ck_assert_str_eq (mail.messages [0].from, "Alpha");
    ck_assert_str_eq (mail.messages [0].to, "Alpha");
    ck_assert_str_eq (mail.messages [0].channel, "");
    ck_assert_uint_eq (mail.messages [0].body_len, 3);
    ck_assert (memcmp (mail.messages [0].body, "one", 3) == 0);
    uint64_t seq = mail.messages [0].seq;
    //  Redelivered (plain FETCH restarts at acked) but left out: seen once.
    ck_assert_int_eq (parley_client_fetch (alpha, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 0);
    parley_client_stats_t counters;
    parley_client_counters (alpha, &counters);
    ck_assert_uint_eq (counters.duplicates, 1);
    ck_assert_int_eq (parley_client_ack (alpha, seq), PARLEY_OK);

    //  Channels.
    ck_assert_int_eq (parley_client_listen (alpha, "team"), PARLEY_OK);
    ck_assert_int_eq (parley_client_listen (alpha, "bad name"), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_listen (alpha, "$sys"), PARLEY_ERR_RESERVED_NAME);
    ck_assert_int_eq (parley_client_unlisten (alpha, "team"), PARLEY_OK);
    ck_assert_int_eq (parley_client_unlisten (alpha, "team"), PARLEY_ERR_NOT_LISTENING);
    //  The text is the broker's sentence; the code is the return value
    //  alone, so "CODE: text" prints the code once.
    ck_assert_ptr_nonnull (strstr (parley_client_error_text (alpha), "team"));
    ck_assert_ptr_null (strstr (parley_client_error_text (alpha), "NOT_LISTENING"));

    //  The broker and the other agents.
    parley_agent_list_t list;
    ck_assert_int_eq (parley_client_agents (alpha, &list), PARLEY_OK);
    ck_assert_uint_eq (list.count, 1);
    ck_assert_str_eq (list.agents [0].agent, "Alpha");
    ck_assert (list.agents [0].online);
    ck_assert_uint_eq (list.agents [0].cap_count, 1);
    ck_assert_str_eq (list.agents [0].caps [0], "test");
    parley_stats_t stats;
    ck_assert_int_eq (parley_client_stats (alpha, &stats), PARLEY_OK);
    ck_assert_uint_ge (stats.requests, 8);
    ck_assert_uint_eq (stats.agents, 1);
    ck_assert_uint_ge (stats.rejected, 1);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    ck_assert_int_eq (parley_client_bye (alpha, false), PARLEY_OK);
    //  After BYE the client says HELLO again on its own.
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    ck_assert_uint_eq (parley_client_epoch (alpha), 2);
    parley_client_destroy (&alpha);

    //  Refused for good, typed.
    parley_client_t *all = parley_client_new (testbroker_router (broker), "all");
    ck_assert_int_eq (parley_client_connect (all), PARLEY_ERR_RESERVED_NAME);
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_RESERVED_NAME), "RESERVED_NAME");
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_TIMEOUT), "TIMEOUT");
    ck_assert_str_eq (parley_strerror (9999), "UNKNOWN");
    for (int code = 1; code < 100; code++)        //  every protocol code is named
        ck_assert_str_eq (parley_strerror (code), perr_name (code));
    ck_assert_int_eq (parley_client_heartbeat (all), PARLEY_ERR_LOST);
    parley_client_destroy (&all);
    testbroker_stop (&broker);
}
END_TEST

//  SEND's `resolve`, the model report on HEARTBEAT and in AGENT_LIST, and
//  the OBSERVATION's image: what the agent's model path needs, typed.
START_TEST (test_model_requests)
{
    char *world = testsuite_test_path ("../scenarios/images/world.json");
    const char *args [] = { "--world-file", world, NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    parley_client_t *alpha = connected (router, "Alpha");
    parley_client_t *beta = connected (router, "Beta");
    ck_assert_int_eq (parley_client_listen (beta, "scouts"), PARLEY_OK);

    //  A bare name: an agent gets it as direct mail, a listened channel as
    //  a post, anything else is refused for that item.
    parley_outgoing_t items [] = {
        { .channel = "Beta", .body = "direct", .body_len = 6, .resolve = true },
        { .channel = "scouts", .body = "posted", .body_len = 6, .resolve = true },
        { .channel = "Betta", .body = "lost?", .body_len = 5, .resolve = true },
    };
    parley_sent_t sent;
    ck_assert_int_eq (parley_client_send (alpha, items, 3, &sent), PARLEY_OK);
    ck_assert_uint_eq (sent.accepted, 2);
    ck_assert_uint_eq (sent.error_count, 1);
    ck_assert_uint_eq (sent.errors [0].index, 2);
    ck_assert_int_eq (sent.errors [0].code, PARLEY_ERR_NO_SUCH_TARGET);
    ck_assert (*sent.errors [0].message);
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NO_SUCH_TARGET), "NO_SUCH_TARGET");
    //  `resolve` goes with `channel` only.
    parley_outgoing_t bad = { .to = "Beta", .body = "b", .body_len = 1, .resolve = true };
    ck_assert_int_eq (parley_client_send (alpha, &bad, 1, NULL), PARLEY_ERR_INVALID);
    parley_mail_batch_t mail;
    ck_assert_int_eq (parley_client_fetch (beta, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 2);
    ck_assert_str_eq (mail.messages [0].to, "Beta");
    ck_assert_str_eq (mail.messages [0].channel, "");
    ck_assert_str_eq (mail.messages [1].channel, "scouts");

    //  The model report: carried by HEARTBEAT, listed per agent.
    parley_model_report_t report = {
        .calls = 7, .ok = 5, .failed = 2, .skipped = 1, .retries = 3, .prompt_tokens = 900,
        .completion_tokens = 120, .latency_ms = 4200, .latency_max_ms = 1500
    };
    parley_client_set_report (alpha, &report);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    parley_agent_list_t list;
    ck_assert_int_eq (parley_client_agents (beta, &list), PARLEY_OK);
    ck_assert_uint_eq (list.count, 2);
    const parley_agent_info_t *a = streq (list.agents [0].agent, "Alpha")? &list.agents [0]
                                                                          : &list.agents [1];
    const parley_agent_info_t *b = a == &list.agents [0]? &list.agents [1]: &list.agents [0];
    ck_assert_str_eq (a->agent, "Alpha");
    ck_assert (a->model_reported);
    ck_assert (memcmp (&a->model, &report, sizeof (report)) == 0);
    ck_assert (!b->model_reported);
    ck_assert_uint_eq (b->model.calls, 0);
    //  A later report replaces it; clearing it keeps the broker's copy.
    report.calls = 8;
    parley_client_set_report (alpha, &report);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    parley_client_set_report (alpha, NULL);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    ck_assert_int_eq (parley_client_agents (beta, &list), PARLEY_OK);
    a = streq (list.agents [0].agent, "Alpha")? &list.agents [0]: &list.agents [1];
    ck_assert_uint_eq (a->model.calls, 8);

    //  The image of the position, PNG bytes, and none where the world
    //  file gives none (position 1).
    parley_observation_t obs;
    ck_assert_int_eq (parley_client_perceive (alpha, &obs), PARLEY_OK);
    ck_assert_uint_eq (obs.position, 0);
    ck_assert_ptr_nonnull (obs.image);
    ck_assert_str_eq (obs.image_type, "png");
    ck_assert_uint_gt (obs.image_size, 8);
    ck_assert (memcmp (obs.image, "\x89PNG", 4) == 0);
    ck_assert_int_eq (parley_client_act (alpha, "forward", 1, &obs), PARLEY_OK);
    ck_assert_uint_eq (obs.position, 1);
    ck_assert_ptr_null (obs.image);
    ck_assert_uint_eq (obs.image_size, 0);
    ck_assert_str_eq (obs.image_type, "");

    parley_client_destroy (&alpha);
    parley_client_destroy (&beta);
    testbroker_stop (&broker);
    free (world);
}
END_TEST

START_TEST (test_state_and_world)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *client = connected (testbroker_router (broker), "Beta");
    unsigned char five [16], name [32];
    size_t five_size = parley_pack_int (five, sizeof five, 5);
    size_t name_size = parley_pack_str (name, sizeof name, "Beta");
    unsigned char small [3];
    ck_assert_uint_eq (parley_pack_str (small, sizeof small, "too long"), 0);
    ck_assert_uint_eq (parley_pack_bool (small, sizeof small, true), 1);
    int64_t number;
    ck_assert (!parley_value_int (small, 1, &number));      //  a bool is not a number
    parley_op_t ops [] = {
        { .op = PARLEY_OP_DECLARE, .key = "team.count", .reducer = "add" },
        { .op = PARLEY_OP_UPDATE, .key = "team.count", .value = five, .value_size = five_size },
        { .op = PARLEY_OP_SET, .key = "team.lead", .value = name, .value_size = name_size },
    };
    parley_written_t written;
    ck_assert_int_eq (parley_client_write (client, ops, 3, &written), PARLEY_OK);
    ck_assert_uint_ge (written.changed, 2);
    parley_op_t bad = { .op = PARLEY_OP_DECLARE, .key = "x", .reducer = "no-such" };
    ck_assert_int_eq (parley_client_write (client, &bad, 1, NULL), PARLEY_ERR_BAD_REDUCER);
    parley_op_t novalue = { .op = PARLEY_OP_SET, .key = "x" };
    ck_assert_int_eq (parley_client_write (client, &novalue, 1, NULL), PARLEY_ERR_INVALID);
    //  A value that is not exactly one msgpack object would break the
    //  frame: refused before sending.
    parley_op_t torn = { .op = PARLEY_OP_SET, .key = "x", .value = name, .value_size = name_size - 1 };
    ck_assert_int_eq (parley_client_write (client, &torn, 1, NULL), PARLEY_ERR_INVALID);
    torn.value_size = name_size + 1;
    ck_assert_int_eq (parley_client_write (client, &torn, 1, NULL), PARLEY_ERR_INVALID);

    const char *keys [] = { "team.count", "team.lead", "team.none" };
    parley_state_t state;
    ck_assert_int_eq (parley_client_get (client, keys, 3, &state), PARLEY_OK);
    int64_t count = 0;
    char lead [16] = "";
    for (size_t i = 0; i < state.count; i++) {
        if (streq (state.entries [i].key, "team.count")) {
            ck_assert_str_eq (state.entries [i].reducer, "add");
            ck_assert (parley_value_int (state.entries [i].value, state.entries [i].value_size, &count));
        }
        if (streq (state.entries [i].key, "team.lead"))
            ck_assert (parley_value_str (state.entries [i].value, state.entries [i].value_size,
                                         lead, sizeof lead));
    }
    ck_assert_int_eq (count, 5);
    ck_assert_str_eq (lead, "Beta");
    //  Paged snapshot of the prefix: one entry a page.
    ck_assert_int_eq (parley_client_snapshot (client, "team.", NULL, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (state.count, 1);
    ck_assert (state.more);
    char after [64];
    snprintf (after, sizeof after, "%s", state.entries [0].key);
    ck_assert_int_eq (parley_client_snapshot (client, "team.", after, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (state.count, 1);
    ck_assert_str_ne (state.entries [0].key, after);

    parley_observation_t obs;
    ck_assert_int_eq (parley_client_perceive (client, &obs), PARLEY_OK);
    ck_assert_str_eq (obs.outcome, "perceived");
    uint64_t start = obs.position;
    ck_assert_int_eq (parley_client_act (client, "forward", 1, &obs), PARLEY_OK);
    ck_assert (streq (obs.outcome, "moved") || streq (obs.outcome, "edge"));
    uint64_t moved = obs.position;
    //  The same step again: answered as the first time, no second move.
    ck_assert_int_eq (parley_client_act (client, "forward", 1, &obs), PARLEY_OK);
    ck_assert_uint_eq (obs.position, moved);
    ck_assert_int_eq (parley_client_act (client, "fly", 2, &obs), PARLEY_ERR_BAD_ACTION);
    ck_assert_int_eq (parley_client_world_reset (client, 7), PARLEY_OK);
    ck_assert_int_eq (parley_client_perceive (client, &obs), PARLEY_OK);
    (void) start;
    parley_client_destroy (&client);
    testbroker_stop (&broker);
}
END_TEST

//  A replica of a few keys (each its own prefix) follows just those: the
//  newest value of each after a burst of writes, nothing of other keys.
START_TEST (test_replica_of_keys)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *reader = connected (testbroker_router (broker), "Reader");
    parley_client_t *writer = connected (testbroker_router (broker), "Writer");
    parley_op_t ops [3] = {
        { .op = PARLEY_OP_SET, .key = "keys.a" }, { .op = PARLEY_OP_SET, .key = "keys.b" },
        { .op = PARLEY_OP_SET, .key = "other.c" } };
    unsigned char values [3][32];
    for (int k = 0; k < 3; k++) {
        ops [k].value = values [k];
        ops [k].value_size = parley_pack_int (values [k], sizeof values [k], 0);
    }
    ck_assert_int_eq (parley_client_write (writer, ops, 3, NULL), PARLEY_OK);
    ck_assert_int_eq (parley_client_replica (reader, "keys.a"), PARLEY_OK);
    ck_assert_int_eq (parley_client_replica_add (reader, "keys.b"), PARLEY_OK);
    ck_assert_int_eq (parley_client_replica_add (reader, "keys.b"), PARLEY_OK);    //  once
    ck_assert_uint_eq (parley_client_replica_size (reader), 2);
    //  Bursts of writes until the replica shows the last value of both
    //  (the subscription becomes live at some point; later updates carry
    //  the whole value, so the replica catches up without a gap check).
    int64_t deadline = zclock_mono () + DEADLINE_MS;
    bool caught_up = false;
    int64_t last = 0;
    for (int64_t i = 1; !caught_up && zclock_mono () < deadline; i++) {
        for (int k = 0; k < 3; k++)
            ops [k].value_size = parley_pack_int (values [k], sizeof values [k], i);
        for (int burst = 0; burst < 5; burst++)
            ck_assert_int_eq (parley_client_write (writer, ops, 3, NULL), PARLEY_OK);
        last = i;
        parley_client_wait (reader, 50);
        caught_up = true;
        for (int k = 0; k < 2; k++) {
            const void *got;
            size_t got_size;
            int64_t number = -1;
            caught_up &= parley_client_replica_get (reader, ops [k].key, &got, &got_size, NULL)
                      && parley_value_int (got, got_size, &number) && number == last;
        }
    }
    ck_assert (caught_up);
    ck_assert (!parley_client_replica_get (reader, "other.c", NULL, NULL, NULL));
    ck_assert_uint_eq (parley_client_replica_size (reader), 2);
    //  At most PARLEY_REPLICA_PREFIXES.
    for (int k = 2; k < PARLEY_REPLICA_PREFIXES; k++) {
        char prefix [32];
        snprintf (prefix, sizeof prefix, "more.%d", k);
        ck_assert_int_eq (parley_client_replica_add (reader, prefix), PARLEY_OK);
    }
    ck_assert_int_eq (parley_client_replica_add (reader, "one.too.many"), PARLEY_ERR_INVALID);
    parley_client_destroy (&reader);
    parley_client_destroy (&writer);
    testbroker_stop (&broker);
}
END_TEST

//  The replica follows another agent's writes; mail wakes up a caller's
//  own poll loop through the event fd.
START_TEST (test_replica_and_fd)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *reader = connected (testbroker_router (broker), "Reader");
    parley_client_t *writer = connected (testbroker_router (broker), "Writer");
    unsigned char value [32];
    size_t size = parley_pack_str (value, sizeof value, "before");
    parley_op_t op = { .op = PARLEY_OP_SET, .key = "board.note", .value = value, .value_size = size };
    ck_assert_int_eq (parley_client_write (writer, &op, 1, NULL), PARLEY_OK);
    ck_assert_int_eq (parley_client_replica (reader, ""), PARLEY_OK);
    const void *got;
    size_t got_size;
    char text [32] = "";
    ck_assert (parley_client_replica_get (reader, "board.note", &got, &got_size, NULL));
    ck_assert (parley_value_str (got, got_size, text, sizeof text));
    ck_assert_str_eq (text, "before");

    //  Updates after the snapshot arrive as events. The subscription may
    //  become live after the first write: then the seq gap brings a new
    //  snapshot, and either way the replica ends on the last value.
    //  Writes go on until the replica shows the latest one, so the test
    //  does not depend on when the subscription became live.
    int64_t deadline = zclock_mono () + DEADLINE_MS;
    char latest [32] = "";
    bool caught_up = false;
    for (int i = 0; !caught_up && zclock_mono () < deadline; i++) {
        snprintf (latest, sizeof latest, "after %d", i);
        op.value_size = parley_pack_str (value, sizeof value, latest);
        ck_assert_int_eq (parley_client_write (writer, &op, 1, NULL), PARLEY_OK);
        parley_client_wait (reader, 50);
        if (parley_client_replica_get (reader, "board.note", &got, &got_size, NULL))
            parley_value_str (got, got_size, text, sizeof text);
        caught_up = streq (text, latest);
    }
    ck_assert_str_eq (text, latest);
    //  Every key of the store, as a snapshot sees it.
    parley_state_t all;
    ck_assert_int_eq (parley_client_snapshot (reader, NULL, NULL, 0, &all), PARLEY_OK);
    ck_assert_uint_gt (all.count, 1);
    ck_assert_uint_eq (parley_client_replica_size (reader), all.count);

    //  The fd: edge-triggered, so process drains before the next poll.
    int fd = parley_client_fd (reader);
    ck_assert_int_ge (fd, 0);
    parley_client_take_mail (reader);
    bool woke = false;
    deadline = zclock_mono () + DEADLINE_MS;
    for (int i = 0; !woke && zclock_mono () < deadline; i++) {
        if (i % 20 == 0) {
            parley_outgoing_t hi = { .to = "Reader", .body = "hi", .body_len = 2 };
            ck_assert_int_eq (parley_client_send (writer, &hi, 1, NULL), PARLEY_OK);
        }
        struct pollfd item = { .fd = fd, .events = POLLIN };
        poll (&item, 1, 50);
        woke = parley_client_process (reader);
    }
    ck_assert (woke);
    ck_assert (parley_client_take_mail (reader));
    parley_client_destroy (&reader);
    parley_client_destroy (&writer);
    testbroker_stop (&broker);
}
END_TEST

//  A broker restart: the next request says HELLO again and LISTENs again,
//  so channel posts reach the client on the new broker.
START_TEST (test_reconnect_relistens)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "router");
    char *pub = tproc_dir_endpoint (dir, "pub");
    const char *args [] = { "--router", router, "--pub", pub, NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *client = connected (router, "Gamma");
    ck_assert_int_eq (parley_client_listen (client, "news"), PARLEY_OK);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
    broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    ck_assert_uint_eq (parley_client_epoch (client), 2);
    parley_client_t *poster = connected (router, "Poster");
    parley_outgoing_t post = { .channel = "news", .body = "extra", .body_len = 5 };
    parley_sent_t sent;
    ck_assert_int_eq (parley_client_send (poster, &post, 1, &sent), PARLEY_OK);
    ck_assert_uint_eq (sent.accepted, 1);
    parley_mail_batch_t mail;
    ck_assert_int_eq (parley_client_fetch (client, 0, 0, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 1);
    ck_assert_str_eq (mail.messages [0].channel, "news");
    //  Stopped: requests return at once, typed.
    volatile sig_atomic_t stop = 1;
    parley_client_set_stop (client, &stop);
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_ERR_STOPPED);
    parley_client_destroy (&client);
    parley_client_destroy (&poster);
    testbroker_stop (&broker);
    free (router);
    free (pub);
    tproc_dir_destroy (&dir);
}
END_TEST

//  Pipelining: requests posted without waiting, collected by ticket in any
//  order, with the blocking calls' typed results and errors; a blocking
//  request in between keeps the others' replies; the in-flight limit.
START_TEST (test_pipeline)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *client = connected (testbroker_router (broker), "Piper");
    parley_outgoing_t items [] = {
        { .to = "Piper", .body = "one", .body_len = 3 },
        { .to = "Nobody", .body = "two", .body_len = 3 },
    };
    parley_ticket_t send1, send2, fetch1, fetch2;
    ck_assert_int_eq (parley_client_post_send (client, items, 1, &send1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_send (client, items, 2, &send2), PARLEY_OK);
    ck_assert_uint_ne (send1, send2);
    ck_assert_uint_eq (parley_client_in_flight (client), 2);
    //  Checked before anything is sent, as the blocking call.
    parley_ticket_t none = 99;
    ck_assert_int_eq (parley_client_post_send (client, items, 0, &none), PARLEY_ERR_INVALID);
    ck_assert_uint_eq (none, 0);
    //  A blocking request while two are out: their replies are kept.
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    parley_sent_t sent;
    ck_assert_int_eq (parley_client_collect_sent (client, send2, &sent), PARLEY_OK);
    ck_assert_uint_eq (sent.count, 2);
    ck_assert_uint_eq (sent.accepted, 1);
    ck_assert_uint_eq (sent.error_count, 1);
    ck_assert_int_eq (sent.errors [0].code, PARLEY_ERR_UNKNOWN_RECIPIENT);
    uint64_t second_seq = sent.seqs [0];
    ck_assert_int_eq (parley_client_collect_sent (client, send1, &sent), PARLEY_OK);
    ck_assert_uint_eq (sent.accepted, 1);
    uint64_t first_seq = sent.seqs [0];
    ck_assert_uint_lt (first_seq, second_seq);
    //  Collected once only; a ticket of another request is refused.
    ck_assert_int_eq (parley_client_collect_sent (client, send1, &sent), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &fetch1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, true, &fetch2), PARLEY_OK);
    ck_assert_int_eq (parley_client_collect_sent (client, fetch1, &sent), PARLEY_ERR_INVALID);
    parley_mail_batch_t mail;
    ck_assert_int_eq (parley_client_collect_mail (client, fetch1, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 1);
    ck_assert_uint_eq (mail.messages [0].seq, first_seq);
    ck_assert_int_eq (parley_client_collect_mail (client, fetch2, &mail), PARLEY_OK);
    ck_assert_uint_eq (mail.count, 1);
    ck_assert_uint_eq (mail.messages [0].seq, second_seq);
    ck_assert_uint_eq (parley_client_in_flight (client), 0);

    //  WRITE: results in order, a refusal typed as the blocking call's.
    unsigned char value [16];
    size_t size = parley_pack_int (value, sizeof value, 7);
    parley_op_t set = { .op = PARLEY_OP_SET, .key = "pipe.a", .value = value, .value_size = size };
    parley_op_t bad = { .op = PARLEY_OP_DECLARE, .key = "pipe.b", .reducer = "no-such-reducer" };
    parley_ticket_t w1, w2, w3;
    ck_assert_int_eq (parley_client_post_write (client, &set, 1, &w1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_write (client, &bad, 1, &w2), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_write (client, &set, 1, &w3), PARLEY_OK);
    parley_written_t written1, written3;
    ck_assert_int_eq (parley_client_collect_written (client, w3, &written3), PARLEY_OK);
    ck_assert_int_eq (parley_client_collect_written (client, w2, NULL), PARLEY_ERR_BAD_REDUCER);
    ck_assert_int_eq (parley_client_collect_written (client, w1, &written1), PARLEY_OK);
    ck_assert_uint_gt (written3.seq, written1.seq);

    //  The limit: one more than PARLEY_MAX_IN_FLIGHT is refused.
    static parley_ticket_t tickets [PARLEY_MAX_IN_FLIGHT];
    for (size_t i = 0; i < PARLEY_MAX_IN_FLIGHT; i++)
        ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &tickets [i]), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &none), PARLEY_ERR_INVALID);
    for (size_t i = 0; i < PARLEY_MAX_IN_FLIGHT; i++)
        ck_assert_int_eq (parley_client_collect_mail (client, tickets [i], &mail), PARLEY_OK);
    parley_client_destroy (&client);
    testbroker_stop (&broker);
}
END_TEST

//  A posted request is sent once: when a reply does not come, that ticket
//  and every other one out fail with TIMEOUT (NOT_HELLO when the broker
//  forgot the connection), and the next call says HELLO again. The broker is stopped (SIGSTOP), so no reply can come; a short
//  liveness lets the old connection expire soon, so the new HELLO is taken.
//  Until another client's AGENTS shows `id` offline (expired).
static void
s_wait_offline (const char *router, const char *id)
{
    parley_client_t *watcher = parley_client_new (router, "Watcher");
    parley_client_set_timeout (watcher, DEADLINE_MS, 100);
    ck_assert_int_eq (parley_client_connect (watcher), PARLEY_OK);
    int64_t until = zclock_mono () + DEADLINE_MS;
    bool offline = false;
    while (!offline) {
        ck_assert_msg (zclock_mono () < until, "%s never expired", id);
        parley_agent_list_t list;
        ck_assert_int_eq (parley_client_agents (watcher, &list), PARLEY_OK);
        for (size_t i = 0; i < list.count; i++)
            offline |= streq (list.agents [i].agent, id) && !list.agents [i].online;
        if (!offline)
            zclock_sleep (100);
    }
    parley_client_destroy (&watcher);
}

START_TEST (test_pipeline_lost)
{
    const char *args [] = { "--heartbeat-ms", "250", "--liveness-ms", "1000", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    parley_client_t *client = connected (testbroker_router (broker), "Lost");
    parley_client_set_timeout (client, 300, 100);
    //  Left out and destroyed with the client: nothing leaks.
    parley_ticket_t never;
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 0, false, &never), PARLEY_OK);
    testbroker_signal (broker, SIGSTOP);
    parley_ticket_t first, second;
    parley_outgoing_t item = { .to = "Lost", .body = "x", .body_len = 1 };
    ck_assert_int_eq (parley_client_post_send (client, &item, 1, &first), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 0, false, &second), PARLEY_OK);
    parley_mail_batch_t mail;
    ck_assert_int_eq (parley_client_collect_mail (client, second, &mail), PARLEY_ERR_TIMEOUT);
    ck_assert_int_eq (parley_client_collect_sent (client, first, NULL), PARLEY_ERR_TIMEOUT);
    parley_client_stats_t counters;
    parley_client_counters (client, &counters);
    ck_assert_uint_eq (counters.timeouts, 1);
    testbroker_signal (broker, SIGCONT);
    //  From here on a slow reply is no lost one: a timeout would say HELLO
    //  again and count an epoch more than the broker's own doing.
    parley_client_set_timeout (client, DEADLINE_MS, 100);
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    ck_assert_uint_eq (parley_client_epoch (client), 2);
    ck_assert_uint_eq (parley_client_in_flight (client), 1);
    //  Silent past the liveness: the broker's sweep detaches the connection
    //  and answers NOT_HELLO to what is in flight on it; both tickets say
    //  so, and the next call says HELLO. Waited for as the broker reports
    //  it (offline in AGENTS), not for a time a starved broker may outlast.
    s_wait_offline (testbroker_router (broker), "Lost");
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 0, false, &first), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 0, false, &second), PARLEY_OK);
    ck_assert_int_eq (parley_client_collect_mail (client, first, &mail), PARLEY_ERR_NOT_HELLO);
    ck_assert_int_eq (parley_client_collect_mail (client, second, &mail), PARLEY_ERR_NOT_HELLO);
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    ck_assert_uint_eq (parley_client_epoch (client), 3);
    parley_client_destroy (&client);
    testbroker_stop (&broker);
}
END_TEST

//  make install-lib into a temporary DESTDIR, then the example built and
//  run outside the tree (tests/client_install.sh).
START_TEST (test_installed_example)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    char *script = testsuite_test_path ("client_install.sh");
    char *root = strdup (script);
    *strrchr (root, '/') = 0;
    *strrchr (root, '/') = 0;
    if (!*root)
        strcpy (root, ".");
    tproc_t *run = tproc_run ((const char *[]) { "/bin/sh", script, root,
                                                 testbroker_router (broker), NULL }, false);
    ck_assert_ptr_nonnull (run);
    const char *out = tproc_out (run);
    ck_assert_msg (tproc_status (run) == 0, "exit %d\n%s\n%s", tproc_status (run), out,
                   tproc_err (run));
    ck_assert_msg (strstr (out, "soname: libparley.so.1\n"), "%s", out);
    ck_assert_msg (strstr (out, "mail: from Example1: hello from the example\n"), "%s", out);
    ck_assert_msg (strstr (out, "acked: 1\n"), "%s", out);
    ck_assert_msg (strstr (out, "state: example.Example1 = done"), "%s", out);
    ck_assert_msg (strstr (out, "bye: OK\n"), "%s", out);
    tproc_destroy (&run);
    free (script);
    free (root);
    testbroker_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("client");
    TCase *tc = tcase_create ("requests");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_mail_requests);
    tcase_add_test (tc, test_model_requests);
    tcase_add_test (tc, test_state_and_world);
    tcase_add_test (tc, test_replica_and_fd);
    tcase_add_test (tc, test_replica_of_keys);
    tcase_add_test (tc, test_reconnect_relistens);
    tcase_add_test (tc, test_pipeline);
    tcase_add_test (tc, test_pipeline_lost);
    suite_add_tcase (s, tc);
    tc = tcase_create ("install");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_installed_example);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
