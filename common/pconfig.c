// SPDX-License-Identifier: MIT
/*  pconfig - one place for every setting of a binary.

    A binary declares its options once, in a pconfig_option_t table. This
    class parses argv, then PARLEY_* environment variables, then an optional
    ZPL config file, then falls back to the table's defaults, validating each
    value as it goes. The same table prints --help, so the help cannot drift
    from what is accepted.

    Lookups by name are linear scans of the table. A binary has a few dozen
    options at most and reads them once at startup, so a hash would only add
    code.

    Empty environment variables count as unset: docker compose and systemd
    EnvironmentFiles routinely pass "VAR=" for "not configured".
*/
#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "plog.h"
#include "pconfig.h"
#include "pconfig_int.h"

static const char *s_source_names [] = { "unset", "default", "file", "env", "flag" };

//  Every binary gets these, after its own options.
static const pconfig_option_t s_builtins [] = {
    { "config", 0, PCONFIG_STR, "PARLEY_CONFIG", NULL, 0, 0, "FILE",
      "read settings from this ZPL file (see below)" },
    { "log-level", 0, PCONFIG_STR, "PARLEY_LOG", "info", 0, 0, "LEVEL",
      "trace, debug, info, warn, error or off" },
    { "help", 'h', PCONFIG_BOOL, NULL, NULL, 0, 0, NULL, "print this help and exit" },
    { "version", 0, PCONFIG_BOOL, NULL, NULL, 0, 0, NULL, "print the version and exit" },
};
#define BUILTIN_COUNT (sizeof s_builtins / sizeof s_builtins [0])


static bool s_convert (pconfig_t *self, const pconfig_option_t *opt, const char *text,
                       const char *where, pconfig_value_t *value);

static char *
s_strdup (const char *text)
{
    return text ? strdup (text) : NULL;
}

static pconfig_slot_t *
s_find (pconfig_t *self, const char *name)
{
    for (size_t i = 0; i < self->count; i++)
        if (streq (self->slots [i].opt->name, name))
            return &self->slots [i];
    return NULL;
}

static pconfig_slot_t *
s_find_short (pconfig_t *self, char c)
{
    for (size_t i = 0; i < self->count; i++)
        if (c && self->slots [i].opt->short_name == c)
            return &self->slots [i];
    return NULL;
}

//  Built-ins sit after the caller's options in the slot array.
bool
pconfig_slot_is_builtin (pconfig_t *self, pconfig_slot_t *slot, const char *name)
{
    return (size_t) (slot - self->slots) >= self->user_count && streq (slot->opt->name, name);
}

pconfig_t *
pconfig_new (const char *program, const char *usage, const char *description,
             const char *epilogue, const pconfig_option_t *options, size_t count)
{
    assert (program);
    assert (options || count == 0);
    pconfig_t *self = (pconfig_t *) zmalloc (sizeof (pconfig_t));
    assert (self);
    self->program = s_strdup (program);
    self->usage = s_strdup (usage ? usage : program);
    self->description = s_strdup (description);
    self->epilogue = s_strdup (epilogue);
    self->out = stdout;
    self->err = stderr;
    self->user_count = count;
    self->slots = (pconfig_slot_t *) zmalloc ((count + BUILTIN_COUNT) * sizeof (pconfig_slot_t));
    assert (self->slots);
    //  self->count grows as slots are filled, so s_find sees only those.
    for (size_t i = 0; i < count + BUILTIN_COUNT; i++) {
        const pconfig_option_t *opt = i < count ? &options [i] : &s_builtins [i - count];
        assert (opt->name && opt->name [0] && opt->name [0] != '-');
        //  Two options with one name or one short letter is a programming
        //  error, caught the first time the binary runs.
        assert (s_find (self, opt->name) == NULL);
        assert (s_find_short (self, opt->short_name) == NULL);
        self->slots [i].opt = opt;
        self->count = i + 1;
        //  So is a default the option itself would reject.
        if (opt->fallback) {
            pconfig_value_t probe = { 0 };
            bool valid = s_convert (self, opt, opt->fallback, "default", &probe);
            assert (valid);
            (void) valid;
            free (probe.text);
        }
    }
    return self;
}

void
pconfig_destroy (pconfig_t **self_p)
{
    assert (self_p);
    pconfig_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free (self->slots [i].value.text);
    for (size_t i = 0; i < self->positional_count; i++)
        free (self->positional [i]);
    free (self->positional);
    free (self->slots);
    free (self->program);
    free (self->usage);
    free (self->description);
    free (self->epilogue);
    free (self);
    *self_p = NULL;
}

void
pconfig_set_streams (pconfig_t *self, FILE *out, FILE *err)
{
    assert (self);
    self->out = out ? out : stdout;
    self->err = err ? err : stderr;
}

const char *
pconfig_error (pconfig_t *self)
{
    assert (self);
    return self->error [0] ? self->error : NULL;
}

//  Records a usage error; only the first one is kept, as later ones are
//  often consequences of it. Always returns false.
static bool
s_fail (pconfig_t *self, const char *format, ...)
{
    if (self->error [0])
        return false;
    va_list args;
    va_start (args, format);
    vsnprintf (self->error, sizeof self->error, format, args);
    va_end (args);
    return false;
}

//  Strict: the whole text must be a base-10 integer, no spaces, in range.
static bool
s_parse_int (const char *text, int64_t *result)
{
    if (!text [0] || isspace ((unsigned char) text [0]))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (errno || *end)
        return false;
    *result = v;
    return true;
}

static bool
s_parse_double (const char *text, double *result)
{
    if (!text [0] || isspace ((unsigned char) text [0]))
        return false;
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    if (errno || *end || !isfinite (v))
        return false;
    *result = v;
    return true;
}

static bool
s_parse_bool (const char *text, bool *result)
{
    static const char *yes [] = { "true", "1", "yes", "on" };
    static const char *no [] = { "false", "0", "no", "off" };
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp (text, yes [i]) == 0) {
            *result = true;
            return true;
        }
        if (strcasecmp (text, no [i]) == 0) {
            *result = false;
            return true;
        }
    }
    return false;
}

//  Validates `text` for `opt` and fills `value` (text copied). `where`
//  names the source in the error: "--port", "PARLEY_PORT", "file: port".
static bool
s_convert (pconfig_t *self, const pconfig_option_t *opt, const char *text,
           const char *where, pconfig_value_t *value)
{
    bool ranged = opt->min != opt->max;
    switch (opt->type) {
        case PCONFIG_INT:
            if (!s_parse_int (text, &value->i))
                return s_fail (self, "%s: '%s' is not an integer", where, text);
            //  Doubles hold every int64 range bound we use exactly enough.
            if (ranged && ((double) value->i < opt->min || (double) value->i > opt->max))
                return s_fail (self, "%s: %s is out of range (%.0f to %.0f)",
                               where, text, opt->min, opt->max);
            break;
        case PCONFIG_DOUBLE:
            if (!s_parse_double (text, &value->d))
                return s_fail (self, "%s: '%s' is not a number", where, text);
            if (ranged && (value->d < opt->min || value->d > opt->max))
                return s_fail (self, "%s: %s is out of range (%g to %g)",
                               where, text, opt->min, opt->max);
            break;
        case PCONFIG_BOOL:
            if (!s_parse_bool (text, &value->b))
                return s_fail (self, "%s: '%s' is not a boolean "
                               "(true/false, yes/no, on/off, 1/0)", where, text);
            break;
        case PCONFIG_STR:
            if (opt == &s_builtins [1]) {
                plog_level_t level;
                if (!plog_level_parse (text, &level))
                    return s_fail (self, "%s: '%s' is not a log level "
                                   "(trace, debug, info, warn, error, off)", where, text);
            }
            break;
    }
    value->text = strdup (text);
    assert (value->text);
    return true;
}

//  Converts and, when valid, stores the value with its source.
static bool
s_set (pconfig_t *self, pconfig_slot_t *slot, const char *text, const char *where, pconfig_source_t source)
{
    pconfig_value_t value = { 0 };
    if (!s_convert (self, slot->opt, text, where, &value))
        return false;
    free (slot->value.text);
    slot->value = value;
    slot->source = source;
    return true;
}

static void
s_add_positional (pconfig_t *self, const char *arg, int argc)
{
    if (!self->positional) {
        self->positional = (char **) zmalloc ((size_t) argc * sizeof (char *));
        assert (self->positional);
    }
    self->positional [self->positional_count] = strdup (arg);
    assert (self->positional [self->positional_count]);
    self->positional_count++;
}

//  A flag that takes a value: the one given inline ("--name=v", "-xv") or
//  else the next entry. Returns the entries consumed beyond the flag.
static int
s_set_value (pconfig_t *self, pconfig_slot_t *slot, const char *where,
             const char *inline_value, const char *next)
{
    if (inline_value) {
        s_set (self, slot, inline_value, where, SRC_FLAG);
        return 0;
    }
    if (!next) {
        s_fail (self, "%s needs a value (%s)", where,
                slot->opt->metavar ? slot->opt->metavar : "VALUE");
        return 0;
    }
    s_set (self, slot, next, where, SRC_FLAG);
    return 1;
}

//  One "--name", "--name=value", "--no-name" or "--name value".
//  Returns the number of extra argv entries consumed (0 or 1).
static int
s_parse_long (pconfig_t *self, const char *arg, const char *next)
{
    char name [128];
    const char *eq = strchr (arg, '=');
    size_t len = eq ? (size_t) (eq - arg) : strlen (arg);
    if (len >= sizeof name) {
        s_fail (self, "unknown option '--%.40s...'", arg);
        return 0;
    }
    memcpy (name, arg, len);
    name [len] = 0;
    char where [140];
    snprintf (where, sizeof where, "--%s", name);

    pconfig_slot_t *slot = s_find (self, name);
    if (!slot && strncmp (name, "no-", 3) == 0) {
        pconfig_slot_t *negated = s_find (self, name + 3);
        if (negated && negated->opt->type == PCONFIG_BOOL) {
            if (eq)
                s_fail (self, "%s takes no value", where);
            else
                s_set (self, negated, "false", where, SRC_FLAG);
            return 0;
        }
    }
    if (!slot) {
        s_fail (self, "unknown option '--%s'", name);
        return 0;
    }
    if (slot->opt->type == PCONFIG_BOOL) {
        s_set (self, slot, eq ? eq + 1 : "true", where, SRC_FLAG);
        return 0;
    }
    return s_set_value (self, slot, where, eq ? eq + 1 : NULL, next);
}

//  One "-x", "-x value" or "-xvalue". Returns extra entries consumed.
static int
s_parse_short (pconfig_t *self, const char *arg, const char *next)
{
    char where [8] = { '-', arg [0], 0 };
    pconfig_slot_t *slot = s_find_short (self, arg [0]);
    if (!slot) {
        s_fail (self, "unknown option '-%c'", arg [0]);
        return 0;
    }
    if (slot->opt->type == PCONFIG_BOOL) {
        if (arg [1])
            s_fail (self, "%s takes no value (got '%s')", where, arg + 1);
        else
            s_set (self, slot, "true", where, SRC_FLAG);
        return 0;
    }
    return s_set_value (self, slot, where, arg [1] ? arg + 1 : NULL, next);
}

static void
s_parse_argv (pconfig_t *self, int argc, char **argv, bool positional_ok)
{
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        const char *next = i + 1 < argc ? argv [i + 1] : NULL;
        if (options_done || arg [0] != '-' || arg [1] == 0) {
            if (positional_ok)
                s_add_positional (self, arg, argc);
            else
                s_fail (self, "unexpected argument '%s'", arg);
        }
        else
        if (streq (arg, "--"))
            options_done = true;
        else
        if (arg [1] == '-')
            i += s_parse_long (self, arg + 2, next);
        else
            i += s_parse_short (self, arg + 1, next);
    }
}

static bool
s_parse_env (pconfig_t *self)
{
    for (size_t i = 0; i < self->count; i++) {
        pconfig_slot_t *slot = &self->slots [i];
        if (slot->source == SRC_FLAG || !slot->opt->env)
            continue;
        const char *text = getenv (slot->opt->env);
        if (text && *text && !s_set (self, slot, text, slot->opt->env, SRC_ENV))
            return false;
    }
    return true;
}

//  One "name = value" line of the config file. Every key must be an option
//  (a typo must not silently fall back to a default), and every value is
//  validated even when a flag or variable overrides it, so a broken file is
//  noticed the first time.
static bool
s_file_item (pconfig_t *self, const char *path, zconfig_t *item)
{
    const char *name = zconfig_name (item);
    const char *text = zconfig_value (item);
    if (!text)
        text = "";
    pconfig_slot_t *slot = s_find (self, name);
    if (!slot || pconfig_slot_is_builtin (self, slot, "config") || pconfig_slot_is_builtin (self, slot, "help")
    ||  pconfig_slot_is_builtin (self, slot, "version"))
        return s_fail (self, "%s: unknown key '%s'", path, name);
    if (zconfig_child (item))
        return s_fail (self, "%s: key '%s' has sub-keys; settings are flat "
                       "(name = value)", path, name);
    if (slot->in_file)
        return s_fail (self, "%s: key '%s' is given twice", path, name);
    slot->in_file = true;

    char where [300];
    snprintf (where, sizeof where, "%s: %s", path, name);
    if (slot->source == SRC_UNSET)
        return s_set (self, slot, text, where, SRC_FILE);
    pconfig_value_t unused = { 0 };
    bool valid = s_convert (self, slot->opt, text, where, &unused);
    free (unused.text);
    return valid;
}

//  Config files are a few lines; anything bigger is a mistake (a log file
//  given by accident), refused before reading it.
#define PCONFIG_FILE_MAX  (1024 * 1024)

static bool
s_parse_file (pconfig_t *self, const char *path)
{
    //  We read the file ourselves rather than call zconfig_load, which in
    //  czmq 4.2.1 leaks its file handle when the text does not parse.
    FILE *file = fopen (path, "r");
    if (!file)
        return s_fail (self, "--config: cannot read '%s': %s", path, strerror (errno));
    struct stat st;
    if (fstat (fileno (file), &st) || !S_ISREG (st.st_mode)) {
        fclose (file);
        return s_fail (self, "--config: '%s' is not a regular file", path);
    }
    if (st.st_size > PCONFIG_FILE_MAX) {
        fclose (file);
        return s_fail (self, "--config: '%s' is over %d bytes", path, PCONFIG_FILE_MAX);
    }
    zchunk_t *chunk = zchunk_read (file, (size_t) st.st_size);
    fclose (file);
    zconfig_t *root = chunk ? zconfig_chunk_load (chunk) : NULL;
    zchunk_destroy (&chunk);
    if (!root)
        return s_fail (self, "%s: not a valid ZPL config file", path);
    bool ok = true;
    for (zconfig_t *item = zconfig_child (root); item && ok; item = zconfig_next (item))
        ok = s_file_item (self, path, item);
    zconfig_destroy (&root);
    return ok;
}

static void
s_report (pconfig_t *self)
{
    fprintf (self->err, "%s: %s\nTry '%s --help' for more information.\n",
             self->program, self->error, self->program);
    fflush (self->err);
}

pconfig_result_t
pconfig_parse (pconfig_t *self, int argc, char **argv, bool positional_ok)
{
    assert (self);
    assert (argc == 0 || argv);
    assert (!self->parsed);
    self->parsed = true;

    s_parse_argv (self, argc, argv, positional_ok);
    //  --help and --version win over any other mistake on the line, so a
    //  confused user can always get help.
    pconfig_slot_t *help = s_find (self, "help");
    pconfig_slot_t *version = s_find (self, "version");
    if (help->source == SRC_FLAG && help->value.b) {
        pconfig_print_help (self, self->out);
        return PCONFIG_EXIT_OK;
    }
    if (version->source == SRC_FLAG && version->value.b) {
        fprintf (self->out, "%s %s\n", self->program, PARLEY_VERSION);
        fflush (self->out);
        return PCONFIG_EXIT_OK;
    }
    if (self->error [0] || !s_parse_env (self))
        goto err;
    const char *path = s_find (self, "config")->value.text;
    if (path && !s_parse_file (self, path))
        goto err;
    for (size_t i = 0; i < self->count; i++) {
        pconfig_slot_t *slot = &self->slots [i];
        if (slot->source == SRC_UNSET && slot->opt->fallback) {
            bool valid = s_set (self, slot, slot->opt->fallback, "default", SRC_DEFAULT);
            assert (valid);     //  checked in pconfig_new
            (void) valid;
        }
    }
    plog_level_t level;
    if (plog_level_parse (s_find (self, "log-level")->value.text, &level))
        plog_set_level (level);
    return PCONFIG_PARSED;
err:
    s_report (self);
    return PCONFIG_EXIT_USAGE;
}

static pconfig_slot_t *
s_lookup (pconfig_t *self, const char *name, pconfig_type_t type)
{
    assert (self);
    assert (name);
    pconfig_slot_t *slot = s_find (self, name);
    //  Asking for an option the table lacks, or with the wrong type, is a
    //  programming error in the binary, not something a user can cause.
    assert (slot);
    assert (slot->opt->type == type);
    return slot;
}

const char *
pconfig_str (pconfig_t *self, const char *name)
{
    return s_lookup (self, name, PCONFIG_STR)->value.text;
}

int64_t
pconfig_int (pconfig_t *self, const char *name)
{
    return s_lookup (self, name, PCONFIG_INT)->value.i;
}

bool
pconfig_bool (pconfig_t *self, const char *name)
{
    return s_lookup (self, name, PCONFIG_BOOL)->value.b;
}

double
pconfig_double (pconfig_t *self, const char *name)
{
    return s_lookup (self, name, PCONFIG_DOUBLE)->value.d;
}

bool
pconfig_is_set (pconfig_t *self, const char *name)
{
    assert (self);
    pconfig_slot_t *slot = s_find (self, name);
    assert (slot);
    return slot->source >= SRC_FILE;
}

const char *
pconfig_source (pconfig_t *self, const char *name)
{
    assert (self);
    pconfig_slot_t *slot = s_find (self, name);
    assert (slot);
    return s_source_names [slot->source];
}

size_t
pconfig_positional_count (pconfig_t *self)
{
    assert (self);
    return self->positional_count;
}

const char *
pconfig_positional (pconfig_t *self, size_t index)
{
    assert (self);
    return index < self->positional_count ? self->positional [index] : NULL;
}

bool
pconfig_ends (pconfig_result_t result, int *rc)
{
    assert (rc);
    if (result == PCONFIG_PARSED)
        return false;
    *rc = result == PCONFIG_EXIT_OK ? PARLEY_EXIT_OK : PARLEY_EXIT_USAGE;
    return true;
}
