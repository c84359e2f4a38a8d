// SPDX-License-Identifier: MIT
/*  pconfig_int - pconfig's insides, shared by pconfig.c (parsing) and
    pconfig_help.c (--help). Not for use outside common/.
*/
#ifndef PARLEY_PCONFIG_INT_H
#define PARLEY_PCONFIG_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pconfig.h"

typedef enum {
    SRC_UNSET = 0, SRC_DEFAULT, SRC_FILE, SRC_ENV, SRC_FLAG
} pconfig_source_t;

typedef struct {
    char *text;             //  the value as given, owned
    int64_t i;
    double d;
    bool b;
} pconfig_value_t;

typedef struct {
    const pconfig_option_t *opt;
    pconfig_source_t source;
    pconfig_value_t value;
    bool in_file;           //  seen in the config file, to catch duplicates
} pconfig_slot_t;

struct _pconfig_t {
    char *program;
    char *usage;
    char *description;
    char *epilogue;
    pconfig_slot_t *slots;  //  the caller's options, then the built-ins
    size_t count;
    size_t user_count;
    char **positional;      //  copies of the positional arguments
    size_t positional_count;
    FILE *out;
    FILE *err;
    char error [512];
    bool parsed;
};

//  True if `slot` is the built-in option `name` (help, version, config...).
bool pconfig_slot_is_builtin (pconfig_t *self, pconfig_slot_t *slot, const char *name);

#endif
