// SPDX-License-Identifier: MIT
/*  check_jfile - the journal's record files on a real filesystem: appends
    are gathered in memory until a flush (one write for a whole turn), their
    disk space is reserved at append time (so a full disk refuses the
    append, not the later flush), and sync, destroy and scan see every
    record in order.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/jfile.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

static off_t
s_file_size (const char *path)
{
    struct stat st;
    ck_assert_int_eq (stat (path, &st), 0);
    return st.st_size;
}

typedef struct {
    int count;
    char last [64];
} seen_t;

static int
s_record (const void *payload, size_t size, void *arg)
{
    seen_t *seen = arg;
    ck_assert_uint_lt (size, sizeof seen->last);
    memcpy (seen->last, payload, size);
    seen->last [size] = 0;
    seen->count++;
    return 0;
}

static seen_t
s_scan (const char *path)
{
    seen_t seen = { 0 };
    jfile_report_t report;
    char why [256];
    ck_assert_int_eq (jfile_scan (path, false, s_record, &seen, &report, why, sizeof why),
                      JFILE_OK);
    ck_assert_uint_eq (report.torn_bytes, 0);
    return seen;
}

START_TEST (test_gathered_until_flush)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "log");
    char why [256];
    jfile_t *file = jfile_open (path, why, sizeof why);
    ck_assert_msg (file, "%s", why);
    off_t empty = s_file_size (path);
    ck_assert_int_eq (empty, JFILE_MAGIC_SIZE);
    char text [32];
    for (int i = 0; i < 100; i++) {
        int len = snprintf (text, sizeof text, "record %d", i);
        ck_assert_int_eq (jfile_append (file, text, (size_t) len), 0);
    }
    //  Nothing written yet, but counted, and the space is reserved.
    ck_assert (jfile_pending (file));
    ck_assert_int_eq (s_file_size (path), empty);
    ck_assert_uint_gt (jfile_size (file), (uint64_t) empty);
    struct stat st;
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_ge ((long long) st.st_blocks * 512, (long long) jfile_size (file));
    //  One flush writes them all, in order.
    ck_assert_int_eq (jfile_flush (file), 0);
    ck_assert (!jfile_pending (file));
    ck_assert_int_eq (s_file_size (path), (off_t) jfile_size (file));
    seen_t seen = s_scan (path);
    ck_assert_int_eq (seen.count, 100);
    ck_assert_str_eq (seen.last, "record 99");
    //  Sync and destroy write what is gathered too.
    ck_assert_int_eq (jfile_append (file, "synced", 6), 0);
    ck_assert_int_eq (jfile_sync (file), 0);
    ck_assert_str_eq (s_scan (path).last, "synced");
    ck_assert_int_eq (jfile_append (file, "closed", 6), 0);
    jfile_destroy (&file);
    ck_assert_ptr_null (file);
    seen = s_scan (path);
    ck_assert_int_eq (seen.count, 102);
    ck_assert_str_eq (seen.last, "closed");
    //  The reserved blocks past the end are not records: a reopened file
    //  appends after the last one.
    file = jfile_open (path, why, sizeof why);
    ck_assert_msg (file, "%s", why);
    ck_assert_int_eq (jfile_append (file, "reopened", 8), 0);
    jfile_destroy (&file);
    seen = s_scan (path);
    ck_assert_int_eq (seen.count, 103);
    ck_assert_str_eq (seen.last, "reopened");
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

static int
s_count (const void *payload, size_t size, void *arg)
{
    ck_assert_uint_eq (size, 60000);
    ck_assert_int_eq (((const char *) payload) [0], 'A' + *(long *) arg % 26);
    (*(long *) arg)++;
    return 0;
}

//  More than the gathering bound in one turn: written as it goes, none lost.
START_TEST (test_large_turn)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "log");
    char why [256];
    jfile_t *file = jfile_open (path, why, sizeof why);
    ck_assert_msg (file, "%s", why);
    static char big [60000];
    memset (big, 'b', sizeof big);
    for (int i = 0; i < 200; i++) {
        big [0] = (char) ('A' + i % 26);
        ck_assert_int_eq (jfile_append (file, big, sizeof big), 0);
    }
    //  12 MB appended; at most the bound (1 MiB) is still in memory.
    ck_assert_int_ge (s_file_size (path), (off_t) (jfile_size (file) - 1024 * 1024));
    ck_assert_int_eq (jfile_sync (file), 0);
    jfile_destroy (&file);
    long count = 0;
    jfile_report_t report;
    ck_assert_int_eq (jfile_scan (path, false, s_count, &count, &report, why, sizeof why),
                      JFILE_OK);
    ck_assert_int_eq (count, 200);
    ck_assert_uint_eq (report.records, 200);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("jfile");
    TCase *tc = tcase_create ("jfile");
    tcase_add_test (tc, test_gathered_until_flush);
    tcase_add_test (tc, test_large_turn);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
