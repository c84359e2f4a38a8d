// SPDX-License-Identifier: MIT
/*  check_common - tests for common/: pclock and plog (pconfig has its own
    suite, check_pconfig).

    Log output is captured through a real pipe (plog_set_fd), so the tests
    read exactly the bytes a user would see.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonops.h"
#include "pclock.h"
#include "plog.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  --------------------------------------------------------------------------
//  Helpers

//  A pipe that plog writes to; read it back with s_drain().
static int s_pipe [2] = { -1, -1 };

static void
s_capture_log (void)
{
    ck_assert_int_eq (pipe (s_pipe), 0);
    plog_set_fd (s_pipe [1]);
    plog_init ("check-common", NULL);
    plog_set_level (PLOG_TRACE);
}

//  Returns everything logged since the last call (caller frees).
static char *
s_drain (void)
{
    plog_set_fd (2);
    close (s_pipe [1]);
    size_t size = 0, cap = 1024;
    char *text = malloc (cap);
    ck_assert_ptr_nonnull (text);
    ssize_t n;
    while ((n = read (s_pipe [0], text + size, cap - size - 1)) > 0) {
        size += (size_t) n;
        if (cap - size < 2) {
            cap *= 2;
            text = realloc (text, cap);
            ck_assert_ptr_nonnull (text);
        }
    }
    text [size] = 0;
    close (s_pipe [0]);
    //  Ready for more logging in the same test.
    ck_assert_int_eq (pipe (s_pipe), 0);
    plog_set_fd (s_pipe [1]);
    return text;
}

//  --------------------------------------------------------------------------
//  pclock

START_TEST (test_iso8601)
{
    char buf [32];
    ck_assert_str_eq (pclock_iso8601 (0, buf, sizeof buf), "1970-01-01T00:00:00.000Z");
    //  2026-11-21T08:40:01.123456Z: microseconds are cut, not rounded.
    ck_assert_str_eq (pclock_iso8601 (1795250401123456LL, buf, sizeof buf),
                      "2026-11-21T08:40:01.123Z");
    ck_assert_str_eq (pclock_iso8601 (951782400999999LL, buf, sizeof buf),
                      "2000-02-29T00:00:00.999Z");
    //  Before the epoch, the millisecond part still counts forward.
    ck_assert_str_eq (pclock_iso8601 (-1, buf, sizeof buf), "1969-12-31T23:59:59.999Z");
    ck_assert_str_eq (pclock_iso8601 (-1000000, buf, sizeof buf), "1969-12-31T23:59:59.000Z");
    //  Now is after this code was written and formats as a plausible stamp.
    pclock_iso8601 (pclock_wall_us (), buf, sizeof buf);
    ck_assert (testsuite_matches (buf, "^20[2-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z$"));
}
END_TEST

START_TEST (test_mono_clock)
{
    int64_t before_us = pclock_mono_us ();
    int64_t before_ms = pclock_mono_ms ();
    pclock_sleep_ms (20);
    //  A lower bound only: sleeping at least as long as asked.
    ck_assert_int_ge (pclock_mono_us () - before_us, 20000);
    ck_assert_int_ge (pclock_mono_ms () - before_ms, 20);
    pclock_sleep_ms (0);
    pclock_sleep_ms (-5);
    ck_assert_int_gt (pclock_wall_us (), 1600000000LL * 1000000);
}
END_TEST

//  --------------------------------------------------------------------------
//  plog

START_TEST (test_log_level_parse)
{
    static const char *names [] = { "trace", "debug", "info", "warn", "error", "off" };
    for (int i = PLOG_TRACE; i <= PLOG_OFF; i++) {
        plog_level_t level = PLOG_INFO;
        ck_assert (plog_level_parse (names [i], &level));
        ck_assert_int_eq (level, i);
        ck_assert_str_eq (plog_level_name ((plog_level_t) i), names [i]);
    }
    plog_level_t level = PLOG_TRACE;
    ck_assert (plog_level_parse ("DEBUG", &level));
    ck_assert_int_eq (level, PLOG_DEBUG);
    ck_assert (plog_level_parse ("Warning", &level));
    ck_assert_int_eq (level, PLOG_WARN);
    level = PLOG_ERROR;
    ck_assert (!plog_level_parse ("verbose", &level));
    ck_assert (!plog_level_parse ("", &level));
    ck_assert (!plog_level_parse ("info ", &level));
    ck_assert (!plog_level_parse (NULL, &level));
    ck_assert_int_eq (level, PLOG_ERROR);      //  untouched on failure
    ck_assert_str_eq (plog_level_name ((plog_level_t) 42), "?");
}
END_TEST

START_TEST (test_log_format)
{
    s_capture_log ();
    plog_info ("hello %d", 42);
    plog_set_agent ("Agent7");
    plog_warn ("second");
    plog_set_agent (NULL);
    plog_error ("third\nforged 2026-01-01T00:00:00.000Z ERROR line");
    char *text = s_drain ();
    ck_assert_int_eq (tproc_count_lines (text), 3);
    char pattern [256];
    snprintf (pattern, sizeof pattern,
              "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
              "INFO  check-common\\[%d\\]: hello 42$", (int) getpid ());
    ck_assert_msg (testsuite_matches (text, pattern), "no match in: %s", text);
    snprintf (pattern, sizeof pattern,
              "Z WARN  check-common\\[%d\\] agent=Agent7: second$", (int) getpid ());
    ck_assert_msg (testsuite_matches (text, pattern), "no match in: %s", text);
    //  A newline inside a message cannot start a fake log line.
    ck_assert (testsuite_matches (text, "Z ERROR check-common\\[[0-9]+\\]: third forged "));
    free (text);
    plog_set_fd (2);
}
END_TEST

//  systemd's JOURNAL_STREAM names the device and inode of the stream it
//  connected to journald; lines to that stream carry "<N>" priorities, lines
//  to any other descriptor do not.
static void
s_set_journal_stream (int fd)
{
    struct stat st;
    ck_assert_int_eq (fstat (fd, &st), 0);
    char stream [64];
    snprintf (stream, sizeof stream, "%llu:%llu",
              (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
    ck_assert_int_eq (setenv ("JOURNAL_STREAM", stream, 1), 0);
}

START_TEST (test_log_journal_priorities)
{
    s_capture_log ();
    s_set_journal_stream (s_pipe [1]);
    plog_set_fd (s_pipe [1]);
    ck_assert (plog_journal ());
    plog_trace ("t");
    plog_debug ("d");
    plog_info ("i");
    plog_warn ("w");
    plog_error ("e");
    char *text = s_drain ();
    //  The new pipe of s_drain is another inode: no prefix there.
    ck_assert (!plog_journal ());
    ck_assert_int_eq (tproc_count_lines (text), 5);
    static const char *wanted [] = {
        "^<7>[0-9-]+T[0-9:.]+Z TRACE check-common\\[[0-9]+\\]: t$",
        "^<7>[0-9-]+T[0-9:.]+Z DEBUG check-common\\[[0-9]+\\]: d$",
        "^<6>[0-9-]+T[0-9:.]+Z INFO  check-common\\[[0-9]+\\]: i$",
        "^<4>[0-9-]+T[0-9:.]+Z WARN  check-common\\[[0-9]+\\]: w$",
        "^<3>[0-9-]+T[0-9:.]+Z ERROR check-common\\[[0-9]+\\]: e$",
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted [0]; i++)
        ck_assert_msg (testsuite_matches (text, wanted [i]), "no %s in:\n%s", wanted [i], text);
    free (text);

    //  Another stream, a malformed variable, an empty one: plain lines.
    static const char *others [] = { "1:2", "12", "1:2x", "", "a:b" };
    for (size_t i = 0; i < sizeof others / sizeof others [0]; i++) {
        setenv ("JOURNAL_STREAM", others [i], 1);
        plog_set_fd (s_pipe [1]);
        ck_assert_msg (!plog_journal (), "JOURNAL_STREAM=%s taken as journald", others [i]);
        plog_error ("plain");
    }
    unsetenv ("JOURNAL_STREAM");
    plog_init ("check-common", NULL);
    ck_assert (!plog_journal ());
    text = s_drain ();
    ck_assert_int_eq (tproc_count_lines (text), 5);
    ck_assert_ptr_null (strchr (text, '<'));
    free (text);
    plog_set_fd (2);
}
END_TEST

START_TEST (test_log_levels_filter)
{
    s_capture_log ();
    plog_set_level (PLOG_WARN);
    ck_assert_int_eq (plog_get_level (), PLOG_WARN);
    ck_assert (!plog_enabled (PLOG_INFO));
    ck_assert (plog_enabled (PLOG_WARN));
    ck_assert (plog_enabled (PLOG_ERROR));
    ck_assert (!plog_enabled (PLOG_OFF));
    plog_trace ("no");
    plog_debug ("no");
    plog_info ("no");
    plog_warn ("yes");
    plog_error ("yes");
    plog (PLOG_OFF, "never a level of its own");
    plog_set_level (PLOG_OFF);
    plog_error ("no");
    char *text = s_drain ();
    ck_assert_int_eq (tproc_count_lines (text), 2);
    ck_assert_ptr_null (strstr (text, ": no"));
    free (text);
    plog_set_fd (2);
}
END_TEST

START_TEST (test_log_long_line)
{
    s_capture_log ();
    char *big = malloc (10000);
    ck_assert_ptr_nonnull (big);
    memset (big, 'x', 9999);
    big [9999] = 0;
    plog_info ("%s", big);
    char *text = s_drain ();
    //  Cut to one atomic write, marked, and still one whole line.
    ck_assert_int_eq (tproc_count_lines (text), 1);
    ck_assert_uint_le (strlen (text), 4096);
    ck_assert (testsuite_matches (text, "x\\.\\.\\.$"));
    free (text);
    free (big);
    plog_set_fd (2);
}
END_TEST

//  Two processes log long lines into one pipe at once: every line read back
//  must be whole, which is what single write() calls buy us.
START_TEST (test_log_no_interleave)
{
    int fds [2];
    ck_assert_int_eq (pipe (fds), 0);
    pid_t children [2];
    for (int c = 0; c < 2; c++) {
        children [c] = fork ();
        ck_assert_int_ge (children [c], 0);
        if (children [c] == 0) {
            close (fds [0]);
            plog_init ("writer", NULL);
            plog_set_level (PLOG_INFO);
            plog_set_fd (fds [1]);
            char body [3001];
            memset (body, 'a' + c, 3000);
            body [3000] = 0;
            for (int i = 0; i < 100; i++)
                plog_info ("<%s>", body);
            _exit (0);
        }
    }
    close (fds [1]);
    FILE *in = fdopen (fds [0], "r");
    ck_assert_ptr_nonnull (in);
    char *line = NULL;
    size_t cap = 0;
    int lines = 0;
    while (getline (&line, &cap, in) > 0) {
        char *open = strchr (line, '<');
        ck_assert_ptr_nonnull (open);
        char c = open [1];
        ck_assert (c == 'a' || c == 'b');
        for (int i = 1; i <= 3000; i++)
            ck_assert_int_eq (open [i], c);
        ck_assert_str_eq (open + 3001, ">\n");
        lines++;
    }
    free (line);
    fclose (in);
    for (int c = 0; c < 2; c++) {
        int status;
        ck_assert_int_eq (waitpid (children [c], &status, 0), children [c]);
        ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
    ck_assert_int_eq (lines, 200);
}
END_TEST

START_TEST (test_log_limited)
{
    s_capture_log ();
    plog_limit_t limit = { 0 };
    //  Pin the window open (its start in the future) so a slow machine
    //  cannot roll it over in the middle of the burst.
    limit.window_start_ms = pclock_mono_ms () + 3600 * 1000;
    for (int i = 0; i < 10; i++)
        plog_limited (&limit, 3, PLOG_WARN, "bad frame %d", i);
    ck_assert_uint_eq (limit.suppressed, 7);
    ck_assert_uint_eq (limit.in_window, 3);
    char *text = s_drain ();
    ck_assert_int_eq (tproc_count_lines (text), 3);
    ck_assert (testsuite_matches (text, ": bad frame 0$"));
    ck_assert (testsuite_matches (text, ": bad frame 2$"));
    ck_assert_ptr_null (strstr (text, "suppressed"));
    free (text);

    //  A second later the next line gets through and reports the count.
    limit.window_start_ms = pclock_mono_ms () - 5000;
    plog_limited (&limit, 3, PLOG_WARN, "bad frame %d", 10);
    ck_assert_uint_eq (limit.suppressed, 0);
    text = s_drain ();
    ck_assert_int_eq (tproc_count_lines (text), 1);
    ck_assert_msg (testsuite_matches (text, ": bad frame 10 \\(7 similar lines suppressed\\)$"),
                   "got: %s", text);
    free (text);

    //  Disabled levels neither print nor count.
    plog_set_level (PLOG_ERROR);
    plog_limited (&limit, 3, PLOG_WARN, "quiet");
    ck_assert_uint_eq (limit.suppressed, 0);
    //  A zeroed limit (as a static one starts) works on its first call.
    plog_limit_t fresh = { 0 };
    plog_limited (&fresh, 1, PLOG_ERROR, "first");
    plog_limited (&fresh, 1, PLOG_ERROR, "second");
    ck_assert_uint_le (fresh.suppressed, 1);
    text = s_drain ();
    ck_assert (testsuite_matches (text, ": first$"));
    ck_assert_int_eq (tproc_count_lines (text) + fresh.suppressed, 2);
    free (text);
    plog_set_fd (2);
}
END_TEST

//  JSON write ops become libparley's parley_ops_t, values packed as
//  msgpack; a bad op is refused with the reason, nothing half-built.
START_TEST (test_jsonops)
{
    json_t *json = json_loads ("[{\"op\":\"update\",\"key\":\"work\",\"value\":[\"a\"]},"
                               "{\"op\":\"clear\",\"key\":\"issues\"},"
                               "{\"op\":\"declare\",\"key\":\"plan\",\"reducer\":\"replace\"}]",
                               0, NULL);
    ck_assert_ptr_nonnull (json);
    char why [256] = "";
    jsonops_t *ops = jsonops_new (json, why, sizeof why);
    ck_assert_ptr_nonnull (ops);
    ck_assert_uint_eq (jsonops_count (ops), 3);
    ck_assert_int_eq (jsonops_kind (ops, 0), JSONOPS_UPDATE);
    ck_assert_str_eq (jsonops_key (ops, 0), "work");
    const unsigned char want [] = { 0x91, 0xa1, 'a' };
    size_t value_size = 0;
    const void *value = jsonops_value (ops, 0, &value_size);
    ck_assert_uint_eq (value_size, sizeof want);
    ck_assert (memcmp (value, want, sizeof want) == 0);
    ck_assert_int_eq (jsonops_kind (ops, 1), JSONOPS_CLEAR);
    ck_assert_ptr_null (jsonops_value (ops, 1, &value_size));
    ck_assert_int_eq (jsonops_kind (ops, 2), JSONOPS_DECLARE);
    ck_assert_str_eq (jsonops_reducer (ops, 2), "replace");
    parley_ops_t *built = parley_ops_new ();
    ck_assert_int_eq (jsonops_fill (ops, built), PARLEY_OK);
    ck_assert_uint_eq (parley_ops_count (built), 3);
    jsonops_destroy (&ops);
    ck_assert_ptr_null (ops);
    json_decref (json);

    ops = jsonops_new (NULL, why, sizeof why);
    ck_assert_uint_eq (jsonops_count (ops), 0);
    parley_ops_reset (built);
    ck_assert_int_eq (jsonops_fill (ops, built), PARLEY_OK);
    ck_assert_uint_eq (parley_ops_count (built), 0);
    parley_ops_destroy (&built);
    jsonops_destroy (&ops);

    const struct { const char *json, *why; } bad [] = {
        { "{}", "not an array" },
        { "[1]", "\"op\" must be" },
        { "[{\"op\":\"frob\",\"key\":\"k\"}]", "\"op\" must be" },
        { "[{\"op\":\"set\"}]", "needs a \"key\"" },
        { "[{\"op\":\"set\",\"key\":\"k\"}]", "and a \"value\"" },
        { "[{\"op\":\"declare\",\"key\":\"k\"}]", "and a \"reducer\"" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        json = json_loads (bad [i].json, JSON_DECODE_ANY, NULL);
        why [0] = 0;
        ck_assert_ptr_null (jsonops_new (json, why, sizeof why));
        ck_assert_msg (strstr (why, bad [i].why), "%s: \"%s\"", bad [i].json, why);
        json_decref (json);
    }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("common");
    TCase *tc = tcase_create ("pclock");
    tcase_add_test (tc, test_iso8601);
    tcase_add_test (tc, test_mono_clock);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("plog");
    tcase_add_test (tc, test_log_level_parse);
    tcase_add_test (tc, test_log_format);
    tcase_add_test (tc, test_log_journal_priorities);
    tcase_add_test (tc, test_log_levels_filter);
    tcase_add_test (tc, test_log_long_line);
    tcase_add_test (tc, test_log_no_interleave);
    tcase_add_test (tc, test_log_limited);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("jsonops");
    tcase_add_test (tc, test_jsonops);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
