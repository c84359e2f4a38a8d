// SPDX-License-Identifier: MIT
/*  pconfig_help - prints --help from the option table.

    Kept apart from the parser so each file has one concern. The layout:
    usage, description, one entry per option (flags and metavar, help,
    then its variable, default and range), how settings combine, the
    binary's epilogue, and the exit codes every Parley binary shares.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pconfig.h"
#include "pconfig_int.h"

//  Appends one "; "-separated part to `line`.
static void
s_append (char *line, size_t size, size_t *used, const char *format, ...)
{
    if (*used + 3 >= size)
        return;
    if (*used)
        *used += (size_t) snprintf (line + *used, size - *used, "; ");
    va_list args;
    va_start (args, format);
    int n = vsnprintf (line + *used, size - *used, format, args);
    va_end (args);
    if (n > 0)
        *used = *used + (size_t) n < size ? *used + (size_t) n : size - 1;
}

static void
s_print_option (pconfig_t *self, pconfig_slot_t *slot, FILE *out)
{
    const pconfig_option_t *opt = slot->opt;
    bool builtin_flag = pconfig_slot_is_builtin (self, slot, "help") || pconfig_slot_is_builtin (self, slot, "version");
    char left [160];
    int n = snprintf (left, sizeof left, "  %c%c%s--%s%s",
                      opt->short_name ? '-' : ' ', opt->short_name ? opt->short_name : ' ',
                      opt->short_name ? ", " : "  ",
                      opt->type == PCONFIG_BOOL && !builtin_flag ? "[no-]" : "", opt->name);
    if (opt->type != PCONFIG_BOOL && n > 0 && (size_t) n < sizeof left)
        snprintf (left + n, sizeof left - (size_t) n, "=%s", opt->metavar ? opt->metavar : "VALUE");
    //  Help text starts in column 30; long flags push it to the next line.
    if (strlen (left) < 29)
        fprintf (out, "%-30s%s\n", left, opt->help ? opt->help : "");
    else
        fprintf (out, "%s\n%30s%s\n", left, "", opt->help ? opt->help : "");
    if (builtin_flag)
        return;
    //  The second line: env, default, range, joined by "; ".
    char line [256] = "";
    size_t used = 0;
    if (opt->env)
        s_append (line, sizeof line, &used, "env: %s", opt->env);
    //  An option whose default is computed says so in its help (the
    //  agent's id: the hostname); "none" would contradict it.
    if (opt->fallback)
        s_append (line, sizeof line, &used, "default: %s", opt->fallback);
    else
    if (!opt->help || !strstr (opt->help, "default:"))
        s_append (line, sizeof line, &used, "default: %s",
                  opt->type == PCONFIG_BOOL ? "false" : "none");
    if (opt->min != opt->max && opt->type == PCONFIG_INT)
        s_append (line, sizeof line, &used, "range %.0f to %.0f", opt->min, opt->max);
    else
    if (opt->min != opt->max)
        s_append (line, sizeof line, &used, "range %g to %g", opt->min, opt->max);
    if (used)
        fprintf (out, "%30s%s\n", "", line);
}

void
pconfig_print_help (pconfig_t *self, FILE *out)
{
    assert (self);
    assert (out);
    fprintf (out, "Usage: %s\n\n", self->usage);
    if (self->description)
        fprintf (out, "%s\n\n", self->description);
    fprintf (out, "Options:\n");
    for (size_t i = 0; i < self->count; i++)
        s_print_option (self, &self->slots [i], out);
    fprintf (out, "\nSettings are taken from, highest first: flags, PARLEY_* environment\n"
                  "variables, the config file (--config FILE or PARLEY_CONFIG; ZPL, one\n"
                  "'name = value' per line, names as the long flags), then the defaults.\n"
                  "Empty environment variables count as unset.\n");
    if (self->epilogue)
        fprintf (out, "\n%s\n", self->epilogue);
    fprintf (out, "\nExit codes:\n"
                  "  %d  normal end\n"
                  "  %d  runtime failure (see the log)\n"
                  "  %d  bad flag, environment variable or config file\n"
                  "  %d  could not bind or connect an endpoint\n",
             PARLEY_EXIT_OK, PARLEY_EXIT_FAILURE, PARLEY_EXIT_USAGE, PARLEY_EXIT_NETWORK);
    fflush (out);
}
