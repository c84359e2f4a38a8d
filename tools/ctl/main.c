// SPDX-License-Identifier: MIT
/*  parley-ctl - look at and steer a running broker from the command line.

    One subcommand per file (cmd_<name>.c) behind the table below; each
    gets a connected libparley client (HELLO as --id, with the capability
    role:<--role> when given, so a person can hold a human role's turn;
    CURVE with --curve-key and --curve-server-key).

        parley-ctl workflow                 status, holder, turn, revisions
        parley-ctl checkpoints              every kept checkpoint
        parley-ctl show N                   the state at N, and what N changed
        parley-ctl diff N M                 what differs from N to M
        parley-ctl resume N                 fork the run from N
        parley-ctl --role R submit NEXT [OP KEY JSON]...   a person's turn
        parley-ctl watch [KEY]...           follow the turns as they happen
        parley-ctl status                   up or not, uptime, agents, queues, journal
        parley-ctl agents                   every agent: role, step, inbox, model use
        parley-ctl stats                    every STATS field with its unit
        parley-ctl state get|set|keys ...   read and write the shared state
        parley-ctl health                   an exit status for probes
        parley-ctl tail [TOPIC]...          the broker's events as they happen

    status and health also run when the broker does not answer (they say
    so); health connects with two HELLO attempts only, so a probe is fast.
*/
#include <czmq.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "pconfig.h"
#include "pcurve.h"
#include "plog.h"

static const ctl_command_t s_commands [] = {
    { "workflow", cmd_workflow, "", "the workflow's status, holder, turn and revisions",
      false, false, false },
    { "checkpoints", cmd_checkpoints, "", "every kept checkpoint, oldest first", false, false, false },
    { "show", cmd_show, "N", "the shared state at checkpoint N, and what changed from N-1",
      false, false, false },
    { "diff", cmd_diff, "N M", "what differs from checkpoint N to checkpoint M (old and new values)",
      false, false, false },
    { "resume", cmd_resume, "N", "fork the run from checkpoint N", false, false, false },
    { "submit", cmd_submit, "NEXT [OP KEY JSON]...",
      "hold a human role's turn (--role): state updates and the hand-over, atomic", false, false, false },
    { "watch", cmd_watch, "[KEY]...",
      "print each turn (who, what changed, who is next) until the run ends, then KEYs",
      false, false, false },
    { "status", cmd_status, "", "up or down, version, uptime, agents, queues, drops, journal",
      true, false, true },
    { "agents", cmd_agents, "",
      "every agent: role, last seen, step, inbox, unacked, model calls and tokens", false, false, true },
    { "stats", cmd_stats, "", "every STATS field the broker sends, with its unit", false, false, true },
    { "state", cmd_state, "get KEY...",
      "the keys' values as JSON (exit 1 if one does not exist)", false, false, true },
    { "state", cmd_state, "set KEY JSON...", "set keys to JSON values, in one atomic WRITE",
      false, false, false },
    { "state", cmd_state, "keys [PREFIX]", "keys under PREFIX (--limit, --after for paging)",
      false, false, true },
    { "health", cmd_health, "",
      "exit 0 healthy, 1 broker answered but refused or its journal failed, 3 no answer (bounded by --timeout-ms)",
      true, true, true },
    { "tail", cmd_tail, "[TOPIC]...",
      "events by topic prefix (default agent. world. state. workflow.) until --count/--for-ms",
      false, false, false },
};
#define S_COMMANDS (sizeof s_commands / sizeof s_commands [0])

static const pconfig_option_t s_options [] = {
    { "broker", 'b', PCONFIG_STR, "PARLEY_BROKER", "tcp://127.0.0.1:5555", 0, 0, "ENDPOINT",
      "the broker's request endpoint" },
    { "id", 'i', PCONFIG_STR, "PARLEY_CTL_ID", NULL, 0, 0, "NAME",
      "agent id to say HELLO as, forgotten at exit (default: the one id --curve-key names, "
      "else ctl-<pid>)" },
    { "role", 'r', PCONFIG_STR, "PARLEY_ROLE", NULL, 0, 0, "ROLE",
      "the role this connection plays (submit: the human role whose turn it is)" },
    { "status", 0, PCONFIG_STR, NULL, NULL, 0, 0, "STATUS",
      "submit: in_progress, revision, done or failed" },
    { "reason", 0, PCONFIG_STR, NULL, NULL, 0, 0, "TEXT", "submit: why" },
    { "json", 'j', PCONFIG_BOOL, NULL, "false", 0, 0, NULL,
      "print replies as one JSON document (watch, tail: one per line) instead of text" },
    { "timeout-ms", 0, PCONFIG_INT, "PARLEY_REQUEST_TIMEOUT_MS", "3000", 100, 600000, "MS",
      "reply timeout per request" },
    { "curve-key", 0, PCONFIG_STR, "PARLEY_CURVE_KEY", NULL, 0, 0, "FILE",
      "own CURVE key pair (parley-keygen; naming --id, with the admin right for resume)" },
    { "curve-server-key", 0, PCONFIG_STR, "PARLEY_CURVE_SERVER_KEY", NULL, 0, 0, "FILE",
      "the broker's public certificate: CURVE to the broker (docs/SECURITY.md)" },
    { "count", 'n', PCONFIG_INT, NULL, "0", 0, 1e12, "N", "tail: stop after N events (0: no limit)" },
    { "for-ms", 0, PCONFIG_INT, NULL, "0", 0, 1e12, "MS", "tail: stop after MS (0: no limit)" },
    { "limit", 0, PCONFIG_INT, NULL, "0", 0, 1e12, "N", "state keys: at most N keys (0: all)" },
    { "after", 0, PCONFIG_STR, NULL, NULL, 0, 0, "KEY", "state keys: start after KEY (paging)" },
};

static char s_epilogue [4096];
//  SIGINT/SIGTERM, and SIGALRM when the broker does not answer HELLO in
//  time: a client without a connect limit would otherwise retry for ever.
static volatile sig_atomic_t s_stop = 0;
static volatile sig_atomic_t s_timed_out = 0;

static void
s_on_signal (int signum)
{
    s_stop = 1;
    if (signum == SIGALRM)
        s_timed_out = 1;
}

//  The command named by the first argument; of a command with several
//  lines (state get|set|keys), the line whose usage starts with the second.
static const ctl_command_t *
s_lookup (pconfig_t *config, size_t count)
{
    const ctl_command_t *found = NULL;
    const char *verb = count > 1 ? pconfig_positional (config, 1) : "";
    for (size_t i = 0; i < S_COMMANDS; i++) {
        if (strcmp (s_commands [i].name, pconfig_positional (config, 0)) != 0)
            continue;
        size_t len = strlen (verb);
        bool exact = len && strncmp (s_commands [i].usage, verb, len) == 0
                     && (s_commands [i].usage [len] == ' ' || s_commands [i].usage [len] == 0);
        if (!found || exact)
            found = &s_commands [i];
        if (exact)
            break;
    }
    return found;
}

static void
s_build_epilogue (void)
{
    size_t used = (size_t) snprintf (s_epilogue, sizeof s_epilogue, "Commands:\n");
    for (size_t i = 0; i < S_COMMANDS && used < sizeof s_epilogue; i++)
        used += (size_t) snprintf (s_epilogue + used, sizeof s_epilogue - used,
                                   "  %-9s %-22s %s\n", s_commands [i].name,
                                   s_commands [i].usage, s_commands [i].help);
    snprintf (s_epilogue + used, sizeof s_epilogue - used,
              "Every command prints text for people; --json one JSON document (watch\n"
              "and tail, which follow, one JSON value a line). Nothing stays registered:\n"
              "status, agents, stats, state get|keys and health say HELLO observe (or,\n"
              "with a CURVE key without the tap right, HELLO as an agent), the others\n"
              "HELLO as --id (default: the one id --curve-key names, else ctl-<pid>)\n"
              "and BYE with forget at the end: give it an id of its own.\n"
              "Exit codes of commands: 1 also when the broker refuses a request or\n"
              "HELLO (its code and sentence on stderr) or state get finds no key; 3\n"
              "when the broker does not answer HELLO within --timeout-ms (status says\n"
              "\"down\").\n"
              "Docs: docs/OPERATIONS.md; protocol: proto/PROTOCOL.md; docs/SCENARIOS.md.");
}

//  The id a registered connection says HELLO as: --id; else, with a CURVE
//  key that names exactly one id (parley-keygen --agents Operator), that
//  id, the only one the broker lets this key be; else ctl-<pid>.
static void
s_choose_id (pconfig_t *config, char *id, size_t size)
{
    snprintf (id, size, "ctl-%d", (int) getpid ());
    if (pconfig_str (config, "id")) {
        snprintf (id, size, "%s", pconfig_str (config, "id"));
        return;
    }
    const char *key = pconfig_str (config, "curve-key");
    char why [256];
    zcert_t *cert = key && *key ? pcurve_load (key, false, why, sizeof why) : NULL;
    const char *agents = cert ? zcert_meta (cert, "agents") : NULL;
    if (agents && *agents && !strchr (agents, ',') && strcmp (agents, "*") != 0)
        snprintf (id, size, "%s", agents);
    zcert_destroy (&cert);
}

//  A client for `command`, connected (or not: *connected says why); NULL
//  when the key files are unusable (said on stderr).
static parley_client_t *
s_connect (pconfig_t *config, const ctl_command_t *command, const char *id, bool observe,
           parley_err_t *connected)
{
    parley_client_t *link = parley_client_new (pconfig_str (config, "broker"), id);
    if (!link)
        return NULL;
    parley_client_set_observe (link, observe);
    parley_client_set_timeout (link, pconfig_int (config, "timeout-ms"), 1000);
    //  A probe must be fast: two HELLOs, then give up (exit 3).
    if (command->probe) {
        int64_t timeout_ms = pconfig_int (config, "timeout-ms");
        parley_client_set_timeout (link, timeout_ms / 2 > 50 ? timeout_ms / 2 : 50, 200);
        parley_client_set_connect_attempts (link, 2);
        parley_client_set_attempts (link, 1);
    }
    parley_client_set_stop (link, &s_stop);
    char cap [80];
    if (pconfig_str (config, "role") && !observe) {
        snprintf (cap, sizeof cap, "role:%s", pconfig_str (config, "role"));
        parley_client_add_cap (link, cap);
    }
    if (parley_client_set_security (link, pconfig_str (config, "curve-key"),
                                    pconfig_str (config, "curve-server-key"), NULL) != PARLEY_OK) {
        fprintf (stderr, "parley-ctl: %s\n", parley_client_error_text (link));
        parley_client_destroy (&link);
        return NULL;
    }
    alarm ((unsigned) (pconfig_int (config, "timeout-ms") / 1000 + 2));
    *connected = parley_client_connect (link);
    alarm (0);
    if (*connected == PARLEY_ERR_STOPPED && s_timed_out) {
        *connected = PARLEY_ERR_TIMEOUT;        //  our own limit, not an interrupt
        s_stop = 0;
        s_timed_out = 0;
    }
    return link;
}

//  Why the command could not start: the broker refused HELLO (it is up,
//  and said why), or nothing answered.
static void
s_refused (const ctl_t *ctl)
{
    if (ctl->connect_error < PARLEY_ERR_TIMEOUT)
        fprintf (stderr, "parley-ctl: the broker at %s refused HELLO as %s: %s: %s\n",
                 ctl->broker, ctl->id, parley_strerror (ctl->connect_error), ctl->connect_why);
    else
        fprintf (stderr, "parley-ctl: cannot connect to %s: %s%s%s\n", ctl->broker,
                 parley_strerror (ctl->connect_error), *ctl->connect_why ? ": " : "",
                 ctl->connect_why);
}

int
main (int argc, char **argv)
{
    plog_init ("parley-ctl", NULL);
    zsys_handler_set (NULL);
    signal (SIGINT, s_on_signal);
    signal (SIGTERM, s_on_signal);
    signal (SIGALRM, s_on_signal);
    s_build_epilogue ();
    pconfig_t *config = pconfig_new (
        "parley-ctl", "parley-ctl [OPTION]... COMMAND [ARG]...",
        "Look at and steer a running Parley broker: its status, agents, counters,\n"
        "shared state and events, the workflow, its checkpoints, a person's turn.", s_epilogue, s_options, sizeof s_options / sizeof s_options [0]);
    if (!config)
        return PARLEY_EXIT_FAILURE;
    int rc = PARLEY_EXIT_OK;
    if (pconfig_ends (pconfig_parse (config, argc, argv, true), &rc))
        goto done;
    size_t count = pconfig_positional_count (config);
    const ctl_command_t *command = count ? s_lookup (config, count) : NULL;
    if (!command) {
        fprintf (stderr, "parley-ctl: %s%s (try --help)\n",
                 count ? "unknown command " : "a command is needed",
                 count ? pconfig_positional (config, 0) : "");
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    const char *args [64];
    if (count - 1 > sizeof args / sizeof args [0]) {
        fprintf (stderr, "parley-ctl: at most %zu arguments\n", sizeof args / sizeof args [0]);
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    for (size_t i = 1; i < count; i++)
        args [i - 1] = pconfig_positional (config, i);
    char id [80];
    s_choose_id (config, id, sizeof id);
    parley_err_t connected = PARLEY_ERR_SOCKET;
    bool observer = command->observe;
    parley_client_t *link = s_connect (config, command, id, observer, &connected);
    //  A CURVE key without the tap right may not observe: then the reads
    //  go as an agent like the other commands (and are forgotten again).
    if (link && observer
    &&  (connected == PARLEY_ERR_UNAUTHORIZED || connected == PARLEY_ERR_TOO_MANY_AGENTS)) {
        parley_client_destroy (&link);
        observer = false;
        link = s_connect (config, command, id, observer, &connected);
    }
    if (!link) {
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    char why [512];
    snprintf (why, sizeof why, "%s", parley_client_error_text (link));
    ctl_t ctl = { .link = link, .args = args, .arg_count = count - 1,
                  .status = pconfig_str (config, "status"),
                  .reason = pconfig_str (config, "reason"),
                  .json = pconfig_bool (config, "json"),
                  .broker = pconfig_str (config, "broker"), .id = id,
                  .connected = connected == PARLEY_OK, .observer = observer,
                  .connect_error = connected, .connect_why = why,
                  .count = (uint64_t) pconfig_int (config, "count"),
                  .for_ms = pconfig_int (config, "for-ms"),
                  .limit = (uint64_t) pconfig_int (config, "limit"),
                  .after = pconfig_str (config, "after"), .stop = &s_stop };
    if (connected != PARLEY_OK && command->offline)
        rc = command->run (&ctl);
    else
    if (connected != PARLEY_OK) {
        s_refused (&ctl);
        rc = connected < PARLEY_ERR_TIMEOUT ? PARLEY_EXIT_FAILURE : PARLEY_EXIT_NETWORK;
    }
    else {
        rc = command->run (&ctl);
        //  An observer is no agent: closing its connection is all. Any
        //  other connection registered this id for the command's length:
        //  BYE with forget takes it away again, so no parley-ctl ever shows
        //  up as an agent (in AGENTS, a teammate's list, parley-web).
        if (!observer)
            parley_client_bye (link, true);
    }
    parley_client_destroy (&link);
done:
    pconfig_destroy (&config);
    return rc;
}
