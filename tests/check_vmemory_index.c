// SPDX-License-Identifier: MIT
/*  check_vmemory_index - the memory's index kinds (flat, hnsw, ivf) with
    real FAISS and real files: the nearest neighbours each one finds on a
    seeded set (exact for flat; recall@5 against a brute-force answer
    computed here, at least S_RECALL_FLOOR, for hnsw and ivf), IVF's
    training and retraining, persistence and restart with each kind,
    switching the kind between runs (rebuilt from the log), and bad
    values of --memory-index, PARLEY_MEMORY_INDEX and a role file's
    memory.index.

    The set: S_COUNT unit vectors of dimension DIM drawn around S_CENTERS
    seeded centres (a clustered set, as embeddings of related texts are;
    uniform random points in many dimensions have no neighbours worth the
    name and no index finds them quickly). Queries are other points drawn
    the same way. Everything is seeded: the answers are the same in every
    run, so the floor cannot flake.  */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/embedder.h"
#include "agent/vmemory/vmemory.h"
#include "lib/testbroker.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DIM 32
#define S_COUNT 6000            //  > VMEMORY_IVF_TRAIN_MIN: ivf gets trained
#define S_CENTERS 64
#define S_QUERIES 200
#define S_K 5
//  Documented in docs/PERFORMANCE.md beside the benchmark's figures.
#define S_RECALL_FLOOR 0.90

static tproc_dir_t *s_tmp;
static char s_dir [256];
static float *s_set;            //  S_COUNT * DIM
static float *s_queries;        //  S_QUERIES * DIM
static int64_t s_exact [S_QUERIES][S_K];

static uint64_t s_rng;

static double
s_uniform (void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (double) (s_rng >> 11) / 9007199254740992.0;
}

static void
s_normalise (float *v)
{
    double norm = 0;
    for (int j = 0; j < DIM; j++)
        norm += (double) v [j] * v [j];
    norm = sqrt (norm);
    for (int j = 0; j < DIM; j++)
        v [j] = (float) (v [j] / norm);
}

static void
s_draw (float *out, size_t n, const float *centres)
{
    for (size_t i = 0; i < n; i++) {
        const float *c = centres + (size_t) (s_uniform () * S_CENTERS) * DIM;
        for (int j = 0; j < DIM; j++)
            out [i * DIM + j] = c [j] + (float) (s_uniform () - 0.5) * 0.6f;
        s_normalise (out + i * DIM);
    }
}

static float
s_dot (const float *a, const float *b)
{
    float sum = 0;
    for (int j = 0; j < DIM; j++)
        sum += a [j] * b [j];
    return sum;
}

//  The true top S_K of each query among the first `n` entries, by brute
//  force, into s_exact.
static void
s_truth (size_t n)
{
    for (int q = 0; q < S_QUERIES; q++) {
        float best [S_K];
        for (int k = 0; k < S_K; k++) {
            best [k] = -2;
            s_exact [q][k] = -1;
        }
        for (int64_t i = 0; i < (int64_t) n; i++) {
            float score = s_dot (s_queries + q * DIM, s_set + i * DIM);
            int k = S_K;
            while (k > 0 && score > best [k - 1])
                k--;
            if (k == S_K)
                continue;
            memmove (best + k + 1, best + k, sizeof (float) * (S_K - 1 - k));
            memmove (s_exact [q] + k + 1, s_exact [q] + k, sizeof (int64_t) * (S_K - 1 - k));
            best [k] = score;
            s_exact [q][k] = i;
        }
    }
}

//  The set and the queries.
static void
s_make_set (void)
{
    if (s_set)
        return;
    s_rng = 0x9e3779b97f4a7c15ull;
    float centres [S_CENTERS * DIM];
    for (int c = 0; c < S_CENTERS; c++) {
        for (int j = 0; j < DIM; j++)
            centres [c * DIM + j] = (float) (s_uniform () - 0.5);
        s_normalise (centres + c * DIM);
    }
    s_set = malloc (sizeof (float) * S_COUNT * DIM);
    s_queries = malloc (sizeof (float) * S_QUERIES * DIM);
    ck_assert (s_set && s_queries);
    s_draw (s_set, S_COUNT, centres);
    s_draw (s_queries, S_QUERIES, centres);
}

static void
s_setup (void)
{
    s_make_set ();
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
s_open (const char *dir, vmemory_index_kind_t kind)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dir = dir;
    opts.dim = DIM;
    opts.index = kind;
    char err [256];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    ck_assert_int_eq (vmemory_index_kind (memory), kind);
    return memory;
}

static void
s_fill (vmemory_t *memory, size_t from, size_t to)
{
    char err [256], text [32];
    for (size_t i = from; i < to; i++) {
        snprintf (text, sizeof text, "entry %zu", i);
        ck_assert_msg (vmemory_add (memory, s_set + i * DIM, text, err, sizeof err) == 0, "%s", err);
    }
}

static void
s_save (vmemory_t *memory)
{
    char err [256];
    ck_assert_msg (vmemory_save (memory, err, sizeof err) == 0, "%s", err);
}

//  Recall@S_K against the brute-force answer; each hit's text must be
//  the text of its id.
static double
s_recall (vmemory_t *memory)
{
    char err [256], text [32];
    vmemory_hit_t hits [S_K];
    int found = 0;
    for (int q = 0; q < S_QUERIES; q++) {
        int n = vmemory_search (memory, s_queries + q * DIM, S_K, hits, err, sizeof err);
        ck_assert_msg (n >= 0, "%s", err);
        for (int i = 0; i < n; i++) {
            snprintf (text, sizeof text, "entry %lld", (long long) hits [i].id);
            ck_assert_str_eq (hits [i].text, text);
            for (int k = 0; k < S_K; k++)
                found += hits [i].id == s_exact [q][k];
        }
    }
    return (double) found / (S_QUERIES * S_K);
}

//  Flat is exact: the same ids, in the same order, as the brute force.
static void
s_check_exact (vmemory_t *memory)
{
    char err [256];
    vmemory_hit_t hits [S_K];
    for (int q = 0; q < S_QUERIES; q++) {
        ck_assert_int_eq (vmemory_search (memory, s_queries + q * DIM, S_K, hits, err, sizeof err), S_K);
        for (int k = 0; k < S_K; k++)
            ck_assert_int_eq (hits [k].id, s_exact [q][k]);
    }
}

static void
s_check_kind (vmemory_t *memory, vmemory_index_kind_t kind)
{
    s_truth (vmemory_count (memory));
    if (kind == VMEMORY_INDEX_FLAT)
        s_check_exact (memory);
    else {
        double recall = s_recall (memory);
        ck_assert_msg (recall >= S_RECALL_FLOOR, "%s recall@%d %.3f under %.2f",
                       vmemory_index_kind_name (kind), S_K, recall, S_RECALL_FLOOR);
    }
}

START_TEST (test_kind_names)
{
    vmemory_index_kind_t kind;
    ck_assert (vmemory_index_kind_parse ("flat", &kind) && kind == VMEMORY_INDEX_FLAT);
    ck_assert (vmemory_index_kind_parse ("HNSW", &kind) && kind == VMEMORY_INDEX_HNSW);
    ck_assert (vmemory_index_kind_parse ("Ivf", &kind) && kind == VMEMORY_INDEX_IVF);
    ck_assert (!vmemory_index_kind_parse ("HNSW32", &kind));
    ck_assert (!vmemory_index_kind_parse ("", &kind));
    ck_assert (!vmemory_index_kind_parse (NULL, &kind));
    ck_assert (vmemory_index_fits (VMEMORY_INDEX_IVF, "Flat"));
    ck_assert (vmemory_index_fits (VMEMORY_INDEX_IVF, "IVF512,Flat"));
    ck_assert (!vmemory_index_fits (VMEMORY_INDEX_IVF, "HNSW32"));
    ck_assert (!vmemory_index_fits (VMEMORY_INDEX_FLAT, "IVF512,Flat"));
    ck_assert (!vmemory_index_fits (VMEMORY_INDEX_HNSW, "HNSW16"));
    //  nlist: a power of two, at least 39 points a list, about 2 sqrt(N).
    ck_assert_uint_eq (vmemory_index_ivf_nlist (VMEMORY_IVF_TRAIN_MIN - 1), 0);
    ck_assert_uint_eq (vmemory_index_ivf_nlist (VMEMORY_IVF_TRAIN_MIN), 64);
    ck_assert_uint_eq (vmemory_index_ivf_nlist (10000), 128);
    ck_assert_uint_eq (vmemory_index_ivf_nlist (100000), 512);
    ck_assert_uint_eq (vmemory_index_ivf_nlist (100000000), VMEMORY_IVF_MAX_NLIST);
    //  A kind that is none of them is refused.
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = DIM;
    opts.index = (vmemory_index_kind_t) 7;
    char err [256];
    ck_assert_ptr_null (vmemory_open (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "index kind"));
}
END_TEST

//  Every kind in RAM: the right neighbours, and ivf's training.
START_TEST (test_neighbours_each_kind)
{
    vmemory_index_kind_t kind = (vmemory_index_kind_t) _i;
    vmemory_t *memory = s_open (NULL, kind);
    s_fill (memory, 0, VMEMORY_IVF_TRAIN_MIN - 1);
    if (kind == VMEMORY_INDEX_IVF) {            //  Flat, and exact, until trained
        ck_assert_str_eq (vmemory_factory (memory), "Flat");
        ck_assert_uint_eq (vmemory_trainings (memory), 0);
    }
    s_fill (memory, VMEMORY_IVF_TRAIN_MIN - 1, S_COUNT);
    ck_assert_uint_eq (vmemory_count (memory), S_COUNT);
    //  Adds train in a thread; wait for it, so what follows is the same
    //  in every run however fast the thread was.
    vmemory_train_wait (memory);
    const char *factory [] = { "Flat", "HNSW32", "IVF128,Flat" };
    ck_assert_str_eq (vmemory_factory (memory), factory [kind]);
    if (kind == VMEMORY_INDEX_IVF)              //  64 lists from 4096, 128 from 4992
        ck_assert_uint_eq (vmemory_trainings (memory), 2);
    s_check_kind (memory, kind);
    if (kind != VMEMORY_INDEX_HNSW) {
        //  Every entry is in the index, those added while the thread
        //  trained too: each finds itself (its own cell is probed first).
        char err [256];
        vmemory_hit_t hit;
        for (size_t i = 0; i < S_COUNT; i++) {
            ck_assert_int_eq (vmemory_search (memory, s_set + i * DIM, 1, &hit, err, sizeof err), 1);
            ck_assert_msg (hit.score > 0.9999f, "entry %zu found %lld (%f)", i,
                           (long long) hit.id, hit.score);
        }
    }
    vmemory_destroy (&memory);
}
END_TEST

//  A memory destroyed while its training thread runs waits for it and
//  leaks nothing (the sanitizer build checks the second part).
START_TEST (test_destroy_while_training)
{
    vmemory_t *memory = s_open (NULL, VMEMORY_INDEX_IVF);
    s_fill (memory, 0, VMEMORY_IVF_TRAIN_MIN);  //  the last add starts it
    vmemory_destroy (&memory);
    ck_assert_ptr_null (memory);
}
END_TEST

//  Saved and reopened with the same kind: the snapshot is used and the
//  answers are those of before the restart. Then entries beyond the
//  snapshot (re-added from the log at the next open) are found too.
START_TEST (test_restart_each_kind)
{
    vmemory_index_kind_t kind = (vmemory_index_kind_t) _i;
    vmemory_t *memory = s_open (s_dir, kind);
    s_fill (memory, 0, S_COUNT - 10);
    vmemory_train_wait (memory);
    s_save (memory);
    char factory [80];
    snprintf (factory, sizeof factory, "%s", vmemory_factory (memory));
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), S_COUNT - 10);
    static vmemory_hit_t before [S_QUERIES][S_K];
    vmemory_hit_t after [S_K];
    char err [256];
    for (int q = 0; q < S_QUERIES; q++)
        ck_assert_int_eq (vmemory_search (memory, s_queries + q * DIM, S_K, before [q], err,
                                          sizeof err), S_K);
    vmemory_destroy (&memory);
    memory = s_open (s_dir, kind);
    ck_assert_uint_eq (vmemory_count (memory), S_COUNT - 10);
    ck_assert_str_eq (vmemory_factory (memory), factory);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), S_COUNT - 10);
    ck_assert_uint_eq (vmemory_trainings (memory), 0);      //  the trained index was kept
    for (int q = 0; q < S_QUERIES; q++) {
        ck_assert_int_eq (vmemory_search (memory, s_queries + q * DIM, S_K, after, err, sizeof err), S_K);
        for (int k = 0; k < S_K; k++)
            ck_assert_int_eq (after [k].id, before [q][k].id);
    }
    s_fill (memory, S_COUNT - 10, S_COUNT);
    s_save (memory);                            //  a tail the snapshot does not cover
    vmemory_destroy (&memory);
    memory = s_open (s_dir, kind);
    ck_assert_uint_eq (vmemory_count (memory), S_COUNT);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), S_COUNT - 10);
    ck_assert_str_eq (vmemory_factory (memory), factory);
    s_check_kind (memory, kind);
    vmemory_destroy (&memory);
}
END_TEST

//  One memory opened with every kind in turn: each open rebuilds the
//  index of its kind from the log (the snapshot of the other kind is not
//  used), answers as its kind should, and its next save writes the
//  snapshot of the new kind.
START_TEST (test_switch_kinds)
{
    vmemory_index_kind_t order [] = { VMEMORY_INDEX_FLAT, VMEMORY_INDEX_HNSW, VMEMORY_INDEX_IVF,
                                      VMEMORY_INDEX_HNSW, VMEMORY_INDEX_FLAT, VMEMORY_INDEX_IVF,
                                      VMEMORY_INDEX_FLAT };
    const char *factory [] = { "Flat", "HNSW32", "IVF128,Flat" };
    size_t count = S_COUNT - 40;
    vmemory_t *memory = s_open (s_dir, order [0]);
    s_fill (memory, 0, count);
    s_save (memory);
    vmemory_destroy (&memory);
    for (size_t i = 1; i < sizeof order / sizeof order [0]; i++) {
        vmemory_index_kind_t kind = order [i];
        memory = s_open (s_dir, kind);
        ck_assert_uint_eq (vmemory_count (memory), count);
        //  From flat to ivf, the flat snapshot serves as the untrained
        //  start; every other switch rebuilds.
        bool kept = kind == VMEMORY_INDEX_IVF && order [i - 1] == VMEMORY_INDEX_FLAT;
        ck_assert_uint_eq (vmemory_snapshot_covers (memory), kept ? count : 0);
        ck_assert_str_eq (vmemory_factory (memory), factory [kind]);
        s_check_kind (memory, kind);
        s_fill (memory, count, count + 4);
        count += 4;
        s_save (memory);
        ck_assert_uint_eq (vmemory_snapshot_covers (memory), count);
        vmemory_destroy (&memory);
    }
    //  The last save's snapshot is of the last kind, and used.
    memory = s_open (s_dir, VMEMORY_INDEX_FLAT);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), count);
    s_check_kind (memory, VMEMORY_INDEX_FLAT);
    vmemory_destroy (&memory);
}
END_TEST

//  Bad values of the agent's flag, its variable and a role file's key:
//  exit code 2 and a sentence naming the value and the kinds.
START_TEST (test_bad_values)
{
    const char *flag [] = { "parley-agent", "--id", "A1", "--broker", "tcp://127.0.0.1:1",
                            "--memory-dir", "none", "--memory-index", "HNSW32", NULL };
    tproc_t *proc = tproc_run (flag, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), "\"HNSW32\"") && strstr (tproc_err (proc), "flat, hnsw or ivf"),
                   "%s", tproc_err (proc));
    tproc_destroy (&proc);

    const char *argv [] = { "parley-agent", "--id", "A1", "--broker", "tcp://127.0.0.1:1",
                            "--memory-dir", "none", NULL };
    const char *env [] = { "PARLEY_MEMORY_INDEX=annoy", NULL };
    proc = tproc_start (argv, true, env);
    ck_assert_int_eq (tproc_wait (proc, 10000), 2);
    ck_assert_msg (strstr (tproc_err (proc), "\"annoy\"") && strstr (tproc_err (proc), "env"),
                   "%s", tproc_err (proc));
    tproc_destroy (&proc);

    char *role = tproc_dir_path (s_tmp, "role.yaml");
    ck_assert (tproc_write_file (role, "role: explorer\ngoal: explore\npolicy: heuristic\n"
                                       "memory:\n  index: IVF4096,PQ8\n"));
    const char *with_role [] = { "parley-agent", "--id", "A1", "--broker", "tcp://127.0.0.1:1",
                                 "--memory-dir", "none", "--role", role, NULL };
    proc = tproc_run (with_role, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_msg (strstr (tproc_err (proc), "memory.index")
                   && strstr (tproc_err (proc), "flat, hnsw or ivf"), "%s", tproc_err (proc));
    tproc_destroy (&proc);
    free (role);
}
END_TEST

//  Runs parley-agent for two steps on `mem` with --memory-index `kind`;
//  returns its stderr (caller frees).
static char *
s_agent_run (testbroker_t *broker, const char *mem, const char *kind)
{
    const char *extra [] = { "--memory-index", kind, "--max-steps", "2", NULL };
    tproc_t *agent = tproc_agent (testbroker_router (broker), "Agent1", mem, "info", extra);
    ck_assert_ptr_nonnull (agent);
    ck_assert_int_eq (tproc_wait (agent, 60000), 0);
    char *err = strdup (tproc_err (agent));
    tproc_destroy (&agent);
    return err;
}

//  The agent opens its memory with the kind it is given: a memory made
//  as hnsw (big enough to have a snapshot) is rebuilt as flat, then as
//  hnsw again, each run's save leaving a snapshot of its kind, which the
//  next run of the same kind uses as it is.
START_TEST (test_agent_switches_kind)
{
    char *mem = tproc_dir_path (s_tmp, "Agent1");
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dir = mem;
    opts.dim = EMBEDDER_DEFAULT_DIM;
    opts.index = VMEMORY_INDEX_HNSW;
    char err [256], text [64];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    ck_assert_msg (memory, "%s", err);
    float v [EMBEDDER_DEFAULT_DIM];
    for (int i = 0; i < 1100; i++) {
        snprintf (text, sizeof text, "At position %d, I saw ['lamp'].", i);
        embed_builtin (text, strlen (text), v, EMBEDDER_DEFAULT_DIM);
        ck_assert_msg (vmemory_add (memory, v, text, err, sizeof err) == 0, "%s", err);
    }
    s_save (memory);
    ck_assert_uint_eq (vmemory_snapshot_covers (memory), 1100);
    vmemory_destroy (&memory);

    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    char *log = s_agent_run (broker, mem, "flat");
    ck_assert_msg (strstr (log, "holds a HNSW32 index, this run asks for flat"), "%s", log);
    free (log);
    log = s_agent_run (broker, mem, "HNSW");
    ck_assert_msg (strstr (log, "holds a Flat index, this run asks for hnsw"), "%s", log);
    free (log);
    log = s_agent_run (broker, mem, "hnsw");
    ck_assert_msg (!strstr (log, "rebuilding"), "%s", log);
    ck_assert_msg (strstr (log, "resumed with 1104 memories"), "%s", log);
    free (log);
    testbroker_stop (&broker);
    free (mem);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("vmemory_index");
    TCase *tc = tcase_create ("index");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_kind_names);
    tcase_add_loop_test (tc, test_neighbours_each_kind, VMEMORY_INDEX_FLAT, VMEMORY_INDEX_IVF + 1);
    tcase_add_loop_test (tc, test_restart_each_kind, VMEMORY_INDEX_FLAT, VMEMORY_INDEX_IVF + 1);
    tcase_add_test (tc, test_destroy_while_training);
    tcase_add_test (tc, test_switch_kinds);
    tcase_add_test (tc, test_bad_values);
    tcase_add_test (tc, test_agent_switches_kind);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
