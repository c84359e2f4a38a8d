/*  ctl - what parley-ctl's subcommands share.

    main.c parses the flags, connects (libparley, HELLO as --id with the
    capability role:<--role> when given, CURVE with --curve-key) and calls
    one subcommand from its table; each subcommand is one file
    cmd_<name>.c. Every request is libparley's (parley_client_workflow,
    _handover, _checkpoints, _checkpoint, _checkpoint_diff, _resume, _get).
    Output goes to stdout, errors to stderr; a subcommand returns an exit
    code (PARLEY_EXIT_*).
*/
#ifndef PARLEY_CTL_H
#define PARLEY_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "parley/client.h"

typedef struct {
    parley_client_t *link;
    const char *const *args;        //  the subcommand's own arguments
    size_t arg_count;
    const char *status;             //  --status (submit)
    const char *reason;             //  --reason (submit)
    bool json;                      //  --json: JSON lines instead of text
} ctl_t;

typedef int (ctl_command_fn) (ctl_t *ctl);

typedef struct {
    const char *name;
    ctl_command_fn *run;
    const char *usage;              //  arguments, for --help
    const char *help;               //  one line
} ctl_command_t;

//  PARLEY_EXIT_OK for PARLEY_OK; else prints why `what` failed (the
//  broker's code and sentence) and returns PARLEY_EXIT_FAILURE.
int ctl_check (ctl_t *ctl, parley_err_t rc, const char *what);
//  A uint argument; false with the error printed.
bool ctl_uint_arg (ctl_t *ctl, size_t index, const char *name, uint64_t *value);
//  Prints a msgpack value (NULL: null) as compact JSON.
void ctl_print_value (const void *value, size_t size);
//  Prints a WORKFLOW_INFO, a checkpoint's fields, a CHECKPOINT_STATE's
//  entries (--json: the whole reply as one JSON object).
void ctl_print_info (ctl_t *ctl, const parley_workflow_t *info);
void ctl_print_checkpoint (ctl_t *ctl, const parley_checkpoint_info_t *info);
void ctl_print_entries (ctl_t *ctl, const parley_checkpoint_state_t *state);

int cmd_workflow (ctl_t *ctl);
int cmd_checkpoints (ctl_t *ctl);
int cmd_show (ctl_t *ctl);
int cmd_diff (ctl_t *ctl);
int cmd_resume (ctl_t *ctl);
int cmd_submit (ctl_t *ctl);
int cmd_watch (ctl_t *ctl);

#endif
