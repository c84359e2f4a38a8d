// SPDX-License-Identifier: MIT
/*  broker - the broker object: builds everything, runs the loop, tears down.

    The loop (czmq zloop) reads the ROUTER (dispatch.c) as a socket, and
    on their descriptors (fdreader.h) the ZAP handler (auth.c), the
    monitors (closed connections end their sessions: conn_watch.h,
    session.c) and the XPUBs' subscriptions (the events', the tap's:
    tap.c); it has two timers: the liveness sweep
    (session.c) and the one-second stats tick; under systemd with
    WatchdogSec= a third feeds the watchdog (sdnotify.h), and broker_run
    tells systemd READY=1 before the loop and STOPPING=1 after it. Everything runs on this one
    thread, so the loop is the lock. czmq's signal handler turns SIGINT and
    SIGTERM into zsys_interrupted, which ends zloop_start after the current
    turn; broker_destroy then closes the sockets (the ROUTER lingers 200 ms
    so replies already queued still leave).
*/
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "broker_internal.h"
#include "nofile.h"
#include "pcurve.h"
#include "pclock.h"
#include "plog.h"
#include "sdnotify.h"

void
broker_config_defaults (broker_config_t *config)
{
    assert (config);
    memset (config, 0, sizeof *config);
    config->router = "tcp://127.0.0.1:5555";
    config->pub = "tcp://127.0.0.1:5556";
    config->tap = "tcp://127.0.0.1:5557";
    config->heartbeat_ms = 1000;
    config->liveness_ms = 5000;
    config->max_agents = 1024;
    config->max_inbox = 65536;
    config->max_inbox_bytes = 64 * 1024 * 1024;
    config->max_channel = 10000;
    config->max_channel_bytes = 64 * 1024 * 1024;
    config->max_channels = 1024;
    config->max_body = PROTO_MAX_BODY;
    config->max_batch = PROTO_MAX_BATCH;
    config->max_queued_bytes = 1024ULL * 1024 * 1024;
    config->forget_after_ms = 3600 * 1000;
    config->fsync = JOURNAL_FSYNC_EVERYSEC;
    config->compact_min_bytes = 64 * 1024 * 1024;
    config->router_hwm = 1000;
    config->pub_hwm = 10000;
    config->max_subscribers = 256;
    config->tap_hwm = 1000;
    config->send_wait_ms = BROKER_SEND_WAIT_MS;
    config->max_client_backlog = STALL_CONN_BYTES_DEFAULT;
    config->max_backlog = STALL_TOTAL_BYTES_DEFAULT;
}

//  A subscribing frame: who it came from (descriptor and key).
static void
s_note_peer (peers_t *peers, zmq_msg_t *frame, const char *socket)
{
    uint64_t serial = 0;
    char key [41] = "";
    auth_parse (zmq_msg_gets (frame, "User-Id"), &serial, key);
    if (!peers_note (peers, conn_watch_fd (frame), key))
        plog_warn ("a %s subscriber was cut: the broker serves at most %zu at once "
                   "(--max-subscribers)", socket, peers_size (peers));
}

static void
s_on_tap_peer (zmq_msg_t *frame, void *arg)
{
    s_note_peer (((broker_t *) arg)->tap_peers, frame, "tap");
}

static int
s_on_tap (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    tap_on_subscription (self->tap, s_on_tap_peer, self);
    return 0;
}

//  The event socket's subscriptions: nothing to do with them (libzmq
//  filters) but learning who subscribes.
static int
s_on_pub (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    while (zmq_msg_recv (&msg, self->pub_handle, ZMQ_DONTWAIT) >= 0) {
        if (zmq_msg_size (&msg) >= 1 && ((const uint8_t *) zmq_msg_data (&msg)) [0] == 1)
            s_note_peer (self->pub_peers, &msg, "event");
        zmq_msg_close (&msg);
        zmq_msg_init (&msg);
    }
    zmq_msg_close (&msg);
    return 0;
}

static int
s_on_pub_closed (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    int fd;
    while ((fd = conn_watch_next (self->pub_watch)) != -1)
        peers_forget (self->pub_peers, fd);
    return 0;
}

static int
s_on_tap_closed (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    int fd;
    while ((fd = conn_watch_next (self->tap_watch)) != -1)
        peers_forget (self->tap_peers, fd);
    return 0;
}

//  Keys the allowlist still has, with the rights a socket needs.
static bool
s_keep_any (const char *key, void *arg)
{
    return auth_rights (((broker_t *) arg)->auth, key) != 0;
}

static bool
s_keep_tap (const char *key, void *arg)
{
    return auth_rights (((broker_t *) arg)->auth, key) & PCURVE_RIGHT_TAP;
}

//  The allowlist changed: the open connections of a key that is gone (or,
//  on the tap, lost the tap right) are cut now. Rights that changed
//  otherwise take effect at the key's next request (rights.h).
static void
s_revoke (broker_t *self)
{
    size_t cut = peers_cut (self->router_peers, s_keep_any, self)
               + peers_cut (self->pub_peers, s_keep_any, self)
               + peers_cut (self->tap_peers, s_keep_tap, self);
    if (cut)
        plog_warn ("allowlist changed: %zu connections of revoked keys cut", cut);
}

//  A descriptor reader kept for the drains (fdreader.h); NULL on failure.
static fdreader_t *
s_fdreader (broker_t *self, zsock_t *sock, zloop_reader_fn *handler, void *arg)
{
    if (self->reader_count == BROKER_FDREADERS)
        return NULL;
    fdreader_t *reader = fdreader_new (self->loop, sock, handler, arg);
    if (reader)
        self->readers [self->reader_count++] = reader;
    return reader;
}

//  Every descriptor reader drained: what a lost edge left is read.
static int
s_drain_all (broker_t *self)
{
    for (size_t i = 0; i < self->reader_count; i++)
        if (fdreader_drain (self->readers [i]) == -1)
            return -1;
    return 0;
}

int
broker_drain_sent (broker_t *self)
{
    //  A send on an XPUB may take the signal of a subscription that came
    //  meanwhile: read them after the turn that sent.
    int rc = 0;
    if (self->pub_reader && self->counters.published != self->pub_drained_at) {
        self->pub_drained_at = self->counters.published;
        rc |= fdreader_drain (self->pub_reader);
    }
    if (self->tap_reader && tap_seq (self->tap) != self->tap_drained_at) {
        self->tap_drained_at = tap_seq (self->tap);
        rc |= fdreader_drain (self->tap_reader);
    }
    return rc;
}

static int
s_on_stats (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *self = arg;
    if (s_drain_all (self) == -1)
        return -1;
    stats_tick (self);
    //  Connections that closed leave their buffers free in the allocator's
    //  heaps (libzmq allocates them in its I/O thread); give them back to
    //  the system once a second after a wave of closes, so the broker's
    //  memory follows the connections it has, not the most it ever had.
    //  libzmq frees a connection's buffers a moment after its close is
    //  reported, so the trims go on for two ticks after the last close.
    //  What is slow: malloc_trim walks the heaps (a few ms at 1 GiB).
    if (self->counters.closed != self->trimmed_at) {
        self->trimmed_at = self->counters.closed;
        self->trims_due = 3;
    }
    if (self->trims_due > 0) {
        self->trims_due--;
        malloc_trim (0);
    }
    if (auth_tick (self->auth))
        s_revoke (self);
    return 0;
}

//  systemd's watchdog is fed from the loop itself: a loop stuck in a
//  handler stops feeding it, and systemd restarts the broker.
static int
s_on_watchdog (zloop_t *loop, int timer_id, void *arg)
{
    sdnotify_watchdog ();
    return 0;
}

//  The core's limits and world from the flags.
static void
s_core_config (const broker_config_t *cfg, core_config_t *core)
{
    memset (core, 0, sizeof *core);
    core->limits = (core_limits_t) {
        .max_agents = cfg->max_agents,
        .mail = {
            .max_inbox = cfg->max_inbox,
            .max_inbox_bytes = cfg->max_inbox_bytes,
            .max_channel = cfg->max_channel,
            .max_channel_bytes = cfg->max_channel_bytes,
            .max_channels = cfg->max_channels,
            .max_body = cfg->max_body,
            .max_queued_bytes = cfg->max_queued_bytes,
            .overflow = cfg->drop_oldest ? OVERFLOW_DROP_OLDEST : OVERFLOW_REJECT
        },
        .state = { .max_keys = cfg->max_state_keys, .max_bytes = cfg->max_state_bytes },
        .checkpoints = cfg->checkpoints ? cfg->checkpoints : WORKFLOW_DEFAULT_RETAIN
    };
    if (cfg->scenario && cfg->scenario->workflow.enabled) {
        core->limits.max_turns = cfg->scenario->workflow.max_turns;
        core->limits.max_revisions = cfg->scenario->workflow.max_revisions;
    }
    core->no_world = cfg->no_world;
    core->world_file = cfg->world_file;
    core->world = (world_config_t) {
        .kind = cfg->world_height > 0 ? WORLD_GRID : WORLD_LINE,
        .width = cfg->world_width,
        .height = cfg->world_height,
        .seed = cfg->seed
    };
    core->world_start = cfg->world_start;
    core->scenario = cfg->scenario;
}

bool
broker_no_world (broker_t *self, request_t *req)
{
    if (self->world)
        return false;
    dispatch_error (self, req->id, PERR_BAD_ACTION, "scenario %s has no world",
                    self->config.scenario ? self->config.scenario->name : "(none)");
    return true;
}

broker_t *
broker_new (const broker_config_t *config, bool *network, char *why, size_t why_size)
{
    assert (config);
    bool network_error = false;
    broker_t *self = calloc (1, sizeof (broker_t));
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    self->config = *config;
    const broker_config_t *cfg = &self->config;
    self->started_ms = self->now_ms = self->counters.rate_tick_ms = pclock_mono_ms ();
    penc_init (&self->reply);
    penc_init (&self->event);
    penc_init (&self->confirm);
    self->parking = parking_new ();
    self->confirms = confirms_new ();
    penc_init (&self->push);
    self->seqs = calloc (cfg->max_batch ? cfg->max_batch : 1, sizeof (uint64_t));
    self->observers = observers_new ();
    self->turns = turns_new ();
    self->call = call_new ();
    self->outbox = outbox_new ();
    self->stall = stall_new (cfg->max_client_backlog, cfg->max_backlog);
    self->router_peers = peers_new (0);
    self->pub_peers = peers_new (cfg->max_subscribers);
    self->tap_peers = peers_new (cfg->max_subscribers);
    if (!self->seqs || !self->observers || !self->turns || !self->call || !self->outbox
    ||  !self->stall || !self->router_peers || !self->pub_peers || !self->tap_peers
    ||  !self->parking || !self->confirms) {
        snprintf (why, why_size, "out of memory");
        goto err;
    }
    //  The world, the scenario's initial state and workflow first: the
    //  journal's history is replayed on top of them, as it happened.
    core_config_t core;
    s_core_config (cfg, &core);
    self->core = core_new (&core, why, why_size);
    if (!self->core)
        goto err;
    self->agents = core_agents (self->core);
    self->mailroom = core_mailroom (self->core);
    self->state = core_state (self->core);
    self->world = core_world (self->core);
    self->workflow = core_workflow (self->core);
    //  Before the sockets: nobody can connect while history is replayed,
    //  and a second broker on the same data stops before binding.
    if (durable_open (self, &core.limits, why, why_size))
        goto err;
    //  An inspection: the recovered state is all it wants.
    if (cfg->dump_state)
        return self;
    //  Connections are descriptors. (czmq's max-sockets, ZMQ_MAX_SOCKETS,
    //  counts zmq sockets, of which the broker has five, not connections.)
    nofile_raise ();
    if (sockets_open (self, &network_error, why, why_size))
        goto err;
    bool metrics_off = true;
    if (!metrics_http_parse (cfg->metrics_bind, &metrics_off, why, why_size))
        goto err;
    if (!metrics_off && !(self->metrics_http = metrics_http_new (cfg->metrics_bind, why, why_size))) {
        network_error = true;
        goto err;
    }
    self->conn_watch = conn_watch_new (self->router);
    self->pub_watch = conn_watch_new (self->pub);
    self->tap_watch = self->tap ? conn_watch_new (tap_sock (self->tap)) : NULL;
    if (!self->conn_watch || !self->pub_watch || (self->tap && !self->tap_watch)) {
        snprintf (why, why_size, "cannot monitor the router: %s", zmq_strerror (zmq_errno ()));
        goto err;
    }
    self->loop = zloop_new ();
    if (!self->loop) {
        snprintf (why, why_size, "cannot create the event loop");
        goto err;
    }
    //  The ROUTER is a socket reader; the seldom readable sockets are
    //  polled on their descriptors (fdreader.h: what that saves).
    zloop_reader (self->loop, self->router, dispatch_on_router, self);
    if (!s_fdreader (self, auth_sock (self->auth), auth_on_request, self->auth)
    ||  !s_fdreader (self, conn_watch_sock (self->conn_watch), session_on_closed, self)
    ||  !(self->pub_reader = s_fdreader (self, self->pub, s_on_pub, self))
    ||  !s_fdreader (self, conn_watch_sock (self->pub_watch), s_on_pub_closed, self)
    ||  (self->tap && (!(self->tap_reader = s_fdreader (self, tap_sock (self->tap), s_on_tap, self))
                   ||  !s_fdreader (self, conn_watch_sock (self->tap_watch), s_on_tap_closed,
                                    self)))) {
        snprintf (why, why_size, "cannot poll the broker's sockets");
        goto err;
    }
    if (self->metrics_http) {
        zmq_pollitem_t wanted = { NULL, metrics_http_fd (self->metrics_http), ZMQ_POLLIN, 0 };
        zloop_poller (self->loop, &wanted, metrics_on_wanted, self);
    }
    size_t sweep = cfg->liveness_ms / 4;
    sweep = sweep < 10 ? 10 : sweep > 1000 ? 1000 : sweep;
    zloop_timer (self->loop, sweep, 0, session_on_sweep, self);
    zloop_timer (self->loop, 1000, 0, s_on_stats, self);
    if (self->workflow && cfg->scenario->workflow.turn_timeout_ms) {
        //  A tenth of the turn timeout (10 ms..1 s): a stalled turn is
        //  noticed within 10% of its limit, at a few checks a second.
        size_t every = (size_t) (cfg->scenario->workflow.turn_timeout_ms / 10);
        zloop_timer (self->loop, every < 10 ? 10 : every > 1000 ? 1000 : every, 0,
                     turns_on_timer, self);
    }
    if (self->durable)
        zloop_timer (self->loop, 1000, 0, durable_on_tick, self);
    uint64_t watchdog_ms = sdnotify_watchdog_interval_ms ();
    if (watchdog_ms)
        zloop_timer (self->loop, (size_t) watchdog_ms, 0, s_on_watchdog, self);
    if (cfg->ready_file && *cfg->ready_file
    &&  sockets_write_ready_file (self, cfg->ready_file)) {
        snprintf (why, why_size, "cannot write ready file %s", cfg->ready_file);
        goto err;
    }
    return self;
err:
    if (network)
        *network = network_error;
    broker_destroy (&self);
    return NULL;
}

void
broker_destroy (broker_t **self_p)
{
    assert (self_p);
    broker_t *self = *self_p;
    if (self) {
        //  First: its thread may be waiting for the loop's page.
        metrics_http_destroy (&self->metrics_http);
        metrics_text_free (&self->metrics_page);
        for (size_t i = 0; i < self->reader_count; i++)
            fdreader_destroy (&self->readers [i]);
        zloop_destroy (&self->loop);
        conn_watch_destroy (&self->conn_watch);
        conn_watch_destroy (&self->pub_watch);
        conn_watch_destroy (&self->tap_watch);
        sockets_close (self);
        durable_close (self);
        parking_destroy (&self->parking);
        confirms_destroy (&self->confirms);
        core_destroy (&self->core);
        observers_destroy (&self->observers);
        turns_destroy (&self->turns);
        call_destroy (&self->call);
        outbox_destroy (&self->outbox);
        stall_destroy (&self->stall);
        peers_destroy (&self->router_peers);
        peers_destroy (&self->pub_peers);
        peers_destroy (&self->tap_peers);
        penc_fini (&self->reply);
        penc_fini (&self->event);
        penc_fini (&self->confirm);
        penc_fini (&self->push);
        free (self->seqs);
        free (self);
        *self_p = NULL;
    }
}

int
broker_dump (broker_t *self, const char *path, char *why, size_t why_size)
{
    assert (self && path);
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
    core_dump (self->core, &pk);
    bool out = strcmp (path, "-") == 0;
    FILE *file = out ? stdout : fopen (path, "wb");
    int rc = 0;
    if (!file || fwrite (buffer.data, 1, buffer.size, file) != buffer.size
    ||  (out ? fflush (file) : fclose (file)) != 0) {
        snprintf (why, why_size, "cannot write the state to %s: %s", path, strerror (errno));
        if (file && !out)
            fclose (file);
        rc = -1;
    }
    msgpack_sbuffer_destroy (&buffer);
    return rc;
}

int
broker_run (broker_t *self)
{
    assert (self);
    plog_info ("ready: %zu-position world, seed %llu, overflow %s",
               self->world ? world_width (self->world) * (size_t) world_height (self->world) : 0,
               (unsigned long long) self->config.seed,
               self->config.drop_oldest ? "drop-oldest" : "reject");
    if (self->metrics_http)
        plog_info ("metrics at %s", metrics_http_url (self->metrics_http));
    //  The journal was recovered and every socket bound in broker_new:
    //  from here on requests are served (Type=notify units wait for this).
    char status [128];
    snprintf (status, sizeof status, "serving %zu agents", agents_size (self->agents));
    sdnotify_ready (status);
    //  What came before the loop polled the descriptors (fdreader.h).
    if (s_drain_all (self) == 0)
        zloop_start (self->loop);
    //  zloop returns on an interrupt or when a handler asked to stop; either
    //  way this is an orderly end.
    sdnotify_stopping ();
    plog_info ("stopping: %zu agents, %llu messages queued",
               agents_size (self->agents),
               self->mailroom ? (unsigned long long) mailroom_counters (self->mailroom)->queued
                              : 0ULL);
    return self->failed ? -1 : 0;
}

