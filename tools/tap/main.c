// SPDX-License-Identifier: MIT
/*  parley-tap - watch a Parley broker's traffic, live or from a recording.

    The broker mirrors every frame it receives and sends, and every event it
    publishes, on its tap PUB socket as TAP {tseq, ts, dir, peer, body}. This
    tool subscribes, decodes each TAP frame and the Parley frame inside it,
    and prints one line per frame (or JSON lines, or a live --stats table).
    It can save the raw frames (--record) and print them later (--replay).

    Flow: options -> a source (SUB socket or record file) -> s_handle() for
    each frame: record, detect tseq gaps, filter, count, print. The tap never
    slows the broker: the broker's PUB drops when we fall behind, and we
    report the drops from the gaps in tseq.
*/
#include <czmq.h>
#include <unistd.h>
#include "pclock.h"
#include "pconfig.h"
#include "plog.h"
#include "pmsg.h"
#include "tap_discover.h"
#include "pcurve.h"
#include "tap_filter.h"
#include "tap_frame.h"
#include "tap_json.h"
#include "tap_record.h"
#include "tap_replay.h"
#include "tap_stats.h"
#include "tap_text.h"

static const pconfig_option_t s_options [] = {
    { "broker", 'b', PCONFIG_STR, "PARLEY_BROKER", "tcp://127.0.0.1:5555", 0, 0, "ENDPOINT",
      "broker request endpoint, asked (HELLO observe) for its tap endpoint" },
    { "tap", 't', PCONFIG_STR, "PARLEY_TAP", NULL, 0, 0, "ENDPOINT",
      "connect to this tap endpoint directly (wins over --broker)" },
    { "json", 'j', PCONFIG_BOOL, NULL, NULL, 0, 0, NULL,
      "print JSON lines (one object per line, for jq) instead of text" },
    { "agent", 'a', PCONFIG_STR, NULL, NULL, 0, 0, "NAME[,NAME]",
      "only frames from/to these agents (repeatable)" },
    { "type", 'T', PCONFIG_STR, NULL, NULL, 0, 0, "TYPE[,TYPE]",
      "only these message types, e.g. SEND,MAIL (repeatable)" },
    { "channel", 'C', PCONFIG_STR, NULL, NULL, 0, 0, "NAME[,NAME]",
      "only frames naming these channels (repeatable)" },
    { "full", 'f', PCONFIG_BOOL, NULL, NULL, 0, 0, NULL,
      "show every message body whole: text output adds one indented line per message of a "
      "SEND or MAIL (summaries cut bodies at 60 bytes); --json always carries whole bodies in msg" },
    { "stats", 's', PCONFIG_BOOL, NULL, NULL, 0, 0, NULL,
      "show a table of messages/s per type and per agent, refreshed each second" },
    { "record", 'r', PCONFIG_STR, NULL, NULL, 0, 0, "FILE",
      "also save every received frame (before filters) to FILE" },
    { "replay", 'R', PCONFIG_STR, NULL, NULL, 0, 0, "FILE",
      "print the frames saved in FILE instead of connecting" },
    { "count", 'n', PCONFIG_INT, NULL, "0", 0, 1e12, "N",
      "exit after N shown frames (0: no limit)" },
    { "timeout-ms", 0, PCONFIG_INT, "PARLEY_TAP_TIMEOUT_MS", "0", 0, 1e12, "MS",
      "exit after MS milliseconds (0: no limit); failure if --count was not reached" },
    { "connect-timeout-ms", 0, PCONFIG_INT, "PARLEY_CONNECT_TIMEOUT_MS", "5000", 1, 1e9, "MS",
      "how long to wait for the broker's WELCOME" },
    { "curve-key", 0, PCONFIG_STR, "PARLEY_CURVE_KEY", NULL, 0, 0, "FILE",
      "own CURVE key pair, with the tap right (parley-keygen --rights tap)" },
    { "curve-server-key", 0, PCONFIG_STR, "PARLEY_CURVE_SERVER_KEY", NULL, 0, 0, "FILE",
      "the broker's public certificate: CURVE to the broker (docs/SECURITY.md)" },
    { "hwm", 0, PCONFIG_INT, NULL, "100000", 1, 1e9, "FRAMES",
      "receive queue of the tap socket; beyond it frames are dropped (and counted)" },
};
#define OPTION_COUNT (sizeof s_options / sizeof s_options [0])

static const char *s_epilogue =
"Output: one line per frame: time (UTC), direction (in = received by the broker,\n"
"out = sent by it, pub = published event), peer (agent id, hex connection id\n"
"before HELLO, or the event topic), type and a summary. '#name' is a channel.\n"
"A body that does not decode shows '!ERROR_NAME' as its type. Gaps in the tap\n"
"sequence print '-- dropped N frames'. Totals go to stderr at exit (Ctrl-C).\n"
"--record saves raw TAP frames in the format documented in docs/TAP.md (magic\n"
"\"PARLTAP1\", then [u32 length][u32 crc32][frame] records, big-endian).\n"
"Exit code 1 also means: a corrupt or truncated --replay file, a --record\n"
"write error, or --timeout-ms reached before --count frames.";

typedef struct {
    pconfig_t *config;
    tap_filter_t *filter;
    tap_stats_t *stats;
    tap_record_t *record;
    bool json;
    bool full;                  //  --full: whole bodies under text lines
    bool stats_mode;
    bool tty;
    uint64_t count;             //  0 = unlimited
    int64_t timeout_ms;
    bool done;                  //  --count reached
    bool failed;
} s_app_t;

//  Frames: record, find gaps, filter, count, print.
static void
s_handle (s_app_t *app, const void *data, size_t size)
{
    char why [300];
    if (app->record && !tap_record_write (app->record, data, size, why, sizeof why)) {
        plog_error ("%s", why);
        app->failed = app->done = true;
        return;
    }
    tap_frame_t *frame = tap_frame_new (data, size);
    if (tap_frame_ok (frame)) {
        uint64_t after = 0;
        uint64_t missing = tap_stats_sequence (app->stats, tap_frame_tseq (frame), &after);
        if (missing && !app->stats_mode) {
            if (app->json)
                tap_json_print_gap (stdout, after, tap_frame_tseq (frame));
            else
                tap_text_print_gap (stdout, after, tap_frame_tseq (frame));
        }
    }
    bool shown = tap_filter_match (app->filter, frame);
    tap_stats_count (app->stats, frame, shown);
    if (shown && !app->stats_mode) {
        if (app->json)
            tap_json_print (stdout, frame);
        else {
            tap_text_print (stdout, frame);
            if (app->full)
                tap_text_print_bodies (stdout, frame);
        }
    }
    if (shown && app->count && tap_stats_shown (app->stats) >= app->count)
        app->done = true;
    tap_frame_destroy (&frame);
}

static void
s_second (s_app_t *app)
{
    tap_stats_tick (app->stats);
    if (app->stats_mode)
        tap_stats_print_table (app->stats, stdout, app->tty, true);
    char why [300];
    if (app->record && !tap_record_flush (app->record, why, sizeof why)) {
        plog_error ("%s", why);
        app->failed = app->done = true;
    }
}

static zsock_t *
s_connect (s_app_t *app, const char *endpoint)
{
    zsock_t *sub = zsock_new (ZMQ_SUB);
    zsock_set_linger (sub, 0);
    zsock_set_rcvhwm (sub, (int) pconfig_int (app->config, "hwm"));
    zsock_set_maxmsgsize (sub, TAP_RECORD_MAX);
    zsock_set_subscribe (sub, "tap.");
    char why [512];
    if (pcurve_client (sub, pconfig_str (app->config, "curve-key"),
                       pconfig_str (app->config, "curve-server-key"), why, sizeof why)) {
        plog_error ("%s", why);
        zsock_destroy (&sub);
        return NULL;
    }
    if (zsock_connect (sub, "%s", endpoint) != 0) {
        plog_error ("cannot connect to tap %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sub);
    }
    return sub;
}

//  Live: until Ctrl-C, --count or --timeout-ms.
static int
s_run_live (s_app_t *app, const char *endpoint)
{
    zsock_t *sub = s_connect (app, endpoint);
    if (!sub)
        return PARLEY_EXIT_NETWORK;
    plog_info ("tapping %s", endpoint);
    zpoller_t *poller = zpoller_new (sub, NULL);
    int64_t start = pclock_mono_ms ();
    int64_t next_second = start + 1000;
    while (!app->done && !zsys_interrupted) {
        int64_t now = pclock_mono_ms ();
        if (app->timeout_ms && now - start >= app->timeout_ms)
            break;
        if (now >= next_second) {
            s_second (app);
            next_second += 1000;
            continue;
        }
        int64_t wait = next_second - now;
        if (app->timeout_ms && start + app->timeout_ms - now < wait)
            wait = start + app->timeout_ms - now;
        if (!zpoller_wait (poller, (int) wait))
            continue;
        zmsg_t *msg = zmsg_recv (sub);
        if (!msg)
            continue;
        zframe_t *body = zmsg_last (msg);       //  frame 1 is the topic
        if (body)
            s_handle (app, zframe_data (body), zframe_size (body));
        zmsg_destroy (&msg);
    }
    //  The last table, so even a run shorter than a second shows one.
    if (app->stats_mode)
        tap_stats_print_table (app->stats, stdout, false, true);
    zpoller_destroy (&poller);
    zsock_destroy (&sub);
    return PARLEY_EXIT_OK;
}

static int
s_run_replay (s_app_t *app, const char *path)
{
    char why [512];
    tap_replay_t *replay = tap_replay_new (path, why, sizeof why);
    if (!replay) {
        plog_error ("%s", why);
        return PARLEY_EXIT_FAILURE;
    }
    int rc = PARLEY_EXIT_OK;
    while (!app->done && !zsys_interrupted) {
        const void *data;
        size_t size;
        int got = tap_replay_next (replay, &data, &size, why, sizeof why);
        if (got == 0)
            break;
        if (got < 0) {
            fflush (stdout);
            plog_error ("%s", why);
            rc = PARLEY_EXIT_FAILURE;
            break;
        }
        s_handle (app, data, size);
    }
    if (app->stats_mode)
        tap_stats_print_table (app->stats, stdout, false, false);
    tap_replay_destroy (&replay);
    return rc;
}

//  --agent, --type and --channel may be repeated; pconfig keeps the last
//  value of a flag, so repeated ones are joined here into one comma list
//  ("--type SEND --type MAIL" -> "--type=SEND,MAIL"). Other arguments are
//  passed through in order. Returns a new argv (strings owned by `keep`).
static bool
s_repeatable (const char *arg, const char **name, const char **value, bool *takes_next)
{
    static const char *longs [] = { "agent", "type", "channel" };
    static const char shorts [] = { 'a', 'T', 'C' };
    *value = NULL;
    *takes_next = false;
    for (int i = 0; i < 3; i++) {
        size_t len = strlen (longs [i]);
        if (arg [0] == '-' && arg [1] == '-' && strncmp (arg + 2, longs [i], len) == 0
        &&  (arg [2 + len] == 0 || arg [2 + len] == '=')) {
            *name = longs [i];
            *value = arg [2 + len] == '='? arg + 3 + len: NULL;
            *takes_next = arg [2 + len] == 0;
            return true;
        }
        if (arg [0] == '-' && arg [1] == shorts [i]) {
            *name = longs [i];
            *value = arg [2]? arg + 2: NULL;
            *takes_next = arg [2] == 0;
            return true;
        }
    }
    return false;
}

static char **
s_merge_repeated (int argc, char **argv, int *argc_out, zlistx_t *keep)
{
    char **out = (char **) zmalloc ((size_t) (argc + 4) * sizeof (char *));
    int n = 0;
    out [n++] = argv [0];
    zhashx_t *lists = zhashx_new ();        //  name -> comma list (owned by keep)
    for (int i = 1; i < argc; i++) {
        const char *name, *value;
        bool takes_next;
        if (streq (argv [i], "--")) {
            for (; i < argc; i++)
                out [n++] = argv [i];
            break;
        }
        if (!s_repeatable (argv [i], &name, &value, &takes_next)) {
            out [n++] = argv [i];
            continue;
        }
        if (takes_next && i + 1 < argc)
            value = argv [++i];
        if (!value) {                       //  let pconfig report "needs a value"
            out [n++] = argv [i];
            continue;
        }
        const char *old = (const char *) zhashx_lookup (lists, name);
        char *joined = old? zsys_sprintf ("%s,%s", old, value): strdup (value);
        zlistx_add_end (keep, joined);
        zhashx_update (lists, name, joined);
    }
    for (const char *list = (const char *) zhashx_first (lists); list;
         list = (const char *) zhashx_next (lists)) {
        char *flag = zsys_sprintf ("--%s=%s", (const char *) zhashx_cursor (lists), list);
        zlistx_add_end (keep, flag);
        out [n++] = flag;
    }
    zhashx_destroy (&lists);
    *argc_out = n;
    return out;
}

static bool
s_setup_filter (s_app_t *app)
{
    char why [300];
    const char *list;
    app->filter = tap_filter_new ();
    if ((list = pconfig_str (app->config, "agent"))
    &&  !tap_filter_add_agents (app->filter, list, why, sizeof why))
        goto err;
    if ((list = pconfig_str (app->config, "type"))
    &&  !tap_filter_add_types (app->filter, list, why, sizeof why))
        goto err;
    if ((list = pconfig_str (app->config, "channel"))
    &&  !tap_filter_add_channels (app->filter, list, why, sizeof why))
        goto err;
    return true;
err:
    fprintf (stderr, "parley-tap: %s\nTry 'parley-tap --help' for more information.\n", why);
    return false;
}

static int
s_run (s_app_t *app)
{
    const char *replay = pconfig_str (app->config, "replay");
    const char *record = pconfig_str (app->config, "record");
    if (replay && record) {
        fprintf (stderr, "parley-tap: --record and --replay cannot be combined\n");
        return PARLEY_EXIT_USAGE;
    }
    if (!s_setup_filter (app))
        return PARLEY_EXIT_USAGE;
    if (replay)
        return s_run_replay (app, replay);

    char endpoint [512];
    char why [600];
    const char *tap = pconfig_str (app->config, "tap");
    if (tap && streq (tap, "off")) {
        //  PARLEY_TAP=off is how a broker's environment disables its tap.
        fprintf (stderr, "parley-tap: the tap endpoint is \"off\" (from %s): that broker "
                 "does not mirror its traffic\n", pconfig_source (app->config, "tap"));
        return PARLEY_EXIT_USAGE;
    }
    if (tap) {
        snprintf (endpoint, sizeof endpoint, "%s", tap);
        tap_discover_fix_wildcard (endpoint, sizeof endpoint, NULL);
    }
    else {
        const char *broker = pconfig_str (app->config, "broker");
        int rc = tap_discover (broker, pconfig_str (app->config, "curve-key"),
                               pconfig_str (app->config, "curve-server-key"), pconfig_int (app->config, "connect-timeout-ms"),
                               endpoint, sizeof endpoint, why, sizeof why);
        //  SIGINT/SIGTERM while the broker has not answered yet is an
        //  orderly stop the user asked for, not a network failure.
        if (zsys_interrupted)
            return PARLEY_EXIT_OK;
        if (rc != PARLEY_EXIT_OK) {
            plog_error ("%s", why);
            return rc;
        }
    }
    if (record && !(app->record = tap_record_new (record, why, sizeof why))) {
        plog_error ("%s", why);
        return PARLEY_EXIT_FAILURE;
    }
    return s_run_live (app, endpoint);
}

int
main (int argc, char **argv)
{
    plog_init ("parley-tap", NULL);
    zsys_init ();                       //  installs the SIGINT/SIGTERM handler
    zlistx_t *keep = zlistx_new ();
    zlistx_set_destructor (keep, (zlistx_destructor_fn *) zstr_free);
    int merged_argc = 0;
    char **merged = s_merge_repeated (argc, argv, &merged_argc, keep);

    s_app_t app = { 0 };
    app.config = pconfig_new ("parley-tap",
        "parley-tap [--broker ENDPOINT | --tap ENDPOINT | --replay FILE] [OPTIONS]",
        "Shows the traffic of a Parley broker: every request and reply it handles and\n"
        "every event it publishes, decoded, one line per frame.",
        s_epilogue, s_options, OPTION_COUNT);
    int rc = PARLEY_EXIT_OK;
    if (pconfig_ends (pconfig_parse (app.config, merged_argc, merged, false), &rc))
        goto done;
    setvbuf (stdout, NULL, _IOLBF, 0);
    app.json = pconfig_bool (app.config, "json");
    app.full = pconfig_bool (app.config, "full");
    app.stats_mode = pconfig_bool (app.config, "stats");
    app.tty = isatty (STDOUT_FILENO);
    app.count = (uint64_t) pconfig_int (app.config, "count");
    app.timeout_ms = pconfig_int (app.config, "timeout-ms");
    app.stats = tap_stats_new ();
    int64_t start = pclock_mono_ms ();

    rc = s_run (&app);
    if (rc == PARLEY_EXIT_OK && app.failed)
        rc = PARLEY_EXIT_FAILURE;
    if (rc == PARLEY_EXIT_OK && app.count && !app.done && !zsys_interrupted) {
        plog_error ("stopped after %" PRIu64 " of %" PRIu64 " frames (--timeout-ms or end of replay)",
                    tap_stats_shown (app.stats), app.count);
        rc = PARLEY_EXIT_FAILURE;
    }
    fflush (stdout);
    if (rc != PARLEY_EXIT_USAGE)
        tap_stats_print_totals (app.stats, stderr, (double) (pclock_mono_ms () - start) / 1000.0);
    tap_record_destroy (&app.record);
    tap_stats_destroy (&app.stats);
    tap_filter_destroy (&app.filter);
done:
    pconfig_destroy (&app.config);
    free (merged);
    zlistx_destroy (&keep);
    return rc;
}
