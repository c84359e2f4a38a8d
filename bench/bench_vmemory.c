/*  bench_vmemory - search latency of the agent memory at N entries.

    Usage: bench_vmemory [N...] [--factory F] [--dim D] [--threads T]
    Fills a RAM-only vmemory with N seed-000-style texts embedded by the
    builtin embedder, then times 1000 queries (embed + search top 3) and
    prints the median and p99 in microseconds, one line per N. Defaults:
    N = 0 10000 100000, factory Flat, dim 256, OpenMP threads as vmemory
    sets them (1 unless PARLEY_OMP_THREADS / OMP_NUM_THREADS).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/embedder.h"
#include "agent/vmemory.h"
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

int
main (int argc, char **argv)
{
    const char *factory = "Flat";
    int dim = EMBEDDER_DEFAULT_DIM, threads = 0;
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
        if (count < 16)
            sizes [count++] = atol (argv [i]);
    }
    if (count == 0) {
        sizes [0] = 0;
        sizes [1] = 10000;
        sizes [2] = 100000;
        count = 3;
    }
    for (int i = 0; i < count; i++)
        s_run (sizes [i], factory, dim, threads);
    return 0;
}
