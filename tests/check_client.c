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
#include <sys/resource.h>
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
    ck_assert (*parley_welcome_pub (w));
    ck_assert_uint_gt (parley_welcome_heartbeat_ms (w), 0);
    ck_assert_uint_gt (parley_welcome_origin (w), 0);
    ck_assert_uint_eq (parley_client_epoch (alpha), 1);

    //  One accepted, one refused: the refusal is typed, per item.
    parley_outbox_t *items = parley_outbox_new ();
    parley_outbox_to (items, "Alpha", "one", 3);
    parley_outbox_to (items, "Nobody", "two", 3);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (alpha, items, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    ck_assert_uint_eq (parley_sent_count (sent), 2);
    ck_assert_uint_gt (parley_sent_seq (sent, 0), 0);
    ck_assert_uint_eq (parley_sent_seq (sent, 1), 0);
    ck_assert_uint_eq (parley_sent_error_count (sent), 1);
    ck_assert_uint_eq (parley_failure_index (parley_sent_error_at (sent, 0)), 1);
    ck_assert_int_eq (parley_failure_code (parley_sent_error_at (sent, 0)),
                      PARLEY_ERR_UNKNOWN_RECIPIENT);
    //  Checked before anything is sent.
    parley_outbox_t *bad = parley_outbox_new ();
    ck_assert_int_eq (parley_outbox_to (bad, NULL, "b", 1), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_send (alpha, bad, NULL), PARLEY_ERR_INVALID);
    parley_outbox_reset (bad);
    ck_assert_int_eq (parley_client_send (alpha, bad, NULL), PARLEY_ERR_INVALID);

    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_fetch (alpha, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 1);
    const parley_message_t *first = parley_mail_at (mail, 0);
    ck_assert_str_eq (parley_message_from (first), "Alpha");
    ck_assert_str_eq (parley_message_to (first), "Alpha");
    ck_assert_str_eq (parley_message_channel (first), "");
    ck_assert_uint_eq (parley_message_body_size (first), 3);
    ck_assert (memcmp (parley_message_body (first), "one", 3) == 0);
    uint64_t seq = parley_message_seq (first);
    //  Redelivered (plain FETCH restarts at acked) but left out: seen once.
    ck_assert_int_eq (parley_client_fetch (alpha, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 0);
    ck_assert_uint_eq (parley_client_counter (alpha, PARLEY_COUNTER_DUPLICATES), 1);
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
    parley_agent_list_t *list = NULL;
    ck_assert_int_eq (parley_client_agents (alpha, &list), PARLEY_OK);
    ck_assert_uint_eq (parley_agent_list_count (list), 1);
    const parley_agent_t *agent = parley_agent_list_at (list, 0);
    ck_assert_str_eq (parley_agent_name (agent), "Alpha");
    ck_assert (parley_agent_online (agent));
    ck_assert_uint_eq (parley_agent_cap_count (agent), 1);
    ck_assert_str_eq (parley_agent_cap (agent, 0), "test");
    parley_stats_t *stats = NULL;
    ck_assert_int_eq (parley_client_stats (alpha, &stats), PARLEY_OK);
    ck_assert_uint_ge (parley_stats_uint (stats, "requests"), 8);
    ck_assert_uint_eq (parley_stats_uint (stats, "agents"), 1);
    ck_assert_uint_ge (parley_stats_uint (stats, "rejected"), 1);
    parley_stats_destroy (&stats);
    parley_agent_list_destroy (&list);
    parley_mail_destroy (&mail);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&bad);
    parley_outbox_destroy (&items);
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
    parley_outbox_t *items = parley_outbox_new ();
    parley_outbox_resolve (items, "Beta", "direct", 6);
    parley_outbox_resolve (items, "scouts", "posted", 6);
    parley_outbox_resolve (items, "Betta", "lost?", 5);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (alpha, items, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 2);
    ck_assert_uint_eq (parley_sent_error_count (sent), 1);
    const parley_failure_t *refused = parley_sent_error_at (sent, 0);
    ck_assert_uint_eq (parley_failure_index (refused), 2);
    ck_assert_int_eq (parley_failure_code (refused), PARLEY_ERR_NO_SUCH_TARGET);
    ck_assert (*parley_failure_message (refused));
    ck_assert_str_eq (parley_strerror (PARLEY_ERR_NO_SUCH_TARGET), "NO_SUCH_TARGET");
    //  `resolve` takes a name only: no name is refused before sending.
    parley_outbox_t *bad = parley_outbox_new ();
    ck_assert_int_eq (parley_outbox_resolve (bad, NULL, "b", 1), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_send (alpha, bad, NULL), PARLEY_ERR_INVALID);
    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_fetch (beta, 0, 10, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 2);
    ck_assert_str_eq (parley_message_to (parley_mail_at (mail, 0)), "Beta");
    ck_assert_str_eq (parley_message_channel (parley_mail_at (mail, 0)), "");
    ck_assert_str_eq (parley_message_channel (parley_mail_at (mail, 1)), "scouts");

    //  The model report: carried by HEARTBEAT, listed per agent.
    uint64_t report [PARLEY_MODEL_FIELDS] = {
        [PARLEY_MODEL_CALLS] = 7, [PARLEY_MODEL_OK] = 5, [PARLEY_MODEL_FAILED] = 2,
        [PARLEY_MODEL_SKIPPED] = 1, [PARLEY_MODEL_RETRIES] = 3,
        [PARLEY_MODEL_PROMPT_TOKENS] = 900, [PARLEY_MODEL_COMPLETION_TOKENS] = 120,
        [PARLEY_MODEL_LATENCY_MS] = 4200, [PARLEY_MODEL_LATENCY_MAX_MS] = 1500
    };
    parley_client_set_report (alpha, report, PARLEY_MODEL_FIELDS);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    parley_agent_list_t *list = NULL;
    ck_assert_int_eq (parley_client_agents (beta, &list), PARLEY_OK);
    ck_assert_uint_eq (parley_agent_list_count (list), 2);
    const parley_agent_t *a = parley_agent_list_find (list, "Alpha");
    const parley_agent_t *b = parley_agent_list_find (list, "Beta");
    ck_assert_ptr_nonnull (a);
    ck_assert_ptr_nonnull (b);
    ck_assert_str_eq (parley_agent_name (a), "Alpha");
    ck_assert (parley_agent_model_reported (a));
    for (int f = 0; f < PARLEY_MODEL_FIELDS; f++)
        ck_assert_uint_eq (parley_agent_model (a, (parley_model_field_t) f), report [f]);
    ck_assert (!parley_agent_model_reported (b));
    ck_assert_uint_eq (parley_agent_model (b, PARLEY_MODEL_CALLS), 0);
    //  A later report replaces it; clearing it keeps the broker's copy.
    report [PARLEY_MODEL_CALLS] = 8;
    parley_client_set_report (alpha, report, PARLEY_MODEL_FIELDS);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    parley_client_set_report (alpha, NULL, 0);
    ck_assert_int_eq (parley_client_heartbeat (alpha), PARLEY_OK);
    ck_assert_int_eq (parley_client_agents (beta, &list), PARLEY_OK);
    a = parley_agent_list_find (list, "Alpha");
    ck_assert_uint_eq (parley_agent_model (a, PARLEY_MODEL_CALLS), 8);

    //  The image of the position, PNG bytes, and none where the world
    //  file gives none (position 1).
    parley_observation_t *obs = NULL;
    ck_assert_int_eq (parley_client_perceive (alpha, &obs), PARLEY_OK);
    ck_assert_uint_eq (parley_observation_position (obs), 0);
    ck_assert_ptr_nonnull (parley_observation_image (obs));
    ck_assert_str_eq (parley_observation_image_type (obs), "png");
    ck_assert_uint_gt (parley_observation_image_size (obs), 8);
    ck_assert (memcmp (parley_observation_image (obs), "\x89PNG", 4) == 0);
    ck_assert_int_eq (parley_client_act (alpha, "forward", 1, &obs), PARLEY_OK);
    ck_assert_uint_eq (parley_observation_position (obs), 1);
    ck_assert_ptr_null (parley_observation_image (obs));
    ck_assert_uint_eq (parley_observation_image_size (obs), 0);
    ck_assert_str_eq (parley_observation_image_type (obs), "");
    parley_observation_destroy (&obs);
    parley_agent_list_destroy (&list);
    parley_mail_destroy (&mail);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&bad);
    parley_outbox_destroy (&items);

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
    parley_ops_t *ops = parley_ops_new ();
    parley_ops_declare (ops, "team.count", "add");
    parley_ops_update (ops, "team.count", five, five_size);
    parley_ops_set (ops, "team.lead", name, name_size);
    parley_written_t *written = NULL;
    ck_assert_int_eq (parley_client_write (client, ops, &written), PARLEY_OK);
    ck_assert_uint_ge (parley_written_changed (written), 2);
    parley_ops_t *bad = parley_ops_new ();
    parley_ops_declare (bad, "x", "no-such");
    ck_assert_int_eq (parley_client_write (client, bad, NULL), PARLEY_ERR_BAD_REDUCER);
    parley_ops_reset (bad);
    ck_assert_int_eq (parley_ops_set (bad, "x", NULL, 0), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_write (client, bad, NULL), PARLEY_ERR_INVALID);
    //  A value that is not exactly one msgpack object would break the
    //  frame: refused before sending.
    parley_ops_reset (bad);
    ck_assert_int_eq (parley_ops_set (bad, "x", name, name_size - 1), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_write (client, bad, NULL), PARLEY_ERR_INVALID);
    parley_ops_reset (bad);
    ck_assert_int_eq (parley_ops_set (bad, "x", name, name_size + 1), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_write (client, bad, NULL), PARLEY_ERR_INVALID);

    const char *keys [] = { "team.count", "team.lead", "team.none" };
    parley_state_t *state = NULL;
    ck_assert_int_eq (parley_client_get (client, keys, 3, &state), PARLEY_OK);
    int64_t count = 0;
    char lead [16] = "";
    for (size_t i = 0; i < parley_state_count (state); i++) {
        const parley_entry_t *entry = parley_state_at (state, i);
        if (streq (parley_entry_key (entry), "team.count")) {
            ck_assert_str_eq (parley_entry_reducer (entry), "add");
            ck_assert (parley_value_int (parley_entry_value (entry),
                                         parley_entry_value_size (entry), &count));
        }
        if (streq (parley_entry_key (entry), "team.lead"))
            ck_assert (parley_value_str (parley_entry_value (entry),
                                         parley_entry_value_size (entry), lead, sizeof lead));
    }
    ck_assert_int_eq (count, 5);
    ck_assert_str_eq (lead, "Beta");
    //  Paged snapshot of the prefix: one entry a page.
    ck_assert_int_eq (parley_client_snapshot (client, "team.", NULL, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (parley_state_count (state), 1);
    ck_assert (parley_state_more (state));
    char after [64];
    snprintf (after, sizeof after, "%s", parley_entry_key (parley_state_at (state, 0)));
    ck_assert_int_eq (parley_client_snapshot (client, "team.", after, 1, &state), PARLEY_OK);
    ck_assert_uint_eq (parley_state_count (state), 1);
    ck_assert_str_ne (parley_entry_key (parley_state_at (state, 0)), after);

    parley_observation_t *obs = NULL;
    ck_assert_int_eq (parley_client_perceive (client, &obs), PARLEY_OK);
    ck_assert_str_eq (parley_observation_outcome (obs), "perceived");
    uint64_t start = parley_observation_position (obs);
    ck_assert_int_eq (parley_client_act (client, "forward", 1, &obs), PARLEY_OK);
    ck_assert (streq (parley_observation_outcome (obs), "moved")
               || streq (parley_observation_outcome (obs), "edge"));
    uint64_t moved = parley_observation_position (obs);
    //  The same step again: answered as the first time, no second move.
    ck_assert_int_eq (parley_client_act (client, "forward", 1, &obs), PARLEY_OK);
    ck_assert_uint_eq (parley_observation_position (obs), moved);
    ck_assert_int_eq (parley_client_act (client, "fly", 2, &obs), PARLEY_ERR_BAD_ACTION);
    ck_assert_int_eq (parley_client_world_reset (client, 7), PARLEY_OK);
    ck_assert_int_eq (parley_client_perceive (client, &obs), PARLEY_OK);
    (void) start;
    parley_observation_destroy (&obs);
    parley_state_destroy (&state);
    parley_written_destroy (&written);
    parley_ops_destroy (&bad);
    parley_ops_destroy (&ops);
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
    const char *names [3] = { "keys.a", "keys.b", "other.c" };
    unsigned char values [3][32];
    parley_ops_t *ops = parley_ops_new ();
    for (int k = 0; k < 3; k++)
        parley_ops_set (ops, names [k], values [k],
                        parley_pack_int (values [k], sizeof values [k], 0));
    ck_assert_int_eq (parley_client_write (writer, ops, NULL), PARLEY_OK);
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
        parley_ops_reset (ops);
        for (int k = 0; k < 3; k++)
            parley_ops_set (ops, names [k], values [k],
                            parley_pack_int (values [k], sizeof values [k], i));
        for (int burst = 0; burst < 5; burst++)
            ck_assert_int_eq (parley_client_write (writer, ops, NULL), PARLEY_OK);
        last = i;
        parley_client_wait (reader, 50);
        caught_up = true;
        for (int k = 0; k < 2; k++) {
            const void *got;
            size_t got_size;
            int64_t number = -1;
            caught_up &= parley_client_replica_get (reader, names [k], &got, &got_size, NULL)
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
    parley_ops_destroy (&ops);
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
    parley_ops_t *op = parley_ops_new ();
    parley_ops_set (op, "board.note", value, size);
    ck_assert_int_eq (parley_client_write (writer, op, NULL), PARLEY_OK);
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
        parley_ops_reset (op);
        parley_ops_set (op, "board.note", value, parley_pack_str (value, sizeof value, latest));
        ck_assert_int_eq (parley_client_write (writer, op, NULL), PARLEY_OK);
        parley_client_wait (reader, 50);
        if (parley_client_replica_get (reader, "board.note", &got, &got_size, NULL))
            parley_value_str (got, got_size, text, sizeof text);
        caught_up = streq (text, latest);
    }
    ck_assert_str_eq (text, latest);
    //  Every key of the store, as a snapshot sees it.
    parley_state_t *all = NULL;
    ck_assert_int_eq (parley_client_snapshot (reader, NULL, NULL, 0, &all), PARLEY_OK);
    ck_assert_uint_gt (parley_state_count (all), 1);
    ck_assert_uint_eq (parley_client_replica_size (reader), parley_state_count (all));
    parley_state_destroy (&all);
    parley_ops_destroy (&op);

    //  The fd: edge-triggered, so process drains before the next poll.
    int fd = parley_client_fd (reader);
    ck_assert_int_ge (fd, 0);
    parley_client_take_mail (reader);
    bool woke = false;
    deadline = zclock_mono () + DEADLINE_MS;
    for (int i = 0; !woke && zclock_mono () < deadline; i++) {
        if (i % 20 == 0) {
            parley_outbox_t *hi = parley_outbox_new ();
            parley_outbox_to (hi, "Reader", "hi", 2);
            ck_assert_int_eq (parley_client_send (writer, hi, NULL), PARLEY_OK);
            parley_outbox_destroy (&hi);
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
    parley_outbox_t *post = parley_outbox_new ();
    parley_outbox_channel (post, "news", "extra", 5);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (poster, post, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_fetch (client, 0, 0, false, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 1);
    ck_assert_str_eq (parley_message_channel (parley_mail_at (mail, 0)), "news");
    parley_mail_destroy (&mail);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&post);
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
    parley_outbox_t *one = parley_outbox_new ();
    parley_outbox_to (one, "Piper", "one", 3);
    parley_outbox_t *two = parley_outbox_new ();
    parley_outbox_to (two, "Piper", "one", 3);
    parley_outbox_to (two, "Nobody", "two", 3);
    parley_ticket_t send1, send2, fetch1, fetch2;
    ck_assert_int_eq (parley_client_post_send (client, one, &send1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_send (client, two, &send2), PARLEY_OK);
    ck_assert_uint_ne (send1, send2);
    ck_assert_uint_eq (parley_client_in_flight (client), 2);
    //  Checked before anything is sent, as the blocking call.
    parley_ticket_t none = 99;
    parley_outbox_t *empty = parley_outbox_new ();
    ck_assert_int_eq (parley_client_post_send (client, empty, &none), PARLEY_ERR_INVALID);
    ck_assert_uint_eq (none, 0);
    //  A blocking request while two are out: their replies are kept.
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_collect_sent (client, send2, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_count (sent), 2);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    ck_assert_uint_eq (parley_sent_error_count (sent), 1);
    ck_assert_int_eq (parley_failure_code (parley_sent_error_at (sent, 0)),
                      PARLEY_ERR_UNKNOWN_RECIPIENT);
    uint64_t second_seq = parley_sent_seq (sent, 0);
    ck_assert_int_eq (parley_client_collect_sent (client, send1, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    uint64_t first_seq = parley_sent_seq (sent, 0);
    ck_assert_uint_lt (first_seq, second_seq);
    //  Collected once only; a ticket of another request is refused.
    ck_assert_int_eq (parley_client_collect_sent (client, send1, &sent), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &fetch1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, true, &fetch2), PARLEY_OK);
    ck_assert_int_eq (parley_client_collect_sent (client, fetch1, &sent), PARLEY_ERR_INVALID);
    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_collect_mail (client, fetch1, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 1);
    ck_assert_uint_eq (parley_message_seq (parley_mail_at (mail, 0)), first_seq);
    ck_assert_int_eq (parley_client_collect_mail (client, fetch2, &mail), PARLEY_OK);
    ck_assert_uint_eq (parley_mail_count (mail), 1);
    ck_assert_uint_eq (parley_message_seq (parley_mail_at (mail, 0)), second_seq);
    ck_assert_uint_eq (parley_client_in_flight (client), 0);

    //  WRITE: results in order, a refusal typed as the blocking call's.
    unsigned char value [16];
    size_t size = parley_pack_int (value, sizeof value, 7);
    parley_ops_t *set = parley_ops_new ();
    parley_ops_set (set, "pipe.a", value, size);
    parley_ops_t *bad = parley_ops_new ();
    parley_ops_declare (bad, "pipe.b", "no-such-reducer");
    parley_ticket_t w1, w2, w3;
    ck_assert_int_eq (parley_client_post_write (client, set, &w1), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_write (client, bad, &w2), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_write (client, set, &w3), PARLEY_OK);
    parley_written_t *written1 = NULL, *written3 = NULL;
    ck_assert_int_eq (parley_client_collect_written (client, w3, &written3), PARLEY_OK);
    ck_assert_int_eq (parley_client_collect_written (client, w2, NULL), PARLEY_ERR_BAD_REDUCER);
    ck_assert_int_eq (parley_client_collect_written (client, w1, &written1), PARLEY_OK);
    ck_assert_uint_gt (parley_written_seq (written3), parley_written_seq (written1));

    //  The limit: one more than PARLEY_MAX_IN_FLIGHT is refused.
    static parley_ticket_t tickets [PARLEY_MAX_IN_FLIGHT];
    for (size_t i = 0; i < PARLEY_MAX_IN_FLIGHT; i++)
        ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &tickets [i]), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 1, false, &none), PARLEY_ERR_INVALID);
    for (size_t i = 0; i < PARLEY_MAX_IN_FLIGHT; i++)
        ck_assert_int_eq (parley_client_collect_mail (client, tickets [i], &mail), PARLEY_OK);
    parley_written_destroy (&written1);
    parley_written_destroy (&written3);
    parley_ops_destroy (&set);
    parley_ops_destroy (&bad);
    parley_mail_destroy (&mail);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&empty);
    parley_outbox_destroy (&two);
    parley_outbox_destroy (&one);
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
    parley_agent_list_t *list = NULL;
    while (!offline) {
        ck_assert_msg (zclock_mono () < until, "%s never expired", id);
        ck_assert_int_eq (parley_client_agents (watcher, &list), PARLEY_OK);
        const parley_agent_t *agent = parley_agent_list_find (list, id);
        offline = agent && !parley_agent_online (agent);
        if (!offline)
            zclock_sleep (100);
    }
    parley_agent_list_destroy (&list);
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
    parley_outbox_t *item = parley_outbox_new ();
    parley_outbox_to (item, "Lost", "x", 1);
    ck_assert_int_eq (parley_client_post_send (client, item, &first), PARLEY_OK);
    ck_assert_int_eq (parley_client_post_fetch (client, 0, 0, false, &second), PARLEY_OK);
    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_collect_mail (client, second, &mail), PARLEY_ERR_TIMEOUT);
    ck_assert_int_eq (parley_client_collect_sent (client, first, NULL), PARLEY_ERR_TIMEOUT);
    ck_assert_uint_eq (parley_client_counter (client, PARLEY_COUNTER_TIMEOUTS), 1);
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
    parley_mail_destroy (&mail);
    parley_outbox_destroy (&item);
    parley_client_destroy (&client);
    testbroker_stop (&broker);
}
END_TEST

//  Many clients in one process: each takes four ZeroMQ sockets of the
//  library's shared context, whose default allows 1,023 (256 clients).
START_TEST (test_many_clients_one_process)
{
    enum { CLIENTS = 300 };
    struct rlimit limit;
    ck_assert_int_eq (getrlimit (RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_cur < 4096 && limit.rlim_max > limit.rlim_cur) {
        limit.rlim_cur = limit.rlim_max < 4096 ? limit.rlim_max : 4096;
        setrlimit (RLIMIT_NOFILE, &limit);
        ck_assert_int_eq (getrlimit (RLIMIT_NOFILE, &limit), 0);
    }
    if (limit.rlim_cur < 8 * CLIENTS) {
        fprintf (stderr, "test_many_clients_one_process: only %llu descriptors allowed; "
                 "skipped\n", (unsigned long long) limit.rlim_cur);
        return;
    }
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    static parley_client_t *clients [CLIENTS];
    char id [32];
    for (int i = 0; i < CLIENTS; i++) {
        snprintf (id, sizeof id, "Many%d", i);
        clients [i] = parley_client_new (testbroker_router (broker), id);
        ck_assert_ptr_nonnull (clients [i]);
        parley_client_set_timeout (clients [i], DEADLINE_MS, 200);
        parley_err_t rc = parley_client_connect (clients [i]);
        ck_assert_msg (rc == PARLEY_OK, "client %d of %d: %s", i + 1, CLIENTS,
                       parley_client_error_text (clients [i]));
    }
    //  The last one works, and mail reaches the first.
    parley_outbox_t *items = parley_outbox_new ();
    parley_outbox_to (items, "Many0", "from the last", 13);
    parley_sent_t *sent = NULL;
    ck_assert_int_eq (parley_client_send (clients [CLIENTS - 1], items, &sent), PARLEY_OK);
    ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&items);
    for (int i = 0; i < CLIENTS; i++)
        parley_client_destroy (&clients [i]);
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
    ck_assert_msg (strstr (out, "soname: libparley.so.2\n"), "%s", out);
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
    tcase_add_test (tc, test_many_clients_one_process);
    suite_add_tcase (s, tc);
    tc = tcase_create ("install");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_installed_example);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
