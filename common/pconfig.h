// SPDX-License-Identifier: MIT
/*  pconfig - one place for every setting of a binary.

    Precedence, highest first: command-line flag, PARLEY_* environment
    variable, config file (ZPL, czmq's zconfig format, given by --config or
    PARLEY_CONFIG), built-in default. Each binary declares its options once in
    a table; the same table drives parsing, validation and --help, so the help
    text cannot drift from what the code accepts.

    Every binary gets --help, --version, --config and --log-level for free;
    --log-level/PARLEY_LOG is applied to plog during pconfig_parse().

    Values are validated at parse time: an integer flag given "12x", out of
    its [min, max] range, or an unknown flag is a usage error, reported with
    the flag's name, and the binary exits with PARLEY_EXIT_USAGE.
*/
#ifndef PARLEY_PCONFIG_H
#define PARLEY_PCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

//  --version prints "PROGRAM PARLEY_VERSION".
#define PARLEY_VERSION "0.1.0"

//  Exit codes shared by every Parley binary; --help lists them.
#define PARLEY_EXIT_OK       0   //  normal end
#define PARLEY_EXIT_FAILURE  1   //  runtime failure (see the log)
#define PARLEY_EXIT_USAGE    2   //  bad flag, variable or config file
#define PARLEY_EXIT_NETWORK  3   //  could not bind or connect an endpoint

typedef enum {
    PCONFIG_STR,
    PCONFIG_INT,        //  int64, checked against [min, max]
    PCONFIG_BOOL,       //  flag alone = true; "true/false/1/0/yes/no/on/off"
    PCONFIG_DOUBLE      //  checked against [min, max]
} pconfig_type_t;

typedef struct {
    const char *name;       //  long flag without "--", e.g. "router"
    char short_name;        //  0 for none
    pconfig_type_t type;
    const char *env;        //  e.g. "PARLEY_ROUTER", or NULL
    const char *fallback;   //  default as text, or NULL for "unset"
    double min, max;        //  for INT and DOUBLE; ignored when min == max
    const char *metavar;    //  e.g. "ENDPOINT", shown in --help
    const char *help;       //  one line
} pconfig_option_t;

typedef struct _pconfig_t pconfig_t;

typedef enum {
    PCONFIG_PARSED = 0,     //  go on
    PCONFIG_EXIT_OK,        //  --help or --version was printed: exit 0
    PCONFIG_EXIT_USAGE      //  error printed to stderr: exit PARLEY_EXIT_USAGE
} pconfig_result_t;

//  `options` must outlive the object. `usage` is the synopsis line,
//  `description` a paragraph for --help, `epilogue` (may be NULL) is printed
//  after the option list (exit codes are always printed).
pconfig_t *pconfig_new (const char *program, const char *usage,
                        const char *description, const char *epilogue,
                        const pconfig_option_t *options, size_t count);
void pconfig_destroy (pconfig_t **self_p);

//  Reads argv, then the environment, then the config file. Positional
//  arguments are kept (pconfig_positional) only when `positional_ok`.
pconfig_result_t pconfig_parse (pconfig_t *self, int argc, char **argv,
                                bool positional_ok);
//  True when `result` ends the program (--help or --version printed, or
//  an error), with its exit code in *rc (PARLEY_EXIT_OK or
//  PARLEY_EXIT_USAGE); false, *rc untouched, when it goes on.
bool pconfig_ends (pconfig_result_t result, int *rc);

const char *pconfig_str (pconfig_t *self, const char *name);    //  NULL if unset
int64_t pconfig_int (pconfig_t *self, const char *name);
bool pconfig_bool (pconfig_t *self, const char *name);
double pconfig_double (pconfig_t *self, const char *name);
//  True when the value came from a flag, variable or file, not the default.
bool pconfig_is_set (pconfig_t *self, const char *name);
//  Where the value came from: "flag", "env", "file", "default" or "unset".
const char *pconfig_source (pconfig_t *self, const char *name);
size_t pconfig_positional_count (pconfig_t *self);
const char *pconfig_positional (pconfig_t *self, size_t index);

void pconfig_print_help (pconfig_t *self, FILE *out);

//  Where --help/--version (out) and usage errors (err) go; stdout and
//  stderr unless changed. Tests capture them with open_memstream().
void pconfig_set_streams (pconfig_t *self, FILE *out, FILE *err);
//  The last usage error without the program prefix, or NULL.
const char *pconfig_error (pconfig_t *self);

#endif
