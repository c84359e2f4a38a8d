// SPDX-License-Identifier: MIT
/*  check_tap_live - parley-tap against a real broker.

    The broker is $PARLEY_BIN_DIR/parley-broker on ephemeral loopback ports
    (tests/lib/testbroker); parley-tap runs as a child and finds the tap by
    asking the broker (HELLO/BYE); a testclient DEALER plays an agent. The tap's
    JSON lines are read back with jansson.

    Nothing waits on a clock to pass: the tap is known to be subscribed once
    it prints its first line (the client sends heartbeats until then), and
    every wait has a generous deadline that fails the test instead of
    hanging it.
*/
#include <check.h>
#include <czmq.h>
#include <jansson.h>
#include <signal.h>
#include "pclock.h"
#include "pmsg.h"
#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/tproc.h"
#include "lib/testsuite.h"

#define DEADLINE_MS 60000

//  --------------------------------------------------------------------------
//  Requests as an agent (tests/lib/testclient)

//  The reply must be `expect`; it is dropped.
static void
s_expect (pmsg_t *reply, pmsg_type_t expect)
{
    ck_assert_msg (reply && pmsg_type (reply) == expect, "expected %s, got %s",
                   pmsg_type_name (expect), testclient_describe (reply));
    pmsg_destroy (&reply);
}

//  SEND of n messages: targets "name" or "#channel", with their texts.
static void
s_send (testclient_t *client, size_t n, const char *const *targets, const char *const *texts)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), n);
    for (size_t i = 0; i < n; i++) {
        msgpack_pack_map (penc_packer (enc), 2);
        if (targets [i][0] == '#')
            penc_kv_cstr (enc, "channel", targets [i] + 1);
        else
            penc_kv_cstr (enc, "to", targets [i]);
        penc_kv_cstr (enc, "body", texts [i]);
    }
    s_expect (testclient_call (client), PMSG_SENT);
}

//  Heartbeats until the tap prints its first frame: then it is subscribed.
static void
s_warm_up (testclient_t *client, tproc_t *tap)
{
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (!strstr (tproc_out (tap), "\"kind\":\"frame\"")) {
        ck_assert_msg (pclock_mono_ms () < deadline, "the tap printed nothing: %s", tproc_err (tap));
        ck_assert_msg (!tproc_exited (tap), "the tap exited: %s", tproc_err (tap));
        s_expect (testclient_call0 (client, PMSG_HEARTBEAT), PMSG_OK);
        tproc_read (tap, 100);
    }
}

//  The first JSON line with this dir, peer and type, or NULL.
static json_t *
s_find (json_t *lines, const char *dir, const char *peer, const char *type)
{
    size_t i;
    json_t *line;
    json_array_foreach (lines, i, line) {
        const char *d = json_string_value (json_object_get (line, "dir"));
        const char *p = json_string_value (json_object_get (line, "peer"));
        const char *t = json_string_value (json_object_get (line, "type"));
        if (d && p && t && streq (d, dir) && streq (p, peer) && streq (t, type))
            return line;
    }
    return NULL;
}

static const char *
s_path_str (json_t *root, const char *path)
{
    json_t *value = json_object_get (root, "msg");
    char *copy = strdup (path);
    char *save = NULL;
    for (char *step = strtok_r (copy, ".", &save); step && value; step = strtok_r (NULL, ".", &save))
        value = json_is_array (value)? json_array_get (value, (size_t) atoi (step))
                                     : json_object_get (value, step);
    free (copy);
    return json_string_value (value);
}

//  --------------------------------------------------------------------------

//  The tseq accounting of a tap's JSON lines: every tseq from the first
//  frame to the last is either shown (a frame line) or counted in a
//  "dropped" line, once. Holds whatever the scheduling; returns the drops.
static json_int_t
s_check_tseq (json_t *lines)
{
    json_int_t first = -1, last = -1, shown = 0, dropped = 0;
    size_t i;
    json_t *line;
    json_array_foreach (lines, i, line) {
        const char *kind = json_string_value (json_object_get (line, "kind"));
        ck_assert_ptr_nonnull (kind);
        if (streq (kind, "frame")) {
            json_int_t tseq = json_integer_value (json_object_get (line, "tseq"));
            ck_assert_msg (tseq > last, "tseq %lld after %lld", (long long) tseq, (long long) last);
            if (first < 0)
                first = tseq;
            last = tseq;
            shown++;
        }
        else
        if (streq (kind, "dropped")) {
            ck_assert_int_eq (json_integer_value (json_object_get (line, "after_tseq")), last);
            dropped += json_integer_value (json_object_get (line, "count"));
        }
    }
    ck_assert_msg (shown > 0, "no frame lines");
    ck_assert_int_eq (shown + dropped, last - first + 1);
    return dropped;
}

START_TEST (test_live_record_replay)
{
    //  This test sends a few dozen frames once the tap has subscribed; a
    //  tap HWM far above that (on the broker's side, and the tap's own
    //  --hwm default of 100000) means a drop here is a bug, not the
    //  scheduler.
    testbroker_t *broker = testbroker_start ((const char *[]) { "--tap-hwm", "100000", NULL });
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *record = tproc_dir_path (dir, "live.rec");
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "--broker",
        testbroker_router (broker), "--json", "--record", record, NULL }, true, NULL);
    ck_assert_ptr_nonnull (tap);

    testclient_t *client = testclient_new (testbroker_router (broker));
    testclient_t *other = testclient_new (testbroker_router (broker));
    s_expect (testclient_hello (client, "tester"), PMSG_WELCOME);
    s_warm_up (client, tap);
    //  Published events that must happen: "joined", and a wake-up for mail
    //  that stays queued (tester's own wake-up may be coalesced away when
    //  its FETCH is handled in the same broker turn as the SEND).
    s_expect (testclient_hello (other, "other"), PMSG_WELCOME);
    penc_kv_cstr (testclient_begin (client, PMSG_LISTEN, 1), "channel", "news");
    s_expect (testclient_call (client), PMSG_OK);
    s_send (client, 3, (const char *[]) { "tester", "#news", "other" },
            (const char *[]) { "hello tap", "breaking \"news\"", "for later" });
    s_expect (testclient_call0 (client, PMSG_FETCH), PMSG_MAIL);
    ck_assert_msg (tproc_wait_for (tap, "\"type\":\"MAIL\",", DEADLINE_MS),
                   "no MAIL line: %s", tproc_out (tap));
    ck_assert_msg (tproc_wait_for (tap, "\"peer\":\"mail.other\"", DEADLINE_MS),
                   "no MAIL_READY for other: %s", tproc_out (tap));

    //  Ctrl-C: a clean exit with totals.
    tproc_signal (tap, SIGINT);
    ck_assert_int_eq (tproc_wait (tap, DEADLINE_MS), 0);
    ck_assert_ptr_nonnull (strstr (tproc_err (tap), "totals:"));
    json_t *lines = tproc_json_lines (tproc_out (tap));
    ck_assert_ptr_nonnull (lines);

    json_t *send = s_find (lines, "in", "tester", "SEND");
    ck_assert_ptr_nonnull (send);
    ck_assert_str_eq (s_path_str (send, "messages.0.body"), "hello tap");
    ck_assert_str_eq (s_path_str (send, "messages.1.channel"), "news");
    ck_assert_str_eq (s_path_str (send, "messages.1.body"), "breaking \"news\"");
    json_t *sent = s_find (lines, "out", "tester", "SENT");
    ck_assert_ptr_nonnull (sent);
    ck_assert_ptr_nonnull (strstr (json_string_value (json_object_get (sent, "summary")),
                                   " accepted 3/3"));
    json_t *listen = s_find (lines, "in", "tester", "LISTEN");
    ck_assert_ptr_nonnull (listen);
    ck_assert_str_eq (s_path_str (listen, "channel"), "news");
    json_t *mail = s_find (lines, "out", "tester", "MAIL");
    ck_assert_ptr_nonnull (mail);
    ck_assert_str_eq (s_path_str (mail, "messages.0.body"), "hello tap");
    ck_assert_str_eq (s_path_str (mail, "messages.0.from"), "tester");
    ck_assert_str_eq (s_path_str (mail, "messages.1.body"), "breaking \"news\"");
    json_t *ready = s_find (lines, "pub", "mail.other", "MAIL_READY");
    ck_assert_ptr_nonnull (ready);
    ck_assert_str_eq (s_path_str (ready, "agent"), "other");
    json_t *joined = s_find (lines, "pub", "agent.other", "AGENT_EVENT");
    ck_assert_ptr_nonnull (joined);
    ck_assert_str_eq (s_path_str (joined, "event"), "joined");
    //  Light traffic, below both HWMs: the tap kept up, so tseq has no gap.
    ck_assert_int_eq (s_check_tseq (lines), 0);
    ck_assert_ptr_null (strstr (tproc_out (tap), "\"kind\":\"dropped\""));
    json_decref (lines);

    //  The recording replays to exactly the same lines.
    tproc_t *replay = tproc_tap ((const char *[]) { "--replay", record, "--json", NULL });
    ck_assert_int_eq (tproc_status (replay), 0);
    ck_assert_str_eq (tproc_out (replay), tproc_out (tap));
    tproc_destroy (&replay);

    //  Filters on the recording.
    replay = tproc_tap ((const char *[]) { "--replay", record, "--json",
                                           "--agent", "tester", "--type", "SEND", NULL });
    ck_assert_int_eq (tproc_status (replay), 0);
    ck_assert_int_eq (tproc_count_lines (tproc_out (replay)), 1);
    ck_assert_ptr_nonnull (strstr (tproc_out (replay), "hello tap"));
    tproc_destroy (&replay);
    replay = tproc_tap ((const char *[]) { "--replay", record, "--json", "--channel", "news", NULL });
    ck_assert_int_eq (tproc_status (replay), 0);
    lines = tproc_json_lines (tproc_out (replay));
    ck_assert_int_eq (json_array_size (lines), 3);      //  LISTEN, SEND, MAIL
    ck_assert_ptr_nonnull (s_find (lines, "in", "tester", "LISTEN"));
    ck_assert_ptr_nonnull (s_find (lines, "in", "tester", "SEND"));
    ck_assert_ptr_nonnull (s_find (lines, "out", "tester", "MAIL"));
    json_decref (lines);
    tproc_destroy (&replay);
    //  Text mode shows the same traffic for a person.
    replay = tproc_tap ((const char *[]) { "--replay", record, "--type", "SEND", NULL });
    ck_assert_ptr_nonnull (strstr (tproc_out (replay),
                                   "3 msgs: to tester \"hello tap\" (+2 more)"));
    tproc_destroy (&replay);

    testclient_destroy (&other);
    testclient_destroy (&client);
    tproc_destroy (&tap);
    free (record);
    tproc_dir_destroy (&dir);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  --count with filters: the tap exits by itself after N matching frames.
START_TEST (test_live_count_filter)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "-b", testbroker_router (broker),
        "--json", "--type", "SEND", "--agent", "tester", "--count", "2",
        "--timeout-ms", "120000", NULL }, true, NULL);
    ck_assert_ptr_nonnull (tap);
    testclient_t *client = testclient_new (testbroker_router (broker));
    s_expect (testclient_hello (client, "tester"), PMSG_WELCOME);
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    for (int i = 0; !tproc_exited (tap); i++) {
        ck_assert_msg (pclock_mono_ms () < deadline, "tap did not stop: %s", tproc_err (tap));
        char text [32];
        snprintf (text, sizeof text, "ping %d", i);
        s_send (client, 1, (const char *[]) { "tester" }, (const char *[]) { text });
        //  Acknowledge, so the inbox never fills however long this takes.
        s_expect (testclient_call0 (client, PMSG_FETCH), PMSG_MAIL);
        tproc_read (tap, 50);
    }
    ck_assert_int_eq (tproc_wait (tap, DEADLINE_MS), 0);
    json_t *lines = tproc_json_lines (tproc_out (tap));
    ck_assert_ptr_nonnull (lines);
    ck_assert_int_eq (json_array_size (lines), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *line = json_array_get (lines, i);
        ck_assert_str_eq (json_string_value (json_object_get (line, "type")), "SEND");
        ck_assert_str_eq (json_string_value (json_object_get (line, "peer")), "tester");
        ck_assert_int_eq (strncmp (s_path_str (line, "messages.0.body"), "ping ", 5), 0);
    }
    json_decref (lines);
    ck_assert_ptr_nonnull (strstr (tproc_err (tap), "2 shown"));
    testclient_destroy (&client);
    tproc_destroy (&tap);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  --stats: the table, and a clean stop on SIGTERM.
START_TEST (test_live_stats)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "--tap", testbroker_tap (broker),
                                                   "--stats", NULL }, true, NULL);
    testclient_t *client = testclient_new (testbroker_router (broker));
    s_expect (testclient_hello (client, "tester"), PMSG_WELCOME);
    //  Until a table counts our heartbeats.
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (!strstr (tproc_out (tap), "HEARTBEAT")) {
        ck_assert_msg (pclock_mono_ms () < deadline, "no table: %s", tproc_err (tap));
        s_expect (testclient_call0 (client, PMSG_HEARTBEAT), PMSG_OK);
        tproc_read (tap, 100);
    }
    tproc_signal (tap, SIGTERM);
    ck_assert_int_eq (tproc_wait (tap, DEADLINE_MS), 0);
    const char *out = tproc_out (tap);
    ck_assert_ptr_nonnull (strstr (out, "MSG/S"));
    ck_assert_ptr_nonnull (strstr (out, "AGENT / PEER"));
    ck_assert_ptr_nonnull (strstr (out, "tester"));
    ck_assert_ptr_null (strstr (out, "\033["));     //  not a tty: no ANSI codes
    testclient_destroy (&client);
    tproc_destroy (&tap);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("tap_live");
    TCase *live = tcase_create ("live");
    tcase_add_test (live, test_live_record_replay);
    tcase_add_test (live, test_live_count_filter);
    tcase_add_test (live, test_live_stats);
    suite_add_tcase (suite, live);
    return testsuite_run (suite);
}
