#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""explorer.py - a Python agent that joins the C agents' exploration team.

It plays by the same rules as parley-agent's heuristic policy, through the
parley package: it listens to the "explorers" channel, reads the team's
mail ("I am at position P and found: ... Visited positions: 4 5 6."), reads
world.agent_positions, walks toward the nearest position nobody has
reported, and tells the team (to "all" and on "explorers", in the C agents'
own sentence format, so their policy learns from it) what it found. It
stops when the world is fully explored or after --max-steps, and prints
one SUMMARY line.

    clients/python/examples/explorer.py --broker tcp://127.0.0.1:5555 --id Scout

Exit status: 0 when it ended normally, 1 on a broker error, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from the tree
import parley                                                     # noqa: E402
from parley import Message, errors                               # noqa: E402

CHANNEL = "explorers"
MOVES = {"forward": (1, 0), "backward": (-1, 0), "right": (0, 1), "left": (0, -1)}
VISITED = re.compile(r"Visited positions:((?:\s+\d+)+)")
AT = re.compile(r"at position (\d+)")


class Explorer:
    def __init__(self, client: parley.Client, seed: int) -> None:
        self.c = client
        self.rng = random.Random(seed)
        world = client.welcome.world
        self.width = world.width if world and world.width else 10
        self.height = world.height if world and world.height else 1
        self.grid = bool(world and world.kind == "grid")
        self.mine: Set[int] = set()
        self.team: Set[int] = set()
        self.acked = client.welcome.acked
        self.sent = self.received = self.moves = 0
        self.found: List[str] = []

    # What the team knows -------------------------------------------------
    def read_mail(self) -> None:
        mail = self.c.fetch(ack=self.acked)
        for item in mail.messages:
            if item.sender == self.c.agent:
                continue
            self.received += 1
            text = item.text
            for match in VISITED.finditer(text):
                self.team.update(int(p) for p in match.group(1).split())
            for match in AT.finditer(text):
                self.team.add(int(match.group(1)))
        if mail.messages:
            self.acked = mail.last_seq
            self.c.ack(self.acked)

    def teammates(self) -> Dict[str, int]:
        state = self.c.get(["world.agent_positions"]).values()
        positions = state.get("world.agent_positions") or {}
        return {a: int(p) for a, p in positions.items() if a != self.c.agent}

    # Deciding --------------------------------------------------------------
    def xy(self, position: int) -> Tuple[int, int]:
        return position % self.width, position // self.width

    def choose(self, position: int) -> Optional[str]:
        known = self.mine | self.team | set(self.teammates().values())
        unknown = [p for p in range(self.width * self.height) if p not in known]
        if not unknown:
            return None
        x, y = self.xy(position)
        dist = lambda p: abs(self.xy(p)[0] - x) + abs(self.xy(p)[1] - y)   # noqa: E731
        best = min(dist(p) for p in unknown)
        tx, ty = self.xy(self.rng.choice([p for p in unknown if dist(p) == best]))
        if tx != x:
            return "forward" if tx > x else "backward"
        return "right" if ty > y else "left"

    # Telling ---------------------------------------------------------------
    def report(self, position: int, objects: List[str]) -> None:
        visited = " ".join(str(p) for p in sorted(self.mine)[-32:])
        text = (f"I am at position {position} and found: {', '.join(objects) or 'nothing'}. "
                f"Visited positions: {visited}.")
        sent = self.c.send([Message(text, to="all"), Message(text, channel=CHANNEL)])
        self.sent += sent.accepted

    # The loop --------------------------------------------------------------
    def run(self, max_steps: int, delay: float) -> Tuple[str, float, int]:
        self.c.listen(CHANNEL)
        obs = self.c.perceive()
        steps = 0
        while True:
            if obs.position not in self.mine:
                self.mine.add(obs.position)
                self.found += obs.new_objects
                self.report(obs.position, obs.objects)
            print(f"[{self.c.agent}] step {steps} pos {obs.position} saw [{', '.join(obs.objects)}]"
                  f" (coverage {obs.coverage:.0%})", flush=True)
            if obs.done:
                return "world fully explored", obs.coverage, steps
            if steps >= max_steps:
                return "reached --max-steps", obs.coverage, steps
            self.read_mail()
            action = self.choose(obs.position) or self.rng.choice(
                list(MOVES) if self.grid else ["forward", "backward"])
            obs = self.c.act(action)
            steps += 1
            if obs.outcome == "moved":
                self.moves += 1
            if delay:
                time.sleep(delay)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="A Python explorer agent for a Parley team (see the module text).",
        epilog="Environment: PARLEY_BROKER (default for --broker), PARLEY_AGENT_ID (--id), "
               "PARLEY_TOKEN_FILE, PARLEY_CURVE_KEY, PARLEY_CURVE_SERVER_KEY. "
               "Exit status: 0 done, 1 broker error, 2 usage.")
    parser.add_argument("--broker", default=os.environ.get("PARLEY_BROKER", "tcp://127.0.0.1:5555"),
                        help="the broker's request endpoint")
    parser.add_argument("--id", default=os.environ.get("PARLEY_AGENT_ID", "PyExplorer"),
                        help="this agent's id")
    parser.add_argument("--max-steps", type=int, default=60, help="moves at most")
    parser.add_argument("--step-delay-ms", type=int, default=20, help="pause between moves")
    parser.add_argument("--seed", type=int, default=7, help="tie-breaking seed")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    parser.add_argument("--token-file", default=os.environ.get("PARLEY_TOKEN_FILE"),
                        help="keep the broker's resume token here (plain mode), so a restart "
                             "takes the id over at once")
    parser.add_argument("--curve-key", default=os.environ.get("PARLEY_CURVE_KEY"),
                        help="this agent's CURVE pair (FILE and FILE_secret, parley-keygen)")
    parser.add_argument("--curve-server-key", default=os.environ.get("PARLEY_CURVE_SERVER_KEY"),
                        help="the broker's public certificate")
    args = parser.parse_args(argv)
    if args.max_steps < 0 or args.step_delay_ms < 0:
        parser.error("--max-steps and --step-delay-ms must be >= 0")
    try:
        with parley.Client(args.broker, args.id, caps=["explore", "python"],
                           token_file=args.token_file, curve_key=args.curve_key,
                           curve_server_key=args.curve_server_key,
                           timeout=args.timeout, connect_timeout=args.timeout) as client:
            explorer = Explorer(client, args.seed)
            end, coverage, steps = explorer.run(args.max_steps, args.step_delay_ms / 1000.0)
            explorer.read_mail()
            client.bye()
    except errors.ParleyError as exc:
        print(f"explorer: {exc}", file=sys.stderr)
        return 1
    print(f'SUMMARY agent={args.id} end="{end}" steps={steps} moves={explorer.moves} '
          f"sent={explorer.sent} received={explorer.received} coverage={coverage:.0%} "
          f"found={len(explorer.found)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
