#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-team - how much a team is worth, measured from outside.

Runs real parley-broker and parley-agent processes (heuristic policy by
default) on worlds with a distinct object name in every cell, so full
coverage means visiting every cell, and reports per world and team
configuration over N seeds: median, p10 and p90 of team steps (the most
steps any agent took) and total agent-steps, the ratios to the single agent
and to the lower bound ceil((C - 1) / agents), and a two-sided sign test
(exact binomial) of "with messages" against "without messages", seed for
seed, on total agent-steps.

    scripts/bench-team.py                         # the standard set (make bench-team)
    scripts/bench-team.py --seeds 5 --worlds 8x8  # a quick look
    scripts/bench-team.py --world-file my.json --agents 4 \\
        --broker-arg=--start=random --agent-arg=--policy=llm ...

Every configuration's agents get --team-size N (they start together) and a
fast --step-delay-ms; runs go in parallel (--jobs, default: the CPUs). A run
that does not reach full coverage within --max-steps counts with its steps
and is listed as unfinished. Extra --broker-arg / --agent-arg are passed to
every run, so scenario and role files of the user's own work the same way.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

CONFIGS = [
    ("1 agent", 1, []),
    ("3 with everything", 3, []),
    ("3 without messages", 3, ["--no-messages"]),
    ("3 without shared positions", 3, ["--no-shared-positions"]),
    ("3 isolated", 3, ["--no-messages", "--no-shared-positions"]),
]
WORLDS = {"line": (64, 1), "8x8": (8, 8), "16x16": (16, 16)}


def distinct_world(path, width, height):
    cells = [["obj-%d" % i] for i in range(width * height)]
    doc = {"kind": "grid" if height > 1 else "line", "width": width, "objects": cells,
           "comment": "a distinct object in every cell (bench-team)"}
    if height > 1:
        doc["height"] = height
    with open(path, "w") as f:
        json.dump(doc, f)


def world_cells(path):
    with open(path) as f:
        doc = json.load(f)
    return doc["width"] * doc.get("height", 1)


def summary_field(out, key):
    for line in out.splitlines():
        if " SUMMARY " in line:
            for part in line.split():
                if part.startswith(key + "="):
                    return part[len(key) + 1:]
    return None


def run_once(args, world_file, cells, agents, flags, seed):
    """One team on one world: returns (team_steps, agent_steps, finished)."""
    tmp = tempfile.mkdtemp(prefix="parley-bench-team-")
    try:
        router, pub = "ipc://%s/router" % tmp, "ipc://%s/pub" % tmp
        broker = subprocess.Popen(
            [os.path.join(args.bin_dir, "parley-broker"), "--router", router, "--pub", pub,
             "--tap", "off", "--world-file", world_file, "--seed", str(seed),
             "--ready-file", os.path.join(tmp, "ready"), "--log-level", "warn"]
            + args.broker_arg, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        max_steps = args.max_steps or 4 * cells
        procs = []
        for i in range(agents):
            procs.append(subprocess.Popen(
                [os.path.join(args.bin_dir, "parley-agent"), "--broker", router,
                 "--id", "Agent%d" % (i + 1), "--memory-dir", "none", "--quiet",
                 "--seed", str(seed), "--max-steps", str(max_steps),
                 "--step-delay-ms", str(args.step_delay_ms), "--team-size", str(agents),
                 "--log-level", "warn"] + flags + args.agent_arg,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        steps, finished = [], True
        for p in procs:
            out, err = p.communicate(timeout=args.timeout)
            n = summary_field(out, "steps")
            if p.returncode != 0 or n is None:
                raise RuntimeError("agent failed (exit %s): %s" % (p.returncode, err[-500:]))
            steps.append(int(n))
            finished = finished and summary_field(out, "coverage") == "100%"
        broker.terminate()
        broker.wait(timeout=30)
        #  Team steps: the rounds until full coverage. Every agent stops at
        #  the first step it sees the world done, so in lockstep all counts
        #  are equal; scheduling skew moves single agents by a step or two,
        #  and the median of the team's counts is robust to that.
        return statistics.median(steps), sum(steps), finished
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def quantile(values, q):
    """Nearest-rank quantile (p10, p90 of 20 runs are the 2nd and 18th)."""
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def sign_test(a, b):
    """Two-sided exact binomial sign test of paired a < b; ties dropped."""
    wins = sum(1 for x, y in zip(a, b) if x < y)
    losses = sum(1 for x, y in zip(a, b) if x > y)
    n = wins + losses
    if n == 0:
        return wins, losses, 1.0
    k = min(wins, losses)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return wins, losses, min(1.0, 2 * p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=os.environ.get("PARLEY_BIN_DIR", "build/rel/bin"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--worlds", default="line,8x8,16x16",
                    help="standard worlds: " + ", ".join(WORLDS))
    ap.add_argument("--world-file", action="append", default=[],
                    help="a world file of your own (instead of --worlds); repeatable")
    ap.add_argument("--agents", type=int, default=3, help="team size of the team configurations")
    ap.add_argument("--configs", default=None,
                    help="comma-separated subset of: " + "; ".join(c[0] for c in CONFIGS))
    ap.add_argument("--broker-arg", action="append", default=[], help="passed to every broker")
    ap.add_argument("--agent-arg", action="append", default=[], help="passed to every agent")
    ap.add_argument("--step-delay-ms", type=int, default=10)
    ap.add_argument("--max-steps", type=int, default=0, help="0: 4 x cells")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--markdown", help="also write the tables to this file")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="parley-bench-worlds-")
    worlds = []
    for path in args.world_file:
        worlds.append((os.path.basename(path), os.path.abspath(path)))
    if not worlds:
        for name in args.worlds.split(","):
            w, h = WORLDS[name]
            path = os.path.join(tmp, "%s.json" % name)
            distinct_world(path, w, h)
            worlds.append(("%s (%d cells)" % (name, w * h), path))
    configs = []
    for label, n, flags in CONFIGS:
        if n > 1 and args.agents == 1:
            continue
        n = 1 if n == 1 else args.agents
        label = label.replace("3 ", "%d " % n, 1)
        configs.append((label, n, flags))
    if args.configs:
        wanted = [c.strip() for c in args.configs.split(",")]
        configs = [c for c in configs if c[0] in wanted]
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))

    jobs = [(wi, ci, s) for wi in range(len(worlds)) for ci in range(len(configs)) for s in seeds]
    results = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {}
        for wi, ci, s in jobs:
            path = worlds[wi][1]
            futures[(wi, ci, s)] = pool.submit(run_once, args, path, world_cells(path),
                                               configs[ci][1], configs[ci][2], s)
        for key, fut in futures.items():
            results[key] = fut.result()
    cells_of = [world_cells(path) for _, path in worlds]
    shutil.rmtree(tmp, ignore_errors=True)

    lines = []
    say = lines.append
    say("Seeds %d..%d, step delay %d ms, agents with --team-size; extra broker args: %s; "
        "agent args: %s." % (seeds[0], seeds[-1], args.step_delay_ms,
                             " ".join(args.broker_arg) or "none", " ".join(args.agent_arg) or "none"))
    for wi, (wname, path) in enumerate(worlds):
        cells = cells_of[wi]
        say("")
        say("**%s**" % wname)
        say("")
        say("| configuration | team steps median | p10 | p90 | agent-steps median | p10 | p90 "
            "| team / 1 agent | team / bound | unfinished |")
        say("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        single = None
        for ci, (label, n, flags) in enumerate(configs):
            runs = [results[(wi, ci, s)] for s in seeds]
            team = [r[0] for r in runs]
            total = [r[1] for r in runs]
            med = statistics.median(team)
            if n == 1 and single is None:
                single = med
            bound = math.ceil((cells - 1) / n)
            say("| %s | %g | %g | %g | %g | %g | %g | %s | %.2f (bound %d) | %d |" % (
                label, med, quantile(team, .1), quantile(team, .9), statistics.median(total),
                quantile(total, .1), quantile(total, .9),
                "%.2f" % (med / single) if single else "-", med / bound, bound,
                sum(1 for r in runs if not r[2])))
        names = [c[0] for c in configs]
        with_m = next((i for i, c in enumerate(configs) if c[1] > 1 and not c[2]), None)
        without = next((i for i, c in enumerate(configs) if c[2] == ["--no-messages"]), None)
        if with_m is not None and without is not None:
            a = [results[(wi, with_m, s)][1] for s in seeds]
            b = [results[(wi, without, s)][1] for s in seeds]
            wins, losses, p = sign_test(a, b)
            ratio = statistics.median(a) / statistics.median(b)
            say("")
            say("Messages, seed for seed (total agent-steps, %s vs %s): fewer in %d, more in %d, "
                "ties %d; sign test p = %.3g; median ratio %.2f." % (
                    names[with_m], names[without], wins, losses, len(seeds) - wins - losses, p,
                    ratio))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
