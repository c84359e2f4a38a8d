// SPDX-License-Identifier: MIT
/*  nats_relay - baseline: nats-server core pub/sub relay through libnats.

    Usage: nats_relay URL COUNT SIZE
    A subscriber process (SubscribeSync, no pending limits) counts COUNT
    messages of SIZE bytes; the publisher publishes them as fast as libnats
    takes them (libnats buffers publishes and flushes in the background:
    the pipelined publisher). The rate is the subscriber's, from its first
    message to its last. Messages lost to a slow-consumer cut are reported.
*/
#include <nats/nats.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_common.h"

static void
s_check (natsStatus status, const char *what)
{
    if (status != NATS_OK) {
        fprintf (stderr, "nats_relay: %s: %s\n", what, natsStatus_GetText (status));
        exit (1);
    }
}

static void
s_subscriber (const char *url, long count, size_t size, int ready_fd)
{
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    s_check (natsConnection_ConnectTo (&nc, url), "connect");
    s_check (natsConnection_SubscribeSync (&sub, nc, "bench"), "subscribe");
    s_check (natsSubscription_SetPendingLimits (sub, -1, -1), "pending limits");
    s_check (natsConnection_Flush (nc), "flush");
    if (write (ready_fd, "r", 1) != 1)
        exit (1);
    long received = 0;
    int64_t first = 0, last = 0;
    while (received < count) {
        natsMsg *msg = NULL;
        if (natsSubscription_NextMsg (&msg, sub, 5000) != NATS_OK)
            break;                      //  lost messages: report what came
        last = bench_now_us ();
        if (received++ == 0)
            first = last;
        natsMsg_Destroy (msg);
    }
    char key [64];
    snprintf (key, sizeof key, "relay_nats_%zu", size);
    if (received < count)
        printf ("nats_relay: %ld of %ld messages arrived\n", received, count);
    bench_result (key, received > 1 ? (double) (received - 1) * 1e6 / (double) (last - first) : 0,
                  "msg/s");
    natsSubscription_Destroy (sub);
    natsConnection_Destroy (nc);
    nats_Close ();
    exit (0);
}

int
main (int argc, char **argv)
{
    if (argc != 4) {
        fprintf (stderr, "usage: nats_relay URL COUNT SIZE\n");
        return 2;
    }
    const char *url = argv [1];
    long count = atol (argv [2]);
    size_t size = (size_t) atol (argv [3]);
    int fds [2];
    if (pipe (fds) != 0)
        return 1;
    pid_t pid = fork ();
    if (pid == 0) {
        close (fds [0]);
        s_subscriber (url, count, size, fds [1]);
    }
    close (fds [1]);
    char c;
    if (read (fds [0], &c, 1) != 1)
        return 1;
    natsConnection *nc = NULL;
    s_check (natsConnection_ConnectTo (&nc, url), "connect");
    char *body = malloc (size);
    memset (body, 'x', size);
    for (long i = 0; i < count; i++)
        s_check (natsConnection_Publish (nc, "bench", body, (int) size), "publish");
    s_check (natsConnection_FlushTimeout (nc, 30000), "flush");
    int status = 0;
    waitpid (pid, &status, 0);
    natsConnection_Destroy (nc);
    nats_Close ();
    free (body);
    return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}
