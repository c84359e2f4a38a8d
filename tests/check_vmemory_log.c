// SPDX-License-Identifier: MIT
/*  check_vmemory_log - the incremental memory files with real FAISS and
    real files: many small saves, the snapshot older/newer/other than the
    log, a torn tail cut at every byte of the last record, corruption in
    the middle of the log, HNSW with incremental saves, and the migration
    of an old-format (texts.pmem) memory written by a copy of the old
    writer kept here as a test-only helper.  */
#include <check.h>
#include <dirent.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/c_api/index_io_c.h>

#include "agent/embedder.h"
#include "agent/vmemory/vmemory.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DIM 64

//  The memory folder is <tmp>/mem inside a tproc_dir; a test that fails
//  leaves it to testsuite_run, which removes the suite's whole root.
static tproc_dir_t *s_tmp;
static char s_dir [300];

static void
s_setup (void)
{
    s_tmp = tproc_dir_new ();
    ck_assert_ptr_nonnull (s_tmp);
    snprintf (s_dir, sizeof s_dir, "%s/mem", tproc_dir_name (s_tmp));
}

static void
s_teardown (void)
{
    tproc_dir_destroy (&s_tmp);
}

static vmemory_t *
s_open (const char *dir, const char *factory, size_t snap_min, char *err, size_t err_size)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dir = dir;
    opts.dim = DIM;
    opts.snapshot_min = snap_min;
    if (factory)
        ck_assert (vmemory_index_kind_parse (factory, &opts.index));
    return vmemory_open (&opts, err, err_size);
}

static vmemory_t *
s_reopen (const char *factory, size_t snap_min)
{
    char err [256];
    vmemory_t *memory = s_open (s_dir, factory, snap_min, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    return memory;
}

static void
s_text (char *text, size_t size, int i)
{
    static const char *objects [] = { "chair", "lamp", "sofa", "window", "desk", "plant", "piano" };
    snprintf (text, size, "At position %d, I saw ['%s', '%s']. I decided to forward. Reason: %d",
              i, objects [i % 7], objects [(i / 7) % 7], i * 31);
}

static void
s_add (vmemory_t *memory, int i)
{
    char text [200], err [256];
    float v [DIM];
    s_text (text, sizeof text, i);
    embed_builtin (text, strlen (text), v, DIM);
    ck_assert_msg (vmemory_add (memory, v, text, err, sizeof err) == 0, "%s", err);
}

static void
s_save (vmemory_t *memory)
{
    char err [256];
    ck_assert_msg (vmemory_save (memory, err, sizeof err) == 0, "%s", err);
}

//  Every entry 0..n-1 is there with its text, and is its own best hit.
static void
s_check_all (vmemory_t *memory, int n)
{
    ck_assert_uint_eq (vmemory_count (memory), (size_t) n);
    char text [200], err [256];
    float v [DIM];
    vmemory_hit_t hits [3];
    for (int i = 0; i < n; i++) {
        s_text (text, sizeof text, i);
        ck_assert_str_eq (vmemory_text (memory, (size_t) i), text);
        embed_builtin (text, strlen (text), v, DIM);
        ck_assert_int_ge (vmemory_search (memory, v, 3, hits, err, sizeof err), 1);
        ck_assert_float_eq_tol (hits [0].score, 1.0f, 1e-4f);
        ck_assert_str_eq (hits [0].text, text);
    }
}

static long
s_size (const char *name)
{
    char path [400];
    struct stat st;
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    return stat (path, &st) == 0 ? (long) st.st_size : -1;
}

static void
s_shell (const char *fmt, const char *a, const char *b)
{
    char cmd [1000];
    snprintf (cmd, sizeof cmd, fmt, a, b);
    ck_assert_msg (system (cmd) == 0, "%s", cmd);
}

static int
s_count_files (const char *pattern)
{
    char cmd [600];
    snprintf (cmd, sizeof cmd, "ls '%s' | grep -c -- '%s' | grep -qx 0", s_dir, pattern);
    return system (cmd) == 0 ? 0 : 1;
}

START_TEST (test_many_small_saves)
{
    vmemory_t *memory = s_reopen (NULL, 16);
    int n = 0;
    for (int save = 0; save < 120; save++) {
        for (int k = 0; k < 1 + save % 3; k++)
            s_add (memory, n++);
        s_save (memory);
    }
    //  Snapshots were taken along the way (tail over a quarter, >= 16).
    ck_assert_uint_gt (vmemory_snapshot_covers (memory), 0);
    float v [DIM];
    vmemory_hit_t before [5], after [5];
    char err [256];
    embed_builtin ("position 17 lamp sofa", 21, v, DIM);
    ck_assert_int_eq (vmemory_search (memory, v, 5, before, err, sizeof err), 5);
    vmemory_destroy (&memory);
    memory = s_reopen (NULL, 16);
    s_check_all (memory, n);
    ck_assert_int_eq (vmemory_search (memory, v, 5, after, err, sizeof err), 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq (before [i].id, after [i].id);
        ck_assert_float_eq (before [i].score, after [i].score);
    }
    ck_assert_uint_eq (vmemory_torn_bytes (memory), 0);
    //  Private files.
    struct stat st;
    char path [400];
    const char *names [] = { "memory.log", "index.faiss" };
    for (int i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/%s", s_dir, names [i]);
        ck_assert_int_eq (stat (path, &st), 0);
        ck_assert_int_eq (st.st_mode & 0777, 0600);
    }
    //  A save with nothing new writes nothing.
    long size = s_size ("memory.log");
    s_save (memory);
    ck_assert_int_eq (s_size ("memory.log"), size);
    vmemory_destroy (&memory);
}
END_TEST

START_TEST (test_snapshot_vs_log)
{
    //  Snapshot older than the log: used, and the tail added.
    vmemory_t *memory = s_reopen (NULL, 8);
    for (int i = 0; i < 40; i++)
        s_add (memory, i);
    s_save (memory);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 40);
    s_shell ("cp '%s/memory.log' '%s/log40'", s_dir, tproc_dir_name (s_tmp));
    for (int i = 40; i < 45; i++)
        s_add (memory, i);
    s_save (memory);                               //  tail 5 < 8: no snapshot
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 40);
    vmemory_destroy (&memory);
    memory = s_reopen (NULL, 8);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 40);
    s_check_all (memory, 45);
    for (int i = 45; i < 60; i++)
        s_add (memory, i);
    s_save (memory);                               //  tail 20 >= 60/4: snapshot
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 60);
    vmemory_destroy (&memory);
    //  Snapshot newer than the log (log back at 40 records): rebuilt.
    s_shell ("cp '%s/log40' '%s/memory.log'", tproc_dir_name (s_tmp), s_dir);
    memory = s_reopen (NULL, 8);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 0);
    s_check_all (memory, 40);
    vmemory_destroy (&memory);
    //  Snapshot of another log with the same count: rebuilt.
    char other [400];
    snprintf (other, sizeof other, "%s/other", tproc_dir_name (s_tmp));
    char err [256];
    vmemory_t *second = s_open (other, NULL, 8, err, sizeof err);
    ck_assert_msg (second, "%s", err);
    for (int i = 0; i < 40; i++)
        s_add (second, i);
    s_save (second);
    ck_assert_uint_eq (vmemory_snapshot_covers (second), 40);
    vmemory_destroy (&second);
    s_shell ("cp '%s/index.faiss' '%s/index.faiss'", other, s_dir);
    memory = s_reopen (NULL, 8);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 0);
    s_check_all (memory, 40);
    vmemory_destroy (&memory);
    //  A damaged snapshot is not an error either: the log is the truth.
    int fd = open (other, O_RDONLY);
    close (fd);
    snprintf (other, sizeof other, "%s/index.faiss", s_dir);
    ck_assert_int_eq (truncate (other, s_size ("index.faiss") - 7), 0);
    memory = s_reopen (NULL, 8);
    s_check_all (memory, 40);
    vmemory_destroy (&memory);
}
END_TEST

//  Writes the first `bytes` bytes of `from` to DIR/memory.log.
static void
s_restore_prefix (const char *from, long bytes)
{
    char path [400];
    snprintf (path, sizeof path, "%s/memory.log", s_dir);
    FILE *in = fopen (from, "rb"), *out = fopen (path, "wb");
    ck_assert_ptr_nonnull (in);
    ck_assert_ptr_nonnull (out);
    for (long i = 0; i < bytes; i++)
        fputc (fgetc (in), out);
    fclose (in);
    fclose (out);
}

START_TEST (test_torn_tail_every_offset)
{
    vmemory_t *memory = s_reopen (NULL, 0);
    for (int i = 0; i < 5; i++)
        s_add (memory, i);
    s_save (memory);
    long start = s_size ("memory.log");
    s_add (memory, 5);
    s_save (memory);
    long end = s_size ("memory.log");
    vmemory_destroy (&memory);
    char stash [400];
    snprintf (stash, sizeof stash, "%s/full.log", tproc_dir_name (s_tmp));
    s_shell ("cp '%s/memory.log' '%s'", s_dir, stash);
    for (long cut = start; cut < end; cut++) {
        s_restore_prefix (stash, cut);
        memory = s_reopen (NULL, 0);
        s_check_all (memory, 5);
        ck_assert_uint_eq (vmemory_torn_bytes (memory), (uint64_t) (cut - start));
        ck_assert_int_eq (s_size ("memory.log"), start);
        //  The cut bytes were kept aside, and it appends cleanly after.
        ck_assert_int_eq (s_count_files ("torn-"), cut > start);
        s_add (memory, 5);
        s_save (memory);
        vmemory_destroy (&memory);
        memory = s_reopen (NULL, 0);
        s_check_all (memory, 6);
        vmemory_destroy (&memory);
        s_shell ("rm -f '%s'/*torn-*%s", s_dir, "");
    }
}
END_TEST

//  Overwrites `len` bytes at `offset` of DIR/memory.log with `byte` (or
//  flips them when byte < 0).
static void
s_poke (long offset, long len, int byte)
{
    char path [400];
    snprintf (path, sizeof path, "%s/memory.log", s_dir);
    int fd = open (path, O_RDWR);
    ck_assert_int_ge (fd, 0);
    for (long i = 0; i < len; i++) {
        unsigned char c;
        ck_assert_int_eq (pread (fd, &c, 1, offset + i), 1);
        c = byte < 0 ? c ^ 0x40 : (unsigned char) byte;
        ck_assert_int_eq (pwrite (fd, &c, 1, offset + i), 1);
    }
    close (fd);
}

START_TEST (test_torn_batch_out_of_order)
{
    //  The last save wrote 3 records; the middle one's pages never landed
    //  (zeros) but the third did: still a torn tail of that save.
    vmemory_t *memory = s_reopen (NULL, 0);
    for (int i = 0; i < 4; i++)
        s_add (memory, i);
    s_save (memory);
    long start = s_size ("memory.log");
    s_add (memory, 4);
    s_save (memory);
    long second = s_size ("memory.log");
    for (int i = 5; i < 8; i++)
        s_add (memory, i);
    s_save (memory);
    long batch = s_size ("memory.log") - second;
    ck_assert_int_gt (second, start);
    vmemory_destroy (&memory);
    //  Records are of about the same size: the middle of the last save's
    //  bytes is inside its second record (6 of 0..7).
    s_poke (second + batch / 2, 16, 0);
    memory = s_reopen (NULL, 0);
    s_check_all (memory, 6);
    ck_assert_uint_gt (vmemory_torn_bytes (memory), 0);
    vmemory_destroy (&memory);
}
END_TEST

START_TEST (test_corrupt_middle)
{
    vmemory_t *memory = s_reopen (NULL, 0);
    for (int i = 0; i < 30; i++) {
        s_add (memory, i);
        if (i % 10 == 9)
            s_save (memory);
    }
    vmemory_destroy (&memory);
    s_poke (600, 1, -1);                    //  inside record 1 or 2 of the first save
    char err [256];
    ck_assert_ptr_null (s_open (s_dir, NULL, 0, err, sizeof err));
    ck_assert_msg (strstr (err, "corrupt in the middle"), "%s", err);
    ck_assert_int_eq (vmemory_move_aside (s_dir, err, sizeof err), 0);
    ck_assert_int_eq (s_count_files ("memory.log.bad-"), 1);
    memory = s_reopen (NULL, 0);
    ck_assert_uint_eq (vmemory_count (memory), 0);
    vmemory_destroy (&memory);
}
END_TEST

//  Files in s_dir whose name starts with `prefix`.
static int
s_count_prefix (const char *prefix)
{
    DIR *dir = opendir (s_dir);
    ck_assert_ptr_nonnull (dir);
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir (dir)))
        n += strncmp (entry->d_name, prefix, strlen (prefix)) == 0;
    closedir (dir);
    return n;
}

START_TEST (test_move_aside_never_replaces)
{
    //  Set-aside files already named for this second and the next two
    //  (an earlier move in the same second): moving the memory aside
    //  again must not replace any of them, whatever the clock says.
    vmemory_t *memory = s_reopen (NULL, 0);
    s_add (memory, 1);
    s_save (memory);
    vmemory_destroy (&memory);
    long long now = (long long) time (NULL);
    char path [600];
    for (int i = 0; i < 3; i++) {
        snprintf (path, sizeof path, "%s/memory.log.bad-%lld", s_dir, now + i);
        FILE *file = fopen (path, "w");
        ck_assert_ptr_nonnull (file);
        fputs ("precious", file);
        fclose (file);
    }
    char err [256];
    ck_assert_int_eq (vmemory_move_aside (s_dir, err, sizeof err), 0);
    ck_assert_int_eq (s_count_prefix ("memory.log.bad-"), 4);
    snprintf (path, sizeof path, "%s/memory.log", s_dir);
    ck_assert_int_ne (access (path, F_OK), 0);
    for (int i = 0; i < 3; i++) {
        snprintf (path, sizeof path, "%s/memory.log.bad-%lld", s_dir, now + i);
        FILE *file = fopen (path, "r");
        char text [16] = "";
        ck_assert_ptr_nonnull (file);
        ck_assert_ptr_nonnull (fgets (text, sizeof text, file));
        fclose (file);
        ck_assert_str_eq (text, "precious");
    }
}
END_TEST

START_TEST (test_hnsw_incremental)
{
    vmemory_t *memory = s_reopen ("hnsw", 8);
    int n = 0;
    for (int save = 0; save < 30; save++) {
        for (int k = 0; k < 3; k++)
            s_add (memory, n++);
        s_save (memory);
    }
    uint64_t covered = vmemory_snapshot_covers (memory);
    ck_assert_uint_gt (covered, 0);
    vmemory_destroy (&memory);
    memory = s_reopen ("hnsw", 8);              //  the snapshot is used
    ck_assert_str_eq (vmemory_factory (memory), "HNSW32");
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), covered);
    s_check_all (memory, n);
    s_add (memory, n++);
    s_save (memory);
    vmemory_destroy (&memory);
    memory = s_reopen ("flat", 8);              //  another kind: rebuilt from the log
    ck_assert_str_eq (vmemory_factory (memory), "Flat");
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 0);
    s_check_all (memory, n);
    vmemory_destroy (&memory);
}
END_TEST

//  --- the old (version 1) writer, kept here only to make old dirs -------

static uint64_t
s_fnv (uint64_t hash, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= bytes [i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

static void
s_put (unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static void
s_write_old_format (const char *dir, const char *factory, int n)
{
    ck_assert_int_eq (system ("true"), 0);
    char cmd [400];
    snprintf (cmd, sizeof cmd, "mkdir -p -m 700 '%s'", dir);
    ck_assert_int_eq (system (cmd), 0);
    FaissIndex *index = NULL;
    ck_assert_int_eq (faiss_index_factory (&index, DIM, factory, METRIC_INNER_PRODUCT), 0);
    unsigned char *payload = NULL;
    size_t bytes = 0;
    char text [200];
    float v [DIM];
    for (int i = 0; i < n; i++) {
        s_text (text, sizeof text, i);
        embed_builtin (text, strlen (text), v, DIM);
        ck_assert_int_eq (faiss_Index_add (index, 1, v), 0);
        size_t len = strlen (text);
        payload = realloc (payload, bytes + 4 + len);
        s_put (payload + bytes, len, 4);
        memcpy (payload + bytes + 4, text, len);
        bytes += 4 + len;
    }
    char index_path [400], texts_path [400];
    snprintf (index_path, sizeof index_path, "%s/index.faiss", dir);
    snprintf (texts_path, sizeof texts_path, "%s/texts.pmem", dir);
    ck_assert_int_eq (faiss_write_index_fname (index, index_path), 0);
    faiss_Index_free (index);
    FILE *file = fopen (index_path, "rb");
    uint64_t index_fnv = 0xcbf29ce484222325ull, index_bytes = 0;
    int c;
    while ((c = fgetc (file)) != EOF) {
        unsigned char byte = (unsigned char) c;
        index_fnv = s_fnv (index_fnv, &byte, 1);
        index_bytes++;
    }
    fclose (file);
    unsigned char h [132] = { 0 };
    memcpy (h, "PMEMTXT", 8);
    s_put (h + 8, 1, 4);
    s_put (h + 12, DIM, 4);
    s_put (h + 16, (uint64_t) n, 8);
    s_put (h + 24, bytes, 8);
    s_put (h + 32, s_fnv (0xcbf29ce484222325ull, payload, bytes), 8);
    s_put (h + 40, index_bytes, 8);
    s_put (h + 48, index_fnv, 8);
    s_put (h + 56, strlen (factory), 4);
    memcpy (h + 60, factory, strlen (factory));
    s_put (h + 124, s_fnv (0xcbf29ce484222325ull, h, 124), 8);
    file = fopen (texts_path, "wb");
    ck_assert_int_eq (fwrite (h, 1, 132, file), 132);
    ck_assert_int_eq (fwrite (payload, 1, bytes, file), bytes);
    fclose (file);
    free (payload);
}

START_TEST (test_migration)
{
    const char *factories [] = { "Flat", "HNSW32" }, *kinds [] = { "flat", "hnsw" };
    for (int f = 0; f < 2; f++) {
        s_write_old_format (s_dir, factories [f], 50);
        vmemory_t *memory = s_reopen (kinds [f], 0);
        ck_assert_str_eq (vmemory_factory (memory), factories [f]);
        ck_assert_uint_eq (vmemory_snapshot_covers (memory), 50);
        s_check_all (memory, 50);
        ck_assert_int_eq (s_count_files ("^texts.pmem.migrated$"), 1);
        ck_assert_int_eq (s_count_files ("^index.faiss.migrated$"), 1);
        ck_assert_int_eq (s_count_files ("^texts.pmem$"), 0);
        s_add (memory, 50);
        s_save (memory);
        vmemory_destroy (&memory);
        memory = s_reopen (kinds [f], 0);
        s_check_all (memory, 51);
        ck_assert_uint_eq (vmemory_snapshot_covers (memory), 50);
        vmemory_destroy (&memory);
        //  A crash after the log was durable but before the old files
        //  were renamed: the next open finishes the job from the log.
        s_shell ("cd '%s' && mv texts.pmem.migrated texts.pmem && mv index.faiss.migrated "
                 "index.faiss%s", s_dir, "");
        memory = s_reopen (kinds [f], 0);
        s_check_all (memory, 51);
        ck_assert_int_eq (s_count_files ("^texts.pmem$"), 0);
        vmemory_destroy (&memory);
        ck_assert_int_eq (tproc_remove_tree (s_dir), 0);
    }
    //  A damaged old memory is an error, and nothing is renamed.
    s_write_old_format (s_dir, "Flat", 10);
    char path [400], err [256];
    snprintf (path, sizeof path, "%s/texts.pmem", s_dir);
    ck_assert_int_eq (truncate (path, 150), 0);
    ck_assert_ptr_null (s_open (s_dir, NULL, 0, err, sizeof err));
    ck_assert_int_eq (s_count_files ("^texts.pmem$"), 1);
    ck_assert_int_eq (s_count_files ("memory.log"), 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("vmemory_log");
    TCase *tc = tcase_create ("log");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_many_small_saves);
    tcase_add_test (tc, test_snapshot_vs_log);
    tcase_add_test (tc, test_torn_tail_every_offset);
    tcase_add_test (tc, test_torn_batch_out_of_order);
    tcase_add_test (tc, test_corrupt_middle);
    tcase_add_test (tc, test_move_aside_never_replaces);
    tcase_add_test (tc, test_hnsw_incremental);
    tcase_add_test (tc, test_migration);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
