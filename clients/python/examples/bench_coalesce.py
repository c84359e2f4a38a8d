#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_coalesce - pipelined one-message sends with coalescing on and off.

Starts a parley-broker per run (its defaults, no journal), connects A and
B, and times COUNT one-message send_pipelined calls A -> B until B, taking
them as pushed mail in a thread, has every one, and A's are confirmed.
Runs alternate between coalescing on (linger 1000 us, the default) and
off (linger 0), ROUNDS times each, so a change in the machine's load hits
both; prints each run, the medians and their ratio. A measurement tool,
not a test: the figures depend on the machine.

    python3 bench_coalesce.py [--count 20000] [--rounds 3] [--bin-dir DIR]

The broker comes from --bin-dir, else $PARLEY_BIN_DIR, else the tree's
build/rel/bin. Exit 0 when every run delivered every message, 1 if not,
2 on bad usage.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import parley                       # noqa: E402
from parley import Message          # noqa: E402


def start_broker(bin_dir: Path, folder: str) -> "tuple[subprocess.Popen, str]":
    ready = Path(folder) / "ready"
    proc = subprocess.Popen([str(bin_dir / "parley-broker"), "--router", "tcp://127.0.0.1:*",
                             "--pub", "tcp://127.0.0.1:*", "--tap", "off",
                             "--advertise-host", "127.0.0.1", "--ready-file", str(ready),
                             "--data-dir", "none"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        if ready.exists():
            fields = dict(l.split("=", 1) for l in ready.read_text().split() if "=" in l)
            if "router" in fields and "pub" in fields:
                return proc, fields["router"]
        time.sleep(0.01)
    proc.kill()
    raise SystemExit(f"the broker in {bin_dir} did not come up")


def run(bin_dir: Path, count: int, linger_us: int) -> "tuple[float, int, int]":
    """msg/s, frames sent, messages received, for one run."""
    folder = tempfile.mkdtemp(prefix="bench-coalesce-")
    proc, router = start_broker(bin_dir, folder)
    try:
        b = parley.Client(router, "B")
        a = parley.Client(router, "A")
        a.set_coalesce(linger_us=linger_us)
        got = [0]

        def take() -> None:
            b.consume(4096)
            while got[0] < count:
                mail = b.next_pushed(30)
                if mail is None:
                    return
                got[0] += len(mail.messages)
                b.ack_nowait(mail.last_seq)

        taker = threading.Thread(target=take)
        taker.start()
        start = time.monotonic()
        for i in range(count):
            a.send_pipelined([Message(f"m{i}", to="B")])
        a.flush_pipelined(60)
        taker.join(120)
        took = time.monotonic() - start
        frames = a.session.send_frames
        a.close()
        b.close()
        return count / took, frames, got[0]
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=20000, help="sends per run (20000)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each setting (3)")
    ap.add_argument("--bin-dir", default=os.environ.get("PARLEY_BIN_DIR")
                    or str(HERE.parents[2] / "build" / "rel" / "bin"),
                    help="where parley-broker is ($PARLEY_BIN_DIR, else build/rel/bin)")
    args = ap.parse_args()
    if args.count < 1 or args.rounds < 1:
        ap.error("--count and --rounds must be at least 1")
    on, off, ok = [], [], True
    for r in range(args.rounds):
        for linger, rates in ((1000, on), (0, off)):
            rate, frames, got = run(Path(args.bin_dir), args.count, linger)
            ok = ok and got == args.count
            rates.append(rate)
            print(f"round {r} linger {linger:4d} us: {rate:9.0f} msg/s, {frames} frames, "
                  f"{got} received", flush=True)
    print(f"median: coalescing {statistics.median(on):.0f} msg/s, one frame per post "
          f"{statistics.median(off):.0f} msg/s, ratio "
          f"{statistics.median(on) / statistics.median(off):.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
