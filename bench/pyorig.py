#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pyorig - the original Python program as a same-run baseline of make bench.

Runs the original multi-agent example (its runner and its README are in
the folder given, usually ../shared/baselines/pyorig: model and embedder
stubbed from outside, the program itself unmodified) in the shapes
Parley's own agent figures are measured in, and prints RESULT lines
(bench/bench_util.h's convention):

  pyorig_step_median_<N>    one step of one agent with N memories stored
                            (N = 0, 1000), ms: the median over the
                            repeats of each run's median step;
  pyorig_team10_steps_per_s a team of 10 agents x 200 steps (threads of
                            one process), steps/s: 2,000 over the median
                            wall time of the uninstrumented runs.

Usage: /usr/bin/python3 bench/pyorig.py FOLDER [--quick]
Needs Debian's python3-faiss, python3-numpy, python3-yaml, python3-requests
(the runner's README). Writes its JSON into a temporary folder: FOLDER may
be read-only.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(folder, out, *args):
    cmd = ["/usr/bin/python3", os.path.join(folder, "run.py"), "worker", "--commit", "v1",
           *args, "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=os.path.dirname(out))
    with open(out) as f:
        return json.load(f)["result"]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: pyorig.py FOLDER [--quick]")
    folder, quick = sys.argv[1], "--quick" in sys.argv[2:]
    repeat = "1" if quick else "3"
    steps = "50" if quick else "200"
    with tempfile.TemporaryDirectory(prefix="pyorig-") as tmp:
        mem = run(folder, os.path.join(tmp, "mem.json"), "--exp", "memgrowth",
                  "--prefill", "0,1000", "--max-steps", steps, "--repeat", repeat)
        for n in ("0", "1000"):
            runs = mem[n]["runs"]
            if not all(r["completed"] for r in runs):
                print("pyorig: a run with %s memories did not complete" % n)
            ms = statistics.median(r["step"]["median_us"] for r in runs) / 1000
            print("pyorig: one step, %s memories: %.3f ms (median of %d runs)" % (n, ms, len(runs)))
            print("RESULT pyorig_step_median_%s %.6g ms" % (n, ms), flush=True)
        team = run(folder, os.path.join(tmp, "team.json"), "--exp", "steps", "--agents", "10",
                   "--max-steps", steps, "--repeat", repeat)
        wall = statistics.median(team["uninstrumented_wall_s"])
        rate = 10 * int(steps) / wall
        print("pyorig: team of 10 x %s steps: %.0f steps/s (median wall %.3f s)" % (steps, rate, wall))
        print("RESULT pyorig_team10_steps_per_s %.6g steps/s" % rate, flush=True)


if __name__ == "__main__":
    main()
