// SPDX-License-Identifier: MIT
/*  parley-web - a live view of a Parley team in a web browser.

    A client of the broker through libparley (web_live), an HTTP server on
    libmicrohttpd (web_server) and one page built into the binary
    (web_assets). What the page shows, and how it is kept up to date, is
    in docs/WEB.md. With --replay it serves a parley-tap recording instead
    of a broker, with a time slider.
*/
#include <czmq.h>
#include <sys/socket.h>
#include "pconfig.h"
#include "plog.h"
#include "tap_replay.h"
#include "web_actions.h"
#include "web_feed.h"
#include "web_hub.h"
#include "web_live.h"
#include "web_operator.h"
#include "web_server.h"
#include "web_workflow.h"

static const pconfig_option_t s_options [] = {
    { "broker", 'b', PCONFIG_STR, "PARLEY_BROKER", "tcp://127.0.0.1:5555", 0, 0, "ENDPOINT",
      "broker request endpoint (HELLO observe: the view is not an agent)" },
    { "bind", 0, PCONFIG_STR, "PARLEY_WEB_BIND", "127.0.0.1:8080", 0, 0, "HOST:PORT",
      "where the page is served; loopback by default (port 0: any free port)" },
    { "replay", 'R', PCONFIG_STR, NULL, NULL, 0, 0, "FILE",
      "serve a parley-tap --record FILE with a time slider instead of a broker" },
    { "allow-actions", 0, PCONFIG_BOOL, "PARLEY_WEB_ALLOW_ACTIONS", "false", 0, 0, NULL,
      "let the page reset the world, set state keys, resume the workflow from a checkpoint "
      "and submit a person's turn (default: read-only)" },
    { "operator-id", 0, PCONFIG_STR, "PARLEY_WEB_OPERATOR_ID", NULL, 0, 0, "NAME",
      "the id of the short registered connections for the workflow's reads and the actions, "
      "forgotten after each (default: the one id --curve-key names, else web-operator-<pid>)" },
    { "curve-key", 0, PCONFIG_STR, "PARLEY_CURVE_KEY", NULL, 0, 0, "FILE",
      "own CURVE key pair (with the tap right; agent for the workflow panel; admin for a "
      "world reset and a resume)" },
    { "curve-server-key", 0, PCONFIG_STR, "PARLEY_CURVE_SERVER_KEY", NULL, 0, 0, "FILE",
      "the broker's public certificate: CURVE to the broker (docs/SECURITY.md)" },
    { "connect-timeout-ms", 0, PCONFIG_INT, "PARLEY_CONNECT_TIMEOUT_MS", "5000", 1, 1e9, "MS",
      "how long to wait for the broker's WELCOME and each reply" },
    { "agents-ms", 0, PCONFIG_INT, "PARLEY_WEB_AGENTS_MS", "1000", 100, 1e9, "MS",
      "how often to ask AGENT_LIST (model calls, inbox depth)" },
    { "history", 0, PCONFIG_INT, "PARLEY_WEB_HISTORY", "20000", 100, 10000000, "EVENTS",
      "events kept for pages that fall behind, and frames kept for full bodies" },
    { "hwm", 0, PCONFIG_INT, NULL, "100000", 1, 1e9, "FRAMES",
      "receive queue of the tap socket; beyond it frames are dropped (and shown)" },
    { "ready-file", 0, PCONFIG_STR, "PARLEY_WEB_READY_FILE", NULL, 0, 0, "FILE",
      "once serving, write 'url=http://HOST:PORT/' to FILE" },
};
#define OPTION_COUNT (sizeof s_options / sizeof s_options [0])

static const char *s_epilogue =
"The page: the world grid with each agent's position, trail and what has been\n"
"explored; each agent's caps, step, last action, inbox depth, model calls and\n"
"tokens; the message timeline (filter by agent and channel, heartbeats on\n"
"demand, click for the full frame); the shared state as a tree; the workflow:\n"
"its holder (a person's turn: waiting for a person), checkpoints, each one's\n"
"changes and the difference between two; with --allow-actions, resume and a\n"
"person's turn. Updates are Server-Sent Events on /events; /?static=1 renders\n"
"once from /api/model (for screenshots). Routes and limits: docs/WEB.md.\n"
"Exit codes: 0 stopped by SIGINT/SIGTERM (or the replay served until then),\n"
"1 a corrupt --replay file or a broker that refused the view, 2 usage,\n"
"3 the HTTP port cannot be bound or the broker cannot be reached.";

//  Reads the whole recording into the hub; the page replays it.
static int
s_replay (const char *path, web_hub_t *hub, const char *url)
{
    char why [512];
    tap_replay_t *replay = tap_replay_new (path, why, sizeof why);
    if (!replay) {
        plog_error ("%s", why);
        return PARLEY_EXIT_FAILURE;
    }
    web_hub_set_info (hub, json_pack ("{s:s,s:s,s:s,s:b}", "mode", "replay", "file", path,
                                      "url", url, "allow_actions", false));
    web_feed_t *feed = web_feed_new (hub);
    int rc = PARLEY_EXIT_OK;
    while (true) {
        const void *data;
        size_t size;
        int got = tap_replay_next (replay, &data, &size, why, sizeof why);
        if (got == 0)
            break;
        if (got < 0) {
            plog_error ("%s", why);
            rc = PARLEY_EXIT_FAILURE;
            break;
        }
        web_feed_frame (feed, data, size);
    }
    uint64_t frames = web_feed_frames (feed);
    web_hub_event (hub, "end", json_pack ("{s:I}", "frames", (json_int_t) frames));
    plog_info ("%s: %" PRIu64 " frames", path, frames);
    web_feed_destroy (&feed);
    tap_replay_destroy (&replay);
    return rc;
}

static bool
s_ready (const char *path, const char *url)
{
    char tmp [4096];
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    FILE *file = fopen (tmp, "w");
    if (!file || fprintf (file, "url=%s\n", url) < 0 || fclose (file) != 0
    ||  rename (tmp, path) != 0) {
        plog_error ("cannot write --ready-file %s: %s", path, strerror (errno));
        return false;
    }
    return true;
}

static int
s_run (pconfig_t *config)
{
    const char *replay = pconfig_str (config, "replay");
    bool allow = pconfig_bool (config, "allow-actions");
    if (replay && allow) {
        fprintf (stderr, "parley-web: --allow-actions makes no sense with --replay\n");
        return PARLEY_EXIT_USAGE;
    }
    char why [600];
    struct sockaddr_storage address;
    if (!web_server_parse_bind (pconfig_str (config, "bind"), &address, why, sizeof why)) {
        fprintf (stderr, "parley-web: %s\n", why);
        return PARLEY_EXIT_USAGE;
    }
    int64_t history = pconfig_int (config, "history");
    //  What the observer may not do (the workflow's reads, the actions)
    //  goes through the operator's short registered connections.
    web_operator_t *operator_ = NULL;
    web_workflow_t *workflow = NULL;
    web_actions_t *actions = NULL;
    if (!replay) {
        operator_ = web_operator_new (pconfig_str (config, "broker"), pconfig_str (config, "curve-key"),
                                      pconfig_str (config, "curve-server-key"),
                                      pconfig_str (config, "operator-id"),
                                      pconfig_int (config, "connect-timeout-ms"), why, sizeof why);
        if (!operator_) {
            plog_error ("%s", why);
            return PARLEY_EXIT_USAGE;
        }
        workflow = web_workflow_new (operator_);
        actions = allow? web_actions_new (operator_): NULL;
    }
    //  A replay keeps every event of the file (the page needs them all).
    web_hub_t *hub = web_hub_new (replay? (size_t) 10000000: (size_t) history, replay != NULL);
    web_server_t *server = web_server_new (pconfig_str (config, "bind"), hub,
                                           actions? web_actions_run: NULL, actions, why, sizeof why);
    int rc = PARLEY_EXIT_OK;
    if (!server) {
        plog_error ("%s", why);
        rc = PARLEY_EXIT_NETWORK;
        goto done;
    }
    if (workflow)
        web_server_set_reads (server, web_workflow_serve, workflow);
    const char *bind = pconfig_str (config, "bind");
    char host [256];
    snprintf (host, sizeof host, "%.*s", (int) (strrchr (bind, ':') - bind), bind);
    if (streq (host, "0.0.0.0") || streq (host, "[::]"))
        snprintf (host, sizeof host, "127.0.0.1");
    char url [320];
    snprintf (url, sizeof url, "http://%s:%u/", host, (unsigned) web_server_port (server));
    plog_info ("serving %s (%s)", url, allow? "actions allowed": "read-only");
    const char *ready = pconfig_str (config, "ready-file");
    if (ready && !s_ready (ready, url)) {
        rc = PARLEY_EXIT_FAILURE;
        goto done;
    }
    if (replay) {
        rc = s_replay (replay, hub, url);
        while (rc == PARLEY_EXIT_OK && !zsys_interrupted)
            zclock_sleep (100);
    }
    else {
        web_live_config_t live = {
            .broker = pconfig_str (config, "broker"),
            .curve_key = pconfig_str (config, "curve-key"),
            .curve_server_key = pconfig_str (config, "curve-server-key"),
            .connect_timeout_ms = pconfig_int (config, "connect-timeout-ms"),
            .agents_ms = pconfig_int (config, "agents-ms"),
            .hwm = (int) pconfig_int (config, "hwm"),
            .bind_url = url,
            .allow_actions = allow,
            .workflow = workflow,
            .operator_id = web_operator_id (operator_),
        };
        rc = web_live_run (&live, hub);
    }
done:
    web_hub_stop (hub);
    web_server_destroy (&server);
    web_hub_destroy (&hub);
    web_actions_destroy (&actions);
    web_workflow_destroy (&workflow);
    web_operator_destroy (&operator_);
    return rc;
}

int
main (int argc, char **argv)
{
    plog_init ("parley-web", NULL);
    zsys_init ();                       //  installs the SIGINT/SIGTERM handler
    pconfig_t *config = pconfig_new ("parley-web",
        "parley-web [--broker ENDPOINT | --replay FILE] [--bind HOST:PORT] [OPTIONS]",
        "Serves a live view of a Parley team to a web browser: the world, the agents,\n"
        "the messages, the shared state and the workflow, updated as they change.",
        s_epilogue, s_options, OPTION_COUNT);
    int rc = PARLEY_EXIT_OK;
    if (!pconfig_ends (pconfig_parse (config, argc, argv, false), &rc))
        rc = s_run (config);
    pconfig_destroy (&config);
    return rc;
}
