// SPDX-License-Identifier: MIT
/*  check_flood - one client's flood does not make the broker slow for
    another.

    Two clients flood SENDs at two agents that never read (their inboxes
    full, so every SEND parks for room until its wait runs out and is
    answered INBOX_FULL), each keeping hundreds of requests in flight,
    while a third client measures HEARTBEAT round trips. Its p99 must stay
    under 50 ms: the parked SENDs and the requests held behind them are
    worked through a bounded slice per loop turn, never all at once.

    PARLEY_FLOOD_SECONDS sets the flood's length (default 10; `make soak`
    runs 60).
*/
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"

#define S_FLOODERS 2
#define S_IN_FLIGHT 400
#define S_PROBES_MAX 100000

typedef struct {
    testbroker_t *broker;
    int k;
    atomic_bool *stop;
    uint64_t sent, answered;
} s_flooder_t;

static void *
s_flood (void *arg)
{
    s_flooder_t *self = arg;
    char id [16], target [16];
    snprintf (id, sizeof id, "F%d", self->k);
    snprintf (target, sizeof target, "Deaf%d", self->k);
    testclient_t *client = testcheck_agent (self->broker, id);
    while (!atomic_load (self->stop)) {
        while (self->sent - self->answered < S_IN_FLIGHT) {
            penc_t *enc = testclient_begin (client, PMSG_SEND, 1);
            penc_key (enc, "messages");
            msgpack_pack_array (penc_packer (enc), 8);
            for (int i = 0; i < 8; i++) {
                msgpack_pack_map (penc_packer (enc), 2);
                penc_kv_cstr (enc, "to", target);
                penc_kv_cstr (enc, "body", "flood flood flood flood flood flood flood flood");
            }
            testclient_send (client);
            self->sent++;
        }
        pmsg_t *reply;
        while ((reply = testclient_recv (client, 5))) {
            self->answered++;
            pmsg_destroy (&reply);
        }
    }
    testclient_destroy (&client);
    return NULL;
}

static int
s_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

START_TEST (test_heartbeat_under_flood)
{
    int seconds = getenv ("PARLEY_FLOOD_SECONDS") ? atoi (getenv ("PARLEY_FLOOD_SECONDS")) : 10;
    const char *args [] = { "--max-inbox", "64", NULL };
    testbroker_t *broker = testcheck_start (args);
    //  The recipients: registered, online, never reading.
    testclient_t *deaf [S_FLOODERS];
    for (int k = 0; k < S_FLOODERS; k++) {
        char id [16];
        snprintf (id, sizeof id, "Deaf%d", k);
        deaf [k] = testcheck_agent (broker, id);
    }
    testclient_t *probe = testcheck_agent (broker, "Probe");
    atomic_bool stop = false;
    s_flooder_t flooders [S_FLOODERS];
    pthread_t threads [S_FLOODERS];
    for (int k = 0; k < S_FLOODERS; k++) {
        flooders [k] = (s_flooder_t) { .broker = broker, .k = k, .stop = &stop };
        pthread_create (&threads [k], NULL, s_flood, &flooders [k]);
    }
    //  The deaf agents stay online: their heartbeats go on.
    int64_t *rtt = calloc (S_PROBES_MAX, sizeof (int64_t));
    size_t probes = 0;
    int64_t end = pclock_mono_ms () + seconds * 1000;
    int64_t next_heartbeat = 0;
    while (pclock_mono_ms () < end && probes < S_PROBES_MAX) {
        int64_t started = pclock_mono_us ();
        pmsg_t *reply = testclient_call0 (probe, PMSG_HEARTBEAT);
        ck_assert_msg (reply && pmsg_type (reply) == PMSG_OK, "probe: %s",
                       testclient_describe (reply));
        pmsg_destroy (&reply);
        rtt [probes++] = pclock_mono_us () - started;
        if (pclock_mono_ms () >= next_heartbeat) {
            for (int k = 0; k < S_FLOODERS; k++) {
                reply = testclient_call0 (deaf [k], PMSG_HEARTBEAT);
                pmsg_destroy (&reply);
            }
            next_heartbeat = pclock_mono_ms () + 500;
        }
        pclock_sleep_ms (10);
    }
    atomic_store (&stop, true);
    for (int k = 0; k < S_FLOODERS; k++)
        pthread_join (threads [k], NULL);
    qsort (rtt, probes, sizeof (int64_t), s_cmp);
    int64_t p50 = rtt [probes / 2], p99 = rtt [probes * 99 / 100], max = rtt [probes - 1];
    uint64_t flood = flooders [0].answered + flooders [1].answered;
    fprintf (stderr, "flood: %d s, %llu SENDs answered to the flooders, %zu probes: "
             "p50 %lld us, p99 %lld us, max %lld us\n", seconds, (unsigned long long) flood,
             probes, (long long) p50, (long long) p99, (long long) max);
    ck_assert_uint_gt (flood, 0);
    ck_assert_msg (p99 < 50000, "HEARTBEAT p99 %lld us under the flood", (long long) p99);
    free (rtt);
    for (int k = 0; k < S_FLOODERS; k++)
        testclient_destroy (&deaf [k]);
    testclient_destroy (&probe);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("flood");
    TCase *tc = tcase_create ("flood");
    tcase_set_timeout (tc, 600);
    tcase_add_test (tc, test_heartbeat_under_flood);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
