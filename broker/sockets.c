// SPDX-License-Identifier: MIT
/*  sockets - the broker's three sockets, their options, and where they are.

    ROUTER (requests):
      ZMQ_ROUTER_MANDATORY  a reply to a peer that has gone fails with
                            EHOSTUNREACH instead of vanishing: we count it
                            (unroutable) and mark that agent offline.
      ZMQ_SNDHWM/RCVHWM     --router-hwm (default 1000 messages per
                            connection): room for pipelined clients.
                            Replies are sent DONTWAIT; one the full pipe
                            refuses is kept by the broker (stall.h) with
                            that client's later replies and requests, up
                            to a bound: the loop never blocks, no reply is
                            dropped, and a client that never reads is cut.
      ZMQ_MAXMSGSIZE        PROTO_MAX_FRAME: libzmq closes a connection that
                            sends a bigger frame before we ever allocate it.
      ZMQ_BACKLOG           BROKER_ACCEPT_BACKLOG (libzmq's default is 100):
                            when thousands of agents reconnect at once
                            (a broker restart), a full accept queue makes
                            the kernel drop their SYNs and each retries a
                            second or more later.
      ZMQ_LINGER            200 ms, so replies queued at shutdown still go.
    XPUB (events): SNDHWM --pub-hwm (default 10000 events per subscriber);
      it drops for a slow subscriber at the HWM, it never blocks us.
      MAXMSGSIZE 4096: a subscription is a topic, and a bigger frame
      closes its connection. Verboser: every subscription reaches the
      broker, which learns each subscriber's descriptor and key from them
      (peers.h: --max-subscribers, cutting revoked keys). Linger 0. What
      slow subscribers can cost in all: --max-subscribers x --pub-hwm
      events.
    Tap: see tap.h (XPUB, small HWM, drops rather than blocks).

    Security (docs/SECURITY.md): every socket gets a ZAP domain, so the
    handler in auth.c sees every new connection (and numbers it). With
    --curve-keys/--curve-allow all three are CURVE servers. Without them
    only loopback, ipc:// and inproc:// endpoints are bound, unless
    --insecure says the network is trusted (logged as a warning).

    Wildcard endpoints: a client cannot connect to host "*", so WELCOME
    names the advertise host instead (--advertise-host, default the machine's
    hostname). Ephemeral ports (tcp://127.0.0.1:*) are resolved through
    ZMQ_LAST_ENDPOINT and written to the log and to --ready-file.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker_internal.h"
#include "pcurve.h"
#include "plog.h"

//  The endpoint as bound. With IPv6 on, libzmq reports an IPv4 bind as
//  tcp://[::ffff:127.0.0.1]:P; a client without ZMQ_IPV6 cannot connect to
//  that, so IPv4-mapped addresses are written back as plain IPv4.
static void
s_unmap_ipv4 (char *endpoint)
{
    const char *mapped = "tcp://[::ffff:";
    size_t len = strlen (mapped);
    if (strncmp (endpoint, mapped, len) != 0 || !strchr (endpoint + len, '.'))
        return;
    char *close = strchr (endpoint + len, ']');
    if (!close)
        return;
    //  "tcp://[::ffff:" + "a.b.c.d" + "]" + ":P"  ->  "tcp://" + "a.b.c.d" + ":P"
    char *host = endpoint + strlen ("tcp://");
    size_t host_len = (size_t) (close - (endpoint + len));
    memmove (host, endpoint + len, host_len);
    memmove (host + host_len, close + 1, strlen (close + 1) + 1);
}

int
sockets_last_endpoint (void *handle, char *buf, size_t size)
{
    size_t len = size;
    if (zmq_getsockopt (handle, ZMQ_LAST_ENDPOINT, buf, &len) != 0)
        return -1;
    if (size >= BROKER_ENDPOINT_MAX)
        s_unmap_ipv4 (buf);
    return 0;
}

static int
s_last_endpoint (zsock_t *sock, char *buf, size_t size)
{
    return sockets_last_endpoint (zsock_resolve (sock), buf, size);
}

//  tcp://0.0.0.0:P, tcp://[::]:P or tcp://*:P -> tcp://<host>:P.
static void
s_advertise (const char *bound, const char *host, char *out, size_t size)
{
    static const char *wild [] = { "tcp://0.0.0.0:", "tcp://[::]:", "tcp://*:" };
    for (size_t i = 0; i < sizeof wild / sizeof wild [0]; i++) {
        size_t len = strlen (wild [i]);
        if (strncmp (bound, wild [i], len) == 0) {
            const char *port = bound + len;
            if (strchr (host, ':'))             //  an IPv6 literal
                snprintf (out, size, "tcp://[%s]:%s", host, port);
            else
                snprintf (out, size, "tcp://%s:%s", host, port);
            return;
        }
    }
    snprintf (out, size, "%s", bound);
}

static bool
s_tap_enabled (const char *endpoint)
{
    return endpoint && *endpoint && strcmp (endpoint, "off") != 0;
}

//  True for endpoints only this machine can reach: ipc, inproc, and tcp
//  on 127.0.0.0/8, ::1 or localhost.
static bool
s_local_only (const char *endpoint)
{
    if (strncmp (endpoint, "ipc://", 6) == 0 || strncmp (endpoint, "inproc://", 9) == 0)
        return true;
    if (strncmp (endpoint, "tcp://", 6) != 0)
        return false;
    const char *host = endpoint + 6;
    const char *colon = strrchr (host, ':');
    size_t len = colon? (size_t) (colon - host): strlen (host);
    return (len >= 4 && strncmp (host, "127.", 4) == 0)
        || (len == 5 && strncmp (host, "[::1]", 5) == 0)
        || (len == 9 && strncmp (host, "localhost", 9) == 0);
}

static bool
s_tap_enabled (const char *endpoint);

const char *
broker_config_exposed (const broker_config_t *cfg)
{
    const char *endpoints [] = { cfg->router, cfg->pub, s_tap_enabled (cfg->tap)? cfg->tap: NULL };
    for (size_t i = 0; i < 3; i++)
        if (endpoints [i] && !s_local_only (endpoints [i]))
            return endpoints [i];
    return NULL;
}

//  Loads the broker's own pair and checks the endpoints against the mode.
static int
s_security (broker_t *self, char *why, size_t why_size)
{
    const broker_config_t *cfg = &self->config;
    bool keys = cfg->curve_keys && *cfg->curve_keys;
    bool allow = cfg->curve_allow && *cfg->curve_allow;
    if (keys != allow) {
        snprintf (why, why_size, "CURVE needs both --curve-keys (the broker's pair) and "
                  "--curve-allow (the public keys it accepts)");
        return -1;
    }
    if (keys) {
        char path [4096];
        snprintf (path, sizeof path, "%s/broker", cfg->curve_keys);
        self->cert = pcurve_load (path, true, why, why_size);
        if (!self->cert)
            return -1;
    }
    else {
        const char *exposed = broker_config_exposed (cfg);
        if (exposed && !cfg->insecure) {
            snprintf (why, why_size, "%s is reachable from other machines: give "
                      "--curve-keys and --curve-allow, or --insecure if this network "
                      "is trusted (docs/SECURITY.md)", exposed);
            return -1;
        }
        if (cfg->insecure)
            plog_warn ("--insecure: plain connections, no authentication, no encryption; "
                       "anyone who reaches these ports can act as any agent and read all "
                       "traffic on the tap");
    }
    self->auth = auth_new (keys? cfg->curve_allow: NULL, why, why_size);
    if (!self->auth)
        return -1;
    if (keys)
        plog_info ("CURVE on: broker key %s, %zu allowed keys from %s",
                   zcert_public_txt (self->cert), auth_keys (self->auth), cfg->curve_allow);
    return 0;
}

int
sockets_open (broker_t *self, bool *network, char *why, size_t why_size)
{
    const broker_config_t *cfg = &self->config;
    *network = false;
    if (s_security (self, why, why_size))
        return -1;
    self->router = zsock_new (ZMQ_ROUTER);
    self->pub = zsock_new (ZMQ_XPUB);
    if (!self->router || !self->pub) {
        snprintf (why, why_size, "cannot create sockets: %s", zmq_strerror (zmq_errno ()));
        return -1;
    }
    self->router_handle = zsock_resolve (self->router);
    self->pub_handle = zsock_resolve (self->pub);

    zsock_set_router_mandatory (self->router, 1);
    zsock_set_sndhwm (self->router, cfg->router_hwm);
    //  libzmq 4.3 never hands a message up from a socket with a ZAP domain
    //  (every connection here has one: auth.h) whose receive high-water
    //  mark is 1: two is the least that works.
    zsock_set_rcvhwm (self->router, cfg->router_hwm > 1 ? cfg->router_hwm : 2);
    zsock_set_maxmsgsize (self->router, PROTO_MAX_FRAME);
    zsock_set_backlog (self->router, BROKER_ACCEPT_BACKLOG);
    zsock_set_linger (self->router, 200);
    zsock_set_sndhwm (self->pub, cfg->pub_hwm);
    zsock_set_linger (self->pub, 0);
    //  Subscriptions are topics: a few hundred bytes at most. A bigger
    //  frame closes that connection before libzmq keeps it.
    zsock_set_maxmsgsize (self->pub, 4096);
    zsock_set_xpub_verboser (self->pub, 1);
    //  IPv6 on: a tcp://[::1]:P endpoint works, and tcp://*:P accepts both.
    zsock_set_ipv6 (self->router, 1);
    zsock_set_ipv6 (self->pub, 1);
    if (self->cert) {
        pcurve_server (self->router, self->cert, AUTH_DOMAIN_ROUTER);
        pcurve_server (self->pub, self->cert, AUTH_DOMAIN_PUB);
    }
    else
        zsock_set_zap_domain (self->router, AUTH_DOMAIN_ROUTER);

    if (zsock_bind (self->router, "%s", cfg->router) == -1) {
        snprintf (why, why_size, "cannot bind router %s: %s", cfg->router, zmq_strerror (zmq_errno ()));
        *network = true;
        return -1;
    }
    if (zsock_bind (self->pub, "%s", cfg->pub) == -1) {
        snprintf (why, why_size, "cannot bind pub %s: %s", cfg->pub, zmq_strerror (zmq_errno ()));
        *network = true;
        return -1;
    }
    s_last_endpoint (self->router, self->router_endpoint, sizeof self->router_endpoint);
    s_last_endpoint (self->pub, self->pub_endpoint, sizeof self->pub_endpoint);
    if (s_tap_enabled (cfg->tap)) {
        self->tap = tap_new (cfg->tap, cfg->tap_hwm, self->cert, AUTH_DOMAIN_TAP, why, why_size);
        if (!self->tap) {
            *network = true;
            return -1;
        }
        s_last_endpoint (tap_sock (self->tap), self->tap_endpoint, sizeof self->tap_endpoint);
    }
    char hostname [256] = "127.0.0.1";
    const char *host = cfg->advertise_host;
    if (!host || !*host) {
        if (gethostname (hostname, sizeof hostname) != 0)
            snprintf (hostname, sizeof hostname, "127.0.0.1");
        hostname [sizeof hostname - 1] = 0;
        host = hostname;
    }
    s_advertise (self->pub_endpoint, host, self->pub_advertised, sizeof self->pub_advertised);
    if (self->tap)
        s_advertise (self->tap_endpoint, host, self->tap_advertised, sizeof self->tap_advertised);
    plog_info ("listening router=%s pub=%s tap=%s (advertised pub=%s tap=%s)",
               self->router_endpoint, self->pub_endpoint,
               self->tap ? self->tap_endpoint : "off",
               self->pub_advertised, self->tap ? self->tap_advertised : "off");
    return 0;
}

void
sockets_close (broker_t *self)
{
    tap_destroy (&self->tap);
    zsock_destroy (&self->pub);
    zsock_destroy (&self->router);
    auth_destroy (&self->auth);
    zcert_destroy (&self->cert);
}

int
sockets_write_ready_file (broker_t *self, const char *path)
{
    char tmp [4096];
    snprintf (tmp, sizeof tmp, "%s.%d.tmp", path, (int) getpid ());
    FILE *file = fopen (tmp, "w");
    if (!file)
        return -1;
    fprintf (file, "router=%s\npub=%s\ntap=%s\npub_advertised=%s\ntap_advertised=%s\npid=%d\n",
             self->router_endpoint, self->pub_endpoint, self->tap_endpoint,
             self->pub_advertised, self->tap_advertised, (int) getpid ());
    if (self->metrics_http)
        fprintf (file, "metrics=%s\n", metrics_http_url (self->metrics_http));
    bool ok = fflush (file) == 0;
    ok = (fclose (file) == 0) && ok;
    //  rename is atomic: a reader sees the whole file or none.
    if (!ok || rename (tmp, path) != 0) {
        unlink (tmp);
        return -1;
    }
    return 0;
}
