// SPDX-License-Identifier: MIT
/*  check_agent_mail - the agent's mailbox against a real broker: every
    message reaches the steps, none is acknowledged before the agent
    committed it (its memory holding the mail saved), and a restarted
    broker neither loses mail nor shows the node loop a message twice.

    The mailbox connector runs in-process on libparley; a second client
    plays the other agents. A "kill" is the mailbox and its client
    destroyed without a commit, as a SIGKILL between two saves leaves them.
*/
#include <check.h>
#include <czmq.h>
#include "agent/conn_mailbox.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 20000

typedef struct {
    parley_client_t *client;
    connector_t *box;
} rx_t;

static rx_t
rx_new (const char *router, const char *id)
{
    rx_t rx;
    rx.client = parley_client_new (router, id);
    parley_client_set_timeout (rx.client, 1000, 200);
    //  As the agent keeps it in its memory folder: the resume token lets a
    //  restarted ("killed") mailbox take its id over at once.
    char *token = zsys_sprintf ("%s/%s-token-%d", getenv ("TMPDIR")? getenv ("TMPDIR"): "/tmp",
                                id, (int) getpid ());
    ck_assert_int_eq (parley_client_set_security (rx.client, NULL, NULL, token), PARLEY_OK);
    zstr_free (&token);
    ck_assert_int_eq (parley_client_connect (rx.client), PARLEY_OK);
    rx.box = conn_mailbox_new (rx.client);
    return rx;
}

static void
rx_destroy (rx_t *rx)
{
    connector_destroy (&rx->box);
    parley_client_destroy (&rx->client);
}

//  `count` messages "m<i>" from `from` to `to`, in SENDs of up to 250.
static void
send_burst (const char *router, const char *from, const char *to, size_t first, size_t count)
{
    parley_client_t *tx = parley_client_new (router, from);
    ck_assert_int_eq (parley_client_connect (tx), PARLEY_OK);
    char bodies [250][16];
    parley_outbox_t *items = parley_outbox_new ();
    parley_sent_t *sent = NULL;
    for (size_t done = 0; done < count; ) {
        size_t n = count - done < 250? count - done: 250;
        parley_outbox_reset (items);
        for (size_t i = 0; i < n; i++) {
            snprintf (bodies [i], sizeof bodies [i], "m%zu", first + done + i);
            ck_assert_int_eq (parley_outbox_to (items, to, bodies [i], strlen (bodies [i])),
                              PARLEY_OK);
        }
        ck_assert_int_eq (parley_client_send (tx, items, &sent), PARLEY_OK);
        ck_assert_uint_eq (parley_sent_accepted (sent), n);
        done += n;
    }
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&items);
    parley_client_bye (tx, false);
    parley_client_destroy (&tx);
}

//  One step's capture; the messages' texts are appended to `seen` (one
//  line each). Returns how many the step got.
static size_t
capture (rx_t *rx, zlistx_t *seen)
{
    char err [256];
    ck_assert_msg (connector_capture (rx->box, err, sizeof err) == 0, "capture: %s", err);
    size_t count = conn_mailbox_count (rx->box);
    ck_assert_uint_le (count, MAILBOX_MAX_BATCH);
    for (size_t i = 0; i < count; i++)
        zlistx_add_end (seen, conn_mailbox_at (rx->box, i)->text);
    return count;
}

static zlistx_t *
seen_new (void)
{
    zlistx_t *seen = zlistx_new ();
    zlistx_set_duplicator (seen, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (seen, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (seen, (zlistx_comparator_fn *) strcmp);
    return seen;
}

//  Every "m<first>".."m<first+count-1>" is in `seen` exactly once.
static void
assert_each_once (zlistx_t *seen, size_t first, size_t count)
{
    ck_assert_uint_eq (zlistx_size (seen), count);
    for (size_t i = first; i < first + count; i++) {
        char text [16];
        snprintf (text, sizeof text, "m%zu", i);
        ck_assert_msg (zlistx_find (seen, text), "message %s never reached a step", text);
    }
}

//  A burst far over one step's view reaches the steps in full: each step
//  takes at most MAILBOX_MAX_BATCH, the rest waits at the broker.
START_TEST (test_burst_reaches_every_step)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    rx_t rx = rx_new (router, "Rx");
    send_burst (router, "Tx", "Rx", 0, 1000);
    zlistx_t *seen = seen_new ();
    size_t steps = 0;
    while (zlistx_size (seen) < 1000 && steps < 100) {
        capture (&rx, seen);
        conn_mailbox_commit (rx.box);       //  the step's memory was saved
        steps++;
    }
    assert_each_once (seen, 0, 1000);
    ck_assert_uint_ge (steps, 1000 / MAILBOX_MAX_BATCH);
    //  Nothing more, and nothing twice.
    ck_assert_uint_eq (capture (&rx, seen), 0);
    ck_assert_uint_eq (conn_mailbox_dropped (rx.box), 0);
    rx_destroy (&rx);
    zlistx_destroy (&seen);
    testbroker_stop (&broker);
}
END_TEST

//  Mail handed to steps but not committed is not acknowledged, even by the
//  FETCHes of later steps: killed before the save, the agent gets it again.
START_TEST (test_kill_before_save_loses_nothing)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    rx_t rx = rx_new (router, "Rx");
    send_burst (router, "Tx", "Rx", 0, 100);
    zlistx_t *seen = seen_new ();
    size_t first = capture (&rx, seen);
    ck_assert_uint_eq (first, MAILBOX_MAX_BATCH);
    size_t second = capture (&rx, seen);
    ck_assert_uint_eq (first + second, 100);
    rx_destroy (&rx);                       //  killed: no commit, no BYE
    zlistx_purge (seen);
    rx = rx_new (router, "Rx");
    while (capture (&rx, seen) > 0)
        ;
    assert_each_once (seen, 0, 100);

    //  Committed mail is acknowledged with the next FETCH and not seen again.
    conn_mailbox_commit (rx.box);
    capture (&rx, seen);
    rx_destroy (&rx);
    zlistx_purge (seen);
    rx = rx_new (router, "Rx");
    ck_assert_uint_eq (capture (&rx, seen), 0);
    rx_destroy (&rx);
    zlistx_destroy (&seen);
    testbroker_stop (&broker);
}
END_TEST

//  A broker restart (fresh counters) while others keep sending: the agent
//  resumes at the new broker's acknowledged position and sees every new
//  message once, even when the new broker's seqs already passed the old
//  ones before the agent got back.
START_TEST (test_broker_restart_resumes)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "router");
    char *pub = tproc_dir_endpoint (dir, "pub");
    const char *args [] = { "--router", router, "--pub", pub, NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    rx_t rx = rx_new (router, "Rx");
    send_burst (router, "Tx", "Rx", 0, 5);
    zlistx_t *seen = seen_new ();
    ck_assert_uint_eq (capture (&rx, seen), 5);
    conn_mailbox_commit (rx.box);
    ck_assert_int_eq (testbroker_stop (&broker), 0);

    broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    zlistx_purge (seen);
    //  The new broker learns of Rx (HELLO, BYE: mail for it is kept), then
    //  gets mail for it: seqs 1..8, past the 5 Rx saw before.
    parley_client_t *stand_in = parley_client_new (router, "Rx");
    ck_assert_int_eq (parley_client_connect (stand_in), PARLEY_OK);
    ck_assert_int_eq (parley_client_bye (stand_in, false), PARLEY_OK);
    parley_client_destroy (&stand_in);
    send_burst (router, "Tx", "Rx", 100, 8);
    size_t got = 0;
    for (int step = 0; step < 5; step++)
        got += capture (&rx, seen);
    ck_assert_uint_eq (got, 8);
    assert_each_once (seen, 100, 8);
    ck_assert_uint_ge (parley_client_epoch (rx.client), 2);
    rx_destroy (&rx);
    zlistx_destroy (&seen);
    testbroker_stop (&broker);
    free (router);
    free (pub);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("agent_mail");
    TCase *tc = tcase_create ("mailbox");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_burst_reaches_every_step);
    tcase_add_test (tc, test_kill_before_save_loses_nothing);
    tcase_add_test (tc, test_broker_restart_resumes);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
