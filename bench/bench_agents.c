// SPDX-License-Identifier: MIT
/*  bench_agents - 50 parley-agent processes against one broker, then a
    team of 10 for 200 steps each.

    Starts a broker (a 64x64 grid world of unique names, so nobody runs
    out of world) and
    50 real parley-agent processes (heuristic policy, built-in embedder,
    each with its own memory directory, --max-steps S, --no-stop-when-explored
    so every agent runs S steps although the team explores every object
    name early, --quiet). Reports:
      - total steps per second: the steps from every agent's SUMMARY line
        over the wall time from the first start to the last exit (process
        start-up, FAISS set-up and memory save included);
      - the broker's CPU use over that time (from /proc, as a share of one
        core);
      - completion: agents that exited 0 having run all S steps.
    No pinning here: 50 agents and the broker share both cores, which is the
    situation being measured.

    The team of 10 (a fresh broker, the same world, 200 steps each) is the
    shape the original Python program is run in, in the same `make bench`
    (scripts/bench.sh runs it from ../shared/baselines/pyorig beside this
    bench and compares the two).

    Usage: bench_agents [--agents N] [--steps S] [--team N] [--team-steps S] [--quick]
*/
#include <signal.h>

#include "bench_util.h"
#include "tests/lib/testbroker.h"
#include "tests/lib/tproc.h"

#define MAX_AGENTS 256

//  `count` agents x `steps` steps on a fresh broker; RESULT lines under
//  `key` ("agents50", "team10"). 0 when every agent ran every step.
static int
s_run (const char *world, int count, int steps, const char *key)
{
    const char *args [] = { "--log-level", "warn", "--world-file", world, NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    pid_t broker_pid = testbroker_pid (broker);
    char steps_arg [16];
    snprintf (steps_arg, sizeof steps_arg, "%d", steps);
    tproc_dir_t *tmp = tproc_dir_new ();

    static tproc_t *agents [MAX_AGENTS];
    double cpu0 = bench_cpu_seconds (broker_pid);
    int64_t start = pclock_mono_us ();
    for (int i = 0; i < count; i++) {
        char id [32];
        snprintf (id, sizeof id, "Agent%02d", i + 1);
        char *dir = tproc_dir_path (tmp, id);
        const char *argv_agent [] = { "parley-agent", "--broker", testbroker_router (broker),
                                      "--id", id, "--memory-dir", dir, "--max-steps", steps_arg,
                                      "--no-stop-when-explored", "--quiet", "--log-level", "warn",
                                      NULL };
        agents [i] = tproc_start (argv_agent, true, NULL);
        free (dir);
        if (!agents [i]) {
            fprintf (stderr, "bench_agents: could not start agent %d\n", i + 1);
            return 1;
        }
    }
    //  Drain every agent's pipes while they run, so none blocks on output.
    int running = count;
    while (running > 0) {
        running = 0;
        for (int i = 0; i < count; i++)
            if (tproc_read (agents [i], 0))
                running++;
        if (running > 0)
            pclock_sleep_ms (20);
    }
    long total_steps = 0;
    int completed = 0, failed = 0;
    for (int i = 0; i < count; i++) {
        int status = tproc_wait (agents [i], 60000);
        const char *summary = strstr (tproc_out (agents [i]), "SUMMARY steps=");
        long agent_steps = summary ? atol (summary + strlen ("SUMMARY steps=")) : 0;
        total_steps += agent_steps;
        if (status == 0 && agent_steps == steps)
            completed++;
        else if (failed++ < 3)
            fprintf (stderr, "bench_agents: agent %d exit %d, %ld steps:\n%s%s\n", i + 1, status,
                     agent_steps, tproc_out (agents [i]), tproc_err (agents [i]));
    }
    double seconds = (double) (pclock_mono_us () - start) / 1e6;
    double cpu = bench_cpu_seconds (broker_pid) - cpu0;
    double rate = (double) total_steps / seconds;
    printf ("bench_agents: %d agents x %d steps: %ld steps in %.2f s, %d completed; "
            "broker CPU %.2f s (%.0f%% of one core)\n", count, steps, total_steps, seconds,
            completed, cpu, 100.0 * cpu / seconds);
    char name [64];
    snprintf (name, sizeof name, "%s_steps_per_s", key);
    bench_result (name, rate, "steps/s");
    snprintf (name, sizeof name, "%s_broker_cpu", key);
    bench_result (name, 100.0 * cpu / seconds, "%core");
    snprintf (name, sizeof name, "%s_completed", key);
    bench_result (name, completed, "agents");
    snprintf (name, sizeof name, "%s_started", key);
    bench_result (name, count, "agents");
    for (int i = 0; i < count; i++)
        tproc_destroy (&agents [i]);
    tproc_dir_destroy (&tmp);
    return testbroker_stop (&broker) == 0 && completed == count ? 0 : 1;
}

int
main (int argc, char **argv)
{
    int count = 50, steps = 40, team = 10, team_steps = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--agents") == 0 && i + 1 < argc)
            count = atoi (argv [++i]);
        else if (strcmp (argv [i], "--steps") == 0 && i + 1 < argc)
            steps = atoi (argv [++i]);
        else if (strcmp (argv [i], "--team") == 0 && i + 1 < argc)
            team = atoi (argv [++i]);
        else if (strcmp (argv [i], "--team-steps") == 0 && i + 1 < argc)
            team_steps = atoi (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0) {
            steps = 10;
            team_steps = 50;
        }
    }
    if (count < 0 || count > MAX_AGENTS || team < 0 || team > MAX_AGENTS)
        return 2;
    //  A world of unique object names (2 per cell): with the default pool
    //  of ~40 names the team "explores everything" in a handful of steps and
    //  the heuristic ends, which would measure start-up, not the loop.
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
    int rc = 0;
    if (count > 0)
        rc |= s_run (world, count, steps, "agents50");
    if (team > 0)
        rc |= s_run (world, team, team_steps, "team10");
    free (world);
    tproc_dir_destroy (&tmp);
    return rc;
}
