// SPDX-License-Identifier: MIT
/*  ctl - what parley-ctl's subcommands share.

    main.c parses the flags, connects (libparley, CURVE with --curve-key)
    and calls one subcommand from its table; each subcommand is one file
    cmd_<name>.c. Every request is libparley's (parley_client_workflow,
    _handover, _checkpoints, _checkpoint, _checkpoint_diff, _resume, _get,
    _agents, _stats, _write, _snapshot) and so are the
    events (parley_client_subscribe, _event).

    parley-ctl leaves nothing registered. Commands marked `observe` only
    read what an observer may read (GET, SNAPSHOT, AGENTS, STATS): they
    say HELLO observe and are never an agent. The others say HELLO as --id
    (with the capability role:<--role> when given) and BYE with forget at
    the end. A command marked `offline` runs when HELLO failed and says so.
    Output goes to stdout, errors to stderr; a subcommand returns an exit
    code (PARLEY_EXIT_*). --json prints one JSON document per command
    (watch and tail, which follow, one per line).
*/
#ifndef PARLEY_CTL_H
#define PARLEY_CTL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "parley/client.h"
#include "wfjson.h"

typedef struct {
    parley_client_t *link;
    const char *const *args;        //  the subcommand's own arguments
    size_t arg_count;
    const char *status;             //  --status (submit)
    const char *reason;             //  --reason (submit)
    bool json;                      //  --json: one JSON document (lines: watch, tail)
    const char *broker;             //  --broker, for messages
    const char *id;                 //  the id this connection says HELLO as
    bool connected;                 //  false: HELLO failed (commands with `offline`)
    bool observer;                  //  connected with HELLO observe: not an agent
    parley_err_t connect_error;     //  why, when not connected
    const char *connect_why;        //  the broker's (or the client's) sentence for it
    uint64_t count;                 //  --count (tail): events before exit, 0 no limit
    int64_t for_ms;                 //  --for-ms (tail): how long, 0 no limit
    uint64_t limit;                 //  --limit (state keys): keys, 0 all
    const char *after;              //  --after (state keys): page after this key
    volatile sig_atomic_t *stop;    //  raised by SIGINT/SIGTERM
} ctl_t;

typedef int (ctl_command_fn) (ctl_t *ctl);

typedef struct {
    const char *name;
    ctl_command_fn *run;
    const char *usage;              //  arguments, for --help
    const char *help;               //  one line
    bool offline;                   //  runs when the broker does not answer (says so)
    bool probe;                     //  connects with few attempts (health)
    bool observe;                   //  reads only: HELLO observe (falls back to an agent
                                    //  HELLO when the key lacks the tap right)
} ctl_command_t;

//  PARLEY_EXIT_OK for PARLEY_OK; else prints why `what` failed (the
//  broker's code and sentence) and returns PARLEY_EXIT_FAILURE.
int ctl_check (ctl_t *ctl, parley_err_t rc, const char *what);
//  A uint argument; false with the error printed.
bool ctl_uint_arg (ctl_t *ctl, size_t index, const char *name, uint64_t *value);
//  Prints a msgpack value (NULL: null) as compact JSON.
void ctl_print_value (const void *value, size_t size);
//  Prints a WORKFLOW_INFO and a checkpoint's fields (--json: each as one
//  JSON object on its line: for commands that print one of them).
void ctl_print_info (ctl_t *ctl, const parley_workflow_t *info);
void ctl_print_checkpoint (ctl_t *ctl, const parley_checkpoint_t *info);
//  (The JSON forms are common/wfjson.h's, shared with parley-web.)
//  A CHECKPOINT_STATE's entries: "key (reducer) = value" lines.
void ctl_print_entries (const parley_checkpoint_state_t *state);
//  What differs from checkpoint `from` to `to` (wfjson_diff): NULL with
//  the broker's error printed unless `quiet` (*rc says the exit code).
json_t *ctl_diff (ctl_t *ctl, uint64_t from, uint64_t to, bool quiet, int *rc);
//  A diff for people: "key (reducer): OLD -> NEW", or three lines when
//  that is long; values cut at `cut` characters (0: never).
void ctl_print_diff (const json_t *diff, size_t cut);

int cmd_workflow (ctl_t *ctl);
int cmd_checkpoints (ctl_t *ctl);
int cmd_show (ctl_t *ctl);
int cmd_diff (ctl_t *ctl);
int cmd_resume (ctl_t *ctl);
int cmd_submit (ctl_t *ctl);
int cmd_watch (ctl_t *ctl);
int cmd_status (ctl_t *ctl);
int cmd_agents (ctl_t *ctl);
int cmd_stats (ctl_t *ctl);
int cmd_state (ctl_t *ctl);
int cmd_health (ctl_t *ctl);
int cmd_tail (ctl_t *ctl);

//  Exit codes of health beyond the shared ones (--help lists them).
#define CTL_EXIT_UNHEALTHY 1        //  the broker answered, but not well
//  A JSON object with a line ended, printed and released.
void ctl_print_json (json_t *json);
//  "1h 02m 03s" for a duration in ms.
void ctl_duration (uint64_t ms, char *buf, size_t size);
//  A STATS field's unit: the protocol's naming rule (parley_stat_unit),
//  except for the fields named before the rule that it gets wrong.
const char *ctl_stat_unit (const parley_stat_t *field);
//  The role an agent plays (its capability role:<name>), or "-".
const char *ctl_role (const parley_agent_t *agent, char *buf, size_t size);

#endif
