// SPDX-License-Identifier: MIT
/*  bench_step - time of one agent loop step (no LLM) at 0, 1k, 10k and
    100k memories, and the agent's memory cost per stored step.

    Step time: the real agent (agent.h: agent_new / agent_connect /
    agent_run) runs in this process against a real broker with the
    heuristic policy and the built-in embedder, its memory directory
    prefilled with N seed-000-style memories through vmemory (the agent
    loads it on start, as on a restart). The agent has no per-step timing
    hook, so the bench times the progress line that UpdateMemory prints
    and flushes at the end of every step: its FILE is an fopencookie
    stream that stamps each line with the monotonic clock. A step is the
    time between two lines: all six nodes, the broker round trips, the
    embedding, the FAISS search and add, and every 10th step the memory
    save (fsync of index + texts: visible in p90/max at 100k).

    RSS: adds N memories of realistic text (step text plus a received
    message, about 200 bytes) to a RAM-only vmemory, embedded by the
    built-in embedder, and reports the growth of this process's RSS per
    entry, minus the vector (4 * dim bytes), against the 2 KB target.

    Usage: bench_step [--steps S] [--quick] [--memory-index KIND]
    --memory-index hnsw|ivf: the agent's memory index (default flat); the
    step figures only, with RESULT keys step_median_<kind>_<N>.
*/
#include "bench_util.h"
#include "agent/agent.h"
#include "agent/embedder.h"
#include "agent/vmemory/vmemory.h"
#include "tests/lib/testbroker.h"
#include "tests/lib/tproc.h"

#define MAX_LINES 4096

static int64_t s_stamps [MAX_LINES];
static size_t s_lines;
static int s_steps = 60;
static const char *s_index = "flat";

//  fopencookie write: one call per flushed progress line (line buffered).
static ssize_t
s_stamp_write (void *cookie, const char *buf, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (buf [i] == '\n' && s_lines < MAX_LINES)
            s_stamps [s_lines++] = pclock_mono_us ();
    return (ssize_t) size;
}

static void
s_memory_text (char *text, size_t size, long i)
{
    static const char *objects [] = { "chair", "lamp", "sofa", "window", "desk", "plant",
                                      "door", "table", "rug", "piano", "clock", "shelf" };
    static const char *agents [] = { "Agent1", "Agent2", "Agent3" };
    snprintf (text, size, "At position %ld, I saw ['%s', '%s', '%s']. I decided to %s. "
              "Reason: position %ld looks unexplored and teammates reported the other side. "
              "Messages: From %s: I found %s at position %ld",
              i % 997, objects [i % 12], objects [(i / 12) % 12], objects [(i / 7) % 12],
              i % 3 ? "forward" : "backward", (i + 1) % 997, agents [i % 3],
              objects [(i / 5) % 12], (i + 3) % 997);
}

static void
s_prefill (const char *dir, long n, int dim)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dir = dir;
    opts.dim = dim;
    if (!vmemory_index_kind_parse (s_index, &opts.index)) {
        fprintf (stderr, "bench_step: --memory-index %s: flat, hnsw or ivf\n", s_index);
        exit (2);
    }
    char err [256], text [512];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    if (!memory) {
        fprintf (stderr, "bench_step: vmemory_open: %s\n", err);
        exit (1);
    }
    float *v = malloc (sizeof (float) * (size_t) dim);
    for (long i = 0; i < n; i++) {
        s_memory_text (text, sizeof text, i);
        embed_builtin (text, strlen (text), v, dim);
        if (vmemory_add (memory, v, text, err, sizeof err) != 0) {
            fprintf (stderr, "bench_step: add: %s\n", err);
            exit (1);
        }
    }
    vmemory_train_wait (memory);
    if (vmemory_save (memory, err, sizeof err) != 0) {
        fprintf (stderr, "bench_step: save: %s\n", err);
        exit (1);
    }
    free (v);
    vmemory_destroy (&memory);
}

static void
s_step_time (const char *router, tproc_dir_t *tmp, long memories)
{
    char name [32];
    snprintf (name, sizeof name, "step%ld", memories);
    char *dir = tproc_dir_path (tmp, name);
    s_prefill (dir, memories, EMBEDDER_DEFAULT_DIM);
    parley_client_t *admin = bench_client (router, "stepadmin");
    bench_check (admin, parley_client_world_reset (admin, 0), "WORLD_RESET");
    bench_client_leave (&admin);

    cookie_io_functions_t io = { .write = s_stamp_write };
    FILE *progress = fopencookie (NULL, "w", io);
    setvbuf (progress, NULL, _IOLBF, 0);
    agent_config_t config = {
        .broker = router, .id = name, .policy = "heuristic", .memory_dir = dir,
        .top_k = 3, .max_steps = s_steps, .stop_when_explored = false, .seed = 1,
        .progress = progress, .memory_index = s_index
    };
    char err [256];
    agent_t *agent = agent_new (&config, err, sizeof err);
    if (!agent) {
        fprintf (stderr, "bench_step: agent_new: %s\n", err);
        exit (1);
    }
    static volatile sig_atomic_t stop = 0;
    if (agent_connect (agent, &stop, err, sizeof err) != 0) {
        fprintf (stderr, "bench_step: agent_connect: %s\n", err);
        exit (1);
    }
    s_lines = 0;
    int64_t start = pclock_mono_us ();
    int rc = agent_run (agent);
    size_t steps = 0;
    int64_t times [MAX_LINES];
    for (size_t i = 0; i < s_lines; i++)
        times [steps++] = s_stamps [i] - (i ? s_stamps [i - 1] : start);
    if (rc != AGENT_DONE || steps < (size_t) s_steps)
        fprintf (stderr, "bench_step: agent_run ended with %d after %zu steps (%s)\n", rc, steps,
                 agent_end_reason (agent));
    int64_t p50 = bench_percentile (times, steps, 50);
    int64_t p90 = bench_percentile (times, steps, 90);
    int64_t max = steps ? times [steps - 1] : 0;
    printf ("bench_step: %ld memories, index %s: %zu steps, median %.2f ms, p90 %.2f ms, "
            "max %.2f ms\n", memories, s_index, steps, p50 / 1e3, p90 / 1e3, max / 1e3);
    char key [64], kind [16] = "";
    if (strcmp (s_index, "flat") != 0)
        snprintf (kind, sizeof kind, "%s_", s_index);
    snprintf (key, sizeof key, "step_median_%s%ld", kind, memories);
    bench_result (key, p50 / 1e3, "ms");
    snprintf (key, sizeof key, "step_p90_%s%ld", kind, memories);
    bench_result (key, p90 / 1e3, "ms");
    agent_destroy (&agent);
    fclose (progress);
    free (dir);
}

static void
s_rss (long n)
{
    vmemory_options_t opts;
    vmemory_options_default (&opts);
    opts.dim = EMBEDDER_DEFAULT_DIM;
    char err [256], text [512];
    vmemory_t *memory = vmemory_open (&opts, err, sizeof err);
    if (!memory)
        exit (1);
    float v [EMBEDDER_DEFAULT_DIM];
    long text_bytes = 0;
    long before = bench_rss_bytes (0);
    for (long i = 0; i < n; i++) {
        s_memory_text (text, sizeof text, i);
        text_bytes += (long) strlen (text);
        embed_builtin (text, strlen (text), v, EMBEDDER_DEFAULT_DIM);
        if (vmemory_add (memory, v, text, err, sizeof err) != 0)
            exit (1);
    }
    long after = bench_rss_bytes (0);
    double per_entry = (double) (after - before) / (double) n;
    double vector = 4.0 * EMBEDDER_DEFAULT_DIM;
    printf ("bench_step: RSS +%.1f MB for %ld memories (text %.0f B average): %.0f B per memory, "
            "%.0f B of it the vector\n", (after - before) / 1048576.0, n,
            (double) text_bytes / (double) n, per_entry, vector);
    bench_result ("rss_per_memory", per_entry, "B");
    bench_result ("rss_per_memory_beyond_vector", per_entry - vector, "B");
    vmemory_destroy (&memory);
}

int
main (int argc, char **argv)
{
    long sizes [] = { 0, 1000, 10000, 100000 };
    long rss_n = 100000;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--steps") == 0 && i + 1 < argc)
            s_steps = atoi (argv [++i]);
        else if (strcmp (argv [i], "--memory-index") == 0 && i + 1 < argc)
            s_index = argv [++i];
        else if (strcmp (argv [i], "--quick") == 0) {
            sizes [3] = 20000;
            rss_n = 20000;
            s_steps = 30;
        }
    }
    //  RSS first, while the process is small and its heap has no holes.
    if (strcmp (s_index, "flat") == 0)
        s_rss (rss_n);
    //  A grid big enough that no run explores it all (the heuristic ends
    //  its loop with "end" once everything is explored), reset before
    //  each run.
    const char *args [] = { "--log-level", "warn", "--grid", "64x64", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    tproc_dir_t *tmp = tproc_dir_new ();
    for (size_t i = 0; i < sizeof sizes / sizeof sizes [0]; i++)
        s_step_time (testbroker_router (broker), tmp, sizes [i]);
    tproc_dir_destroy (&tmp);
    return testbroker_stop (&broker) == 0 ? 0 : 1;
}
