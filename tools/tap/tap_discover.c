/*  tap_discover - HELLO observe, read WELCOME.tap; see tap_discover.h. */
#include <czmq.h>
#include <unistd.h>
#include "pconfig.h"
#include "pclock.h"
#include "pcurve.h"
#include "pmsg.h"
#include "tap_discover.h"

//  "tap-<host>-<pid>", with the host cut and cleaned to the name rules.
static void
s_agent_name (char *name, size_t size)
{
    char host [64] = "host";
    gethostname (host, sizeof host - 1);
    host [40] = 0;
    for (char *c = host; *c; c++)
        if (!isalnum ((unsigned char) *c) && *c != '_' && *c != '.' && *c != '-')
            *c = '_';
    snprintf (name, size, "tap-%s-%d", host, (int) getpid ());
}

//  Waits for one reply frame; NULL (with why) on timeout or a bad frame.
static pmsg_t *
s_reply (zsock_t *dealer, int64_t timeout_ms, char *why, size_t why_size)
{
    zpoller_t *poller = zpoller_new (dealer, NULL);
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    pmsg_t *reply = NULL;
    while (!reply && !zsys_interrupted) {
        int64_t left = deadline - pclock_mono_ms ();
        if (left <= 0) {
            snprintf (why, why_size, "no reply within %" PRId64 " ms", timeout_ms);
            break;
        }
        if (!zpoller_wait (poller, (int) (left < 100? left: 100)))
            continue;
        zframe_t *frame = zframe_recv (dealer);
        if (!frame)
            break;
        perr_t err;
        uint64_t id = 0;
        reply = pmsg_decode (zframe_data (frame), zframe_size (frame),
                             pwire_default_limits (), &err, &id, why, why_size);
        zframe_destroy (&frame);
        if (!reply)
            break;
    }
    if (zsys_interrupted && !reply)
        snprintf (why, why_size, "interrupted");
    zpoller_destroy (&poller);
    return reply;
}

static void
s_send (zsock_t *dealer, penc_t *enc)
{
    zframe_t *frame = zframe_new (penc_data (enc), penc_size (enc));
    zframe_send (&frame, dealer, ZFRAME_DONTWAIT);
}

int
tap_discover (const char *broker, const char *curve_key, const char *curve_server_key,
              int64_t timeout_ms, char *tap, size_t tap_size, char *why, size_t why_size)
{
    assert (broker);
    assert (tap && tap_size > 0);
    int rc = PARLEY_EXIT_NETWORK;
    penc_t enc;
    penc_init (&enc);
    pmsg_t *reply = NULL;
    zsock_t *watch = NULL;              //  tells a refused handshake from silence
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    zsock_set_linger (dealer, 0);
    zsock_set_maxmsgsize (dealer, PROTO_MAX_FRAME);
    if (pcurve_client (dealer, curve_key, curve_server_key, why, why_size)) {
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    watch = pcurve_watch (dealer);
    if (zsock_connect (dealer, "%s", broker) != 0) {
        snprintf (why, why_size, "cannot connect to %s: %s", broker, zmq_strerror (zmq_errno ()));
        goto done;
    }
    char agent [PROTO_MAX_NAME + 1];
    s_agent_name (agent, sizeof agent);
    penc_begin (&enc, PMSG_HELLO, 1, 2);
    penc_kv_cstr (&enc, "agent", agent);
    penc_kv_bool (&enc, "observe", true);
    s_send (dealer, &enc);

    char detail [256] = "";
    reply = s_reply (dealer, timeout_ms, detail, sizeof detail);
    if (!reply) {
        char refused [300];
        if (pcurve_watch_failed (watch, refused, sizeof refused))
            snprintf (why, why_size, "broker %s: %s", broker, refused);
        else
            snprintf (why, why_size, "broker %s: %s", broker, detail);
        goto done;
    }
    if (pmsg_type (reply) == PMSG_ERROR) {
        char message [200] = "";
        pmsg_strcpy (reply, "message", message, sizeof message);
        snprintf (why, why_size, "broker %s refused HELLO as %s: %s: %s", broker, agent,
                  perr_name ((int) pmsg_uint (reply, "code", 0)), message);
        rc = PARLEY_EXIT_FAILURE;
        goto done;
    }
    if (pmsg_type (reply) != PMSG_WELCOME || !pmsg_strcpy (reply, "tap", tap, tap_size)
    ||  !*tap || streq (tap, "off")) {
        snprintf (why, why_size, "broker %s answered HELLO with %s and no tap endpoint (is its tap off?)",
                  broker, pmsg_type_name (pmsg_type (reply)));
        rc = PARLEY_EXIT_FAILURE;
        goto done;
    }
    tap_discover_fix_wildcard (tap, tap_size, broker);
    rc = PARLEY_EXIT_OK;
done:
    pmsg_destroy (&reply);
    zsock_destroy (&watch);
    zsock_destroy (&dealer);
    penc_fini (&enc);
    return rc;
}

//  The host part of "tcp://HOST:PORT" as [start, end); false if not tcp.
static bool
s_tcp_host (const char *endpoint, const char **start, const char **end)
{
    if (strncmp (endpoint, "tcp://", 6) != 0)
        return false;
    *start = endpoint + 6;
    *end = strrchr (*start, ':');
    return *end != NULL;
}

void
tap_discover_fix_wildcard (char *endpoint, size_t size, const char *reference)
{
    assert (endpoint);
    const char *start, *end;
    if (!s_tcp_host (endpoint, &start, &end))
        return;
    size_t len = (size_t) (end - start);
    bool wild = (len == 1 && *start == '*') || (len == 7 && !memcmp (start, "0.0.0.0", 7))
             || (len == 4 && !memcmp (start, "[::]", 4));
    if (!wild)
        return;
    char host [256] = "127.0.0.1";
    const char *rstart, *rend;
    if (reference && s_tcp_host (reference, &rstart, &rend)
    &&  (size_t) (rend - rstart) < sizeof host && rend > rstart) {
        memcpy (host, rstart, (size_t) (rend - rstart));
        host [rend - rstart] = 0;
        if (streq (host, "*") || streq (host, "0.0.0.0") || streq (host, "[::]"))
            strcpy (host, "127.0.0.1");
    }
    char fixed [512];
    snprintf (fixed, sizeof fixed, "tcp://%s%s", host, end);
    if (strlen (fixed) < size)
        strcpy (endpoint, fixed);
}
