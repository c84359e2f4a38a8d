/*  ctl - what parley-ctl's subcommands share.

    main.c parses the flags, connects (brokerlink, HELLO as --id with the
    capability role:<--role> when given) and calls one subcommand from its
    table; each subcommand is one file cmd_<name>.c. Requests are built in
    agent/workflow_requests.c only. Output goes to stdout, errors to stderr;
    a subcommand returns an exit code (PARLEY_EXIT_*).
*/
#ifndef PARLEY_CTL_H
#define PARLEY_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "brokerlink.h"
#include "pmsg.h"

typedef struct {
    brokerlink_t *link;
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

//  The reply, or NULL with the error printed (an ERROR reply is printed
//  and destroyed too). `what` names the request in messages.
pmsg_t *ctl_expect (pmsg_t *reply, pmsg_type_t type, const char *what, const char *err);
//  A uint argument; false with the error printed.
bool ctl_uint_arg (ctl_t *ctl, size_t index, const char *name, uint64_t *value);
//  Prints a msgpack value as compact JSON.
void ctl_print_value (const msgpack_object *value);
//  Prints WORKFLOW_INFO / CHECKPOINT_STATE / a checkpoint_info record.
void ctl_print_info (ctl_t *ctl, const pmsg_t *info);
void ctl_print_checkpoint (ctl_t *ctl, const msgpack_object *info);
void ctl_print_entries (ctl_t *ctl, const pmsg_t *state);

int cmd_workflow (ctl_t *ctl);
int cmd_checkpoints (ctl_t *ctl);
int cmd_show (ctl_t *ctl);
int cmd_diff (ctl_t *ctl);
int cmd_resume (ctl_t *ctl);
int cmd_submit (ctl_t *ctl);
int cmd_watch (ctl_t *ctl);

#endif
