#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python_relay - the Python client's relay and round trip, beside pyzmq alone.

Measured in one run, on one machine (scripts/bench.sh runs it; the ratios
are what counts, not the absolute figures):

  relay (one sender -> server -> one receiver, 64 B bodies, rate measured
  by the receiver from its first message to its last):
    client    parley.Client through the real parley-broker: the sender
              SENDs batches of B messages (one call at a time), the
              receiver FETCHes up to B with ack = the last seq, and waits
              for MAIL_READY (wait_mail) when its inbox is empty;
    raw       the same frames and the same pattern from bare pyzmq DEALERs
              (SEND/FETCH encoded by hand): what the client layer costs;
    pyzmq     a bare pyzmq ROUTER forwarder: one message per frame, sender
              and receiver DEALERs, no broker, no msgpack (pyzmq alone).
  round trip (sequential requests after a warm-up, p50 and p99):
    client    parley.Client.heartbeat() and parley.aio.Client.heartbeat();
    raw       a HEARTBEAT frame from a bare pyzmq DEALER to the broker;
    echo      a pyzmq ROUTER echoing a frame of the HEARTBEAT's size.

The server side (broker, forwarder, echo) runs on CPU 0, the clients on
CPU 1 (when there are two CPUs), each in its own process.
Output: "RESULT <name> <value> <unit>" lines, as the C benches print.

    bench/python_relay.py [--quick] [--count N] [--batch B]
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))
import msgpack  # noqa: E402
import zmq      # noqa: E402

import parley          # noqa: E402
import parley.aio      # noqa: E402
from parley import Message  # noqa: E402

BODY = 64
BIN_DIR = Path(os.environ.get("PARLEY_BIN_DIR") or ROOT / "build" / "rel" / "bin")


def pin(cpu: int) -> None:
    if os.environ.get("BENCH_NO_PIN") != "1" and os.cpu_count() and os.cpu_count() >= 2:
        os.sched_setaffinity(0, {cpu})


def result(name: str, value: float, unit: str) -> None:
    print(f"RESULT {name} {value:.2f} {unit}", flush=True)


# ---------------------------------------------------------------------------
#  The broker

class Broker:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="parley-pybench-")
        ready = Path(self.dir) / "ready"
        self.proc = subprocess.Popen(
            [str(BIN_DIR / "parley-broker"), "--router", "tcp://127.0.0.1:*", "--pub",
             "tcp://127.0.0.1:*", "--tap", "off", "--advertise-host", "127.0.0.1",
             "--ready-file", str(ready), "--log-level", "warn",
             # The default journal (everysec), in this run's own folder.
             "--data-dir", str(Path(self.dir) / "data"),
             # Room for the whole run, as bench_relay does: the sender is
             # never held back by a full inbox.
             "--max-inbox", "10000000", "--max-inbox-bytes", "1000000000"],
            preexec_fn=lambda: pin(0), stderr=subprocess.DEVNULL)
        for _ in range(2000):
            if ready.exists() and "pub=" in ready.read_text():
                break
            time.sleep(0.005)
        lines = dict(l.split("=", 1) for l in ready.read_text().split())
        self.router = lines["router"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
#  Relay

def client_sender(router: str, count: int, batch: int, go) -> None:
    pin(1)
    c = parley.Client(router, "src")
    go.wait()
    body = "x" * BODY
    sent = 0
    while sent < count:
        n = min(batch, count - sent)
        reply = c.send([Message(body, to="dst")] * n)
        assert reply.accepted == n, reply
        sent += n
    c.close()


def client_receiver(router: str, count: int, batch: int, ready, out) -> None:
    pin(1)
    c = parley.Client(router, "dst")
    ready.set()
    got, last, first_at = 0, 0, 0.0
    while got < count:
        mail = c.fetch(ack=last or None, max=batch)
        if mail.messages:
            if not first_at:
                first_at = time.perf_counter()
            got += len(mail.messages)
            last = mail.last_seq
        else:
            c.wait_mail(0.05)
    out.put(count / (time.perf_counter() - first_at))
    c.ack(last)
    c.close()


def raw_call(sock: zmq.Socket, frame: bytes) -> dict:
    sock.send(frame)
    return msgpack.unpackb(sock.recv(), raw=False)


def raw_hello(router: str, agent: str) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(router)
    assert raw_call(sock, msgpack.packb({"v": 1, "t": "HELLO", "id": 1, "agent": agent}))["t"] \
        == "WELCOME"
    return sock


def raw_sender(router: str, count: int, batch: int, go) -> None:
    pin(1)
    sock = raw_hello(router, "rsrc")
    go.wait()
    body = "x" * BODY
    sent, rid = 0, 1
    while sent < count:
        n = min(batch, count - sent)
        rid += 1
        frame = msgpack.packb({"v": 1, "t": "SEND", "id": rid, "batch": rid,
                               "messages": [{"to": "rdst", "body": body}] * n})
        assert raw_call(sock, frame)["accepted"] == n
        sent += n
    sock.close(0)


def raw_receiver(router: str, count: int, batch: int, ready, out) -> None:
    pin(1)
    sock = raw_hello(router, "rdst")
    ready.set()
    got, last, first_at, rid = 0, 0, 0.0, 1
    while got < count:
        rid += 1
        req = {"v": 1, "t": "FETCH", "id": rid, "max": batch}
        if last:
            req["ack"] = last
        mail = raw_call(sock, msgpack.packb(req))
        items = mail["messages"]
        if items:
            if not first_at:
                first_at = time.perf_counter()
            got += len(items)
            last = items[-1]["seq"]
        else:
            time.sleep(0.0005)          # as wait_mail would, without the SUB
    out.put(count / (time.perf_counter() - first_at))
    sock.close(0)


def relay(sender, receiver, router: str, count: int, batch: int) -> float:
    ctx = mp.get_context("fork")
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    r = ctx.Process(target=receiver, args=(router, count, batch, ready, out))
    r.start()
    ready.wait(30)
    s = ctx.Process(target=sender, args=(router, count, batch, go))
    s.start()
    go.set()
    rate = wait_result(out, [s, r])
    s.join(60)
    r.join(60)
    return rate


def wait_result(out, procs) -> float:
    """The receiver's rate; 0 (reported, never a hang) when a process died."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            return out.get(timeout=0.5)
        except Exception:           # queue.Empty
            if any(p.exitcode not in (None, 0) for p in procs):
                break
    for p in procs:
        if p.is_alive():
            p.kill()
    print("python_relay: a relay process failed; its figure is 0", file=sys.stderr)
    return 0.0


# pyzmq alone: a ROUTER forwarder in its own process on CPU 0.

def pyzmq_forwarder(endpoint_q, echo: bool) -> None:
    pin(0)
    router = zmq.Context.instance().socket(zmq.ROUTER)
    router.setsockopt(zmq.ROUTER_MANDATORY, 1)
    router.setsockopt(zmq.SNDHWM, 0)
    router.setsockopt(zmq.RCVHWM, 0)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    endpoint_q.put(f"tcp://127.0.0.1:{port}")
    while True:
        ident, body = router.recv_multipart(copy=False)
        if echo:
            router.send_multipart([ident, body], copy=False)
        elif ident.bytes != b"dst":
            router.send_multipart([b"dst", body], copy=False)


def pyzmq_receiver(endpoint: str, count: int, ready, out) -> None:
    pin(1)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.IDENTITY, b"dst")
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.connect(endpoint)
    sock.send(b"hello")                 # the forwarder learns the route (and drops it)
    time.sleep(0.3)
    ready.set()
    sock.recv()
    first_at = time.perf_counter()
    for _ in range(count - 1):
        sock.recv(copy=False)
    out.put((count - 1) / (time.perf_counter() - first_at))


def pyzmq_sender(endpoint: str, count: int, go) -> None:
    pin(1)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.connect(endpoint)
    go.wait()
    body = b"x" * BODY
    for _ in range(count):
        sock.send(body)
    time.sleep(1)
    sock.close(linger=1000)


def pyzmq_relay(count: int) -> float:
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    server = ctx.Process(target=pyzmq_forwarder, args=(q, False), daemon=True)
    server.start()
    endpoint = q.get(timeout=10)
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    r = ctx.Process(target=pyzmq_receiver, args=(endpoint, count, ready, out))
    r.start()
    ready.wait(30)
    s = ctx.Process(target=pyzmq_sender, args=(endpoint, count, go))
    s.start()
    go.set()
    rate = wait_result(out, [s, r])
    s.join(60)
    r.join(60)
    server.kill()
    return rate


# ---------------------------------------------------------------------------
#  Round trip

def percentiles(name: str, times: list) -> None:
    times.sort()
    result(f"{name}_p50", statistics.median(times) * 1e6, "us")
    result(f"{name}_p99", times[int(len(times) * 0.99)] * 1e6, "us")


def rtt_client(router: str, rounds: int, warmup: int) -> None:
    pin(1)
    c = parley.Client(router, "rtt")
    times = []
    for i in range(rounds + warmup):
        t = time.perf_counter()
        c.heartbeat()
        if i >= warmup:
            times.append(time.perf_counter() - t)
    c.close()
    percentiles("py_rtt_client", times)


def rtt_aio(router: str, rounds: int, warmup: int) -> None:
    pin(1)

    async def run() -> list:
        c = await parley.aio.Client.connect(router, "artt")
        times = []
        for i in range(rounds + warmup):
            t = time.perf_counter()
            await c.heartbeat()
            if i >= warmup:
                times.append(time.perf_counter() - t)
        await c.close()
        return times

    percentiles("py_rtt_aio", asyncio.run(run()))


def rtt_raw(router: str, rounds: int, warmup: int, name: str, hello: bool) -> None:
    pin(1)
    if hello:
        sock = raw_hello(router, "rawrtt")
    else:
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.connect(router)
    frame = msgpack.packb({"v": 1, "t": "HEARTBEAT", "id": 7})
    times = []
    for i in range(rounds + warmup):
        t = time.perf_counter()
        sock.send(frame)
        sock.recv()
        if i >= warmup:
            times.append(time.perf_counter() - t)
    sock.close(0)
    percentiles(name, times)


def in_child(fn, *args) -> None:
    p = mp.get_context("fork").Process(target=fn, args=args)
    p.start()
    p.join(600)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (smoke test)")
    parser.add_argument("--count", type=int, default=0, help="messages per relay run")
    parser.add_argument("--batch", type=int, default=256, help="messages per SEND / FETCH")
    args = parser.parse_args()
    count = args.count or (20000 if args.quick else 200000)
    rounds, warmup = (2000, 200) if args.quick else (10000, 1000)
    broker = Broker()
    try:
        result("py_relay_client", relay(client_sender, client_receiver, broker.router, count,
                                        args.batch), "msg/s")
        result("py_relay_raw", relay(raw_sender, raw_receiver, broker.router, count,
                                     args.batch), "msg/s")
        in_child(rtt_client, broker.router, rounds, warmup)
        in_child(rtt_aio, broker.router, rounds, warmup)
        in_child(rtt_raw, broker.router, rounds, warmup, "py_rtt_raw", True)
    finally:
        broker.stop()
    result("py_relay_pyzmq", pyzmq_relay(count), "msg/s")
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    echo = ctx.Process(target=pyzmq_forwarder, args=(q, True), daemon=True)
    echo.start()
    in_child(rtt_raw, q.get(timeout=10), rounds, warmup, "py_rtt_echo", False)
    echo.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
