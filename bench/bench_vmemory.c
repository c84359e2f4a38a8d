// SPDX-License-Identifier: MIT
/*  bench_vmemory - search latency and save cost of the agent memory at N
    entries.

    Usage: bench_vmemory [N...] [--factory F] [--dim D] [--threads T]
                         [--save] [--dir D]
    Fills a RAM-only vmemory with N seed-000-style texts embedded by the
    builtin embedder, then times 1000 queries (embed + search top 3) and
    prints the median and p99 in microseconds, one line per N. Defaults:
    N = 0 10000 100000, factory Flat, dim 256, OpenMP threads as vmemory
    sets them (1 unless PARLEY_OMP_THREADS / OMP_NUM_THREADS).

    --save: save cost instead. Fills a memory in a directory (a fresh
    mkdtemp under --dir, default /tmp) with N entries and saves it once,
    then does what the agent does -- one add per step, a save every 10th
    step -- for 30 saves, and prints the median and max save time and the
    bytes the directory grew per save; then the time to reopen (load) it.
    The files are removed at the end.  */
#include <stdio.h>
#include <sys/stat.h>
#include <dirent.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

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

static void
s_run (long n, const char *factory, int dim, int threads)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = dim;
    opts.factory = factory;
    char err [256];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    if (!memory) {
        fprintf (stderr, "vmemory_open: %s\n", err);
        exit (1);
    }
    if (threads > 0)
        vmemory_set_threads (threads);
    float *v = malloc (sizeof (float) * (size_t) dim);
    char text [256];
    int64_t start = pclock_mono_us ();
    for (long i = 0; i < n; i++) {
        s_text (text, sizeof text, i);
        embed_builtin (text, strlen (text), v, dim);
        if (vmemory_add (memory, v, text, err, sizeof err) != 0) {
            fprintf (stderr, "add: %s\n", err);
            exit (1);
        }
    }
    double add_us = n ? (double) (pclock_mono_us () - start) / (double) n : 0;
    enum { QUERIES = 1000 };
    static int64_t times [QUERIES];
    vmemory_hit_t hits [3];
    for (int q = 0; q < QUERIES; q++) {
        snprintf (text, sizeof text, "What do I know about position %d with what I see: lamp, sofa?", q % 997);
        int64_t t0 = pclock_mono_us ();
        embed_builtin (text, strlen (text), v, dim);
        if (vmemory_search (memory, v, 3, hits, err, sizeof err) < 0) {
            fprintf (stderr, "search: %s\n", err);
            exit (1);
        }
        times [q] = pclock_mono_us () - t0;
    }
    qsort (times, QUERIES, sizeof times [0], s_cmp);
    printf ("vmemory factory=%s dim=%d entries=%ld: query (embed+search top3) median %lld us, "
            "p99 %lld us; add %.1f us/entry\n", factory, dim, n, (long long) times [QUERIES / 2],
            (long long) times [QUERIES * 99 / 100], add_us);
    fflush (stdout);
    free (v);
    vmemory_destroy (&memory);
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
s_open_dir (const char *dir, const char *factory, int dim)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = dim;
    opts.factory = factory;
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
s_run_save (long n, const char *factory, int dim, const char *base)
{
    char dir [512];
    snprintf (dir, sizeof dir, "%s/bench_vmemory.XXXXXX", base);
    if (!mkdtemp (dir)) {
        perror ("mkdtemp");
        exit (1);
    }
    char memdir [600];
    snprintf (memdir, sizeof memdir, "%s/mem", dir);
    vmemory_t *memory = s_open_dir (memdir, factory, dim);
    float *v = malloc (sizeof (float) * (size_t) dim);
    for (long i = 0; i < n; i++)
        s_add_one (memory, i, v, dim);
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
    memory = s_open_dir (memdir, factory, dim);
    int64_t load = pclock_mono_us () - t0;
    vmemory_destroy (&memory);
    qsort (times, SAVES, sizeof times [0], s_cmp);
    printf ("vmemory save factory=%s dim=%d entries=%ld: first save %.1f ms; save of %d new "
            "entries median %.2f ms, max %.2f ms; dir grew %.1f KB per save; reopen %.1f ms\n",
            factory, dim, n, first / 1e3, EVERY, times [SAVES / 2] / 1e3,
            times [SAVES - 1] / 1e3, (double) grown / SAVES / 1024.0, load / 1e3);
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
    const char *factory = "Flat", *base = "/tmp";
    int dim = EMBEDDER_DEFAULT_DIM, threads = 0;
    bool save = false;
    long sizes [16];
    int count = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv [i], "--factory") && i + 1 < argc)
            factory = argv [++i];
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
    if (save && threads > 0)
        vmemory_set_threads (threads);
    for (int i = 0; i < count; i++)
        if (save)
            s_run_save (sizes [i], factory, dim, base);
        else
            s_run (sizes [i], factory, dim, threads);
    return 0;
}
