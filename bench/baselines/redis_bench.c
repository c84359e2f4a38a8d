// SPDX-License-Identifier: MIT
/*  redis_bench - baselines on redis-server through hiredis: pub/sub relay
    and SET, pipelined and not.

    Usage: redis_bench HOST PORT relay COUNT SIZE
           redis_bench HOST PORT set COUNT PIPELINE
    relay: a subscriber process counts COUNT messages of SIZE bytes; the
    publisher sends PUBLISH commands pipelined in groups of 1000 (append
    all, then read all replies). The rate is the subscriber's.
    set: COUNT SETs of a 64-byte value over 1000 keys; PIPELINE commands
    are appended before their replies are read (1 = one round trip each).
*/
#include <hiredis/hiredis.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_common.h"

static redisContext *
s_connect (const char *host, int port)
{
    redisContext *c = redisConnect (host, port);
    if (!c || c->err) {
        fprintf (stderr, "redis_bench: connect: %s\n", c ? c->errstr : "out of memory");
        exit (1);
    }
    return c;
}

static void
s_reply (redisContext *c)
{
    void *reply = NULL;
    if (redisGetReply (c, &reply) != REDIS_OK) {
        fprintf (stderr, "redis_bench: %s\n", c->errstr);
        exit (1);
    }
    freeReplyObject (reply);
}

static void
s_subscriber (const char *host, int port, long count, size_t size, int ready_fd)
{
    redisContext *c = s_connect (host, port);
    freeReplyObject (redisCommand (c, "SUBSCRIBE bench"));
    if (write (ready_fd, "r", 1) != 1)
        exit (1);
    struct timeval tv = { 5, 0 };
    redisSetTimeout (c, tv);
    long received = 0;
    int64_t first = 0, last = 0;
    while (received < count) {
        void *reply = NULL;
        if (redisGetReply (c, &reply) != REDIS_OK)
            break;
        freeReplyObject (reply);
        last = bench_now_us ();
        if (received++ == 0)
            first = last;
    }
    char key [64];
    snprintf (key, sizeof key, "relay_redis_%zu", size);
    if (received < count)
        printf ("redis_bench: %ld of %ld messages arrived\n", received, count);
    bench_result (key, received > 1 ? (double) (received - 1) * 1e6 / (double) (last - first) : 0,
                  "msg/s");
    redisFree (c);
    exit (0);
}

static int
s_relay (const char *host, int port, long count, size_t size)
{
    int fds [2];
    if (pipe (fds) != 0)
        return 1;
    pid_t pid = fork ();
    if (pid == 0) {
        close (fds [0]);
        s_subscriber (host, port, count, size, fds [1]);
    }
    close (fds [1]);
    char ready;
    if (read (fds [0], &ready, 1) != 1)
        return 1;
    redisContext *c = s_connect (host, port);
    char *body = malloc (size);
    memset (body, 'x', size);
    for (long sent = 0; sent < count; ) {
        long n = count - sent < 1000 ? count - sent : 1000;
        for (long i = 0; i < n; i++)
            redisAppendCommand (c, "PUBLISH bench %b", body, size);
        for (long i = 0; i < n; i++)
            s_reply (c);
        sent += n;
    }
    int status = 0;
    waitpid (pid, &status, 0);
    redisFree (c);
    free (body);
    return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}

static int
s_set (const char *host, int port, long count, long pipeline)
{
    redisContext *c = s_connect (host, port);
    char value [64];
    memset (value, 'v', sizeof value);
    int64_t start = bench_now_us ();
    for (long done = 0; done < count; ) {
        long n = count - done < pipeline ? count - done : pipeline;
        for (long i = 0; i < n; i++)
            redisAppendCommand (c, "SET k%ld %b", (done + i) % 1000, value, sizeof value);
        for (long i = 0; i < n; i++)
            s_reply (c);
        done += n;
    }
    double rate = (double) count * 1e6 / (double) (bench_now_us () - start);
    char key [64];
    snprintf (key, sizeof key, "state_redis_set_p%ld", pipeline);
    bench_result (key, rate, "ops/s");
    redisFree (c);
    return 0;
}

int
main (int argc, char **argv)
{
    if (argc != 6) {
        fprintf (stderr, "usage: redis_bench HOST PORT relay|set COUNT SIZE|PIPELINE\n");
        return 2;
    }
    int port = atoi (argv [2]);
    long count = atol (argv [4]);
    long arg = atol (argv [5]);
    if (strcmp (argv [3], "relay") == 0)
        return s_relay (argv [1], port, count, (size_t) arg);
    if (strcmp (argv [3], "set") == 0)
        return s_set (argv [1], port, count, arg < 1 ? 1 : arg);
    fprintf (stderr, "redis_bench: unknown mode %s\n", argv [3]);
    return 2;
}
