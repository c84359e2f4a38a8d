// SPDX-License-Identifier: MIT
/*  parley-broker - the Parley broker daemon.

    Reads its settings (flags > PARLEY_* variables > config file > defaults,
    via pconfig), builds the broker object and runs its loop until SIGINT or
    SIGTERM. Everything else lives in broker.c and the files it names.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "metrics_http.h"
#include "core/world.h"
#include "pconfig.h"
#include "plog.h"

#define MIB (1024.0 * 1024.0)

static const pconfig_option_t s_options [] = {
    { "router", 0, PCONFIG_STR, "PARLEY_ROUTER", "tcp://127.0.0.1:5555", 0, 0, "ENDPOINT",
      "ROUTER endpoint for requests (tcp://host:port, tcp://[::1]:port, ipc://path; port * = ephemeral)" },
    { "pub", 0, PCONFIG_STR, "PARLEY_PUB", "tcp://127.0.0.1:5556", 0, 0, "ENDPOINT",
      "PUB endpoint for events (mail.*, state.*, world.*, agent.*)" },
    { "tap", 0, PCONFIG_STR, "PARLEY_TAP", "tcp://127.0.0.1:5557", 0, 0, "ENDPOINT",
      "tap endpoint mirroring every frame (tap.in/out/pub); \"off\" disables it" },
    { "advertise-host", 0, PCONFIG_STR, "PARLEY_ADVERTISE_HOST", NULL, 0, 0, "HOST",
      "host named in WELCOME for endpoints bound to a wildcard (default: this machine's hostname)" },
    { "ready-file", 0, PCONFIG_STR, "PARLEY_READY_FILE", NULL, 0, 0, "FILE",
      "after binding, write router=, pub=, tap=, pid= lines here (atomically)" },
    { "heartbeat-ms", 0, PCONFIG_INT, "PARLEY_HEARTBEAT_MS", "1000", 10, 3600000, "MS",
      "how often agents are told to send something" },
    { "liveness-ms", 0, PCONFIG_INT, "PARLEY_LIVENESS_MS", "5000", 20, 86400000, "MS",
      "an agent silent this long is marked offline (its mail stays queued)" },
    { "forget-after-ms", 0, PCONFIG_INT, "PARLEY_FORGET_AFTER_MS", "3600000", 0, 1e12, "MS",
      "an agent offline this long is forgotten: registration and queued mail released "
      "(counted in STATS forgotten); 0 = never" },
    { "max-agents", 0, PCONFIG_INT, "PARLEY_MAX_AGENTS", "1024", 1, 1000000, "N",
      "registered agents (online or not); beyond: TOO_MANY_AGENTS" },
    { "max-inbox", 0, PCONFIG_INT, "PARLEY_MAX_INBOX", "65536", 1, 100000000, "N",
      "unacknowledged messages per agent (the default holds a sender's 4 SENDs of 4096 in flight "
      "and a reader's 3 FETCHes of 4096 at once; --max-inbox-bytes bounds the bytes)" },
    { "max-inbox-bytes", 0, PCONFIG_INT, "PARLEY_MAX_INBOX_BYTES", "67108864", 1, 1e12, "BYTES",
      "unacknowledged body bytes per agent" },
    { "max-channel", 0, PCONFIG_INT, "PARLEY_MAX_CHANNEL", "10000", 1, 100000000, "N",
      "posts per channel not yet acknowledged by every listener" },
    { "max-channel-bytes", 0, PCONFIG_INT, "PARLEY_MAX_CHANNEL_BYTES", "67108864", 1, 1e12, "BYTES",
      "body bytes of those posts" },
    { "max-channels", 0, PCONFIG_INT, "PARLEY_MAX_CHANNELS", "1024", 1, 1000000, "N",
      "channels in use (created on first use; an idle one is reclaimed at the limit); "
      "beyond: TOO_MANY_CHANNELS" },
    { "max-body", 0, PCONFIG_INT, "PARLEY_MAX_BODY", "65536", 0, 65536, "BYTES",
      "largest message body (told in WELCOME); beyond: TOO_LARGE for that item" },
    { "max-batch", 0, PCONFIG_INT, "PARLEY_MAX_BATCH", "4096", 1, 4096, "N",
      "most messages per SEND and per MAIL reply" },
    { "max-queued-bytes", 0, PCONFIG_INT, "PARLEY_MAX_QUEUED_BYTES", "1073741824", 1, 1e13, "BYTES",
      "memory of the messages queued in all inboxes and channels together (body, names and "
      "about 70 bytes each; a message sent to many is stored once); beyond: QUEUES_FULL for "
      "that item, whatever --overflow says" },
    { "send-wait-ms", 0, PCONFIG_INT, "PARLEY_SEND_WAIT_MS", "2000", 0, 86400000, "MS",
      "a SEND to an online agent whose inbox is full waits this long for room (backpressure) "
      "before the full part gets INBOX_FULL, unless the SEND carries its own wait_ms; 0 = "
      "INBOX_FULL at once. An offline recipient's full inbox fails at once" },
    { "overflow", 0, PCONFIG_STR, "PARLEY_OVERFLOW", "reject", 0, 0, "POLICY",
      "full inbox/channel: reject (INBOX_FULL/CHANNEL_FULL to the sender) or drop-oldest (counted)" },
    { "max-state-keys", 0, PCONFIG_INT, "PARLEY_MAX_STATE_KEYS", "100000", 1, 100000000, "N",
      "shared-state keys clients write (the world's world.* keys aside); beyond: STATE_FULL" },
    { "max-state-bytes", 0, PCONFIG_INT, "PARLEY_MAX_STATE_BYTES", "268435456", 1024, 1e12, "BYTES",
      "shared-state bytes clients write (keys + encoded values + union keys' member sets); "
      "beyond: STATE_FULL. The world's world.* keys are not counted: a full store never "
      "stops PERCEIVE/ACT (they are bounded by the world: 4096 positions, --max-agents)" },
    { "seed", 0, PCONFIG_INT, "PARLEY_SEED", "0", 0, 9007199254740991.0, "N",
      "world seed: the same seed draws the same world" },
    { "world-size", 0, PCONFIG_INT, "PARLEY_WORLD_SIZE", "10", 1, 4096, "N",
      "positions on the line world" },
    { "grid", 0, PCONFIG_STR, "PARLEY_GRID", NULL, 0, 0, "WxH",
      "a W x H grid world instead of a line (at most 4096 cells)" },
    { "world-file", 0, PCONFIG_STR, "PARLEY_WORLD_FILE", NULL, 0, 0, "FILE",
      "load the world's objects from this JSON file instead of drawing them" },
    { "scenario", 0, PCONFIG_STR, "PARLEY_SCENARIO", NULL, 0, 0, "DIR",
      "load scenarios/<name>: its world, initial shared state and workflow (turns); "
      "a bad file exits 2 naming file, line and key (docs/SCENARIOS.md)" },
    { "checkpoints", 0, PCONFIG_INT, "PARLEY_CHECKPOINTS", "1000", 1, 1000000, "N",
      "workflow checkpoints kept (older ones are folded into the base state)" },
    { "start", 0, PCONFIG_STR, "PARLEY_START", "spread", 0, 0, "PLACEMENT",
      "where entering agents start: spread (the first three spread over the world), "
      "same (all at position 0) or random (drawn from --seed)" },
    { "data-dir", 0, PCONFIG_STR, "PARLEY_DATA_DIR", "./parley-data", 0, 0, "DIR",
      "where queues, registrations, shared state and the world are kept across restarts "
      "(unset: $STATE_DIRECTORY when set, as systemd sets it, else ./parley-data); "
      "\"none\" keeps everything in memory only" },
    { "fsync", 0, PCONFIG_STR, "PARLEY_FSYNC", "everysec", 0, 0, "POLICY",
      "always (a reply means the change is on disk; one sync per loop turn), everysec "
      "(a crash loses at most about one second of acknowledged changes) or no (the kernel decides)" },
    { "repair", 0, PCONFIG_BOOL, "PARLEY_REPAIR", "false", 0, 0, NULL,
      "start even when a journal record in the middle is corrupt: skip it and log what was lost "
      "(without it the broker stops and names the file and offset)" },
    { "compact-min-bytes", 0, PCONFIG_INT, "PARLEY_COMPACT_MIN_BYTES", "67108864", 4096, 1e13, "BYTES",
      "the journal log is compacted into a snapshot once it is this large and as large as the last "
      "snapshot" },
    { "router-hwm", 0, PCONFIG_INT, "PARLEY_ROUTER_HWM", "1000", 1, 10000000, "MESSAGES",
      "ROUTER send/receive high-water mark per connection: beyond this many unread replies, "
      "the broker keeps the next ones itself and handles that client's requests only as it "
      "reads (STATS replies_stalled); past 64 MiB kept for one client the connection is cut "
      "(STATS connections_cut)" },
    { "max-client-backlog", 0, PCONFIG_INT, "PARLEY_MAX_CLIENT_BACKLOG", "67108864", 65536, 1e12,
      "BYTES", "replies a client has not read yet (past --router-hwm) and the requests it sent "
      "meanwhile, kept for it; beyond, its connection is cut (STATS connections_cut)" },
    { "max-backlog", 0, PCONFIG_INT, "PARLEY_MAX_BACKLOG", "536870912", 65536, 1e13, "BYTES",
      "the same for all clients together" },
    { "pub-hwm", 0, PCONFIG_INT, "PARLEY_PUB_HWM", "10000", 1, 10000000, "FRAMES",
      "events kept for each subscriber that has not read them; a slower subscriber loses "
      "events (a replica sees the seq gap and takes a new snapshot)" },
    { "max-subscribers", 0, PCONFIG_INT, "PARLEY_MAX_SUBSCRIBERS", "256", 1, 100000, "N",
      "event connections served at once (and tap connections): the next is cut. What "
      "slow subscribers cost in all is at most this many x --pub-hwm events" },
    { "tap-hwm", 0, PCONFIG_INT, "PARLEY_TAP_HWM", "1000", 1, 10000000, "FRAMES",
      "tap high-water mark: small, so the tap drops (tseq gaps) rather than slows the broker" },
    //  Security (docs/SECURITY.md)
    { "curve-keys", 0, PCONFIG_STR, "PARLEY_CURVE_KEYS", NULL, 0, 0, "DIR",
      "CURVE on every socket with the broker's pair DIR/broker + DIR/broker_secret "
      "(parley-keygen --name broker); needs --curve-allow" },
    { "curve-allow", 0, PCONFIG_STR, "PARLEY_CURVE_ALLOW", NULL, 0, 0, "DIR",
      "public certificates of the keys allowed in, with their agent ids and rights "
      "(re-read when the directory changes)" },
    { "insecure", 0, PCONFIG_BOOL, "PARLEY_INSECURE", "false", 0, 0, NULL,
      "allow plain (no CURVE) endpoints beyond loopback: anyone who reaches them is trusted" },
    //  Inspection (docs/DURABILITY.md)
    { "dump-state", 0, PCONFIG_STR, "PARLEY_DUMP_STATE", NULL, 0, 0, "FILE",
      "recover --data-dir, write its canonical state (msgpack: agents, mail, shared state, "
      "world, workflow and checkpoints, in a fixed order) to FILE (- for stdout) and exit 0 "
      "without serving or writing anything; the broker using the directory must be stopped" },
    { "dump-on-exit", 0, PCONFIG_STR, "PARLEY_DUMP_ON_EXIT", NULL, 0, 0, "FILE",
      "at a clean stop, write the live canonical state to FILE: the same bytes --dump-state "
      "gives after a restart when nothing was lost" },
    //  Metrics (docs/METRICS.md)
    { "metrics-bind", 0, PCONFIG_STR, "PARLEY_METRICS_BIND", "off", 0, 0, "HOST:PORT",
      "serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; port 0 = "
      "ephemeral, written to --ready-file as metrics=); \"off\" serves none. Read-only, "
      "plain HTTP: an address other than loopback needs --insecure" },
};

static const char *s_epilogue =
    "Sockets: ROUTER_MANDATORY (replies to vanished peers are counted, not lost\n"
    "silently), MAXMSGSIZE 1 MiB on the ROUTER (a bigger frame closes that\n"
    "connection), IPv6 enabled. Mail is kept until acknowledged; bounds and drops\n"
    "are reported by STATS. SIGINT/SIGTERM stop the broker cleanly (exit 0).\n"
    "Protocol: proto/PROTOCOL.md.";

static char s_state_dir [4096];

static bool
s_parse_grid (const char *text, uint32_t *width, uint32_t *height)
{
    unsigned w = 0, h = 0;
    char tail;
    if (sscanf (text, "%ux%u%c", &w, &h, &tail) != 2 || w == 0 || h == 0
    ||  w > 4096 || h > 4096 || (uint64_t) w * h > 4096)
        return false;
    *width = w;
    *height = h;
    return true;
}

//  The scenario's world, where no flag chose one: flags win.
static void
s_scenario_world (pconfig_t *config, const scenario_t *scenario, broker_config_t *cfg)
{
    bool flags = pconfig_is_set (config, "world-size") || pconfig_is_set (config, "grid")
              || pconfig_is_set (config, "world-file");
    if (scenario->world == SCENARIO_WORLD_NONE && !flags)
        cfg->no_world = true;
    if ((scenario->world == SCENARIO_WORLD_LINE || scenario->world == SCENARIO_WORLD_GRID)
    &&  !flags) {
        if (scenario->world_width)
            cfg->world_width = scenario->world_width;
        cfg->world_height = scenario->world == SCENARIO_WORLD_GRID ? scenario->world_height : 0;
    }
    if (scenario->world_seed_set && !pconfig_is_set (config, "seed"))
        cfg->seed = scenario->world_seed;
}

static int
s_fill (pconfig_t *config, broker_config_t *cfg)
{
    broker_config_defaults (cfg);
    cfg->router = pconfig_str (config, "router");
    cfg->pub = pconfig_str (config, "pub");
    cfg->tap = pconfig_str (config, "tap");
    cfg->advertise_host = pconfig_str (config, "advertise-host");
    cfg->ready_file = pconfig_str (config, "ready-file");
    cfg->heartbeat_ms = (uint32_t) pconfig_int (config, "heartbeat-ms");
    cfg->liveness_ms = (uint32_t) pconfig_int (config, "liveness-ms");
    cfg->forget_after_ms = (uint64_t) pconfig_int (config, "forget-after-ms");
    cfg->max_agents = (size_t) pconfig_int (config, "max-agents");
    cfg->max_inbox = (size_t) pconfig_int (config, "max-inbox");
    cfg->max_inbox_bytes = (uint64_t) pconfig_int (config, "max-inbox-bytes");
    cfg->max_channel = (size_t) pconfig_int (config, "max-channel");
    cfg->max_channel_bytes = (uint64_t) pconfig_int (config, "max-channel-bytes");
    cfg->max_channels = (size_t) pconfig_int (config, "max-channels");
    cfg->max_body = (size_t) pconfig_int (config, "max-body");
    cfg->max_batch = (size_t) pconfig_int (config, "max-batch");
    cfg->max_queued_bytes = (uint64_t) pconfig_int (config, "max-queued-bytes");
    cfg->send_wait_ms = (uint64_t) pconfig_int (config, "send-wait-ms");
    cfg->max_state_keys = (size_t) pconfig_int (config, "max-state-keys");
    cfg->max_state_bytes = (size_t) pconfig_int (config, "max-state-bytes");
    cfg->seed = (uint64_t) pconfig_int (config, "seed");
    cfg->world_width = (uint32_t) pconfig_int (config, "world-size");
    cfg->world_file = pconfig_str (config, "world-file");
    cfg->router_hwm = (int) pconfig_int (config, "router-hwm");
    cfg->max_client_backlog = (uint64_t) pconfig_int (config, "max-client-backlog");
    cfg->max_backlog = (uint64_t) pconfig_int (config, "max-backlog");
    cfg->pub_hwm = (int) pconfig_int (config, "pub-hwm");
    cfg->max_subscribers = (size_t) pconfig_int (config, "max-subscribers");
    cfg->tap_hwm = (int) pconfig_int (config, "tap-hwm");
    cfg->curve_keys = pconfig_str (config, "curve-keys");
    cfg->curve_allow = pconfig_str (config, "curve-allow");
    cfg->insecure = pconfig_bool (config, "insecure");
    cfg->metrics_bind = pconfig_str (config, "metrics-bind");
    bool metrics_off;
    char metrics_why [256];
    if (!metrics_http_parse (cfg->metrics_bind, &metrics_off, metrics_why, sizeof metrics_why)) {
        fprintf (stderr, "parley-broker: %s\n", metrics_why);
        return -1;
    }
    cfg->checkpoints = (size_t) pconfig_int (config, "checkpoints");
    cfg->data_dir = pconfig_str (config, "data-dir");
    if (!pconfig_is_set (config, "data-dir")) {
        //  systemd's StateDirectory= (the first one when several are given).
        const char *state_dir = getenv ("STATE_DIRECTORY");
        if (state_dir && *state_dir) {
            snprintf (s_state_dir, sizeof s_state_dir, "%s", state_dir);
            s_state_dir [strcspn (s_state_dir, ":")] = 0;
            cfg->data_dir = s_state_dir;
        }
        else
            cfg->data_dir = "./parley-data";
    }
    cfg->repair = pconfig_bool (config, "repair");
    cfg->dump_state = pconfig_str (config, "dump-state");
    cfg->dump_on_exit = pconfig_str (config, "dump-on-exit");
    cfg->compact_min_bytes = (uint64_t) pconfig_int (config, "compact-min-bytes");
    const char *fsync_policy = pconfig_str (config, "fsync");
    if (strcmp (fsync_policy, "always") == 0)
        cfg->fsync = JOURNAL_FSYNC_ALWAYS;
    else
    if (strcmp (fsync_policy, "everysec") == 0)
        cfg->fsync = JOURNAL_FSYNC_EVERYSEC;
    else
    if (strcmp (fsync_policy, "no") == 0)
        cfg->fsync = JOURNAL_FSYNC_NO;
    else {
        fprintf (stderr, "parley-broker: --fsync must be always, everysec or no, not \"%s\"\n",
                 fsync_policy);
        return -1;
    }

    const char *overflow = pconfig_str (config, "overflow");
    if (strcmp (overflow, "drop-oldest") == 0)
        cfg->drop_oldest = true;
    else
    if (strcmp (overflow, "reject") != 0) {
        fprintf (stderr, "parley-broker: --overflow must be reject or drop-oldest, not \"%s\"\n",
                 overflow);
        return -1;
    }
    world_start_t start;
    if (!world_start_from_name (pconfig_str (config, "start"), &start)) {
        fprintf (stderr, "parley-broker: --start must be spread, same or random, not \"%s\"\n",
                 pconfig_str (config, "start"));
        return -1;
    }
    cfg->world_start = (int) start;
    const char *grid = pconfig_str (config, "grid");
    if (grid) {
        if (pconfig_is_set (config, "world-size")) {
            fprintf (stderr, "parley-broker: give --world-size (a line) or --grid (a grid), not both\n");
            return -1;
        }
        if (!s_parse_grid (grid, &cfg->world_width, &cfg->world_height)) {
            fprintf (stderr, "parley-broker: --grid wants WxH with W*H <= 4096, not \"%s\"\n", grid);
            return -1;
        }
    }
    const char *exposed = broker_config_exposed (cfg);
    if (!metrics_off && !cfg->insecure && !metrics_http_loopback (cfg->metrics_bind)) {
        fprintf (stderr, "parley-broker: --metrics-bind %s is reachable from other machines "
                 "and serves plain HTTP: bind it to loopback, or give --insecure if this "
                 "network is trusted (docs/METRICS.md)\n", cfg->metrics_bind);
        return -1;
    }
    if (exposed && !cfg->insecure && !(cfg->curve_keys && cfg->curve_allow)) {
        fprintf (stderr, "parley-broker: %s is reachable from other machines: give "
                 "--curve-keys and --curve-allow, or --insecure if this network is trusted "
                 "(docs/SECURITY.md)\n", exposed);
        return -1;
    }
    if (cfg->liveness_ms <= cfg->heartbeat_ms) {
        fprintf (stderr, "parley-broker: --liveness-ms must be larger than --heartbeat-ms\n");
        return -1;
    }
    return 0;
}

int
main (int argc, char **argv)
{
    plog_init ("parley-broker", NULL);
    pconfig_t *config = pconfig_new (
        "parley-broker", "parley-broker [OPTION]...",
        "The Parley broker: agents connect to its ROUTER (requests: HELLO, SEND, FETCH,\n"
        "WRITE, PERCEIVE, ...), subscribe to its PUB for wake-ups and state updates, and\n"
        "parley-tap watches every frame on the tap. One process, one event loop.",
        s_epilogue, s_options, sizeof s_options / sizeof s_options [0]);
    if (!config)
        return PARLEY_EXIT_FAILURE;
    int rc = PARLEY_EXIT_OK;
    if (pconfig_ends (pconfig_parse (config, argc, argv, false), &rc))
        goto done;
    broker_config_t cfg;
    if (s_fill (config, &cfg)) {
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    char why [1024] = "";
    scenario_t *scenario = NULL;
    if (pconfig_str (config, "scenario")) {
        scenario = scenario_load (pconfig_str (config, "scenario"), why, sizeof why);
        if (!scenario) {
            fprintf (stderr, "parley-broker: %s\n", why);
            rc = PARLEY_EXIT_USAGE;
            goto done;
        }
        s_scenario_world (config, scenario, &cfg);
        cfg.scenario = scenario;
    }
    bool network = false;
    broker_t *broker = broker_new (&cfg, &network, why, sizeof why);
    if (!broker) {
        plog_error ("cannot start: %s", why);
        rc = network ? PARLEY_EXIT_NETWORK : PARLEY_EXIT_FAILURE;
        goto done_scenario;
    }
    if (cfg.dump_state) {
        if (broker_dump (broker, cfg.dump_state, why, sizeof why)) {
            plog_error ("%s", why);
            rc = PARLEY_EXIT_FAILURE;
        }
        broker_destroy (&broker);
        goto done_scenario;
    }
    if (broker_run (broker))
        rc = PARLEY_EXIT_FAILURE;
    if (cfg.dump_on_exit && broker_dump (broker, cfg.dump_on_exit, why, sizeof why)) {
        plog_error ("%s", why);
        rc = PARLEY_EXIT_FAILURE;
    }
    broker_destroy (&broker);
    plog_info ("stopped");
done_scenario:
    scenario_destroy (&scenario);
done:
    pconfig_destroy (&config);
    return rc;
}
