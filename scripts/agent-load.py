#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""agent-load - how many agents one machine hosts, measured from outside.

Real parley-broker and parley-agent processes on loopback, on a 64x64
grid world with two distinct object names in every cell (so nobody runs
out of world), heuristic policy, each agent with its own memory directory,
every agent posting its team report to the team channel as it steps.

  paced   N agents (--agents 50,100,200) step once a second, as agents
          bound by a model do (--step-delay-ms 1000). After --warmup
          seconds, a window of --window seconds is measured:
            - steps each agent took in the window (its progress lines),
              as steps/s: the minimum, the median, how many kept
              >= --pace (0.95) steps/s, how many took none;
            - agents the broker saw offline at any of its samples
              (parley-ctl agents, every --sample seconds) and the
              broker's `expired` and `disconnected` AGENT_EVENTs;
            - CPU per agent (ms per step and % of a core), PSS per agent
              (smaps_rollup), the broker's CPU (% of a core), RSS and
              peak RSS;
            - the same PSS of a Python process that imports numpy and
              faiss (/usr/bin/python3), for the ratio.
  team    N agents (--agents 10) x --steps steps without delay, all at
          once: total steps over the wall time from the first start to
          the last exit, and the CPU of the agents and of the broker.

Every run is bounded in time (--timeout), every process it started is
stopped at its end (SIGTERM, then SIGKILL), and nothing listens beyond
127.0.0.1. --wrap runs each agent under a command (e.g. valgrind).

    scripts/agent-load.py paced --agents 50,100,200
    scripts/agent-load.py team --agents 10 --steps 200 --repeat 3
    scripts/agent-load.py paced --agents 200 --agent-arg=--no-shared-positions
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def world_file(path, width=64, height=64):
    cells = [["o%da" % c, "o%db" % c] for c in range(width * height)]
    with open(path, "w") as f:
        json.dump({"kind": "grid", "width": width, "height": height, "objects": cells}, f)


def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return None


def pss_kib(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def status_kib(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def lines_of(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def stop_all(procs, grace=10.0):
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except OSError:
                pass
    deadline = time.monotonic() + grace
    for p in procs:
        left = deadline - time.monotonic()
        try:
            p.wait(timeout=max(0.1, left))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Broker:
    def __init__(self, args, tmp, world):
        self.ready = os.path.join(tmp, "ready")
        self.log = open(os.path.join(tmp, "broker.log"), "w")
        cmd = [os.path.join(args.bin_dir, "parley-broker"), "--router", "tcp://127.0.0.1:0",
               "--pub", "tcp://127.0.0.1:0", "--tap", "off", "--world-file", world,
               "--data-dir", os.path.join(tmp, "broker-data"), "--ready-file", self.ready,
               "--log-level", "warn"] + args.broker_arg
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 20
        self.router = None
        while time.monotonic() < deadline and not self.router:
            if os.path.exists(self.ready):
                with open(self.ready) as f:
                    for line in f:
                        if line.startswith("router="):
                            self.router = line.strip().split("=", 1)[1]
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not self.router:
            stop_all([self.proc])
            sys.exit("agent-load: the broker did not start (see %s/broker.log)" % tmp)
        self.events = open(os.path.join(tmp, "events.jsonl"), "w")
        #  Who went offline, as the broker tells it: its AGENT_EVENTs.
        self.tail = subprocess.Popen(
            [os.path.join(args.bin_dir, "parley-ctl"), "-b", self.router, "--json",
             "--id", "agent-load-tail", "tail", "agent."],
            stdout=self.events, stderr=subprocess.DEVNULL)

    def agents(self, args):
        try:
            out = subprocess.run([os.path.join(args.bin_dir, "parley-ctl"), "-b", self.router,
                                  "--json", "--timeout-ms", "5000", "agents"],
                                 capture_output=True, text=True, timeout=20).stdout
            return json.loads(out).get("agents", [])
        except (subprocess.TimeoutExpired, ValueError):
            return None

    def stop(self):
        stop_all([self.tail, self.proc])
        self.events.close()
        self.log.close()


def start_agents(args, broker, tmp, count, extra):
    procs, outs = [], []
    wrap = shlex.split(args.wrap) if args.wrap else []
    for i in range(count):
        name = "Agent%03d" % (i + 1)
        out = os.path.join(tmp, name + ".out")
        wrapped = wrap if i < args.wrap_first else []
        cmd = wrapped + [os.path.join(args.bin_dir, "parley-agent"), "--broker", broker.router,
                      "--id", name, "--memory-dir", os.path.join(tmp, "mem", name),
                      "--no-stop-when-explored", "--log-level", "warn"] + extra + args.agent_arg
        with open(out, "w") as so, open(os.path.join(tmp, name + ".err"), "w") as se:
            procs.append(subprocess.Popen(cmd, stdout=so, stderr=se, cwd=tmp))
        outs.append(out)
    return procs, outs


def python_pss():
    """PSS of /usr/bin/python3 after `import numpy, faiss` (the issue's yardstick)."""
    p = subprocess.Popen(["/usr/bin/python3", "-c",
                          "import numpy, faiss, sys, time; print('ok', flush=True); time.sleep(30)"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if p.stdout.readline().strip() != "ok":
            return None
        return pss_kib(p.pid)
    finally:
        p.kill()
        p.wait()


def summary_field(path, key):
    try:
        with open(path) as f:
            for line in f:
                if " SUMMARY " in line:
                    for part in line.split():
                        if part.startswith(key + "="):
                            return part.split("=", 1)[1]
    except OSError:
        pass
    return None


def pct(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def paced(args, count, say):
    tmp = tempfile.mkdtemp(prefix="agent-load-")
    world = os.path.join(tmp, "world.json")
    world_file(world)
    broker = Broker(args, tmp, world)
    procs, outs = [], []
    try:
        procs, outs = start_agents(args, broker, tmp, count,
                                   ["--step-delay-ms", str(args.step_delay_ms),
                                    "--max-steps", "1000000"])
        time.sleep(args.warmup)
        t0 = time.monotonic()
        lines0 = [lines_of(o) for o in outs]
        cpu0 = [cpu_seconds(p.pid) for p in procs]
        bcpu0 = cpu_seconds(broker.proc.pid)
        offline = set()
        samples = 0
        while time.monotonic() < t0 + args.window:
            time.sleep(min(args.sample, max(0.1, t0 + args.window - time.monotonic())))
            listed = broker.agents(args)
            if listed is None:
                continue
            samples += 1
            for a in listed:
                if a.get("agent", "").startswith("Agent") and not a.get("online"):
                    offline.add(a["agent"])
        t1 = time.monotonic()
        lines1 = [lines_of(o) for o in outs]
        cpu1 = [cpu_seconds(p.pid) for p in procs]
        bcpu1 = cpu_seconds(broker.proc.pid)
        pss = [pss_kib(p.pid) for p in procs]
        brss, bhwm = status_kib(broker.proc.pid, "VmRSS"), status_kib(broker.proc.pid, "VmHWM")
        dead = sum(1 for p in procs if p.poll() is not None)
    finally:
        stop_all(procs)
        broker.stop()
    span = t1 - t0
    rates = [(b - a) / span for a, b in zip(lines0, lines1)]
    steps = [b - a for a, b in zip(lines0, lines1)]
    cpus = [(b - a) for a, b in zip(cpu0, cpu1) if a is not None and b is not None]
    total_steps = sum(steps)
    events = {"expired": set(), "disconnected": set(), "left": set()}
    try:
        with open(os.path.join(tmp, "events.jsonl")) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                body = e.get("event")
                if not isinstance(body, dict):
                    continue
                what, who = body.get("event"), body.get("agent", "")
                if isinstance(who, str) and what in events and who.startswith("Agent"):
                    events[what].add(who)
    except OSError:
        pass
    step_ms = [float(v) for v in (summary_field(o, "step_ms_median") for o in outs) if v]
    pss_ok = [p for p in pss if p]
    r = {
        "agents": count, "window_s": round(span, 1), "load_1min_at_end": round(os.getloadavg()[0], 2),
        "steps_per_s_min": round(min(rates), 3), "steps_per_s_p5": round(pct(rates, 0.05), 3),
        "steps_per_s_median": round(statistics.median(rates), 3),
        "kept_pace": sum(1 for x in rates if x >= args.pace), "no_step": sum(1 for x in steps if x == 0),
        "offline_seen": len(offline), "samples": samples,
        "expired_events": len(events["expired"]), "disconnected_events": len(events["disconnected"]),
        "exited_early": dead,
        "agent_cpu_ms_per_step": round(1000 * sum(cpus) / max(1, total_steps), 2),
        "agent_cpu_pct_core_median": round(100 * statistics.median(cpus) / span, 2) if cpus else None,
        "agents_cpu_pct_total": round(100 * sum(cpus) / span, 1),
        "agent_pss_mib_median": round(statistics.median(pss_ok) / 1024, 2) if pss_ok else None,
        "agent_pss_mib_max": round(max(pss_ok) / 1024, 2) if pss_ok else None,
        "broker_cpu_pct_core": round(100 * (bcpu1 - bcpu0) / span, 1) if bcpu0 is not None and bcpu1 is not None else None,
        "broker_rss_mib": round(brss / 1024, 1) if brss else None,
        "broker_peak_rss_mib": round(bhwm / 1024, 1) if bhwm else None,
        "step_ms_median_of_medians": round(statistics.median(step_ms), 2) if step_ms else None,
    }
    say(json.dumps(r))
    if not args.keep:
        subprocess.run(["rm", "-rf", tmp])
    else:
        say("kept %s" % tmp)
    return r


def team(args, count, say):
    tmp = tempfile.mkdtemp(prefix="agent-load-")
    world = os.path.join(tmp, "world.json")
    world_file(world)
    broker = Broker(args, tmp, world)
    try:
        bcpu0 = cpu_seconds(broker.proc.pid)
        start = time.monotonic()
        procs, outs = start_agents(args, broker, tmp, count,
                                   ["--max-steps", str(args.steps), "--quiet"])
        usage = []
        deadline = start + args.timeout
        for p in procs:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    p.returncode = os.waitstatus_to_exitcode(status)
                    usage.append(ru.ru_utime + ru.ru_stime)
                    break
                if time.monotonic() > deadline:
                    stop_all(procs)
                    sys.exit("agent-load: the team did not finish in %d s" % args.timeout)
                time.sleep(0.005)
        wall = time.monotonic() - start
        bcpu = cpu_seconds(broker.proc.pid) - bcpu0
    finally:
        broker.stop()
    steps = [int(summary_field(o, "steps") or 0) for o in outs]
    step_ms = [float(v) for v in (summary_field(o, "step_ms_median") for o in outs) if v]
    r = {"agents": count, "steps_each": args.steps, "completed": sum(1 for s in steps if s == args.steps),
         "wall_s": round(wall, 3), "steps_per_s": round(sum(steps) / wall, 1),
         "agents_cpu_s": round(sum(usage), 3), "agent_cpu_ms_per_step": round(1000 * sum(usage) / max(1, sum(steps)), 3),
         "broker_cpu_s": round(bcpu, 3), "step_ms_median_of_medians": round(statistics.median(step_ms), 3) if step_ms else None,
         "load": os.getloadavg()[0]}
    say(json.dumps(r))
    if not args.keep:
        subprocess.run(["rm", "-rf", tmp])
    else:
        say("kept %s" % tmp)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["paced", "team"])
    ap.add_argument("--bin-dir", default=os.environ.get("PARLEY_BIN_DIR", "build/rel/bin"))
    ap.add_argument("--agents", default=None, help="comma-separated team sizes (paced: 50,100,200; team: 10)")
    ap.add_argument("--steps", type=int, default=200, help="team: steps per agent")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--step-delay-ms", type=int, default=1000, help="paced: the pause between steps")
    ap.add_argument("--warmup", type=float, default=20, help="paced: seconds before the window")
    ap.add_argument("--window", type=float, default=60, help="paced: seconds measured")
    ap.add_argument("--sample", type=float, default=5, help="paced: seconds between AGENTS samples")
    ap.add_argument("--pace", type=float, default=0.95, help="paced: steps/s an agent must keep")
    ap.add_argument("--timeout", type=float, default=600, help="team: seconds at most")
    ap.add_argument("--broker-arg", action="append", default=[])
    ap.add_argument("--agent-arg", action="append", default=[])
    ap.add_argument("--wrap", help="run each agent under this command")
    ap.add_argument("--wrap-first", type=int, default=1 << 30, metavar="N",
                    help="with --wrap: only the first N agents run under it")
    ap.add_argument("--python-pss", action="store_true", help="paced: also measure the Python yardstick")
    ap.add_argument("--keep", action="store_true", help="keep the run's folder (logs, memories)")
    args = ap.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    counts = [int(x) for x in (args.agents or ("50,100,200" if args.mode == "paced" else "10")).split(",")]

    def say(text):
        print(text, flush=True)

    if args.mode == "paced" and args.python_pss:
        p = python_pss()
        say(json.dumps({"python_numpy_faiss_pss_mib": round(p / 1024, 2) if p else None}))
    for _ in range(args.repeat):
        for n in counts:
            (paced if args.mode == "paced" else team)(args, n, say)


if __name__ == "__main__":
    main()
