// SPDX-License-Identifier: MIT
/*  check_pconfig - tests for common/pconfig: flags > PARLEY_* env > config
    file > default, every error path with its message, --help, --version.

    Help and error text are captured through open_memstream, so the tests
    read exactly the bytes a user would see. The variables the tests set
    (PARLEY_LOG, PARLEY_CONFIG, PARLEY_T_*) are cleared before every test,
    so no test sees another's, also when Check does not fork (CK_FORK=no,
    as under valgrind).
*/
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pconfig.h"
#include "plog.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  --------------------------------------------------------------------------
//  Helpers

static const pconfig_option_t s_options [] = {
    { "router", 'r', PCONFIG_STR, "PARLEY_T_ROUTER", "tcp://*:5555", 0, 0, "ENDPOINT",
      "where requests arrive" },
    { "count", 'n', PCONFIG_INT, "PARLEY_T_COUNT", "3", 1, 100, "N", "how many agents" },
    { "ratio", 0, PCONFIG_DOUBLE, "PARLEY_T_RATIO", "0.5", 0, 1, "R", "a fraction" },
    { "verbose", 'v', PCONFIG_BOOL, "PARLEY_T_VERBOSE", NULL, 0, 0, NULL, "say more" },
    { "big", 0, PCONFIG_INT, NULL, NULL, 0, 0, "N", "any int64" },
    { "name", 0, PCONFIG_STR, "PARLEY_T_NAME", NULL, 0, 0, "ID", "no default" },
};
#define OPTION_COUNT (sizeof s_options / sizeof s_options [0])

//  A parser whose output and errors land in memory buffers.
typedef struct {
    pconfig_t *config;
    char *out_text, *err_text;
    size_t out_size, err_size;
    FILE *out, *err;
    pconfig_result_t result;
} run_t;

//  argv is a NULL-terminated list after the program name.
static void
s_run (run_t *run, bool positional_ok, ...)
{
    char *argv [32] = { "check-prog" };
    int argc = 1;
    va_list args;
    va_start (args, positional_ok);
    char *arg;
    while ((arg = va_arg (args, char *)) && argc < 31)
        argv [argc++] = arg;
    va_end (args);

    memset (run, 0, sizeof *run);
    run->out = open_memstream (&run->out_text, &run->out_size);
    run->err = open_memstream (&run->err_text, &run->err_size);
    run->config = pconfig_new ("check-prog", "check-prog [OPTIONS] [FILE...]",
                               "Exercises pconfig.", "See also: the README.",
                               s_options, OPTION_COUNT);
    pconfig_set_streams (run->config, run->out, run->err);
    run->result = pconfig_parse (run->config, argc, argv, positional_ok);
    fflush (run->out);
    fflush (run->err);
}

static void
s_done (run_t *run)
{
    pconfig_destroy (&run->config);
    ck_assert_ptr_null (run->config);
    fclose (run->out);
    fclose (run->err);
    free (run->out_text);
    free (run->err_text);
}

//  Expects a usage error whose message contains `needle`.
static void
s_expect_usage (run_t *run, const char *needle)
{
    ck_assert_msg (run->result == PCONFIG_EXIT_USAGE, "no usage error; wanted '%s'", needle);
    const char *error = pconfig_error (run->config);
    ck_assert_ptr_nonnull (error);
    ck_assert_msg (strstr (error, needle), "error '%s' lacks '%s'", error, needle);
    ck_assert_ptr_nonnull (strstr (run->err_text, error));
    ck_assert_ptr_nonnull (strstr (run->err_text, "Try 'check-prog --help'"));
    ck_assert_uint_eq (run->out_size, 0);
}

//  The temp dir of the last s_config_file; s_config_cleanup removes it.
static tproc_dir_t *s_dir;

//  Writes `text` to parley.cfg in a fresh temp dir; returns its path
//  (valid until s_config_cleanup).
static const char *
s_config_file (const char *text)
{
    static char path [1024];
    s_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (s_dir);
    snprintf (path, sizeof path, "%s/parley.cfg", tproc_dir_name (s_dir));
    ck_assert (tproc_write_file (path, text));
    return path;
}

static void
s_config_cleanup (void)
{
    tproc_dir_destroy (&s_dir);
}

//  --------------------------------------------------------------------------
//  pconfig: values and precedence

START_TEST (test_defaults)
{
    unsetenv ("PARLEY_LOG");
    run_t run;
    s_run (&run, false, NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_ptr_null (pconfig_error (run.config));
    ck_assert_str_eq (pconfig_str (run.config, "router"), "tcp://*:5555");
    ck_assert_int_eq (pconfig_int (run.config, "count"), 3);
    ck_assert_double_eq (pconfig_double (run.config, "ratio"), 0.5);
    ck_assert (!pconfig_bool (run.config, "verbose"));
    ck_assert_ptr_null (pconfig_str (run.config, "name"));
    ck_assert_str_eq (pconfig_source (run.config, "router"), "default");
    ck_assert_str_eq (pconfig_source (run.config, "name"), "unset");
    ck_assert (!pconfig_is_set (run.config, "router"));
    ck_assert (!pconfig_is_set (run.config, "name"));
    ck_assert_str_eq (pconfig_str (run.config, "log-level"), "info");
    ck_assert_ptr_null (pconfig_str (run.config, "config"));
    ck_assert_int_eq (plog_get_level (), PLOG_INFO);
    ck_assert_uint_eq (pconfig_positional_count (run.config), 0);
    ck_assert_ptr_null (pconfig_positional (run.config, 0));
    ck_assert_uint_eq (run.out_size + run.err_size, 0);
    s_done (&run);
}
END_TEST

START_TEST (test_precedence)
{
    const char *path = s_config_file ("router = \"tcp://file:1\"\ncount = 30\n"
                                      "ratio = 0.25\nname = from-file\n");
    setenv ("PARLEY_CONFIG", path, 1);
    setenv ("PARLEY_T_ROUTER", "tcp://env:1", 1);
    setenv ("PARLEY_T_COUNT", "20", 1);
    //  Empty variables count as unset, so the file's value wins.
    setenv ("PARLEY_T_RATIO", "", 1);
    run_t run;
    s_run (&run, false, "--router", "tcp://flag:1", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_str_eq (pconfig_str (run.config, "router"), "tcp://flag:1");
    ck_assert_str_eq (pconfig_source (run.config, "router"), "flag");
    ck_assert_int_eq (pconfig_int (run.config, "count"), 20);
    ck_assert_str_eq (pconfig_source (run.config, "count"), "env");
    ck_assert_double_eq (pconfig_double (run.config, "ratio"), 0.25);
    ck_assert_str_eq (pconfig_source (run.config, "ratio"), "file");
    ck_assert_str_eq (pconfig_str (run.config, "name"), "from-file");
    ck_assert (!pconfig_bool (run.config, "verbose"));
    ck_assert_str_eq (pconfig_source (run.config, "verbose"), "unset");
    ck_assert_str_eq (pconfig_source (run.config, "config"), "env");
    ck_assert (pconfig_is_set (run.config, "ratio"));
    s_done (&run);

    //  Without the flag, the variable wins; without it, the file.
    unsetenv ("PARLEY_T_ROUTER");
    s_run (&run, false, NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_str_eq (pconfig_str (run.config, "router"), "tcp://file:1");
    ck_assert_str_eq (pconfig_source (run.config, "router"), "file");
    s_done (&run);

    //  --config beats PARLEY_CONFIG.
    unsetenv ("PARLEY_CONFIG");
    s_run (&run, false, "--config", path, NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_str_eq (pconfig_source (run.config, "config"), "flag");
    ck_assert_int_eq (pconfig_int (run.config, "count"), 20);
    s_done (&run);
    s_config_cleanup ();
}
END_TEST

START_TEST (test_flag_forms)
{
    run_t run;
    s_run (&run, false, "-n", "7", "-rtcp://short:1", "--ratio=1", "-v",
           "--big", "-9223372036854775808", "--name=", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_int_eq (pconfig_int (run.config, "count"), 7);
    ck_assert_str_eq (pconfig_str (run.config, "router"), "tcp://short:1");
    ck_assert_double_eq (pconfig_double (run.config, "ratio"), 1.0);
    ck_assert (pconfig_bool (run.config, "verbose"));
    ck_assert_int_eq (pconfig_int (run.config, "big"), INT64_MIN);
    ck_assert_str_eq (pconfig_str (run.config, "name"), "");
    s_done (&run);

    //  The last occurrence wins; --no-X and --X=false turn a bool off.
    setenv ("PARLEY_T_VERBOSE", "yes", 1);
    s_run (&run, false, "--count=5", "--count", "6", "--no-verbose", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_int_eq (pconfig_int (run.config, "count"), 6);
    ck_assert (!pconfig_bool (run.config, "verbose"));
    ck_assert_str_eq (pconfig_source (run.config, "verbose"), "flag");
    s_done (&run);

    s_run (&run, false, NULL);
    ck_assert (pconfig_bool (run.config, "verbose"));
    ck_assert_str_eq (pconfig_source (run.config, "verbose"), "env");
    s_done (&run);

    static const char *truths [] = { "true", "1", "yes", "on", "TRUE", "On" };
    static const char *lies [] = { "false", "0", "no", "off", "False", "NO" };
    for (size_t i = 0; i < 6; i++) {
        char arg [32];
        snprintf (arg, sizeof arg, "--verbose=%s", truths [i]);
        s_run (&run, false, arg, NULL);
        ck_assert (pconfig_bool (run.config, "verbose"));
        s_done (&run);
        snprintf (arg, sizeof arg, "--verbose=%s", lies [i]);
        s_run (&run, false, arg, NULL);
        ck_assert (!pconfig_bool (run.config, "verbose"));
        s_done (&run);
    }
}
END_TEST

START_TEST (test_positional)
{
    run_t run;
    s_run (&run, true, "a.txt", "-n", "4", "-", "--", "--count", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_int_eq (pconfig_int (run.config, "count"), 4);
    ck_assert_uint_eq (pconfig_positional_count (run.config), 3);
    ck_assert_str_eq (pconfig_positional (run.config, 0), "a.txt");
    ck_assert_str_eq (pconfig_positional (run.config, 1), "-");
    ck_assert_str_eq (pconfig_positional (run.config, 2), "--count");
    ck_assert_ptr_null (pconfig_positional (run.config, 3));
    s_done (&run);

    s_run (&run, false, "stray", NULL);
    s_expect_usage (&run, "unexpected argument 'stray'");
    s_done (&run);
}
END_TEST

START_TEST (test_log_level_option)
{
    run_t run;
    s_run (&run, false, "--log-level=debug", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert_int_eq (plog_get_level (), PLOG_DEBUG);
    s_done (&run);

    setenv ("PARLEY_LOG", "ERROR", 1);
    s_run (&run, false, NULL);
    ck_assert_int_eq (plog_get_level (), PLOG_ERROR);
    ck_assert_str_eq (pconfig_source (run.config, "log-level"), "env");
    s_done (&run);

    s_run (&run, false, "--log-level", "trace", NULL);
    ck_assert_int_eq (plog_get_level (), PLOG_TRACE);
    s_done (&run);

    s_run (&run, false, "--log-level=loud", NULL);
    s_expect_usage (&run, "--log-level: 'loud' is not a log level");
    s_done (&run);

    setenv ("PARLEY_LOG", "chatty", 1);
    s_run (&run, false, NULL);
    s_expect_usage (&run, "PARLEY_LOG: 'chatty' is not a log level");
    s_done (&run);
}
END_TEST

//  --------------------------------------------------------------------------
//  pconfig: every error path

START_TEST (test_errors_flags)
{
    static const struct {
        const char *args [3];
        const char *error;
    } cases [] = {
        { { "--count=12x" }, "--count: '12x' is not an integer" },
        { { "--count", "" }, "--count: '' is not an integer" },
        { { "--count= 5" }, "--count: ' 5' is not an integer" },
        { { "-n", "0x10" }, "-n: '0x10' is not an integer" },
        { { "--count=101" }, "--count: 101 is out of range (1 to 100)" },
        { { "--count=0" }, "--count: 0 is out of range (1 to 100)" },
        { { "--big=9223372036854775808" }, "--big: '9223372036854775808' is not an integer" },
        { { "--ratio=1.5" }, "--ratio: 1.5 is out of range (0 to 1)" },
        { { "--ratio=half" }, "--ratio: 'half' is not a number" },
        { { "--ratio=nan" }, "--ratio: 'nan' is not a number" },
        { { "--bogus" }, "unknown option '--bogus'" },
        { { "--bogus=1" }, "unknown option '--bogus'" },
        { { "-x" }, "unknown option '-x'" },
        { { "--no-count" }, "unknown option '--no-count'" },
        { { "--no-verbose=1" }, "--no-verbose takes no value" },
        { { "-vv" }, "-v takes no value" },
        { { "--router" }, "--router needs a value (ENDPOINT)" },
        { { "-n" }, "-n needs a value (N)" },
        { { "--verbose=maybe" }, "--verbose: 'maybe' is not a boolean" },
        { { "--verbose=" }, "--verbose: '' is not a boolean" },
        { { "--config=/nonexistent/parley.cfg" }, "cannot read '/nonexistent/parley.cfg'" },
        { { "--config=/tmp" }, "'/tmp' is not a regular file" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        run_t run;
        s_run (&run, false, cases [i].args [0], cases [i].args [1], NULL);
        s_expect_usage (&run, cases [i].error);
        s_done (&run);
    }
}
END_TEST

START_TEST (test_errors_env)
{
    static const struct {
        const char *name, *value, *error;
    } cases [] = {
        { "PARLEY_T_COUNT", "three", "PARLEY_T_COUNT: 'three' is not an integer" },
        { "PARLEY_T_COUNT", "1000", "PARLEY_T_COUNT: 1000 is out of range" },
        { "PARLEY_T_RATIO", "-0.1", "PARLEY_T_RATIO: -0.1 is out of range" },
        { "PARLEY_T_VERBOSE", "sure", "PARLEY_T_VERBOSE: 'sure' is not a boolean" },
        { "PARLEY_CONFIG", "/nonexistent.cfg", "cannot read '/nonexistent.cfg'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        setenv (cases [i].name, cases [i].value, 1);
        run_t run;
        s_run (&run, false, NULL);
        s_expect_usage (&run, cases [i].error);
        s_done (&run);
        unsetenv (cases [i].name);
    }
    //  A flag overrides a bad variable without reading it.
    setenv ("PARLEY_T_COUNT", "three", 1);
    run_t run;
    s_run (&run, false, "--count=2", NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    s_done (&run);
}
END_TEST

START_TEST (test_errors_file)
{
    static const struct {
        const char *text, *error;
    } cases [] = {
        { "cuont = 4\n", "unknown key 'cuont'" },
        { "help = 1\n", "unknown key 'help'" },
        { "config = \"other.cfg\"\n", "unknown key 'config'" },
        { "count = 4\ncount = 5\n", "key 'count' is given twice" },
        { "count\n    deeper = 1\n", "key 'count' has sub-keys" },
        { "count = many\n", "parley.cfg: count: 'many' is not an integer" },
        { "count = 0\n", "parley.cfg: count: 0 is out of range" },
        { "verbose = perhaps\n", "parley.cfg: verbose: 'perhaps' is not a boolean" },
        { "log-level = shout\n", "parley.cfg: log-level: 'shout' is not a log level" },
        { "count = \"4\n", "not a valid ZPL config file" },
        { "count = 4\n  badly = indented\n", "not a valid ZPL config file" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *path = s_config_file (cases [i].text);
        run_t run;
        //  A bad value in the file is reported even under a flag, so a
        //  broken file is noticed the first time.
        s_run (&run, false, "--config", path, "--count=9", "--verbose", NULL);
        s_expect_usage (&run, cases [i].error);
        s_done (&run);
        s_config_cleanup ();
    }
    //  Comments, blank lines and log-level are fine; log-level applies.
    const char *path = s_config_file ("#  a comment\n\nlog-level = warn\nverbose = on\n");
    run_t run;
    s_run (&run, false, "--config", path, NULL);
    ck_assert_int_eq (run.result, PCONFIG_PARSED);
    ck_assert (pconfig_bool (run.config, "verbose"));
    ck_assert_int_eq (plog_get_level (), PLOG_WARN);
    s_done (&run);
    s_config_cleanup ();
}
END_TEST

//  --------------------------------------------------------------------------
//  pconfig: --help and --version

START_TEST (test_help)
{
    run_t run;
    //  --help wins even over a bad flag before it.
    s_run (&run, false, "--bogus", "--help", NULL);
    ck_assert_int_eq (run.result, PCONFIG_EXIT_OK);
    ck_assert_uint_eq (run.err_size, 0);
    const char *help = run.out_text;
    ck_assert (testsuite_matches (help, "^Usage: check-prog \\[OPTIONS\\] \\[FILE\\.\\.\\.\\]$"));
    ck_assert (testsuite_matches (help, "^Exercises pconfig\\.$"));
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char flag [64];
        //  A bool is listed as --[no-]NAME, anything else as --NAME=METAVAR.
        snprintf (flag, sizeof flag, "--%s%s", s_options [i].type == PCONFIG_BOOL ? "[no-]" : "",
                  s_options [i].name);
        ck_assert_msg (strstr (help, flag), "help lacks %s", flag);
        ck_assert_msg (strstr (help, s_options [i].help), "help lacks text of %s", flag);
        if (s_options [i].env)
            ck_assert_msg (strstr (help, s_options [i].env), "help lacks %s", s_options [i].env);
        if (s_options [i].metavar && s_options [i].type != PCONFIG_BOOL) {
            snprintf (flag, sizeof flag, "--%s=%s", s_options [i].name, s_options [i].metavar);
            ck_assert_msg (strstr (help, flag), "help lacks %s", flag);
        }
    }
    ck_assert (testsuite_matches (help, "^  -r, --router=ENDPOINT +where requests arrive$"));
    ck_assert (testsuite_matches (help, "env: PARLEY_T_ROUTER; default: tcp://\\*:5555$"));
    ck_assert (testsuite_matches (help, "env: PARLEY_T_COUNT; default: 3; range 1 to 100$"));
    ck_assert (testsuite_matches (help, "^  -v, --\\[no-\\]verbose +say more$"));
    ck_assert (testsuite_matches (help, "^      --config=FILE "));
    ck_assert (testsuite_matches (help, "env: PARLEY_CONFIG; default: none$"));
    ck_assert (testsuite_matches (help, "^      --log-level=LEVEL "));
    ck_assert (testsuite_matches (help, "env: PARLEY_LOG; default: info$"));
    ck_assert (testsuite_matches (help, "^  -h, --help "));
    ck_assert (testsuite_matches (help, "^      --version "));
    //  Epilogue, then the exit codes, in that order.
    const char *epilogue = strstr (help, "See also: the README.");
    const char *codes = strstr (help, "Exit codes:");
    ck_assert (epilogue && codes && epilogue < codes);
    ck_assert (testsuite_matches (help, "^  0  normal end$"));
    ck_assert (testsuite_matches (help, "^  1  runtime failure"));
    ck_assert (testsuite_matches (help, "^  2  bad flag"));
    ck_assert (testsuite_matches (help, "^  3  could not bind or connect"));
    s_done (&run);

    s_run (&run, false, "-h", NULL);
    ck_assert_int_eq (run.result, PCONFIG_EXIT_OK);
    ck_assert_ptr_nonnull (strstr (run.out_text, "Exit codes:"));
    s_done (&run);
}
END_TEST

START_TEST (test_version)
{
    run_t run;
    s_run (&run, false, "--version", NULL);
    ck_assert_int_eq (run.result, PCONFIG_EXIT_OK);
    ck_assert_str_eq (run.out_text, "check-prog " PARLEY_VERSION "\n");
    ck_assert_str_eq (PARLEY_VERSION, "0.1.0");
    ck_assert_uint_eq (run.err_size, 0);
    s_done (&run);
}
END_TEST

//  A table with no options of its own still gets the built-ins.
START_TEST (test_empty_table)
{
    pconfig_t *config = pconfig_new ("bare", NULL, NULL, NULL, NULL, 0);
    char *argv [] = { "bare", "--log-level=error", NULL };
    ck_assert_int_eq (pconfig_parse (config, 2, argv, false), PCONFIG_PARSED);
    ck_assert_int_eq (plog_get_level (), PLOG_ERROR);
    char *text;
    size_t size;
    FILE *out = open_memstream (&text, &size);
    pconfig_print_help (config, out);
    fclose (out);
    ck_assert (testsuite_matches (text, "^Usage: bare$"));
    free (text);
    pconfig_destroy (&config);
    pconfig_destroy (&config);     //  a NULL pointer is fine
}
END_TEST
extern char **environ;

//  Every test starts without the variables any test sets.
static void
s_clean_env (void)
{
    unsetenv ("PARLEY_LOG");
    unsetenv ("PARLEY_CONFIG");
    bool again = true;
    while (again) {             //  unsetenv changes environ: start over
        again = false;
        for (char **var = environ; *var; var++)
            if (strncmp (*var, "PARLEY_T_", 9) == 0) {
                char name [128];
                snprintf (name, sizeof name, "%.*s", (int) strcspn (*var, "="), *var);
                unsetenv (name);
                again = true;
                break;
            }
    }
}

//  What a main returns for each result of pconfig_parse.
START_TEST (test_ends)
{
    int rc = 42;
    ck_assert (!pconfig_ends (PCONFIG_PARSED, &rc));
    ck_assert_int_eq (rc, 42);
    ck_assert (pconfig_ends (PCONFIG_EXIT_OK, &rc));
    ck_assert_int_eq (rc, PARLEY_EXIT_OK);
    rc = 42;
    ck_assert (pconfig_ends (PCONFIG_EXIT_USAGE, &rc));
    ck_assert_int_eq (rc, PARLEY_EXIT_USAGE);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("pconfig");
    TCase *tc = tcase_create ("values");
    tcase_add_checked_fixture (tc, s_clean_env, NULL);
    tcase_add_test (tc, test_defaults);
    tcase_add_test (tc, test_precedence);
    tcase_add_test (tc, test_flag_forms);
    tcase_add_test (tc, test_positional);
    tcase_add_test (tc, test_log_level_option);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("errors");
    tcase_add_checked_fixture (tc, s_clean_env, NULL);
    tcase_add_test (tc, test_errors_flags);
    tcase_add_test (tc, test_errors_env);
    tcase_add_test (tc, test_errors_file);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("help");
    tcase_add_checked_fixture (tc, s_clean_env, NULL);
    tcase_add_test (tc, test_help);
    tcase_add_test (tc, test_version);
    tcase_add_test (tc, test_empty_table);
    tcase_add_test (tc, test_ends);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
