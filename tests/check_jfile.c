// SPDX-License-Identifier: MIT
/*  check_jfile - the journal's record files on a real filesystem: appends
    are gathered in memory until a flush (one write for a whole turn), their
    disk space is reserved at append time (so a full disk refuses the
    append, not the later flush), and sync, destroy and scan see every
    record in order. The checksum is CRC-32C (known values; the hardware
    path equals the table on every length and alignment), and files of the
    format before (zlib's CRC-32, "PARLEYJ1") are still read and appended
    to in their own format. A damaged tail - torn, zero-filled, garbage -
    is cut with its kind reported; damage with a valid record after it is
    corruption.
*/
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "broker/crc32c.h"
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

START_TEST (test_crc32c)
{
    //  Known values (RFC 3720, B.4, and the usual check string).
    ck_assert_uint_eq (crc32c (0, "123456789", 9), 0xE3069283u);
    uint8_t zeros [32] = { 0 }, ones [32];
    memset (ones, 0xff, sizeof ones);
    ck_assert_uint_eq (crc32c (0, zeros, 32), 0x8A9136AAu);
    ck_assert_uint_eq (crc32c (0, ones, 32), 0x62A8AB43u);
    ck_assert_uint_eq (crc32c (0, "", 0), 0);
    //  Whatever the CPU path, the table's value, on lengths around the
    //  three-stream blocks and at every alignment; chained in two parts.
    size_t size = 3 * 8192 * 2 + 100;
    uint8_t *data = malloc (size + 8);
    uint32_t state = 1;
    for (size_t i = 0; i < size + 8; i++) {
        state = state * 1103515245u + 12345u;
        data [i] = (uint8_t) (state >> 16);
    }
    size_t lengths [] = { 0, 1, 7, 8, 9, 255, 767, 768, 769, 1000, 3 * 8192 - 1, 3 * 8192,
                          3 * 8192 + 1, 3 * 8192 + 777, size };
    for (size_t l = 0; l < sizeof lengths / sizeof lengths [0]; l++)
        for (size_t align = 0; align < 8; align++) {
            uint32_t want = crc32c_table (0, data + align, lengths [l]);
            ck_assert_msg (crc32c (0, data + align, lengths [l]) == want,
                           "%s: length %zu at +%zu", crc32c_impl (), lengths [l], align);
            size_t half = lengths [l] / 2;
            ck_assert_uint_eq (crc32c (crc32c (0, data + align, half), data + align + half,
                                       lengths [l] - half), want);
        }
    free (data);
}
END_TEST

static void
s_put32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

//  A file in the format before CRC-32C, written here from its
//  description: "PARLEYJ1", then per record length, crc32 (zlib) of the
//  payload, crc32 of those 8 bytes, payload.
static void
s_write_v1 (const char *path, int count)
{
    FILE *file = fopen (path, "wb");
    ck_assert_ptr_nonnull (file);
    ck_assert_uint_eq (fwrite ("PARLEYJ1", 1, 8, file), 8);
    for (int i = 0; i < count; i++) {
        char text [32];
        int len = snprintf (text, sizeof text, "old %d", i);
        uint8_t head [12];
        s_put32 (head, (uint32_t) len);
        s_put32 (head + 4, (uint32_t) crc32 (0, (const Bytef *) text, (uInt) len));
        s_put32 (head + 8, (uint32_t) crc32 (0, head, 8));
        ck_assert_uint_eq (fwrite (head, 1, 12, file), 12);
        ck_assert_uint_eq (fwrite (text, 1, (size_t) len, file), (size_t) len);
    }
    fclose (file);
}

START_TEST (test_old_format)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "log");
    s_write_v1 (path, 10);
    seen_t seen = s_scan (path);
    ck_assert_int_eq (seen.count, 10);
    ck_assert_str_eq (seen.last, "old 9");
    //  Appended to in its own format: one file, one checksum.
    char why [256];
    jfile_t *file = jfile_open (path, why, sizeof why);
    ck_assert_msg (file, "%s", why);
    ck_assert_int_eq (jfile_version (file), 1);
    ck_assert_int_eq (jfile_append (file, "new", 3), 0);
    ck_assert_int_eq (jfile_sync (file), 0);
    jfile_destroy (&file);
    seen = s_scan (path);
    ck_assert_int_eq (seen.count, 11);
    ck_assert_str_eq (seen.last, "new");
    size_t size;
    char *bytes = testsuite_read_file (path, &size);
    ck_assert_int_eq (memcmp (bytes, "PARLEYJ1", 8), 0);
    //  The new record's checksum is zlib's.
    const uint8_t *head = (const uint8_t *) bytes + size - 15;
    uint32_t sum = (uint32_t) crc32 (0, (const Bytef *) "new", 3);
    ck_assert_int_eq (memcmp (head + 4, (uint8_t [4]) { (uint8_t) sum, (uint8_t) (sum >> 8),
                      (uint8_t) (sum >> 16), (uint8_t) (sum >> 24) }, 4), 0);
    free (bytes);
    //  A new file is of the current format, checksummed with CRC-32C.
    char *fresh = tproc_dir_path (dir, "fresh");
    file = jfile_open (fresh, why, sizeof why);
    ck_assert_int_eq (jfile_version (file), 2);
    ck_assert_int_eq (jfile_append (file, "abc", 3), 0);
    jfile_destroy (&file);
    bytes = testsuite_read_file (fresh, &size);
    ck_assert_int_eq (memcmp (bytes, JFILE_MAGIC, 8), 0);
    uint8_t want [12];
    s_put32 (want, 3);
    s_put32 (want + 4, crc32c (0, "abc", 3));
    s_put32 (want + 8, crc32c (0, want, 8));
    ck_assert_int_eq (memcmp (bytes + 8, want, 12), 0);
    free (bytes);
    //  Neither magic: refused, by scan and by open.
    char *other = tproc_dir_path (dir, "other");
    ck_assert (tproc_write_file (other, "NOTAJOURNAL, just text"));
    jfile_report_t report;
    ck_assert_int_eq (jfile_scan (other, false, s_record, &seen, &report, why, sizeof why),
                      JFILE_CORRUPT);
    ck_assert_ptr_nonnull (strstr (why, "not a Parley journal file"));
    ck_assert_ptr_null (jfile_open (other, why, sizeof why));
    free (other);
    free (fresh);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

//  `count` records "record <i>", flushed and closed.
static void
s_make (const char *path, int count)
{
    char why [256];
    jfile_t *file = jfile_open (path, why, sizeof why);
    ck_assert_msg (file, "%s", why);
    char text [32];
    for (int i = 0; i < count; i++) {
        int len = snprintf (text, sizeof text, "record %d", i);
        ck_assert_int_eq (jfile_append (file, text, (size_t) len), 0);
    }
    jfile_destroy (&file);
}

static void
s_add (const char *path, const void *bytes, size_t size)
{
    int fd = open (path, O_WRONLY | O_APPEND);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, bytes, size), (ssize_t) size);
    close (fd);
}

START_TEST (test_damaged_tails)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "log");
    char why [256];
    jfile_report_t report;
    static uint8_t block [4096];
    struct {
        const char *what;
        size_t size;
        uint8_t fill;
        jfile_tail_t kind;
    } tails [] = {
        { "zeros after a power cut", 4096, 0, JFILE_TAIL_ZEROS },
        { "a few zeros", 5, 0, JFILE_TAIL_ZEROS },
        { "garbage", 100, 0xA5, JFILE_TAIL_GARBAGE },
        { "garbage shorter than a header", 7, 0xA5, JFILE_TAIL_TORN },
    };
    for (size_t t = 0; t < sizeof tails / sizeof tails [0]; t++) {
        unlink (path);
        s_make (path, 20);
        off_t good = s_file_size (path);
        memset (block, tails [t].fill, tails [t].size);
        s_add (path, block, tails [t].size);
        seen_t seen = { 0 };
        ck_assert_msg (jfile_scan (path, false, s_record, &seen, &report, why, sizeof why)
                       == JFILE_OK, "%s: %s", tails [t].what, why);
        ck_assert_int_eq (seen.count, 20);
        ck_assert_uint_eq (report.torn_bytes, tails [t].size);
        ck_assert_msg (report.tail == tails [t].kind, "%s: tail kind %d", tails [t].what,
                       (int) report.tail);
        ck_assert_int_eq (s_file_size (path), good);
        //  Cut for good: appends follow the last record.
        s_make (path, 1);
        ck_assert_int_eq (s_scan (path).count, 21);
    }
    //  A whole file of zeros (created, then a power cut): empty.
    unlink (path);
    memset (block, 0, sizeof block);
    int fd = open (path, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_eq (write (fd, block, 4096), 4096);
    close (fd);
    seen_t seen = { 0 };
    ck_assert_int_eq (jfile_scan (path, false, s_record, &seen, &report, why, sizeof why),
                      JFILE_OK);
    ck_assert_int_eq (report.tail, JFILE_TAIL_ZEROS);
    ck_assert_int_eq (s_file_size (path), 0);
    //  Zeros, then valid records: corruption in the middle, not a tail.
    unlink (path);
    s_make (path, 5);
    off_t at = s_file_size (path);
    s_add (path, block, 64);
    char *second = tproc_dir_path (dir, "second");
    s_make (second, 3);
    size_t size;
    char *records = testsuite_read_file (second, &size);
    s_add (path, records + JFILE_MAGIC_SIZE, size - JFILE_MAGIC_SIZE);
    free (records);
    ck_assert_int_eq (jfile_scan (path, false, s_record, &seen, &report, why, sizeof why),
                      JFILE_CORRUPT);
    ck_assert_uint_eq (report.bad_offset, (uint64_t) at);
    ck_assert_ptr_nonnull (strstr (why, "--repair"));
    //  The file is untouched until --repair.
    ck_assert_int_eq (s_file_size (path), at + 64 + (off_t) (size - JFILE_MAGIC_SIZE));
    free (second);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

//  Once a sync failed, the file's later syncs fail too: the kernel may
//  have dropped what it could not write. (Made to fail here by syncing a
//  file whose descriptor was closed under it.)
START_TEST (test_failed_sync_sticks)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "log");
    char why [256];
    jfile_t *file = jfile_open (path, why, sizeof why);
    ck_assert_int_eq (jfile_append (file, "a", 1), 0);
    ck_assert_int_eq (jfile_sync (file), 0);
    ck_assert (!jfile_failed (file));
    ck_assert_int_eq (jfile_append (file, "b", 1), 0);
    ck_assert_int_eq (jfile_flush (file), 0);
    int fd = jfile_fd (file);
    int saved = dup (fd);
    close (fd);
    ck_assert_int_eq (jfile_sync (file), -1);
    ck_assert (jfile_failed (file));
    //  The descriptor works again; the file stays failed.
    ck_assert_int_eq (dup2 (saved, fd), fd);
    close (saved);
    ck_assert_int_eq (jfile_sync (file), -1);
    ck_assert_int_eq (errno, EIO);
    jfile_destroy (&file);
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
    tcase_add_test (tc, test_crc32c);
    tcase_add_test (tc, test_old_format);
    tcase_add_test (tc, test_damaged_tails);
    tcase_add_test (tc, test_failed_sync_sticks);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
