// SPDX-License-Identifier: MIT
/*  bench_vmemory - search latency, recall and save cost of the agent
    memory at N entries, per index kind.

    Usage: bench_vmemory [N...] [--index K[,K...]] [--top-k K] [--dim D]
                         [--threads T] [--save] [--dir D]
    For each N, fills a RAM-only flat vmemory with N seed-000-style texts
    embedded by the builtin embedder, then one of each other asked kind
    (hnsw, ivf) with the same entries, and times 1000 queries (embed +
    search top-k) on each: median and p99 in microseconds. Beside the
    time of an approximate kind, its recall@k against flat on the same
    queries: the share of flat's top k that it also returns, where a hit
    scoring at least flat's k-th score counts (the texts repeat words, so
    several entries can tie for the k-th place and flat's pick among
    them is arbitrary). Defaults: N = 0 10000 100000, --index
    flat,hnsw,ivf, --top-k 3 (the agent's default), dim 256, OpenMP
    threads as vmemory sets them (1 unless PARLEY_OMP_THREADS /
    OMP_NUM_THREADS). Also the mean and the slowest add (an ivf add that
    (re)trains). RESULT lines: vmemory_query_us_<kind>_<N>,
    vmemory_recall_<kind>_<N>, vmemory_add_us_<kind>_<N>,
    vmemory_add_max_ms_<kind>_<N>.

    --save: save cost instead (first kind of --index). Fills a memory in
    a directory (a fresh mkdtemp under --dir, default /tmp) with N entries
    and saves it once, then does what the agent does -- one add per step,
    a save every 10th step -- for 30 saves, and prints the median and max
    save time and the bytes the directory grew per save; then the time to
    reopen (load) it, and to reopen it without its snapshot (the index
    rebuilt from the log, as after a switch of index kind). The files are
    removed at the end.  */
#include <stdio.h>
#include <sys/stat.h>
#include <dirent.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "bench_util.h"
#include "agent/embedder.h"
#include "agent/vmemory/vmemory.h"
#include "pclock.h"

static int
s_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static void
s_text (char *text, size_t size, long i)
{
    static const char *objects [] = { "chair", "lamp", "sofa", "window", "desk", "plant",
                                      "door", "table", "rug", "piano", "clock", "shelf" };
    snprintf (text, size, "At position %ld, I saw ['%s', '%s']. I decided to forward. "
              "Reason: unexplored", i % 997, objects [i % 12], objects [(i / 12) % 12]);
}

static vmemory_t *
s_filled (long n, vmemory_index_kind_t kind, int dim, double *add_us, double *max_add_ms)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = dim;
    opts.index = kind;
    char err [256], text [256];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    if (!memory) {
        fprintf (stderr, "vmemory_open: %s\n", err);
        exit (1);
    }
    float *v = malloc (sizeof (float) * (size_t) dim);
    int64_t start = pclock_mono_us (), slowest = 0;
    for (long i = 0; i < n; i++) {
        s_text (text, sizeof text, i);
        embed_builtin (text, strlen (text), v, dim);
        int64_t t0 = pclock_mono_us ();
        if (vmemory_add (memory, v, text, err, sizeof err) != 0) {
            fprintf (stderr, "add: %s\n", err);
            exit (1);
        }
        if (pclock_mono_us () - t0 > slowest)
            slowest = pclock_mono_us () - t0;
    }
    *add_us = n ? (double) (pclock_mono_us () - start) / (double) n : 0;
    *max_add_ms = slowest / 1e3;
    vmemory_train_wait (memory);        //  ivf: search what N calls for
    free (v);
    return memory;
}

enum { QUERIES = 1000 };

typedef struct {
    int found;
    vmemory_hit_t hits [VMEMORY_MAX_TOP_K];
} s_answer_t;

//  Times QUERIES queries (embed + search) on `memory`, keeping the answers.
static void
s_queries (vmemory_t *memory, int dim, size_t top_k, s_answer_t *answers, int64_t *times)
{
    char text [256], err [256];
    float *v = malloc (sizeof (float) * (size_t) dim);
    for (int q = 0; q < QUERIES; q++) {
        snprintf (text, sizeof text, "What do I know about position %d with what I see: lamp, sofa?", q % 997);
        int64_t t0 = pclock_mono_us ();
        embed_builtin (text, strlen (text), v, dim);
        answers [q].found = vmemory_search (memory, v, top_k, answers [q].hits, err, sizeof err);
        times [q] = pclock_mono_us () - t0;
        if (answers [q].found < 0) {
            fprintf (stderr, "search: %s\n", err);
            exit (1);
        }
    }
    free (v);
    qsort (times, QUERIES, sizeof times [0], s_cmp);
}

//  Recall@k of `got` against the exact answers (see the top for ties).
static double
s_recall (const s_answer_t *exact, const s_answer_t *got)
{
    long want = 0, hit = 0;
    for (int q = 0; q < QUERIES; q++) {
        int k = exact [q].found;
        if (k <= 0)
            continue;
        float kth = exact [q].hits [k - 1].score;
        want += k;
        for (int i = 0; i < got [q].found && i < k; i++)
            if (got [q].hits [i].score >= kth - 1e-5f)
                hit++;
    }
    return want ? (double) hit / (double) want : 1.0;
}

static void
s_report (const char *kind, long n, int dim, size_t top_k, const int64_t *times, double add_us,
          double max_add_ms, double recall)
{
    char key [96];
    printf ("vmemory index=%s dim=%d entries=%ld: query (embed+search top%zu) median %lld us, "
            "p99 %lld us", kind, dim, n, top_k, (long long) times [QUERIES / 2],
            (long long) times [QUERIES * 99 / 100]);
    if (recall >= 0)
        printf ("; recall@%zu vs flat %.3f", top_k, recall);
    printf ("; add %.1f us/entry, slowest add %.1f ms\n", add_us, max_add_ms);
    snprintf (key, sizeof key, "vmemory_query_us_%s_%ld", kind, n);
    bench_result (key, (double) times [QUERIES / 2], "us");
    if (recall >= 0) {
        snprintf (key, sizeof key, "vmemory_recall_%s_%ld", kind, n);
        bench_result (key, recall, "");
    }
    snprintf (key, sizeof key, "vmemory_add_us_%s_%ld", kind, n);
    bench_result (key, add_us, "us");
    snprintf (key, sizeof key, "vmemory_add_max_ms_%s_%ld", kind, n);
    bench_result (key, max_add_ms, "ms");
}

static void
s_run (long n, const vmemory_index_kind_t *kinds, int kind_count, size_t top_k, int dim)
{
    static s_answer_t exact [QUERIES], got [QUERIES];
    static int64_t times [QUERIES];
    double add_us, max_add_ms;
    vmemory_t *flat = s_filled (n, VMEMORY_INDEX_FLAT, dim, &add_us, &max_add_ms);
    s_queries (flat, dim, top_k, exact, times);
    for (int i = 0; i < kind_count; i++)
        if (kinds [i] == VMEMORY_INDEX_FLAT)
            s_report ("flat", n, dim, top_k, times, add_us, max_add_ms, -1);
    for (int i = 0; i < kind_count; i++) {
        if (kinds [i] == VMEMORY_INDEX_FLAT)
            continue;
        vmemory_t *memory = s_filled (n, kinds [i], dim, &add_us, &max_add_ms);
        s_queries (memory, dim, top_k, got, times);
        s_report (vmemory_index_kind_name (kinds [i]), n, dim, top_k, times, add_us, max_add_ms,
                  s_recall (exact, got));
        vmemory_destroy (&memory);
    }
    vmemory_destroy (&flat);
}

//  Bytes of the regular files in DIR (the memory is one flat directory).
static long long
s_dir_bytes (const char *dir)
{
    long long total = 0;
    DIR *d = opendir (dir);
    struct dirent *entry;
    while (d && (entry = readdir (d))) {
        char path [600];
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, entry->d_name);
        if (stat (path, &st) == 0 && S_ISREG (st.st_mode))
            total += (long long) st.st_size;
    }
    if (d)
        closedir (d);
    return total;
}

static vmemory_t *
s_open_dir (const char *dir, vmemory_index_kind_t kind, int dim)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = dim;
    opts.index = kind;
    opts.dir = dir;
    char err [256];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    if (!memory) {
        fprintf (stderr, "vmemory_open: %s\n", err);
        exit (1);
    }
    return memory;
}

static void
s_add_one (vmemory_t *memory, long i, float *v, int dim)
{
    char text [256], err [256];
    s_text (text, sizeof text, i);
    embed_builtin (text, strlen (text), v, dim);
    if (vmemory_add (memory, v, text, err, sizeof err) != 0) {
        fprintf (stderr, "add: %s\n", err);
        exit (1);
    }
}

static int64_t
s_timed_save (vmemory_t *memory)
{
    char err [256];
    int64_t t0 = pclock_mono_us ();
    if (vmemory_save (memory, err, sizeof err) != 0) {
        fprintf (stderr, "save: %s\n", err);
        exit (1);
    }
    return pclock_mono_us () - t0;
}

static void
s_run_save (long n, vmemory_index_kind_t kind, int dim, const char *base)
{
    char dir [512];
    snprintf (dir, sizeof dir, "%s/bench_vmemory.XXXXXX", base);
    if (!mkdtemp (dir)) {
        perror ("mkdtemp");
        exit (1);
    }
    char memdir [600];
    snprintf (memdir, sizeof memdir, "%s/mem", dir);
    vmemory_t *memory = s_open_dir (memdir, kind, dim);
    float *v = malloc (sizeof (float) * (size_t) dim);
    for (long i = 0; i < n; i++)
        s_add_one (memory, i, v, dim);
    vmemory_train_wait (memory);        //  ivf: the first save snapshots the trained index
    int64_t first = s_timed_save (memory);
    enum { SAVES = 30, EVERY = 10 };
    int64_t times [SAVES];
    long long grown = s_dir_bytes (memdir);
    for (int s = 0; s < SAVES; s++) {
        for (int k = 0; k < EVERY; k++)
            s_add_one (memory, n + s * EVERY + k, v, dim);
        times [s] = s_timed_save (memory);
    }
    grown = s_dir_bytes (memdir) - grown;
    vmemory_destroy (&memory);
    int64_t t0 = pclock_mono_us ();
    memory = s_open_dir (memdir, kind, dim);
    int64_t load = pclock_mono_us () - t0;
    vmemory_destroy (&memory);
    char snap [700];
    snprintf (snap, sizeof snap, "%s/index.faiss", memdir);
    unlink (snap);
    t0 = pclock_mono_us ();
    memory = s_open_dir (memdir, kind, dim);
    int64_t rebuild = pclock_mono_us () - t0;
    vmemory_destroy (&memory);
    qsort (times, SAVES, sizeof times [0], s_cmp);
    const char *name = vmemory_index_kind_name (kind);
    printf ("vmemory save index=%s dim=%d entries=%ld: first save %.1f ms; save of %d new "
            "entries median %.2f ms, max %.2f ms; dir grew %.1f KB per save; reopen %.1f ms, "
            "without its snapshot (rebuilt from the log) %.1f ms\n",
            name, dim, n, first / 1e3, EVERY, times [SAVES / 2] / 1e3,
            times [SAVES - 1] / 1e3, (double) grown / SAVES / 1024.0, load / 1e3, rebuild / 1e3);
    char key [96];
    snprintf (key, sizeof key, "vmemory_reopen_ms_%s_%ld", name, n);
    bench_result (key, load / 1e3, "ms");
    snprintf (key, sizeof key, "vmemory_rebuild_ms_%s_%ld", name, n);
    bench_result (key, rebuild / 1e3, "ms");
    fflush (stdout);
    free (v);
    char cmd [700];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", dir);
}

int
main (int argc, char **argv)
{
    const char *base = "/tmp";
    int dim = EMBEDDER_DEFAULT_DIM, threads = 0;
    size_t top_k = VMEMORY_DEFAULT_TOP_K;
    vmemory_index_kind_t kinds [8] = { VMEMORY_INDEX_FLAT, VMEMORY_INDEX_HNSW, VMEMORY_INDEX_IVF };
    int kind_count = 3;
    bool save = false;
    long sizes [16];
    int count = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv [i], "--index") && i + 1 < argc) {
            char *list = strdup (argv [++i]), *saved = NULL;
            kind_count = 0;
            for (char *name = strtok_r (list, ",", &saved); name && kind_count < 8;
                 name = strtok_r (NULL, ",", &saved))
                if (!vmemory_index_kind_parse (name, &kinds [kind_count++])) {
                    fprintf (stderr, "bench_vmemory: --index %s: flat, hnsw or ivf\n", name);
                    return 2;
                }
            free (list);
        }
        else
        if (!strcmp (argv [i], "--top-k") && i + 1 < argc)
            top_k = (size_t) atoi (argv [++i]);
        else
        if (!strcmp (argv [i], "--dim") && i + 1 < argc)
            dim = atoi (argv [++i]);
        else
        if (!strcmp (argv [i], "--threads") && i + 1 < argc)
            threads = atoi (argv [++i]);
        else
        if (!strcmp (argv [i], "--dir") && i + 1 < argc)
            base = argv [++i];
        else
        if (!strcmp (argv [i], "--save"))
            save = true;
        else
        if (count < 16)
            sizes [count++] = atol (argv [i]);
    }
    if (count == 0) {
        sizes [0] = 0;
        sizes [1] = 10000;
        sizes [2] = 100000;
        count = 3;
    }
    if (kind_count == 0 || top_k == 0 || top_k > VMEMORY_MAX_TOP_K) {
        fprintf (stderr, "bench_vmemory: nothing to measure (--index, --top-k 1-%d)\n",
                 VMEMORY_MAX_TOP_K);
        return 2;
    }
    vmemory_set_threads (threads);
    for (int i = 0; i < count; i++)
        if (save)
            s_run_save (sizes [i], kinds [0], dim, base);
        else
            s_run (sizes [i], kinds, kind_count, top_k, dim);
    return 0;
}
