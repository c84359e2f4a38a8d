// SPDX-License-Identifier: MIT
/*  nats_relay - baselines: nats-server core pub/sub and NATS JetStream
    through libnats, as a relay and as an A -> B -> A round trip.

    Usage: nats_relay URL COUNT SIZE [--js] [--rtt] [--suffix S]

    Relay (default): a subscriber process counts COUNT messages of SIZE
    bytes; the publisher publishes them as fast as the server takes them.
    The rate is the subscriber's, from its first message to its last.
    Messages that did not arrive are reported.
      core  natsConnection_Publish (libnats buffers publishes and flushes
            them in the background: a pipelined publisher), SubscribeSync
            with no pending limits. RESULT relay_nats_<SIZE>.
      --js  JetStream, the durable peer: a file-storage stream (created
            fresh for the run, deleted after), asynchronous publishes with
            JS_IN_FLIGHT of them awaiting their PubAck (js_PublishAsync),
            a push consumer with ack-all, acknowledged every JS_ACK_EVERY
            messages. The server syncs its files at its own default (every
            2 minutes in nats-server 2.9). RESULT relay_jetstream_<SIZE>.

    --rtt: COUNT round trips after RTT_WARMUP: A publishes to B, B takes
    it and publishes to A, A takes that; both ends in this thread, each
    on its own connection with "send as soon as possible" (no flusher
    delay). JetStream: async publishes (the PubAcks are awaited after the
    round trip, off its path), consumers with ack-all, acknowledged every
    32 messages. RESULT rtt_nats_ab<S>_p50/_p99 or rtt_jetstream_ab<S>_*.

    Every server and client here is on loopback.
*/
#include <nats/nats.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_common.h"

#define JS_IN_FLIGHT 1024
#define JS_ACK_EVERY 512
#define RTT_WARMUP 500

static bool s_js;

static void
s_check (natsStatus status, const char *what)
{
    if (status != NATS_OK) {
        fprintf (stderr, "nats_relay: %s: %s %s\n", what, natsStatus_GetText (status),
                 nats_GetLastError (NULL) ? nats_GetLastError (NULL) : "");
        exit (1);
    }
}

static natsConnection *
s_connect (const char *url, bool asap)
{
    natsOptions *opts = NULL;
    natsConnection *nc = NULL;
    s_check (natsOptions_Create (&opts), "options");
    s_check (natsOptions_SetURL (opts, url), "url");
    s_check (natsOptions_SetSendAsap (opts, asap), "send asap");
    s_check (natsConnection_Connect (&nc, opts), "connect");
    natsOptions_Destroy (opts);
    return nc;
}

static jsCtx *
s_jetstream (natsConnection *nc)
{
    jsCtx *js = NULL;
    jsOptions opts;
    jsOptions_Init (&opts);
    opts.PublishAsync.MaxPending = JS_IN_FLIGHT;
    opts.Wait = 30000;
    s_check (natsConnection_JetStream (&js, nc, &opts), "jetstream");
    return js;
}

//  A fresh file-storage stream named `name` over `subjects`.
static void
s_stream (jsCtx *js, const char *name, const char **subjects, int count)
{
    jsErrCode jerr = 0;
    js_DeleteStream (js, name, NULL, &jerr);
    jsStreamConfig cfg;
    jsStreamConfig_Init (&cfg);
    cfg.Name = name;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = count;
    cfg.Storage = js_FileStorage;
    jsStreamInfo *info = NULL;
    s_check (js_AddStream (&info, js, &cfg, NULL, &jerr), "add stream");
    jsStreamInfo_Destroy (info);
}

//  A push consumer on `subject`, ack-all, `window` unacknowledged at most.
static natsSubscription *
s_js_subscribe (jsCtx *js, const char *stream, const char *subject, int64_t window)
{
    natsSubscription *sub = NULL;
    jsSubOptions so;
    jsSubOptions_Init (&so);
    so.Stream = stream;
    so.Config.AckPolicy = js_AckAll;
    so.Config.MaxAckPending = window;
    so.Config.DeliverPolicy = js_DeliverAll;
    jsErrCode jerr = 0;
    s_check (js_SubscribeSync (&sub, js, subject, NULL, &so, &jerr), "js subscribe");
    s_check (natsSubscription_SetPendingLimits (sub, -1, -1), "pending limits");
    return sub;
}

static void
s_subscriber (const char *url, long count, size_t size, int ready_fd)
{
    natsConnection *nc = s_connect (url, false);
    natsSubscription *sub = NULL;
    jsCtx *js = NULL;
    if (s_js) {
        //  The stream is made here, not before the fork: libnats must not
        //  cross one.
        js = s_jetstream (nc);
        const char *subjects [] = { "bench" };
        s_stream (js, "BENCH", subjects, 1);
        sub = s_js_subscribe (js, "BENCH", "bench", 1000000);
    }
    else {
        s_check (natsConnection_SubscribeSync (&sub, nc, "bench"), "subscribe");
        s_check (natsSubscription_SetPendingLimits (sub, -1, -1), "pending limits");
    }
    s_check (natsConnection_Flush (nc), "flush");
    if (write (ready_fd, "r", 1) != 1)
        exit (1);
    long received = 0;
    int64_t first = 0, last = 0;
    while (received < count) {
        natsMsg *msg = NULL;
        if (natsSubscription_NextMsg (&msg, sub, 10000) != NATS_OK)
            break;                      //  lost messages: report what came
        last = bench_now_us ();
        if (received++ == 0)
            first = last;
        if (s_js && (received % JS_ACK_EVERY == 0 || received == count))
            natsMsg_Ack (msg, NULL);
        natsMsg_Destroy (msg);
    }
    char key [64];
    snprintf (key, sizeof key, "relay_%s_%zu", s_js ? "jetstream" : "nats", size);
    if (received < count)
        printf ("nats_relay: %ld of %ld messages arrived\n", received, count);
    bench_result (key, received > 1 ? (double) (received - 1) * 1e6 / (double) (last - first) : 0,
                  "msg/s");
    natsSubscription_Destroy (sub);
    jsCtx_Destroy (js);
    natsConnection_Destroy (nc);
    nats_Close ();
    exit (received == count ? 0 : 1);
}

static int
s_relay (const char *url, long count, size_t size)
{
    int fds [2];
    if (pipe (fds) != 0)
        return 1;
    fflush (stdout);
    pid_t pid = fork ();
    if (pid == 0) {
        close (fds [0]);
        s_subscriber (url, count, size, fds [1]);
    }
    close (fds [1]);
    char c;
    if (read (fds [0], &c, 1) != 1)
        return 1;
    natsConnection *nc = s_connect (url, false);
    jsCtx *js = s_js ? s_jetstream (nc) : NULL;
    char *body = malloc (size);
    memset (body, 'x', size);
    for (long i = 0; i < count; i++)
        if (s_js)
            s_check (js_PublishAsync (js, "bench", body, (int) size, NULL), "publish");
        else
            s_check (natsConnection_Publish (nc, "bench", body, (int) size), "publish");
    if (s_js) {
        jsPubOptions po;
        jsPubOptions_Init (&po);
        po.MaxWait = 60000;
        s_check (js_PublishAsyncComplete (js, &po), "publish complete");
    }
    else
        s_check (natsConnection_FlushTimeout (nc, 30000), "flush");
    int status = 0;
    waitpid (pid, &status, 0);
    if (s_js) {
        jsErrCode jerr = 0;
        js_DeleteStream (js, "BENCH", NULL, &jerr);
    }
    jsCtx_Destroy (js);
    natsConnection_Destroy (nc);
    nats_Close ();
    free (body);
    return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}

//  ---------------------------------------------------------------------
//  A -> B -> A

typedef struct {
    natsConnection *nc;
    jsCtx *js;
    natsSubscription *sub;
    const char *to;             //  the other end's subject
    natsMsg *last;              //  JetStream: the last message, not yet acked
} s_end_t;

static void
s_end_open (s_end_t *end, const char *url, const char *mine, const char *to)
{
    end->nc = s_connect (url, true);
    end->to = to;
    end->last = NULL;
    if (s_js) {
        end->js = s_jetstream (end->nc);
        end->sub = s_js_subscribe (end->js, "RTT", mine, 64);
    }
    else {
        end->js = NULL;
        s_check (natsConnection_SubscribeSync (&end->sub, end->nc, mine), "subscribe");
    }
    s_check (natsConnection_Flush (end->nc), "flush");
}

static void
s_end_send (s_end_t *end, const char *body, size_t size)
{
    if (s_js)
        s_check (js_PublishAsync (end->js, end->to, body, (int) size, NULL), "publish");
    else
        s_check (natsConnection_Publish (end->nc, end->to, body, (int) size), "publish");
}

static void
s_end_take (s_end_t *end)
{
    natsMsg *msg = NULL;
    s_check (natsSubscription_NextMsg (&msg, end->sub, 10000), "next message");
    if (s_js) {
        natsMsg_Destroy (end->last);
        end->last = msg;
    }
    else
        natsMsg_Destroy (msg);
}

//  Cumulative ack (ack-all) of the last message taken.
static void
s_end_ack (s_end_t *end)
{
    if (end->last) {
        natsMsg_Ack (end->last, NULL);
        natsMsg_Destroy (end->last);
        end->last = NULL;
    }
}

static void
s_end_close (s_end_t *end)
{
    s_end_ack (end);
    if (s_js) {
        jsPubOptions po;
        jsPubOptions_Init (&po);
        po.MaxWait = 10000;
        js_PublishAsyncComplete (end->js, &po);
    }
    natsSubscription_Destroy (end->sub);
    jsCtx_Destroy (end->js);
    natsConnection_Destroy (end->nc);
}

static int
s_rtt (const char *url, long count, size_t size, const char *suffix)
{
    if (s_js) {
        natsConnection *nc = s_connect (url, false);
        jsCtx *js = s_jetstream (nc);
        const char *subjects [] = { "rtt.a", "rtt.b" };
        s_stream (js, "RTT", subjects, 2);
        jsCtx_Destroy (js);
        natsConnection_Destroy (nc);
    }
    s_end_t a, b;
    s_end_open (&a, url, "rtt.a", "rtt.b");
    s_end_open (&b, url, "rtt.b", "rtt.a");
    char *body = malloc (size);
    memset (body, 'x', size);
    int64_t *times = calloc ((size_t) count, sizeof (int64_t));
    jsPubOptions po;
    jsPubOptions_Init (&po);
    po.MaxWait = 10000;
    for (long i = 0; i < RTT_WARMUP + count; i++) {
        int64_t t0 = bench_now_us ();
        s_end_send (&a, body, size);
        s_end_take (&b);
        s_end_send (&b, body, size);
        s_end_take (&a);
        if (i >= RTT_WARMUP)
            times [i - RTT_WARMUP] = bench_now_us () - t0;
        if (s_js) {
            if (i % 32 == 31) {
                s_end_ack (&b);
                s_end_ack (&a);
            }
            s_check (js_PublishAsyncComplete (a.js, &po), "publish complete A");
            s_check (js_PublishAsyncComplete (b.js, &po), "publish complete B");
        }
    }
    qsort (times, (size_t) count, sizeof times [0], bench_cmp_i64);
    char key [96];
    const char *name = s_js ? "jetstream" : "nats";
    snprintf (key, sizeof key, "rtt_%s_ab%s_p50", name, suffix);
    bench_result (key, (double) times [(size_t) ((double) (count - 1) * 0.50 + 0.5)], "us");
    snprintf (key, sizeof key, "rtt_%s_ab%s_p99", name, suffix);
    bench_result (key, (double) times [(size_t) ((double) (count - 1) * 0.99 + 0.5)], "us");
    s_end_close (&a);
    s_end_close (&b);
    if (s_js) {
        natsConnection *nc = s_connect (url, false);
        jsCtx *js = s_jetstream (nc);
        jsErrCode jerr = 0;
        js_DeleteStream (js, "RTT", NULL, &jerr);
        jsCtx_Destroy (js);
        natsConnection_Destroy (nc);
    }
    nats_Close ();
    free (times);
    free (body);
    return 0;
}

int
main (int argc, char **argv)
{
    bool rtt = false;
    const char *suffix = "";
    int positional = 0;
    const char *url = NULL;
    long count = 0;
    size_t size = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--js") == 0)
            s_js = true;
        else if (strcmp (argv [i], "--rtt") == 0)
            rtt = true;
        else if (strcmp (argv [i], "--suffix") == 0 && i + 1 < argc)
            suffix = argv [++i];
        else if (positional == 0 && ++positional)
            url = argv [i];
        else if (positional == 1 && ++positional)
            count = atol (argv [i]);
        else if (positional == 2 && ++positional)
            size = (size_t) atol (argv [i]);
        else
            positional = -1;
    }
    if (positional != 3 || count < 2 || size == 0) {
        fprintf (stderr, "usage: nats_relay URL COUNT SIZE [--js] [--rtt] [--suffix S]\n");
        return 2;
    }
    return rtt ? s_rtt (url, count, size, suffix) : s_relay (url, count, size);
}
