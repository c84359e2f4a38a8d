# SPDX-License-Identifier: MIT
"""Fixtures: the real parley-broker (and parley-agent) binaries.

The binaries come from $PARLEY_BIN_DIR (set by `make test`), else from the
tree's build/rel/bin. Each broker runs on 127.0.0.1 with ports it picks
(ready file), or on ipc endpoints in its own folder when a test restarts
it at the same address, and is killed when the test ends, whatever
happened.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import msgpack
import pytest
import zmq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

BIN_DIR = Path(os.environ.get("PARLEY_BIN_DIR") or ROOT / "build" / "rel" / "bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """A parley-broker process."""

    def __init__(self, args: List[str] = (), fixed_ports: bool = False) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="parley-py-"))
        self.args = list(args)
        if fixed_ports:
            # ipc in the broker's own folder, not tcp ports picked now and
            # bound again later: another process on the machine may take a
            # port in between (the broker unlinks a stale socket file).
            self.router_ep = f"ipc://{self.dir}/router"
            self.pub_ep = f"ipc://{self.dir}/pub"
        else:
            self.router_ep = self.pub_ep = "tcp://127.0.0.1:*"
        self.proc: Optional[subprocess.Popen] = None
        self.endpoints: Dict[str, str] = {}
        self.starts = 0
        self.start()

    @property
    def log_path(self) -> Path:
        return self.dir / f"broker{self.starts}.log"

    def start(self) -> None:
        ready = self.dir / "ready"
        if ready.exists():
            ready.unlink()
        self.starts += 1
        cmd = [str(BIN_DIR / "parley-broker"), "--router", self.router_ep, "--pub", self.pub_ep,
               "--tap", "off", "--advertise-host", "127.0.0.1", "--ready-file", str(ready),
               "--data-dir", "none", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log_path, "w"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if ready.exists():
                lines = ready.read_text().split()
                self.endpoints = dict(line.split("=", 1) for line in lines if "=" in line)
                if "router" in self.endpoints and "pub" in self.endpoints:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        raise RuntimeError(f"the broker did not come up:\n{self.log()}")

    @property
    def router(self) -> str:
        return self.endpoints["router"]

    def log(self) -> str:
        return "".join(p.read_text() for p in sorted(self.dir.glob("broker*.log")))

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode if self.proc else 0


@pytest.fixture
def broker_factory() -> Iterator:
    made: List[Broker] = []

    def make(*args: str, fixed_ports: bool = False) -> Broker:
        b = Broker(list(args), fixed_ports)
        made.append(b)
        return b

    yield make
    # A broker still running is stopped with SIGTERM and must exit 0: under
    # `make SANITIZE=1` that is where LeakSanitizer reports.
    bad = []
    for b in made:
        running = b.proc is not None and b.proc.poll() is None
        rc = b.stop()
        if running and rc != 0:
            bad.append(f"broker exited {rc}:\n{b.log()[-4000:]}")
        shutil.rmtree(b.dir, ignore_errors=True)
    if bad:
        pytest.fail("\n".join(bad))


@pytest.fixture
def broker(broker_factory) -> Broker:
    return broker_factory()


class Raw:
    """A bare DEALER speaking frames, for checks below the client's layer."""

    def __init__(self, endpoint: str) -> None:
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self.next_id = 1

    def call(self, t: str, **fields) -> dict:
        rid = self.next_id
        self.next_id += 1
        self.sock.send(msgpack.packb({"v": 1, "t": t, "id": rid, **fields}, use_bin_type=True))
        # 15 s, as the C suites' test client: a loaded machine is slow.
        assert self.sock.poll(15000), f"no reply to {t}"
        reply = msgpack.unpackb(self.sock.recv(), raw=False, strict_map_key=False)
        assert reply["id"] == rid
        return reply

    def close(self) -> None:
        self.sock.close(0)


@pytest.fixture
def raw(broker) -> Iterator:
    made: List[Raw] = []

    def make(endpoint: Optional[str] = None) -> Raw:
        r = Raw(endpoint or broker.router)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def wait_for(predicate, timeout: float = 20.0, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
