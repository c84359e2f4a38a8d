// SPDX-License-Identifier: MIT
/*  check_client_push - libparley's pushed mail against the real broker:
    parley_client_consume and _take_pushed with acknowledgement on take
    (every message once, in order, the window returned without a round
    trip), the caller's descriptor waking for pushed mail, and the
    subscription opened again by itself after the broker took the session
    away (the pushed, unacknowledged mail comes again; what was taken is
    filtered as a duplicate and acknowledged at last). Deadlines by the
    clock.
*/
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley/client.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 20000

static parley_client_t *
s_client (testbroker_t *broker, const char *id)
{
    parley_client_t *client = parley_client_new (testbroker_router (broker), id);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

//  Sends `count` messages "<i>" from a to `to`, a few per SEND.
static void
s_send (parley_client_t *a, const char *to, int first, int count)
{
    char bodies [8][16];
    parley_outbox_t *items = parley_outbox_new ();
    parley_sent_t *result = NULL;
    for (int sent = 0; sent < count; ) {
        int n = count - sent < 8 ? count - sent : 8;
        parley_outbox_reset (items);
        for (int i = 0; i < n; i++) {
            snprintf (bodies [i], sizeof bodies [i], "%d", first + sent + i);
            parley_outbox_to (items, to, bodies [i], strlen (bodies [i]));
        }
        ck_assert_int_eq (parley_client_send (a, items, &result), PARLEY_OK);
        ck_assert_uint_eq (parley_sent_accepted (result), (size_t) n);
        sent += n;
    }
    parley_sent_destroy (&result);
    parley_outbox_destroy (&items);
}

//  Takes pushed mail until `want` bodies were seen; checks they count up
//  from `next`. Returns the next expected body.
static int
s_take_until (parley_client_t *b, int next, int want, size_t credit)
{
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    parley_mail_t *batch = NULL;
    while (next < want) {
        ck_assert_msg (pclock_mono_ms () < until, "pushed up to %d of %d", next, want);
        if (!parley_client_take_pushed (b, &batch)) {
            parley_client_wait (b, 100);
            continue;
        }
        ck_assert_uint_le (parley_mail_count (batch), credit);
        for (size_t i = 0; i < parley_mail_count (batch); i++) {
            const parley_message_t *m = parley_mail_at (batch, i);
            char text [16];
            snprintf (text, sizeof text, "%.*s", (int) parley_message_body_size (m),
                      (const char *) parley_message_body (m));
            ck_assert_int_eq (atoi (text), next);
            next++;
        }
    }
    parley_mail_destroy (&batch);
    return next;
}

START_TEST (test_consume_ack_on_take)
{
    testbroker_t *broker = testcheck_start (NULL);
    parley_client_t *a = s_client (broker, "A");
    parley_client_t *b = s_client (broker, "B");
    s_send (a, "B", 0, 50);
    parley_client_ack_policy (b, PARLEY_ACK_ON_TAKE);
    ck_assert_int_eq (parley_client_consume (b, 10, 0), PARLEY_OK);
    int next = s_take_until (b, 0, 50, 10);
    s_send (a, "B", 50, 250);
    next = s_take_until (b, next, 300, 10);
    //  One more take acknowledges the last batch: nothing stays queued.
    parley_mail_t *batch = NULL;
    ck_assert (!parley_client_take_pushed (b, &batch));
    parley_mail_destroy (&batch);
    testclient_t *probe = testcheck_agent (broker, "Probe");
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (testmail_stat (probe, "queued") != 0) {
        ck_assert_msg (pclock_mono_ms () < until, "the last pushes were never acknowledged");
        pclock_sleep_ms (20);
    }
    ck_assert_uint_ge (testmail_stat (probe, "pushed"), 300);
    ck_assert_uint_eq (testmail_stat (probe, "consumers"), 1);
    //  Too large a window is refused before anything is sent.
    ck_assert_int_eq (parley_client_consume (b, PARLEY_MAX_CREDIT + 1, 0), PARLEY_ERR_INVALID);
    ck_assert_int_eq (parley_client_consume (b, 10, 65ULL * 1024 * 1024), PARLEY_ERR_BAD_FIELD);
    testclient_destroy (&probe);
    parley_client_destroy (&b);
    parley_client_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_fd_wakes_for_pushed_mail)
{
    testbroker_t *broker = testcheck_start (NULL);
    parley_client_t *a = s_client (broker, "A");
    parley_client_t *b = s_client (broker, "B");
    ck_assert_int_eq (parley_client_consume (b, 100, 0), PARLEY_OK);
    int fd = parley_client_fd (b);
    ck_assert_int_ge (fd, 0);
    parley_client_process (b);
    s_send (a, "B", 0, 1);
    bool woke = false;
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (!woke && pclock_mono_ms () < until) {
        struct pollfd item = { .fd = fd, .events = POLLIN };
        poll (&item, 1, 100);
        woke = parley_client_process (b);
    }
    ck_assert (woke);
    parley_mail_t *batch = NULL;
    ck_assert (parley_client_take_pushed (b, &batch));
    ck_assert_uint_eq (parley_mail_count (batch), 1);
    const parley_message_t *m = parley_mail_at (batch, 0);
    ck_assert_int_eq (memcmp (parley_message_body (m), "0", 1), 0);
    ck_assert_str_eq (parley_message_from (m), "A");
    ck_assert_int_eq (parley_client_ack_nowait (b, parley_message_seq (m)), PARLEY_OK);
    parley_mail_destroy (&batch);
    //  The descriptor stays the same.
    ck_assert_int_eq (parley_client_fd (b), fd);
    parley_client_destroy (&b);
    parley_client_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

START_TEST (test_consume_again_after_reconnect)
{
    testbroker_t *broker = testcheck_start (NULL);
    tproc_dir_t *dir = tproc_dir_new ();
    char *token_file = tproc_dir_path (dir, "B.token");
    parley_client_t *a = s_client (broker, "A");
    parley_client_t *b = parley_client_new (testbroker_router (broker), "B");
    ck_assert_int_eq (parley_client_set_security (b, NULL, NULL, token_file), PARLEY_OK);
    ck_assert_int_eq (parley_client_connect (b), PARLEY_OK);
    s_send (a, "B", 0, 5);
    ck_assert_int_eq (parley_client_consume (b, 3, 0), PARLEY_OK);
    int next = s_take_until (b, 0, 3, 3);
    ck_assert_int_eq (next, 3);

    //  Another connection takes the id over with the resume token: B's
    //  session (and its subscription) ends there.
    char token [80] = "";
    FILE *file = fopen (token_file, "r");
    ck_assert_ptr_nonnull (file);
    ck_assert (fgets (token, sizeof token, file));
    fclose (file);
    token [strcspn (token, "\n")] = 0;
    testclient_t *thief = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (thief, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "B");
    penc_kv_cstr (enc, "token", token);
    pmsg_t *welcome = testclient_call (thief);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    testclient_destroy (&thief);

    //  B's next request meets NOT_HELLO, says HELLO again and consumes
    //  again: the unacknowledged mail is pushed again. The three taken
    //  are duplicates the filter leaves out; they fill the window until B
    //  acknowledges what it took, then the other two come.
    ck_assert_int_eq (parley_client_heartbeat (b), PARLEY_OK);
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    parley_mail_t *batch = NULL;
    do {
        ck_assert_msg (pclock_mono_ms () < until, "the mail was not pushed again");
        ck_assert (!parley_client_take_pushed (b, &batch));
        parley_client_wait (b, 50);
    } while (parley_client_counter (b, PARLEY_COUNTER_DUPLICATES) < 3);
    parley_mail_destroy (&batch);
    ck_assert_uint_ge (parley_client_counter (b, PARLEY_COUNTER_HELLOS), 2);
    ck_assert_int_eq (parley_client_ack_nowait (b, 3), PARLEY_OK);
    next = s_take_until (b, next, 5, 3);
    ck_assert_int_eq (parley_client_ack (b, 5), PARLEY_OK);
    s_send (a, "B", 5, 1);
    next = s_take_until (b, next, 6, 3);
    free (token_file);
    tproc_dir_destroy (&dir);
    parley_client_destroy (&b);
    parley_client_destroy (&a);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("client_push");
    TCase *tc = tcase_create ("client_push");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_consume_ack_on_take);
    tcase_add_test (tc, test_fd_wakes_for_pushed_mail);
    tcase_add_test (tc, test_consume_again_after_reconnect);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
