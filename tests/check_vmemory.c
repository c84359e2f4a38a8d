// SPDX-License-Identifier: MIT
/*  check_vmemory - the FAISS memory with real FAISS and real files:
    add/search, persist/reload, HNSW, the lock, and the ways the memory log
    can be bad (too short for its header, flipped header bytes, garbage, a
    record lying about its length, another dimension, a snapshot without
    its log), each a clear error, then move-aside. The log's torn tails,
    snapshots and the migration are in check_vmemory_log.c.  */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "agent/embedder.h"
#include "agent/vmemory/vmemory.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DIM 64

//  The memory folder is <tmp>/mem/Agent1, inside a tproc_dir: its parents
//  do not exist yet, as for a first agent start. A test that fails leaves
//  the tproc_dir to testsuite_run, which removes the suite's whole root.
static tproc_dir_t *s_tmp;
static char s_dir [256];
static size_t s_snap_min;       //  snapshot_min for s_open (0: default)

static void
s_setup (void)
{
    s_tmp = tproc_dir_new ();
    ck_assert_ptr_nonnull (s_tmp);
    snprintf (s_dir, sizeof s_dir, "%s/mem/Agent1", tproc_dir_name (s_tmp));
}

static void
s_teardown (void)
{
    tproc_dir_destroy (&s_tmp);
}

static vmemory_t *
s_open (const char *dir, int dim, const char *factory, char *err, size_t err_size)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dir = dir;
    opts.dim = dim;
    opts.snapshot_min = s_snap_min;
    if (factory)
        ck_assert (vmemory_index_kind_parse (factory, &opts.index));
    return vmemory_open (&opts, err, err_size);
}

static void
s_add (vmemory_t *memory, const char *text)
{
    float v [DIM];
    embed_builtin (text, strlen (text), v, DIM);
    char err [256];
    ck_assert_msg (vmemory_add (memory, v, text, err, sizeof err) == 0, "%s", err);
}

static const char *
s_best (vmemory_t *memory, const char *query)
{
    float v [DIM];
    embed_builtin (query, strlen (query), v, DIM);
    vmemory_hit_t hits [3];
    char err [256];
    int n = vmemory_search (memory, v, 3, hits, err, sizeof err);
    ck_assert_int_ge (n, 1);
    return hits [0].text;
}

static void
s_fill (vmemory_t *memory)
{
    char text [128];
    const char *objects [] = { "chair", "lamp", "sofa", "window", "desk", "plant" };
    for (int p = 0; p < 30; p++) {
        snprintf (text, sizeof text, "At position %d, I saw ['%s', '%s']. I decided to forward.",
                  p, objects [p % 6], objects [(p + 1) % 6]);
        s_add (memory, text);
    }
}

START_TEST (test_add_search_ram)
{
    char err [256];
    vmemory_t *memory = s_open (NULL, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    float v [DIM];
    vmemory_hit_t hits [3];
    embed_builtin ("x", 1, v, DIM);
    ck_assert_int_eq (vmemory_search (memory, v, 3, hits, err, sizeof err), 0);
    s_fill (memory);
    ck_assert_uint_eq (vmemory_count (memory), 30);
    const char *best = s_best (memory, "What do I know about position 14 with what I see: sofa, window?");
    ck_assert_str_eq (best, "At position 14, I saw ['sofa', 'window']. I decided to forward.");
    //  Scores are cosines, best first.
    embed_builtin (best, strlen (best), v, DIM);
    int n = vmemory_search (memory, v, 3, hits, err, sizeof err);
    ck_assert_int_eq (n, 3);
    ck_assert_float_eq_tol (hits [0].score, 1.0f, 1e-4f);
    ck_assert_int_eq (hits [0].id, 14);
    ck_assert (hits [0].score >= hits [1].score && hits [1].score >= hits [2].score);
    //  Non-finite vectors are refused; the memory is unchanged.
    v [3] = 1.0f / 0.0f;
    ck_assert_int_eq (vmemory_add (memory, v, "bad", err, sizeof err), -1);
    ck_assert_uint_eq (vmemory_count (memory), 30);
    ck_assert_str_eq (vmemory_text (memory, 0), "At position 0, I saw ['chair', 'lamp']. I decided to forward.");
    ck_assert_ptr_null (vmemory_text (memory, 30));
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);      //  no dir: no-op
    vmemory_destroy (&memory);
    ck_assert_ptr_null (memory);
}
END_TEST

START_TEST (test_persist_reload)
{
    char err [256];
    vmemory_t *memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    s_fill (memory);
    s_add (memory, "");                          //  empty text is a valid entry
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    //  Private: 0700 dir, 0600 files.
    struct stat st;
    ck_assert_int_eq (stat (s_dir, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0700);
    char path [400];
    snprintf (path, sizeof path, "%s/memory.log", s_dir);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0600);
    //  Locked while open.
    ck_assert_ptr_null (s_open (s_dir, DIM, NULL, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "in use by another process"));
    vmemory_destroy (&memory);

    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_uint_eq (vmemory_count (memory), 31);
    ck_assert_str_eq (vmemory_text (memory, 30), "");
    ck_assert_str_eq (s_best (memory, "position 22 with what I see: desk, plant"),
                      "At position 22, I saw ['desk', 'plant']. I decided to forward.");
    //  It resumes: add more, save, reload.
    s_add (memory, "At position 99, I saw ['piano']. I decided to end.");
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    vmemory_destroy (&memory);
    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_uint_eq (vmemory_count (memory), 32);
    ck_assert_str_eq (s_best (memory, "piano"), "At position 99, I saw ['piano']. I decided to end.");
    vmemory_destroy (&memory);
}
END_TEST

START_TEST (test_hnsw)
{
    char err [256];
    vmemory_t *memory = s_open (s_dir, DIM, "hnsw", err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    s_fill (memory);
    ck_assert_str_eq (s_best (memory, "What do I know about position 8 with what I see: sofa, window?"),
                      "At position 8, I saw ['sofa', 'window']. I decided to forward.");
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    vmemory_destroy (&memory);
    //  Reopened as hnsw: the saved HNSW index is used.
    memory = s_open (s_dir, DIM, "hnsw", err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_str_eq (vmemory_factory (memory), "HNSW32");
    ck_assert_uint_eq (vmemory_count (memory), 30);
    ck_assert_str_eq (s_best (memory, "position 8 sofa window"),
                      "At position 8, I saw ['sofa', 'window']. I decided to forward.");
    vmemory_destroy (&memory);
    //  Reopened with the default (flat): rebuilt from the log as Flat.
    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_str_eq (vmemory_factory (memory), "Flat");
    ck_assert_uint_eq (vmemory_count (memory), 30);
    ck_assert_str_eq (s_best (memory, "position 8 sofa window"),
                      "At position 8, I saw ['sofa', 'window']. I decided to forward.");
    vmemory_destroy (&memory);
    //  Bad options are refused clearly (other kinds: check_vmemory_index).
    ck_assert_ptr_null (s_open (NULL, 0, NULL, err, sizeof err));
}
END_TEST

//  Saves a memory, lets `damage` change a file, expects `expect` in the
//  error, then checks move-aside lets a fresh memory start.
static void
s_damage_case (const char *file, void (*damage) (const char *path), const char *expect)
{
    char err [256];
    vmemory_t *memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    s_fill (memory);
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    //  A second save, so the log's records come from two saves.
    s_add (memory, "At position 99, I saw ['piano']. I decided to end.");
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    vmemory_destroy (&memory);
    char path [400];
    snprintf (path, sizeof path, "%s/%s", s_dir, file);
    damage (path);
    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (!memory, "%s: damaged memory was accepted", expect);
    ck_assert_msg (strstr (err, expect), "error \"%s\" lacks \"%s\"", err, expect);
    ck_assert_int_eq (vmemory_move_aside (s_dir, err, sizeof err), 0);
    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_uint_eq (vmemory_count (memory), 0);
    vmemory_destroy (&memory);
}

static void s_truncate_tiny (const char *path) { ck_assert_int_eq (truncate (path, 10), 0); }
//  Flips one byte at `offset`.
static void s_flip_at (const char *path, long offset)
{
    int fd = open (path, O_RDWR);
    unsigned char byte;
    ck_assert_int_eq (pread (fd, &byte, 1, offset), 1);
    byte ^= 0x40;
    ck_assert_int_eq (pwrite (fd, &byte, 1, offset), 1);
    close (fd);
}
static void s_flip_header (const char *path) { s_flip_at (path, 40); }
static void s_remove (const char *path) { ck_assert_int_eq (unlink (path), 0); }
static void s_garbage (const char *path)
{
    FILE *file = fopen (path, "wb");
    for (int i = 0; i < 4096; i++)
        fputc ((i * 7919) & 0xff, file);
    fclose (file);
}
//  The first record (right after the 100-byte header) claims 2^31 bytes
//  of text: the claim must be checked against the limits and the file
//  size, not believed (no 2 GB malloc); valid records of a later save
//  follow, so this is corruption, not a torn tail.
static void s_lying_length (const char *path)
{
    int fd = open (path, O_RDWR);
    unsigned char len [4] = { 0, 0, 0, 0x80 };
    ck_assert_int_eq (pwrite (fd, len, 4, 100), 4);
    close (fd);
}

//  Entries of `dir` whose name contains `part`.
static int
s_count_named (const char *dir, const char *part)
{
    DIR *handle = opendir (dir);
    ck_assert_msg (handle, "cannot list %s", dir);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir (handle)))
        count += strstr (entry->d_name, part) != NULL;
    closedir (handle);
    return count;
}

START_TEST (test_corrupt_files)
{
    s_damage_case ("memory.log", s_truncate_tiny, "truncated");
    s_damage_case ("memory.log", s_flip_header, "header checksum mismatch");
    s_damage_case ("memory.log", s_garbage, "bad magic");
    s_damage_case ("memory.log", s_lying_length, "corrupt in the middle");
    //  A snapshot without its log: the log was lost, not to be guessed.
    s_snap_min = 1;
    s_damage_case ("memory.log", s_remove, "has index.faiss but not memory.log");
    s_snap_min = 0;
    //  The bad files were kept aside for a post-mortem.
    ck_assert_int_gt (s_count_named (s_dir, "bad-"), 0);
}
END_TEST

START_TEST (test_dimension_mismatch)
{
    char err [256];
    vmemory_t *memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    s_fill (memory);
    ck_assert_int_eq (vmemory_save (memory, err, sizeof err), 0);
    vmemory_destroy (&memory);
    ck_assert_ptr_null (s_open (s_dir, 128, NULL, err, sizeof err));
    ck_assert_msg (strstr (err, "dimension 64 but the embedder gives 128"), "%s", err);
    //  The dir is not locked by the failed open.
    memory = s_open (s_dir, DIM, NULL, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    vmemory_destroy (&memory);
}
END_TEST

START_TEST (test_limits)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = DIM;
    opts.max_text_bytes = 10;
    opts.max_entries = 2;
    char err [256];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    ck_assert_ptr_nonnull (memory);
    float v [DIM];
    embed_builtin ("a", 1, v, DIM);
    //  Cut at 10 bytes, not inside the UTF-8 "é" at bytes 9-10.
    ck_assert_int_eq (vmemory_add (memory, v, "abcdefghi\xc3\xa9xyz", err, sizeof err), 0);
    ck_assert_str_eq (vmemory_text (memory, 0), "abcdefghi");
    ck_assert_uint_eq (vmemory_truncated (memory), 1);
    ck_assert_int_eq (vmemory_add (memory, v, NULL, err, sizeof err), 0);
    ck_assert_int_eq (vmemory_add (memory, v, "c", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "full"));
    vmemory_hit_t hits [VMEMORY_MAX_TOP_K];
    ck_assert_int_eq (vmemory_search (memory, v, 1000, hits, err, sizeof err), 2);
    vmemory_destroy (&memory);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("vmemory");
    TCase *tc = tcase_create ("faiss");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_add_search_ram);
    tcase_add_test (tc, test_persist_reload);
    tcase_add_test (tc, test_hnsw);
    tcase_add_test (tc, test_corrupt_files);
    tcase_add_test (tc, test_dimension_mismatch);
    tcase_add_test (tc, test_limits);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
