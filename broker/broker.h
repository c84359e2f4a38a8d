// SPDX-License-Identifier: MIT
/*  broker - the parley-broker daemon as one object.

    Owns everything the daemon has: the ROUTER, PUB and tap sockets, the
    event loop, the agent registry, the mailroom, the shared state and the
    world. One thread: the loop is the lock, so no state has a mutex.

        broker_config_t config;
        broker_config_defaults (&config);
        config.router = "tcp://127.0.0.1:*";
        broker_t *broker = broker_new (&config, why, sizeof why);
        broker_run (broker);            //  until SIGINT/SIGTERM
        broker_destroy (&broker);

    main.c fills the config from flags, PARLEY_* variables and the config
    file (pconfig) and documents every field in --help.
*/
#ifndef PARLEY_BROKER_H
#define PARLEY_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scenario.h"
#include "journal.h"

typedef struct _broker_t broker_t;

typedef struct {
    //  Endpoints. `tap` NULL, "" or "off" disables the tap.
    const char *router;
    const char *pub;
    const char *tap;
    //  Host put in WELCOME's pub/tap for endpoints bound to a wildcard
    //  (tcp://*:P, 0.0.0.0, [::]). NULL: the machine's hostname.
    const char *advertise_host;
    //  After binding, the bound endpoints are written there as key=value
    //  lines (router=, pub=, tap=, pid=), atomically. NULL: none.
    const char *ready_file;

    //  Session
    uint32_t heartbeat_ms;
    uint32_t liveness_ms;
    //  An agent offline this long is forgotten (as BYE forget: registration,
    //  mail, channels, world position). 0: never.
    uint64_t forget_after_ms;   //  default one hour
    size_t max_agents;

    //  Mail
    size_t max_inbox;
    uint64_t max_inbox_bytes;
    size_t max_channel;
    uint64_t max_channel_bytes;
    size_t max_channels;
    size_t max_body;
    size_t max_batch;
    uint64_t max_queued_bytes;  //  all inboxes and channels together
    bool drop_oldest;           //  overflow policy; false = reject

    //  Shared state (0 = state.h defaults)
    size_t max_state_keys;
    size_t max_state_bytes;

    //  World
    uint64_t seed;
    uint32_t world_width;       //  0 = default (10)
    uint32_t world_height;      //  > 0 makes a grid
    const char *world_file;     //  JSON world; overrides the generated one
    bool no_world;              //  the scenario has none: PERCEIVE/ACT get BAD_ACTION

    //  Scenario (not owned; must outlive the broker). Its initial state is
    //  written at start; a workflow section runs turns (workflow.h).
    const scenario_t *scenario;
    size_t checkpoints;         //  checkpoints kept (0 = WORKFLOW_DEFAULT_RETAIN)
    int world_start;            //  world_start_t: spread (0), same, random

    //  Durability (docs/DURABILITY.md). data_dir NULL, "" or "none": in
    //  memory only.
    const char *data_dir;
    journal_fsync_t fsync;
    bool repair;                //  skip corrupt journal records instead of stopping
    //  Inspection: recover, write the canonical state there, serve nothing
    //  and write nothing (broker_new stops after the recovery); and the
    //  live state's dump at a clean stop. NULL: none.
    const char *dump_state;
    const char *dump_on_exit;
    uint64_t compact_min_bytes; //  a log smaller than this is not compacted

    //  Sockets
    int router_hwm;             //  ZMQ_SNDHWM/RCVHWM of the ROUTER
    //  Replies a client's full pipe refused, and its requests held behind
    //  them (stall.h): bytes per client before it is cut, and for all.
    uint64_t max_client_backlog;
    uint64_t max_backlog;
    int pub_hwm;                //  ZMQ_SNDHWM of the event PUB
    size_t max_subscribers;     //  event (and tap) connections served at once
    int tap_hwm;                //  ZMQ_SNDHWM of the tap (small: drop, never block)

    //  Security (docs/SECURITY.md). curve_keys: directory holding the
    //  broker's own pair (DIR/broker, DIR/broker_secret); curve_allow: the
    //  directory of public certificates it accepts. Both or neither. With
    //  neither, only loopback (and ipc/inproc) endpoints may be bound
    //  unless `insecure` is set.
    const char *curve_keys;
    const char *curve_allow;
    bool insecure;

    //  Prometheus endpoint (metrics_http.h): HOST:PORT; NULL, "" or "off"
    //  serves none.
    const char *metrics_bind;

    //  Backpressure (parking.h): how long a SEND whose `wait_ms` is absent
    //  waits for room in an online recipient's full inbox; 0: INBOX_FULL
    //  at once.
    uint64_t send_wait_ms;
} broker_config_t;

//  The default of send_wait_ms: shorter than the clients' reply timeouts
//  (libparley 3 s, the Python client 5 s), so a client that sends no
//  wait_ms of its own hears back before it gives up.
#define BROKER_SEND_WAIT_MS 2000

void broker_config_defaults (broker_config_t *config);

//  True for endpoints only this machine can reach (ipc, inproc, tcp on
//  127.0.0.0/8, [::1], localhost): the ones plain mode binds without
//  --insecure. Returns NULL if all of the config's endpoints are; else the
//  first one that is not (whatever the CURVE settings).
const char *broker_config_exposed (const broker_config_t *config);

//  Binds the sockets and builds the world. NULL with a sentence in `why`;
//  *network (may be NULL) is set when the failure was an endpoint.
broker_t *broker_new (const broker_config_t *config, bool *network,
                      char *why, size_t why_size);
void broker_destroy (broker_t **self_p);

//  Writes the canonical state (core_dump) to `path` ("-": stdout). -1 with
//  why when it cannot be written.
int broker_dump (broker_t *self, const char *path, char *why, size_t why_size);

//  Runs the loop until SIGINT/SIGTERM (czmq's handler).
//  Returns 0 on a clean stop, -1 on a loop failure.
int broker_run (broker_t *self);

#endif
