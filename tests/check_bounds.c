// SPDX-License-Identifier: MIT
/*  check_bounds - the broker's resource bounds against the real binary:
    the global bound on queued bytes (QUEUES_FULL), a client that sends
    requests and never reads the replies (the broker keeps at most
    --router-hwm replies for it and counts the rest in replies_dropped;
    its memory does not follow the flood), and thousands of idle clients
    connected at once (each a real ZMTP connection) while others are
    served.
*/
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

//  AddressSanitizer's redzones and its quarantine of freed blocks (256 MiB
//  by default) inflate the broker's memory several times over in the
//  SANITIZE=1 build (this suite is built the same way as the broker): the
//  memory bounds below are then checked with this much slack.
#if defined (__SANITIZE_ADDRESS__)
#   define MEMORY_SLACK 5
#else
#   define MEMORY_SLACK 1
#endif

//  Resident memory of a process in KiB (0 if unreadable).
static uint64_t
s_rss_kib (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return 0;
    char line [256];
    uint64_t kib = 0;
    while (fgets (line, sizeof line, file))
        if (sscanf (line, "VmRSS: %lu kB", &kib) == 1)
            break;
    fclose (file);
    return kib;
}

//  A SENT's first item error code, or PERR_NONE when the item was accepted.
static perr_t
s_send_code (testclient_t *client, const char *to, bool channel, size_t body_size)
{
    char *body = malloc (body_size + 1);
    memset (body, 'q', body_size);
    body [body_size] = 0;
    pmsg_t *reply = testclient_send_one (client, to, channel, body);
    free (body);
    EXPECT (reply, PMSG_SENT);
    perr_t code = PERR_NONE;
    const msgpack_object *error = testclient_array_at (reply, "errors", 0);
    if (error)
        code = (perr_t) pobj_uint (error, "code", 0);
    pmsg_destroy (&reply);
    return code;
}

START_TEST (test_max_queued_bytes)
{
    testbroker_t *broker = testcheck_start ((const char *[]) {
        "--max-queued-bytes", "10000", NULL });
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testclient_t *c = testcheck_agent (broker, "C");
    testmail_listen (c, "news");
    //  3 x 3000 bytes fit in 10000, across two inboxes and a channel.
    ck_assert_int_eq (s_send_code (a, "B", false, 3000), PERR_NONE);
    ck_assert_int_eq (s_send_code (a, "C", false, 3000), PERR_NONE);
    ck_assert_int_eq (s_send_code (a, "news", true, 3000), PERR_NONE);
    //  The fourth would pass 10000 in total, though every inbox has room.
    uint64_t rejected = testmail_stat (a, "rejected");
    ck_assert_int_eq (s_send_code (a, "B", false, 3000), PERR_QUEUES_FULL);
    ck_assert_int_eq (s_send_code (a, "news", true, 3000), PERR_QUEUES_FULL);
    ck_assert_int_eq (s_send_code (a, "all", false, 3000), PERR_QUEUES_FULL);
    ck_assert_uint_eq (testmail_stat (a, "rejected"), rejected + 3);
    ck_assert_uint_eq (testmail_stat (a, "queued_bytes"), 9000);
    //  B acknowledges its message: room again.
    char out [64];
    ck_assert_uint_eq (testmail_fetch (b, 0, 10, out, sizeof out, NULL), 1);
    pmsg_t *reply = testclient_fetch (b, 1, 0);
    EXPECT (reply, PMSG_MAIL);
    pmsg_destroy (&reply);
    ck_assert_uint_eq (testmail_stat (a, "queued_bytes"), 6000);
    ck_assert_int_eq (s_send_code (a, "B", false, 3000), PERR_NONE);
    testclient_destroy (&a);
    testclient_destroy (&b);
    testclient_destroy (&c);
    testcheck_stop (&broker);
}
END_TEST

//  Writes `count` keys of about `size` bytes each.
static void
s_fill_state (testclient_t *client, int count, size_t size)
{
    char *value = malloc (size + 1);
    memset (value, 'v', size);
    value [size] = 0;
    for (int i = 0; i < count; i++) {
        penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
        penc_key (enc, "ops");
        msgpack_pack_array (penc_packer (enc), 1);
        msgpack_pack_map (penc_packer (enc), 3);
        penc_kv_cstr (enc, "op", "set");
        char key [32];
        snprintf (key, sizeof key, "k%04d", i);
        penc_kv_cstr (enc, "key", key);
        penc_kv_cstr (enc, "value", value);
        pmsg_t *reply = testclient_call (client);
        EXPECT (reply, PMSG_WRITTEN);
        pmsg_destroy (&reply);
    }
    free (value);
}

//  A client floods SNAPSHOT requests (about 64 KiB of reply each) and
//  reads nothing. The broker holds at most --router-hwm (1000) such
//  replies in the pipe (64 MiB); the next reply is kept and the client's
//  later requests are held unanswered behind it (backpressure: they cost
//  their own few bytes, not 64 KiB of reply each). The flood would be
//  20,000 replies (1.3 GiB).
START_TEST (test_never_reading_client)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *writer = testcheck_agent (broker, "Writer");
    s_fill_state (writer, 64, 1000);
    //  A peer that really stops reading: its own socket holds one reply,
    //  so what it cannot take piles up at the broker, not in this process.
    testclient_t *flood = testclient_new_hwm (testbroker_router (broker), NULL, NULL, 1);
    ck_assert_ptr_nonnull (flood);
    pmsg_t *welcome = testclient_hello (flood, "Flood");
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    uint64_t before_kib = s_rss_kib (testbroker_pid (broker));
    uint64_t requests = testmail_stat (writer, "requests");
    const int count = 20000;
    for (int i = 0; i < count; i++) {
        testclient_begin (flood, PMSG_SNAPSHOT, 0);
        ck_assert_int_eq (testclient_send (flood), 0);
    }
    //  Wait until the broker has read every request: handled, or held.
    int64_t deadline = pclock_mono_ms () + 60000;
    while (testmail_stat (writer, "requests") + testmail_stat (writer, "requests_stalled")
           < requests + count + 1) {
        ck_assert_msg (pclock_mono_ms () < deadline, "the broker did not read the flood");
        pclock_sleep_ms (50);
    }
    uint64_t after_kib = s_rss_kib (testbroker_pid (broker));
    uint64_t held = testmail_stat (writer, "requests_stalled");
    fprintf (stderr, "never-reading client: broker RSS %lu -> %lu KiB, %lu requests held\n",
             (unsigned long) before_kib, (unsigned long) after_kib, (unsigned long) held);
    ck_assert_uint_gt (held, (uint64_t) count / 2);
    ck_assert_uint_eq (testmail_stat (writer, "replies_dropped"), 0);
    //  1000 replies of 64 KiB, plus allocator slack; the flood is 20x that.
    ck_assert_uint_lt (after_kib, before_kib + MEMORY_SLACK * 160 * 1024);
    //  Everyone else is still served.
    pmsg_t *reply = testclient_call0 (writer, PMSG_HEARTBEAT);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    testclient_destroy (&flood);
    testclient_destroy (&writer);
    testcheck_stop (&broker);
}
END_TEST

//  A million messages for an agent that never fetches: all queued (the
//  inbox bound is raised to allow it), and the broker's memory stays near
//  what STATS queued_memory reports. Then --max-queued-bytes, set just
//  above that, refuses the next batch with QUEUES_FULL.
START_TEST (test_million_queued)
{
    const int total = 1000000, batch = 4096;
    testbroker_t *broker = testcheck_start ((const char *[]) {
        "--max-inbox", "2000000", "--max-queued-bytes", "120000000", NULL });
    testclient_t *sender = testcheck_agent (broker, "Sender");
    testclient_t *silent = testcheck_agent (broker, "Silent");
    uint64_t before_kib = s_rss_kib (testbroker_pid (broker));
    int64_t start = pclock_mono_ms ();
    for (int sent = 0; sent < total; ) {
        int n = total - sent < batch ? total - sent : batch;
        penc_t *enc = testclient_begin (sender, PMSG_SEND, 1);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), (uint32_t) n);
        for (int i = 0; i < n; i++) {
            msgpack_pack_map (penc_packer (enc), 2);
            penc_kv_cstr (enc, "to", "Silent");
            penc_kv_cstr (enc, "body", "sixteen byte msg");
        }
        pmsg_t *reply = testclient_call (sender);
        EXPECT (reply, PMSG_SENT);
        ck_assert_ptr_null (testclient_array_at (reply, "errors", 0));
        pmsg_destroy (&reply);
        sent += n;
    }
    uint64_t queued = testmail_stat (sender, "queued");
    uint64_t memory = testmail_stat (sender, "queued_memory");
    uint64_t after_kib = s_rss_kib (testbroker_pid (broker));
    fprintf (stderr, "million queued: %lld ms, queued_memory %lu, broker RSS %lu -> %lu KiB\n",
             (long long) (pclock_mono_ms () - start), (unsigned long) memory,
             (unsigned long) before_kib, (unsigned long) after_kib);
    ck_assert_uint_eq (queued, (uint64_t) total);
    ck_assert_uint_lt (memory, 120000000);
    //  The accounting is honest: RSS grew by about queued_memory (inbox
    //  slots and allocator rounding aside), not by multiples of it.
    ck_assert_uint_lt ((after_kib - before_kib) * 1024, memory * 2 * MEMORY_SLACK);
    //  Filling up to the bound: refused, counted, nothing half queued.
    uint64_t rejected = testmail_stat (sender, "rejected");
    bool full = false;
    for (int i = 0; i < 100 && !full; i++) {
        penc_t *enc = testclient_begin (sender, PMSG_SEND, 1);
        penc_key (enc, "messages");
        msgpack_pack_array (penc_packer (enc), (uint32_t) batch);
        for (int j = 0; j < batch; j++) {
            msgpack_pack_map (penc_packer (enc), 2);
            penc_kv_cstr (enc, "to", "Silent");
            penc_kv_cstr (enc, "body", "sixteen byte msg");
        }
        pmsg_t *reply = testclient_call (sender);
        EXPECT (reply, PMSG_SENT);
        const msgpack_object *error = testclient_array_at (reply, "errors", 0);
        if (error) {
            ck_assert_int_eq (pobj_uint (error, "code", 0), PERR_QUEUES_FULL);
            full = true;
        }
        pmsg_destroy (&reply);
    }
    ck_assert (full);
    ck_assert_uint_gt (testmail_stat (sender, "rejected"), rejected);
    ck_assert_uint_le (testmail_stat (sender, "queued_memory"), 120000000);
    testclient_destroy (&sender);
    testclient_destroy (&silent);
    testcheck_stop (&broker);
}
END_TEST

//  A ZMTP 3.0 DEALER handshake (NULL mechanism): greeting then READY.
static const unsigned char s_zmtp_hello [] = {
    0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0,
    'N', 'U', 'L', 'L', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x04, 28, 5, 'R', 'E', 'A', 'D', 'Y',
    11, 'S', 'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e',
    0, 0, 0, 6, 'D', 'E', 'A', 'L', 'E', 'R'
};

static int
s_port (const char *endpoint)
{
    const char *colon = strrchr (endpoint, ':');
    return colon ? atoi (colon + 1) : 0;
}

//  Many idle clients: each a TCP connection that completed the ZMTP
//  handshake and then says nothing. Raw sockets rather than zmq DEALERs:
//  the test process would otherwise need two descriptors per client.
//  `count` is cut to what this process's hard descriptor limit allows.
static void
s_idle_clients (int count)
{
    struct rlimit limit;
    getrlimit (RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit (RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur < (rlim_t) count + 200) {
        count = (int) limit.rlim_cur - 200;
        fprintf (stderr, "idle clients: the descriptor limit allows %d\n", count);
    }
    ck_assert_int_ge (count, 2000);
    testbroker_t *broker = testcheck_start (NULL);
    int port = s_port (testbroker_router (broker));
    int *fds = calloc ((size_t) count, sizeof (int));
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    int64_t start = pclock_mono_ms ();
    for (int i = 0; i < count; i++) {
        fds [i] = socket (AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge (fds [i], 0);
        ck_assert_msg (connect (fds [i], (struct sockaddr *) &addr, sizeof addr) == 0,
                       "client %d cannot connect: %s", i, strerror (errno));
        ck_assert (write (fds [i], s_zmtp_hello, sizeof s_zmtp_hello) == sizeof s_zmtp_hello);
    }
    //  All connected; a real client is still served, promptly.
    testclient_t *agent = testcheck_agent (broker, "Busy");
    pmsg_t *reply = testclient_call0 (agent, PMSG_STATS);
    EXPECT (reply, PMSG_STATS_REPLY);
    pmsg_destroy (&reply);
    //  Every idle connection is still open: the broker answered each
    //  greeting with its own (64 bytes) and did not close any.
    int open = 0;
    for (int i = 0; i < count; i++) {
        char buf [128];
        ssize_t got = recv (fds [i], buf, sizeof buf, MSG_DONTWAIT | MSG_PEEK);
        if (got > 0 || (got == -1 && errno == EAGAIN))
            open++;
    }
    fprintf (stderr, "idle clients: %d connected, %d open, %lld ms\n", count, open,
             (long long) (pclock_mono_ms () - start));
    ck_assert_int_eq (open, count);
    ck_assert (testbroker_log_contains (broker, "descriptor limit"));
    for (int i = 0; i < count; i++)
        close (fds [i]);
    free (fds);
    testclient_destroy (&agent);
    testcheck_stop (&broker);
}

START_TEST (test_idle_clients)
{
    s_idle_clients (10000);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("bounds");
    TCase *tc = tcase_create ("bounds");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_max_queued_bytes);
    tcase_add_test (tc, test_never_reading_client);
    tcase_add_test (tc, test_idle_clients);
    tcase_add_test (tc, test_million_queued);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
