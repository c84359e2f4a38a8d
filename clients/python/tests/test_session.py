# SPDX-License-Identifier: MIT
"""The session: heartbeats during long waits, reconnects, resends, timeouts,
and replies that break the protocol."""
import signal
import threading
import time

import msgpack
import pytest
import zmq

import parley
from parley import Message, WriteOp, errors

from conftest import free_port, wait_for


def test_heartbeats_keep_a_waiting_agent_live(broker_factory):
    # Liveness 1.5 s; the caller's thread does nothing for 3 s (a slow
    # model). The I/O thread's HEARTBEATs (every 200 ms) keep the agent
    # live: one HELLO, no expiry.
    broker = broker_factory("--heartbeat-ms", "200", "--liveness-ms", "1500")
    c = parley.Client(broker.router, "Slow")
    time.sleep(3.0)
    infos = {i.agent: i for i in c.agents()}
    assert infos["Slow"].online
    assert c.session.hellos == 1 and c.session.heartbeats >= 5
    assert "Slow expired" not in broker.log()
    c.close()


def test_without_heartbeats_the_agent_expires(broker_factory, raw):
    # The same wait on a bare connection that sends nothing does expire:
    # the test above can fail.
    broker = broker_factory("--heartbeat-ms", "200", "--liveness-ms", "1500")
    r = raw(broker.router)
    assert r.call("HELLO", agent="Mute")["t"] == "WELCOME"
    time.sleep(2.5)                     # liveness + the sweep period, with margin
    # A starved broker may not have swept yet: wait for its own word, so
    # the HEARTBEAT cannot arrive first and keep the agent live.
    assert wait_for(lambda: "Mute expired" in broker.log(), 20)
    assert r.call("HEARTBEAT")["error"] == "NOT_HELLO"


def test_reconnect_after_broker_restart(broker_factory):
    broker = broker_factory(fixed_ports=True)
    c = parley.Client(broker.router, "R", reply_timeout=1.0)
    c.listen("news")
    broker.kill()
    broker.start()                      # same ports, empty broker
    # The first call after the restart gets NOT_HELLO (or no reply):
    # the session says HELLO again, LISTENs again and resends it.
    assert {i.agent for i in c.agents()} == {"R"}
    assert c.session.hellos >= 2 and c.session.reconnects >= 1
    other = parley.Client(broker.router, "Poster")
    other.post("news", "after the restart")
    assert [m.body for m in c.fetch().messages] == ["after the restart"]
    other.close()
    c.close()


def test_safe_call_survives_downtime(broker_factory):
    broker = broker_factory(fixed_ports=True)
    sender = parley.Client(broker.router, "S", reply_timeout=0.5)
    broker.kill()
    result = {}

    def send():
        try:
            result["sent"] = sender.send([Message("hello", to="S")], timeout=15)
        except Exception as exc:        # reported below
            result["error"] = exc

    t = threading.Thread(target=send)
    t.start()
    time.sleep(1.5)                     # held (or resent) until the broker is back
    broker.start()
    t.join(20)
    assert "error" not in result, result
    assert result["sent"].accepted == 1
    # Posted once, whatever number of times it went out.
    assert [m.body for m in sender.fetch().messages] == ["hello"]
    assert sender.session.hellos >= 2          # said HELLO to the new broker
    sender.close()


def test_unsafe_call_in_doubt_is_connection_lost(broker_factory):
    # A stopped broker: the WRITE leaves (the connection is up) and gets
    # no reply in time. Whether it took effect is unknown until the broker
    # runs again, and then it did.
    broker = broker_factory(fixed_ports=True)
    c = parley.Client(broker.router, "W", reply_timeout=0.5)
    broker.proc.send_signal(signal.SIGSTOP)
    try:
        with pytest.raises(errors.ConnectionLost):
            c.write([WriteOp.update("k", 1)])
    finally:
        broker.proc.send_signal(signal.SIGCONT)
    assert c.get(["k"]).values() == {"k": 1}
    assert c.write([WriteOp.update("k", 2)]).changed == 1
    c.close()


def test_unsent_unsafe_call_times_out(broker_factory):
    # A broker that is gone: nothing can leave (ZMQ_IMMEDIATE), so the
    # WRITE certainly did not take effect: Timeout, and it is gone with it.
    broker = broker_factory(fixed_ports=True)
    c = parley.Client(broker.router, "W", reply_timeout=0.5)
    broker.kill()
    with pytest.raises((errors.Timeout, errors.ConnectionLost)):
        c.write([WriteOp.update("k", 1)], timeout=1.5)
    broker.start()
    assert c.write([WriteOp.update("k", 1)]).changed == 1
    c.close()


def test_call_timeout_when_no_broker(broker_factory):
    broker = broker_factory(fixed_ports=True)
    c = parley.Client(broker.router, "T", reply_timeout=0.3)
    broker.kill()
    started = time.monotonic()
    with pytest.raises(errors.Timeout):
        c.stats(timeout=1.0)
    assert time.monotonic() - started < 5.0
    c.close()


def test_connect_timeout():
    with pytest.raises(errors.Timeout):
        parley.Client(f"tcp://127.0.0.1:{free_port()}", "Nobody", connect_timeout=0.5)


class FakeBroker:
    """A ROUTER that answers every request with frames a test chooses."""

    def __init__(self, answer):
        self.sock = zmq.Context.instance().socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.answer = answer
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            if not self.sock.poll(50):
                continue
            ident, body = self.sock.recv_multipart()
            req = msgpack.unpackb(body, raw=False)
            reply = self.answer(req)
            if reply is not None:
                self.sock.send_multipart([ident, reply])

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.sock.close(0)


def _pack(**fields):
    return msgpack.packb({"v": 1, **fields}, use_bin_type=True)


WELCOME = dict(t="WELCOME", version=1, agent="X", pub="tcp://127.0.0.1:1", heartbeat_ms=1000,
               liveness_ms=5000, max_body=65536, max_batch=4096, acked=0)


@pytest.mark.parametrize("bad, what", [
    (lambda r: _pack(id=r["id"], **{k: v for k, v in WELCOME.items() if k != "pub"}),
     "lacks required field 'pub'"),
    (lambda r: _pack(id=r["id"], t="OK"), "answered by OK"),
    (lambda r: _pack(id=r["id"], **dict(WELCOME, heartbeat_ms="soon")), "heartbeat_ms"),
])
def test_bad_welcome_is_a_protocol_error(bad, what):
    fake = FakeBroker(bad)
    try:
        with pytest.raises(errors.ProtocolError) as info:
            parley.Client(fake.endpoint, "X", connect_timeout=3)
        assert what in str(info.value)
    finally:
        fake.close()


@pytest.mark.parametrize("garbage", [b"\xc1", b"\x91\x01", msgpack.packb({"v": 2, "t": "OK"}),
                                     msgpack.packb([1, 2]), b""])
def test_garbage_replies_never_hang(garbage):
    def answer(req):
        if req["t"] == "HELLO":
            return _pack(id=req["id"], **dict(WELCOME, agent="X"))
        if req["t"] == "HEARTBEAT":
            return _pack(id=req["id"], t="OK")
        return garbage

    fake = FakeBroker(answer)
    c = parley.Client(fake.endpoint, "X", reply_timeout=0.3)
    try:
        started = time.monotonic()
        with pytest.raises(errors.Timeout):
            c.stats(timeout=1.0)
        assert time.monotonic() - started < 5.0
        assert c.session.bad_frames >= 1
    finally:
        c.close()
        fake.close()


def test_wrong_reply_fields_raise():
    def answer(req):
        if req["t"] == "HELLO":
            return _pack(id=req["id"], **dict(WELCOME, agent="X"))
        return _pack(id=req["id"], t="SENT", accepted=1, seqs=["one"])

    fake = FakeBroker(answer)
    c = parley.Client(fake.endpoint, "X")
    try:
        with pytest.raises(errors.ProtocolError, match="seqs"):
            c.send_to("Y", "hi")
    finally:
        c.close()
        fake.close()


def test_many_threads_share_one_client(broker):
    c = parley.Client(broker.router, "M")
    results = []

    def worker(n):
        for i in range(20):
            results.append(c.send_to("M", f"{n}.{i}").accepted)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [1] * 80
    assert len(c.fetch().messages) == 80
    c.close()
