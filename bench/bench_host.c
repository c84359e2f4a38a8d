// SPDX-License-Identifier: MIT
/*  bench_host - how many agents one machine hosts: N real parley-agent
    processes stepping once a second, as agents bound by a model's answer
    do, against one broker at its default settings.

    Each agent: the heuristic policy with --step-delay-ms 1000 (a pause
    between steps stands for the model's answer), the built-in embedder,
    its own memory directory (saved as usual), posting its report to the
    team channel every step and reading its teammates', on a 64x64 grid
    world of distinct objects (so nobody runs out of world). Nothing is
    pinned: the agents, the broker and this bench share every core, which
    is the situation measured.

    For each N (50, 100, 200): start the broker and N agents, let every
    agent take a first step (or WARMUP_MAX_S pass), then measure a window
    of --seconds:
      host<N>_steps_per_s_min / _median   each agent's pace: the steps it
                                          finished in the window over the
                                          window's length;
      host<N>_slow                        agents under 0.95 steps/s;
      host<N>_stalled                     agents that took no step;
      host<N>_offline_max / _offline_ever agents the broker listed offline
                                          (AGENTS, sampled every 2 s): at
                                          once at most, and at any sample;
      host<N>_pss_median_kib / _max_kib   each agent's proportional set
                                          size (/proc/PID/smaps_rollup) at
                                          the window's end;
      host<N>_agent_cpu_median            an agent's CPU over the window,
                                          % of one core;
      host<N>_cpu_ms_per_step             an agent's CPU per step (median);
      host<N>_step_ms_median              the agent's own step time (its
                                          SUMMARY's step_ms_median, the
                                          pause excluded), median over agents;
      host<N>_broker_cpu                  the broker's CPU, % of one core;
      host<N>_broker_rss_kib / _hwm_kib   its RSS at the end, and its peak;
      host<N>_load                        the 1-minute load average at the end.
    And once: python_pss_kib, the PSS of /usr/bin/python3 having imported
    numpy and faiss and built a flat index (what each agent of the
    original Python program would cost as a process), when that Python
    has faiss.

    Usage: bench_host [--agents N,N,...] [--seconds S] [--quick]
*/
#include <signal.h>

#include "bench_util.h"
#include "tests/lib/testbroker.h"
#include "tests/lib/tproc.h"

#define MAX_AGENTS 256
#define WARMUP_MAX_S 60
#define SAMPLE_MS 2000

typedef struct {
    tproc_t *proc;
    char id [32];
    size_t scanned;             //  its output read up to here (whole lines)
    long step;                  //  the last step it printed
    long step_start, step_end;  //  its last step number at the window's edges
    double cpu_start, cpu_end;
    long pss_kib;
    double step_ms;             //  SUMMARY's step_ms_median
    bool ever_offline;
} s_agent_t;

static s_agent_t s_agents [MAX_AGENTS];

//  Reads what the agent printed; notes its last progress line ("[id] step
//  N ...").
static void
s_update (s_agent_t *agent)
{
    tproc_read (agent->proc, 0);
    const char *out = tproc_out (agent->proc);
    const char *end = strrchr (out + agent->scanned, '\n');
    if (!end)
        return;
    const char *hit = NULL, *at = out + agent->scanned;
    while ((at = strstr (at, "] step ")) && at < end)
        hit = at++;
    agent->scanned = (size_t) (end + 1 - out);
    if (hit) {
        agent->step = atol (hit + strlen ("] step "));
    }
}

//  A "Key: N kB" line of /proc/PID/<file>, in KiB; -1 if absent.
static long
s_proc_kib (pid_t pid, const char *file, const char *key)
{
    char path [64], line [256];
    snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
    FILE *in = fopen (path, "r");
    if (!in)
        return -1;
    long value = -1;
    size_t len = strlen (key);
    while (fgets (line, sizeof line, in))
        if (strncmp (line, key, len) == 0 && line [len] == ':') {
            value = atol (line + len + 1);
            break;
        }
    fclose (in);
    return value;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double
s_median (double *values, size_t count)
{
    if (count == 0)
        return 0;
    qsort (values, count, sizeof values [0], s_cmp_double);
    return values [count / 2];
}

static void
s_drain (int count)
{
    for (int i = 0; i < count; i++)
        s_update (&s_agents [i]);
}

//  Samples AGENTS: marks our agents listed offline; returns how many.
static int
s_sample_offline (parley_client_t *observer, int count)
{
    parley_agent_list_t *list = NULL;
    if (parley_client_agents (observer, &list) != PARLEY_OK)
        return -1;
    int offline = 0;
    for (int k = 0; k < count; k++) {
        const parley_agent_t *agent = parley_agent_list_find (list, s_agents [k].id);
        if (agent && !parley_agent_online (agent)) {
            s_agents [k].ever_offline = true;
            offline++;
        }
    }
    parley_agent_list_destroy (&list);
    return offline;
}

static void
s_result (const char *key, int count, const char *what, double value, const char *unit)
{
    char name [96];
    snprintf (name, sizeof name, "%s%d_%s", key, count, what);
    bench_result (name, value, unit);
}

static int
s_run (const char *world, int count, int seconds)
{
    const char *args [] = { "--log-level", "warn", "--world-file", world, NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    pid_t broker_pid = testbroker_pid (broker);
    tproc_dir_t *tmp = tproc_dir_new ();
    for (int i = 0; i < count; i++) {
        s_agent_t *agent = &s_agents [i];
        memset (agent, 0, sizeof *agent);
        snprintf (agent->id, sizeof agent->id, "Host%03d", i + 1);
        char *dir = tproc_dir_path (tmp, agent->id);
        const char *argv_agent [] = { "parley-agent", "--broker", testbroker_router (broker),
                                      "--id", agent->id, "--memory-dir", dir,
                                      "--max-steps", "1000000", "--step-delay-ms", "1000",
                                      "--no-stop-when-explored", "--log-level", "warn", NULL };
        agent->proc = tproc_start (argv_agent, true, NULL);
        free (dir);
        if (!agent->proc) {
            fprintf (stderr, "bench_host: could not start agent %d\n", i + 1);
            return 1;
        }
    }
    parley_client_t *observer = parley_client_new (testbroker_router (broker), "hostbench");
    parley_client_set_observe (observer, true);
    parley_client_set_timeout (observer, 30000, 2000);
    bench_check (observer, parley_client_connect (observer), "observer");

    //  Warm-up: every agent took a step, or WARMUP_MAX_S passed.
    int64_t deadline = pclock_mono_ms () + WARMUP_MAX_S * 1000;
    int started = 0;
    while (pclock_mono_ms () < deadline) {
        s_drain (count);
        started = 0;
        for (int i = 0; i < count; i++)
            started += s_agents [i].step > 0;
        if (started == count)
            break;
        pclock_sleep_ms (200);
    }
    printf ("bench_host: %d agents, %d stepping after the warm-up\n", count, started);

    double broker_cpu0 = bench_cpu_seconds (broker_pid);
    for (int i = 0; i < count; i++) {
        s_agents [i].step_start = s_agents [i].step;
        s_agents [i].cpu_start = bench_cpu_seconds (tproc_pid (s_agents [i].proc));
    }
    int64_t start = pclock_mono_us ();
    int64_t end = start + (int64_t) seconds * 1000000;
    int64_t next_sample = 0;
    int offline_max = 0;
    while (pclock_mono_us () < end) {
        s_drain (count);
        if (pclock_mono_ms () >= next_sample) {
            int offline = s_sample_offline (observer, count);
            if (offline > offline_max)
                offline_max = offline;
            next_sample = pclock_mono_ms () + SAMPLE_MS;
        }
        pclock_sleep_ms (100);
    }
    s_drain (count);
    double window = (double) (pclock_mono_us () - start) / 1e6;
    double broker_cpu = bench_cpu_seconds (broker_pid) - broker_cpu0;
    long broker_rss = s_proc_kib (broker_pid, "status", "VmRSS");
    long broker_hwm = s_proc_kib (broker_pid, "status", "VmHWM");
    for (int i = 0; i < count; i++) {
        s_agent_t *agent = &s_agents [i];
        pid_t pid = tproc_pid (agent->proc);
        agent->step_end = agent->step;
        agent->cpu_end = bench_cpu_seconds (pid);
        agent->pss_kib = s_proc_kib (pid, "smaps_rollup", "Pss");
    }
    double load = 0;
    if (getloadavg (&load, 1) != 1)
        load = -1;

    //  Stop: SIGTERM, then each prints its SUMMARY.
    for (int i = 0; i < count; i++)
        tproc_signal (s_agents [i].proc, SIGTERM);
    for (int i = 0; i < count; i++) {
        tproc_wait (s_agents [i].proc, 30000);
        const char *summary = strstr (tproc_out (s_agents [i].proc), "step_ms_median=");
        s_agents [i].step_ms = summary ? atof (summary + strlen ("step_ms_median=")) : -1;
    }

    static double rates [MAX_AGENTS], pss [MAX_AGENTS], cpu [MAX_AGENTS], per_step [MAX_AGENTS],
                  step_ms [MAX_AGENTS];
    int slow = 0, stalled = 0, ever = 0;
    size_t stepped = 0;
    double rate_min = 1e9, pss_max = 0;
    for (int i = 0; i < count; i++) {
        s_agent_t *agent = &s_agents [i];
        //  The steps it finished between the window's edges (its output
        //  is drained at each edge, so its count is its own, whatever this
        //  bench's lag): within one step of the truth, 1/60 on a minute.
        long steps = agent->step_end - agent->step_start;
        rates [i] = (double) steps / window;
        rate_min = rates [i] < rate_min ? rates [i] : rate_min;
        slow += rates [i] < 0.95;
        stalled += steps == 0;
        ever += agent->ever_offline;
        pss [i] = (double) agent->pss_kib;
        pss_max = pss [i] > pss_max ? pss [i] : pss_max;
        double used = agent->cpu_end - agent->cpu_start;
        cpu [i] = 100.0 * used / window;
        if (steps > 0)
            per_step [stepped++] = 1000.0 * used / (double) steps;
        step_ms [i] = agent->step_ms;
    }
    double rate_median = s_median (rates, (size_t) count);
    printf ("bench_host: %d agents over %.1f s (load %.1f): steps/s per agent min %.2f median "
            "%.2f, %d under 0.95, %d took no step, offline at most %d (ever %d); PSS median "
            "%.0f KiB; broker %.0f%% of a core, RSS %ld KiB (peak %ld)\n", count, window, load,
            rate_min, rate_median, slow, stalled, offline_max, ever, s_median (pss, (size_t) count),
            100.0 * broker_cpu / window, broker_rss, broker_hwm);
    s_result ("host", count, "steps_per_s_min", rate_min, "steps/s");
    s_result ("host", count, "steps_per_s_median", rate_median, "steps/s");
    s_result ("host", count, "slow", slow, "agents");
    s_result ("host", count, "stalled", stalled, "agents");
    s_result ("host", count, "offline_max", offline_max, "agents");
    s_result ("host", count, "offline_ever", ever, "agents");
    s_result ("host", count, "pss_median_kib", s_median (pss, (size_t) count), "KiB");
    s_result ("host", count, "pss_max_kib", pss_max, "KiB");
    s_result ("host", count, "agent_cpu_median", s_median (cpu, (size_t) count), "%core");
    s_result ("host", count, "cpu_ms_per_step", s_median (per_step, stepped), "ms");
    s_result ("host", count, "step_ms_median", s_median (step_ms, (size_t) count), "ms");
    s_result ("host", count, "broker_cpu", 100.0 * broker_cpu / window, "%core");
    s_result ("host", count, "broker_rss_kib", (double) broker_rss, "KiB");
    s_result ("host", count, "broker_hwm_kib", (double) broker_hwm, "KiB");
    s_result ("host", count, "load", load, "");
    s_result ("host", count, "agents", count, "agents");

    parley_client_destroy (&observer);
    for (int i = 0; i < count; i++)
        tproc_destroy (&s_agents [i].proc);
    tproc_dir_destroy (&tmp);
    return testbroker_stop (&broker) == 0 ? 0 : 1;
}

//  The PSS of a Python process that imported numpy and faiss and built a
//  flat index of the original program's dimension (384).
static void
s_python_pss (void)
{
    if (access ("/usr/bin/python3", X_OK) != 0)
        return;
    const char *argv_py [] = { "/usr/bin/python3", "-c",
                               "import sys, numpy, faiss\n"
                               "index = faiss.IndexFlatL2(384)\n"
                               "index.add(numpy.zeros((1, 384), dtype='float32'))\n"
                               "print('ready', flush=True)\n"
                               "sys.stdin.read()\n", NULL };
    tproc_t *py = tproc_start (argv_py, false, NULL);
    if (!py)
        return;
    if (tproc_wait_for (py, "ready", 30000)) {
        long kib = s_proc_kib (tproc_pid (py), "smaps_rollup", "Pss");
        printf ("bench_host: a Python process with numpy and faiss: PSS %ld KiB\n", kib);
        if (kib > 0)
            bench_result ("python_pss_kib", (double) kib, "KiB");
    }
    tproc_destroy (&py);
}

int
main (int argc, char **argv)
{
    int sizes [8] = { 50, 100, 200 }, size_count = 3, seconds = 60;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--agents") == 0 && i + 1 < argc) {
            size_count = 0;
            for (char *part = strtok (argv [++i], ","); part && size_count < 8;
                 part = strtok (NULL, ","))
                sizes [size_count++] = atoi (part);
        }
        else if (strcmp (argv [i], "--seconds") == 0 && i + 1 < argc)
            seconds = atoi (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0) {
            sizes [0] = 10;
            sizes [1] = 50;
            size_count = 2;
            seconds = 15;
        }
        else {
            fprintf (stderr, "usage: bench_host [--agents N,N,...] [--seconds S] [--quick]\n");
            return 2;
        }
    }
    for (int i = 0; i < size_count; i++)
        if (sizes [i] < 1 || sizes [i] > MAX_AGENTS || seconds < 1)
            return 2;
    //  A world of distinct object names (2 per cell), as bench_agents.
    tproc_dir_t *tmp = tproc_dir_new ();
    char *world = tproc_dir_path (tmp, "world.json");
    FILE *file = fopen (world, "w");
    if (!file)
        return 1;
    fprintf (file, "{\"kind\": \"grid\", \"width\": 64, \"height\": 64, \"objects\": [");
    for (int cell = 0; cell < 64 * 64; cell++)
        fprintf (file, "%s[\"o%da\", \"o%db\"]", cell ? ", " : "", cell, cell);
    fprintf (file, "]}\n");
    fclose (file);
    s_python_pss ();
    int rc = 0;
    for (int i = 0; i < size_count; i++)
        rc |= s_run (world, sizes [i], seconds);
    free (world);
    tproc_dir_destroy (&tmp);
    return rc;
}
