// SPDX-License-Identifier: MIT
/*  check_connections - the broker's memory follows the connections it
    has, not the most it ever had.

    Three rounds of 5,000 connections, each saying HELLO and BYE and then
    closing: the broker's RSS after each round stays within 1.5x of the
    first round's, and the connections' buffers go back to the system
    once they are closed. Eight event subscribers that never read cost at
    most their --pub-hwm of events each, however much is published.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "pclock.h"
#include "pmsg.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

#define S_CONNECTIONS 5000
#define S_ROUNDS 3

static long
s_rss_kib (pid_t pid)
{
    char path [64], line [256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    long kib = 0;
    while (fgets (line, sizeof line, file))
        if (sscanf (line, "VmRSS: %ld", &kib) == 1)
            break;
    fclose (file);
    return kib;
}

//  One request frame: {v, t, id, [agent]}; a BYE forgets the id (each
//  round registers its own ids, and none is left behind).
static void
s_send (void *sock, pmsg_type_t type, const char *agent)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, type, 1, agent || type == PMSG_BYE ? 1 : 0);
    if (agent)
        penc_kv_cstr (&enc, "agent", agent);
    if (type == PMSG_BYE)
        penc_kv_bool (&enc, "forget", true);
    ck_assert_int_ge (zmq_send (sock, penc_data (&enc), penc_size (&enc), 0), 0);
    penc_fini (&enc);
}

static void
s_expect (void *sock, pmsg_type_t type)
{
    zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
    ck_assert_int_eq (zmq_poll (&item, 1, 30000), 1);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    ck_assert_int_ge (zmq_msg_recv (&msg, sock, 0), 0);
    pmsg_t *reply = pmsg_decode (zmq_msg_data (&msg), zmq_msg_size (&msg),
                                 pwire_default_limits (), NULL, NULL, NULL, 0);
    ck_assert_ptr_nonnull (reply);
    ck_assert_int_eq (pmsg_type (reply), type);
    pmsg_destroy (&reply);
    zmq_msg_close (&msg);
}

START_TEST (test_memory_after_connections_close)
{
    //  Two descriptors a connection here (the socket and its mailbox).
    struct rlimit limit;
    getrlimit (RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur < 4 * S_CONNECTIONS && limit.rlim_max >= 4 * S_CONNECTIONS) {
        limit.rlim_cur = 4 * S_CONNECTIONS;
        setrlimit (RLIMIT_NOFILE, &limit);
    }
    ck_assert_msg (limit.rlim_cur >= 3 * S_CONNECTIONS, "descriptors: %llu",
                   (unsigned long long) limit.rlim_cur);
    const char *args [] = { "--max-agents", "20000", NULL };
    testbroker_t *broker = testcheck_start (args);
    void *context = zmq_ctx_new ();
    zmq_ctx_set (context, ZMQ_MAX_SOCKETS, 4 * S_CONNECTIONS);
    void **socks = calloc (S_CONNECTIONS, sizeof (void *));
    long after [S_ROUNDS];
    for (int round = 0; round < S_ROUNDS; round++) {
        for (int i = 0; i < S_CONNECTIONS; i++) {
            socks [i] = zmq_socket (context, ZMQ_DEALER);
            int linger = 0;
            zmq_setsockopt (socks [i], ZMQ_LINGER, &linger, sizeof linger);
            ck_assert_int_eq (zmq_connect (socks [i], testbroker_router (broker)), 0);
            //  Ids of this round: the last round's connections may not all
            //  be seen closed yet.
            char id [24];
            snprintf (id, sizeof id, "C%d.%d", round, i);
            s_send (socks [i], PMSG_HELLO, id);
        }
        for (int i = 0; i < S_CONNECTIONS; i++)
            s_expect (socks [i], PMSG_WELCOME);
        for (int i = 0; i < S_CONNECTIONS; i++)
            s_send (socks [i], PMSG_BYE, NULL);
        for (int i = 0; i < S_CONNECTIONS; i++)
            s_expect (socks [i], PMSG_OK);
        long open_kib = s_rss_kib (testbroker_pid (broker));
        for (int i = 0; i < S_CONNECTIONS; i++)
            zmq_close (socks [i]);
        //  The closes reach the broker, and its next one-second tick: the
        //  first round's memory falls to below half of what the open
        //  connections took, and each later round's to within 1.5x of the
        //  first's (waited for, up to 30 s on a loaded machine).
        int64_t deadline = pclock_mono_ms () + 30000;
        do {
            pclock_sleep_ms (500);
            after [round] = s_rss_kib (testbroker_pid (broker));
        } while (pclock_mono_ms () < deadline
                 && (round == 0 ? after [round] * 2 > open_kib
                                : after [round] * 2 > after [0] * 3));
        fprintf (stderr, "round %d: broker RSS %ld KiB with %d connections, %ld KiB after "
                 "they closed\n", round, open_kib, S_CONNECTIONS, after [round]);
    }
    for (int round = 1; round < S_ROUNDS; round++)
        ck_assert_msg (after [round] * 2 <= after [0] * 3, "round %d: %ld KiB, round 0: %ld KiB",
                       round, after [round], after [0]);
    free (socks);
    zmq_ctx_term (context);
    testcheck_stop (&broker);
}
END_TEST

//  Eight subscribers that never read: what the broker holds for them is
//  at most --max-subscribers x --pub-hwm events, whatever is published.
START_TEST (test_never_reading_subscribers)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *writer = testcheck_agent (broker, "Writer");
    void *context = zmq_ctx_new ();
    void *subs [8];
    for (int i = 0; i < 8; i++) {
        subs [i] = zmq_socket (context, ZMQ_SUB);
        int one = 1, linger = 0;
        zmq_setsockopt (subs [i], ZMQ_RCVHWM, &one, sizeof one);
        zmq_setsockopt (subs [i], ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt (subs [i], ZMQ_SUBSCRIBE, "state.", 6);
        ck_assert_int_eq (zmq_connect (subs [i], testbroker_pub (broker)), 0);
    }
    pclock_sleep_ms (500);
    long before = s_rss_kib (testbroker_pid (broker));
    //  200,000 events of about 300 bytes: 60 MB if they were all kept
    //  for each of the eight.
    char value [256];
    memset (value, 'v', sizeof value - 1);
    value [sizeof value - 1] = 0;
    for (int w = 0; w < 200000 / 64; w++) {
        penc_t *enc = testclient_begin (writer, PMSG_WRITE, 1);
        penc_key (enc, "ops");
        msgpack_pack_array (penc_packer (enc), 64);
        for (int k = 0; k < 64; k++) {
            char key [16];
            snprintf (key, sizeof key, "k%d", k);
            msgpack_pack_map (penc_packer (enc), 3);
            penc_kv_cstr (enc, "op", "set");
            penc_kv_cstr (enc, "key", key);
            penc_kv_cstr (enc, "value", value);
        }
        pmsg_t *reply = testclient_call (writer);
        EXPECT (reply, PMSG_WRITTEN);
        pmsg_destroy (&reply);
    }
    long after = s_rss_kib (testbroker_pid (broker));
    //  The cap at the defaults: 8 x 10,000 events of ~300 bytes (and
    //  libzmq's own costs per message), far below what was published.
    fprintf (stderr, "never-reading subscribers: broker RSS %ld -> %ld KiB\n", before, after);
    ck_assert_msg (after - before < 64 * 1024, "broker grew by %ld KiB", after - before);
    for (int i = 0; i < 8; i++)
        zmq_close (subs [i]);
    zmq_ctx_term (context);
    testclient_destroy (&writer);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
#if defined (__SANITIZE_ADDRESS__)
    //  The SANITIZE=1 brokers keep 256 MiB of freed blocks in quarantine,
    //  which is no memory of the broker's own: keep it small here so the
    //  broker's resident memory says what it holds.
    char options [512];
    snprintf (options, sizeof options, "%s:quarantine_size_mb=4",
              getenv ("ASAN_OPTIONS") ? getenv ("ASAN_OPTIONS") : "");
    setenv ("ASAN_OPTIONS", options, 1);
#endif
    Suite *suite = suite_create ("connections");
    TCase *tc = tcase_create ("connections");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_memory_after_connections_close);
    tcase_add_test (tc, test_never_reading_subscribers);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
