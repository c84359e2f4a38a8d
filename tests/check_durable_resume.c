// SPDX-License-Identifier: MIT
/*  check_durable_resume - what a restarted broker owes the agents that come
    back to it, against the real binary: the plain-mode resume token of an
    offline id survives the restart (from the log and from a snapshot), so
    a stranger still cannot take the id while its holder can, and an id
    given up with BYE is free; a broker that recovered its journal keeps
    WELCOME's `origin`, so libparley's duplicate filter goes on and the
    agent sees every message once, none lost; a broker whose counters
    really start again (--data-dir none) has a new origin and the filter
    starts again.
*/
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parley/client.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  HELLO as `id` with `token` (NULL: none) on a new connection.
static pmsg_t *
s_hello (testbroker_t *broker, testclient_t **client_p, const char *id, const char *token)
{
    *client_p = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (*client_p, PMSG_HELLO, token ? 2 : 1);
    penc_kv_cstr (enc, "agent", id);
    if (token)
        penc_kv_cstr (enc, "token", token);
    return testclient_call (*client_p);
}

static void
s_token_survives (bool compact)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    const char *args [] = { "--data-dir", dir, "--liveness-ms", "60000",
                            "--compact-min-bytes", "4096", NULL };
    testbroker_t *broker = testcheck_start (args);
    testclient_t *rover;
    pmsg_t *reply = s_hello (broker, &rover, "Rover", NULL);
    EXPECT (reply, PMSG_WELCOME);
    char token [PROTO_MAX_NAME + 1];
    ck_assert (pmsg_strcpy (reply, "token", token, sizeof token));
    pmsg_destroy (&reply);
    //  Leaver gives its id up.
    testclient_t *leaver;
    reply = s_hello (broker, &leaver, "Leaver", NULL);
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    reply = testclient_call0 (leaver, PMSG_BYE);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&leaver);
    if (compact) {
        //  Past --compact-min-bytes: the registrations move into a snapshot.
        char *big = malloc (6001);
        memset (big, 'b', 6000);
        big [6000] = 0;
        penc_t *enc = testclient_begin_set (rover, "big");
        penc_kv_cstr (enc, "value", big);
        reply = testclient_call (rover);
        EXPECT (reply, PMSG_WRITTEN);
        pmsg_destroy (&reply);
        free (big);
        int64_t deadline = pclock_mono_ms () + 30000;     //  a child writes it; a busy disk
        while (!testbroker_log_contains (broker, "snapshot.2 (") && pclock_mono_ms () < deadline)
            pclock_sleep_ms (50);
        ck_assert_msg (testbroker_log_contains (broker, "snapshot.2 ("), "no compaction");
    }
    testclient_destroy (&rover);
    testcheck_stop (&broker);

    broker = testcheck_start (args);
    ck_assert (testbroker_log_contains (broker, "recovered 2 agents"));
    //  A stranger without the token, or with a wrong one, cannot take Rover.
    testclient_t *stranger;
    reply = s_hello (broker, &stranger, "Rover", NULL);
    EXPECT_ERROR (reply, PERR_ID_IN_USE);
    pmsg_destroy (&reply);
    testclient_destroy (&stranger);
    reply = s_hello (broker, &stranger, "Rover", "0123456789abcdef0123456789abcdef");
    EXPECT_ERROR (reply, PERR_UNAUTHORIZED);
    pmsg_destroy (&reply);
    testclient_destroy (&stranger);
    //  Rover with its token: at once, and the token stands.
    reply = s_hello (broker, &rover, "Rover", token);
    EXPECT (reply, PMSG_WELCOME);
    char again [PROTO_MAX_NAME + 1];
    ck_assert (pmsg_strcpy (reply, "token", again, sizeof again));
    ck_assert_str_eq (again, token);
    pmsg_destroy (&reply);
    testclient_destroy (&rover);
    //  Leaver said BYE: its id needs no token.
    reply = s_hello (broker, &leaver, "Leaver", NULL);
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    testclient_destroy (&leaver);
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}

START_TEST (test_token_survives_restart)
{
    s_token_survives (false);
}
END_TEST

START_TEST (test_token_survives_compaction)
{
    s_token_survives (true);
}
END_TEST

static parley_client_t *
s_connected (const char *router, const char *id)
{
    parley_client_t *client = parley_client_new (router, id);
    //  Long: a reply late on a loaded machine (this broker writes to disk)
    //  must not become a timeout, a resend and a new session that the
    //  epoch and duplicate counts below do not expect. A request made
    //  while the broker restarts waits in the DEALER for the reconnect.
    parley_client_set_timeout (client, TESTCLIENT_TIMEOUT_MS, 100);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

static void
s_send (const char *router, const char *to, int first, int count)
{
    parley_client_t *tx = s_connected (router, "Tx");
    parley_outbox_t *item = parley_outbox_new ();
    parley_sent_t *sent = NULL;
    for (int i = first; i < first + count; i++) {
        char body [16];
        snprintf (body, sizeof body, "m%d", i);
        parley_outbox_reset (item);
        parley_outbox_to (item, to, body, strlen (body));
        ck_assert_int_eq (parley_client_send (tx, item, &sent), PARLEY_OK);
        ck_assert_uint_eq (parley_sent_accepted (sent), 1);
    }
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&item);
    ck_assert_int_eq (parley_client_bye (tx, false), PARLEY_OK);
    parley_client_destroy (&tx);
}

//  The bodies a FETCH (acknowledging nothing) hands out, as "m0,m1,".
static void
s_fetch (parley_client_t *rx, char *out, size_t size, uint64_t *last_seq)
{
    parley_mail_t *mail = NULL;
    ck_assert_int_eq (parley_client_fetch (rx, 0, 0, false, &mail), PARLEY_OK);
    size_t at = 0;
    out [0] = 0;
    for (size_t i = 0; i < parley_mail_count (mail); i++) {
        const parley_message_t *message = parley_mail_at (mail, i);
        at += (size_t) snprintf (out + at, size - at, "%.*s,",
                                 (int) parley_message_body_size (message),
                                 (const char *) parley_message_body (message));
        *last_seq = parley_message_seq (message);
    }
    parley_mail_destroy (&mail);
}

START_TEST (test_origin_follows_recovery)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    char *router = tproc_dir_endpoint (tmp, "router");
    char *pub = tproc_dir_endpoint (tmp, "pub");
    const char *args [] = { "--router", router, "--pub", pub, "--data-dir", dir, NULL };
    testbroker_t *broker = testcheck_start (args);
    parley_client_t *rx = s_connected (router, "Rx");
    uint64_t origin = parley_welcome_origin (parley_client_welcome (rx));
    ck_assert_uint_gt (origin, 0);
    s_send (router, "Rx", 0, 5);
    char got [256];
    uint64_t last = 0;
    s_fetch (rx, got, sizeof got, &last);
    ck_assert_str_eq (got, "m0,m1,m2,m3,m4,");
    //  m0 and m1 acknowledged; m2..m4 handed out, not acknowledged.
    uint64_t second = last - 3;
    ck_assert_int_eq (parley_client_ack (rx, second), PARLEY_OK);
    testcheck_stop (&broker);

    //  Recovered: the same origin, seqs go on, the filter with them.
    broker = testcheck_start (args);
    ck_assert (testbroker_log_contains (broker, "recovered"));
    ck_assert_int_eq (parley_client_heartbeat (rx), PARLEY_OK);
    ck_assert_uint_eq (parley_client_epoch (rx), 2);
    ck_assert_uint_eq (parley_welcome_origin (parley_client_welcome (rx)), origin);
    ck_assert_uint_eq (parley_welcome_acked (parley_client_welcome (rx)), second);
    s_send (router, "Rx", 5, 3);
    s_fetch (rx, got, sizeof got, &last);
    ck_assert_str_eq (got, "m5,m6,m7,");
    ck_assert_uint_eq (parley_client_counter (rx, PARLEY_COUNTER_DUPLICATES), 3);
    ck_assert_int_eq (parley_client_ack (rx, last), PARLEY_OK);
    testcheck_stop (&broker);

    //  Counters that really start again: a new origin, and the filter
    //  starts again (the first message's seq is below what was handed out).
    const char *fresh [] = { "--router", router, "--pub", pub, "--data-dir", "none", NULL };
    broker = testcheck_start (fresh);
    ck_assert_int_eq (parley_client_heartbeat (rx), PARLEY_OK);
    ck_assert_uint_ne (parley_welcome_origin (parley_client_welcome (rx)), origin);
    s_send (router, "Rx", 8, 1);
    s_fetch (rx, got, sizeof got, &last);
    ck_assert_str_eq (got, "m8,");
    ck_assert_uint_eq (last, 1);
    parley_client_destroy (&rx);
    testcheck_stop (&broker);
    free (router);
    free (pub);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("durable_resume");
    TCase *tc = tcase_create ("durable_resume");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_token_survives_restart);
    tcase_add_test (tc, test_token_survives_compaction);
    tcase_add_test (tc, test_origin_follows_recovery);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
