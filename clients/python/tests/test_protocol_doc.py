# SPDX-License-Identifier: MIT
"""PROTOCOL.md section 7 ("Lifecycle and exact behaviour"), checked against
the real broker: each test names the paragraph it checks."""
import time

import msgpack
import pytest
import zmq

import parley
from parley import Message, WriteOp



class Sub:
    """A SUB socket proven live by a probe write (section 7, last part)."""

    def __init__(self, client, topic):
        self.sock = zmq.Context.instance().socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(client.welcome.pub)
        self.sock.setsockopt(zmq.SUBSCRIBE, topic.encode())
        self.sock.setsockopt(zmq.SUBSCRIBE, b"state.parley.probe.")
        deadline = time.monotonic() + 20         # by the clock: a loaded machine is slow
        n = 0
        while time.monotonic() < deadline:
            seq = client.write([WriteOp.set(f"parley.probe.{client.agent}", n)]).seq
            if any(e.get("seq") == seq for _, e in self._recv(0.1)):
                return
            n += 1
        raise AssertionError("the subscription never came up")

    def drain(self, wait=0.3):
        return [(t, e) for t, e in self._recv(wait) if not t.startswith("state.parley.probe.")]

    def _recv(self, wait):
        out = []
        while self.sock.poll(int(wait * 1000)):
            topic, body = self.sock.recv_multipart()
            out.append((topic.decode(), msgpack.unpackb(body, raw=False, strict_map_key=False)))
            wait = 0.05
        return out

    def close(self):
        self.sock.close(0)


# ---------------------------------------------------------------------------
#  Connections and identity

def test_hello_twice_and_after_bye(raw):
    r = raw()
    assert r.call("HEARTBEAT")["error"] == "NOT_HELLO"
    assert r.call("BYE")["error"] == "NOT_HELLO"
    assert r.call("HELLO", agent="A", caps=["x"])["t"] == "WELCOME"
    again = r.call("HELLO", agent="A")
    assert again["t"] == "WELCOME" and again["agent"] == "A"
    other = r.call("HELLO", agent="B")
    assert other["error"] == "BAD_FIELD"
    assert r.call("AGENTS")["agents"][0]["caps"] == ["x"]      # caps kept when not given
    assert r.call("BYE")["t"] == "OK"
    assert r.call("HEARTBEAT")["error"] == "NOT_HELLO"
    assert r.call("HELLO", agent="B")["t"] == "WELCOME"         # any id after BYE
    infos = {i["agent"]: i["online"] for i in r.call("AGENTS")["agents"]}
    assert infos == {"A": False, "B": True}


def test_expiry_then_hello_with_the_token_keeps_mail(broker_factory, raw):
    broker = broker_factory("--heartbeat-ms", "100", "--liveness-ms", "400")
    a, sender = raw(broker.router), raw(broker.router)
    welcome = a.call("HELLO", agent="A")
    assert welcome["t"] == "WELCOME" and welcome["token"]
    assert sender.call("HELLO", agent="S")["t"] == "WELCOME"
    assert sender.call("SEND", messages=[{"to": "A", "body": "kept"}])["accepted"] == 1
    # A says nothing; S keeps talking until the broker says A expired (a
    # starved broker may take longer than the liveness to sweep, and A's
    # FETCH must not reach it first).
    deadline = time.monotonic() + 20
    while "agent A expired" not in broker.log():
        assert time.monotonic() < deadline, broker.log()
        sender.call("HEARTBEAT")
        time.sleep(0.05)
    assert a.call("FETCH")["error"] == "NOT_HELLO"
    # Expired, the id is still held for the holder of its token.
    assert raw(broker.router).call("HELLO", agent="A")["error"] == "ID_IN_USE"
    again = a.call("HELLO", agent="A", token=welcome["token"])
    assert again["t"] == "WELCOME" and again["token"] == welcome["token"]
    assert [m["body"] for m in a.call("FETCH")["messages"]] == ["kept"]


def test_token_takes_a_live_id_over_at_once_and_a_stranger_is_refused(broker_factory, raw):
    broker = broker_factory("--heartbeat-ms", "100", "--liveness-ms", "60000")
    first, second, third = raw(broker.router), raw(broker.router), raw(broker.router)
    welcome = first.call("HELLO", agent="A")
    token = welcome["token"]
    assert len(token) == 32 and welcome["origin"] > 0
    assert second.call("HELLO", agent="A")["error"] == "ID_IN_USE"
    assert second.call("HELLO", agent="A", token="0" * 32)["error"] == "UNAUTHORIZED"
    assert second.call("HELLO", agent="A", token=token)["t"] == "WELCOME"      # at once
    assert first.call("HEARTBEAT")["error"] == "NOT_HELLO"
    assert second.call("STATS")["unauthorized"] == 1
    # After BYE the id has no token: a new connection may take it, and gets
    # a new token.
    assert second.call("BYE")["t"] == "OK"
    fresh = third.call("HELLO", agent="A")
    assert fresh["t"] == "WELCOME" and fresh["token"] != token


def test_a_new_connection_with_an_old_routing_id_starts_as_nobody(broker):
    def dealer():
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.ROUTING_ID, b"same-id")
        sock.connect(broker.router)
        return sock

    def send(sock, t, rid, **fields):
        sock.send(msgpack.packb({"v": 1, "t": t, "id": rid, **fields}))

    old = dealer()
    send(old, "HELLO", 1, agent="R")
    assert old.poll(5000)
    assert msgpack.unpackb(old.recv(), raw=False)["t"] == "WELCOME"
    old.close(0)
    # libzmq's ROUTER leaves a connection presenting a routing id still in
    # use unserved until that connection closes, so until the broker's I/O
    # thread has seen the old one close, a new one goes unanswered for
    # good: try again on a fresh connection each time (as check_curve
    # does), by the clock. Every answer must be NOT_HELLO, never the old
    # session's OK.
    replies = []
    deadline = time.monotonic() + 30
    rid = 2
    while not replies and time.monotonic() < deadline:
        new = dealer()
        send(new, "HEARTBEAT", rid)
        rid += 1
        if new.poll(500):
            replies.append(msgpack.unpackb(new.recv(), raw=False))
            while new.poll(100):
                replies.append(msgpack.unpackb(new.recv(), raw=False))
        new.close(0)
    assert replies and all(r.get("error") == "NOT_HELLO" for r in replies)


def test_observe_registers_nothing(broker, raw):
    watcher, agent = raw(), raw()
    welcome = watcher.call("HELLO", agent="Tap", observe=True)
    assert welcome["t"] == "WELCOME" and welcome["pub"] and welcome["acked"] == 0
    assert "token" not in welcome
    # Reads are answered; anything that needs an id is not.
    assert watcher.call("AGENTS")["agents"] == []
    assert watcher.call("FETCH")["error"] == "NOT_HELLO"
    assert agent.call("HELLO", agent="A")["t"] == "WELCOME"
    assert [i["agent"] for i in agent.call("AGENTS")["agents"]] == ["A"]
    assert [i["agent"] for i in watcher.call("AGENTS")["agents"]] == ["A"]
    # The observer's name stays free.
    assert agent.call("SEND", messages=[{"to": "Tap", "body": "x"}])["errors"][0]["code"] == 20


def test_oversized_frame_closes_the_connection(broker_factory):
    broker = broker_factory("--liveness-ms", "1500")
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(broker.router)
    ids = iter(range(1, 1000))

    def send(t, **fields):
        rid = next(ids)
        sock.send(msgpack.packb({"v": 1, "t": t, "id": rid, **fields}))
        return rid

    def replies(wait):
        out = {}
        while sock.poll(int(wait * 1000)):
            m = msgpack.unpackb(sock.recv(), raw=False)
            out[m["id"]] = m
            wait = 0.05
        return out

    send("HELLO", agent="Big")
    welcome = list(replies(2).values())[0]
    assert welcome["t"] == "WELCOME"
    token = welcome["token"]
    big = send("SEND", messages=[{"to": "Big", "body": b"x" * (1 << 20)}])
    # No answer to it; the DEALER reconnects as a new connection, which
    # has not said HELLO (what was sent while it reconnected may be lost).
    got = {}
    for _ in range(50):
        got.update(replies(0.2))
        if any(m.get("error") == "NOT_HELLO" for m in got.values()):
            break
        send("HEARTBEAT")
    assert big not in got
    assert any(m.get("error") == "NOT_HELLO" for m in got.values())
    # Without the token the id stays held for the old session; with it the
    # new connection takes it over at once.
    rid = send("HELLO", agent="Big")
    assert replies(2)[rid]["error"] == "ID_IN_USE"
    rid = send("HELLO", agent="Big", token=token)
    assert replies(2)[rid]["t"] == "WELCOME"
    with parley.Client(broker.router, "Watcher") as c:
        assert c.stats().bad_frames == 0            # libzmq dropped it, unseen
    sock.close(0)


# ---------------------------------------------------------------------------
#  STATS

def test_stats_fields(broker_factory):
    broker = broker_factory("--max-inbox", "1")
    a, b, c = (parley.Client(broker.router, n) for n in "ABC")
    before = a.stats()
    assert before.agents == 3 and before.online == 3 and before.msgs_in == 0
    sent = a.send([Message("12345", to="all")])             # to B and C
    s = a.stats()
    assert (s.msgs_in, s.delivered, s.queued, s.queued_bytes) == (1, 2, 1, 5)
    assert s.mail_seq == sent.seqs[0]
    b.fetch()
    b.fetch()
    assert a.stats().msgs_out == 2                          # handed out twice
    partial = a.send([Message("x", to="all")])             # both inboxes full
    assert partial.accepted == 0 and len(partial.errors) == 2
    s = a.stats()
    assert s.rejected == 2 and s.msgs_in == 1
    errors_before = s.errors
    with pytest.raises(parley.errors.UnknownType):
        a.call(parley.requests.Request("NOPE", {}, "OK", lambda m: m))
    s = a.stats()
    assert s.errors == errors_before + 1 and s.bad_frames == 1
    b.ack(sent.seqs[0])
    c.fetch()                           # an ack is clamped to what was handed out
    c.ack(sent.seqs[0])
    s = a.stats()
    assert s.queued == 0 and s.queued_bytes == 0 and s.delivered == 2
    assert s.state_keys >= 3 and s.state_bytes > 0           # the world's keys count
    assert s.tap_seq == 0                                   # --tap off
    for x in (a, b, c):
        x.close()


# ---------------------------------------------------------------------------
#  The world

def test_start_positions_and_directions(broker_factory):
    broker = broker_factory("--grid", "7x5")
    clients = [parley.Client(broker.router, f"W{i}") for i in range(4)]
    assert [c.perceive().position for c in clients] == [0, 9, 25, 0]
    w = clients[1]                      # at (2, 1)
    assert (w.act("forward").x, w.act("backward").x) == (3, 2)
    right = w.act("right")
    assert (right.x, right.y, right.position) == (2, 2, 16)
    assert w.act("left").y == 1 and w.act("left").y == 0
    assert w.act("left").outcome == "edge"
    for c in clients:
        c.close()


def test_world_events(broker_factory):
    broker = broker_factory("--world-size", "2")
    a = parley.Client(broker.router, "A")
    sub = Sub(a, "world.")
    state = Sub(a, "state.world.")
    a.perceive()
    assert sub.drain() == []
    obs = a.act("forward")
    assert obs.done                     # two positions: the second explores the rest
    assert [t for t, _ in sub.drain()] == ["world.explored"]
    a.act("backward")
    a.act("forward")
    assert sub.drain() == []            # once
    state.drain()
    a.world_reset()
    assert [t for t, _ in sub.drain()] == ["world.reset"]
    ups = [t for t, _ in state.drain()]
    assert ups == ["state.world.objects", "state.world.agent_positions",
                   "state.world.explored_by_all"]
    sub.close()
    state.close()
    a.close()


def test_steps_publish_in_order(broker_factory):
    broker = broker_factory("--world-size", "4")
    a = parley.Client(broker.router, "A")
    state = Sub(a, "state.world.")
    a.perceive()
    assert [t for t, _ in state.drain()] == ["state.world.agent_positions",
                                              "state.world.explored_by_all"]
    a.act("stay")
    a.act("backward")
    assert state.drain() == []          # edge and stay publish nothing
    state.close()
    a.close()


# ---------------------------------------------------------------------------
#  SEND fan-outs

def test_partial_fan_out_is_accepted_with_errors(broker_factory):
    broker = broker_factory("--max-inbox", "1")
    a, b, c = (parley.Client(broker.router, n) for n in "ABC")
    a.send_to("B", "fills B")
    sent = a.send([Message("to all", to="all")])
    assert sent.accepted == 1 and sent.seqs[0] > 0
    assert [(e.name, e.agent) for e in sent.errors] == [("INBOX_FULL", "B")]
    assert [m.body for m in c.fetch().messages] == ["to all"]
    nobody = a.post("empty-channel", "heard by nobody")
    assert nobody.accepted == 1 and nobody.seqs[0] > 0 and not nobody.errors
    assert a.stats().queued == 2                            # B's and C's
    for x in (a, b, c):
        x.close()


# ---------------------------------------------------------------------------
#  WRITE: one key, several ops

def test_key_changed_twice_in_one_write(broker):
    a = parley.Client(broker.router, "A")
    sub = Sub(a, "state.t.")
    before = a.get(["t.x"]).seq
    w = a.write([WriteOp.set("t.x", 1), WriteOp.set("t.y", "y"), WriteOp.update("t.x", 2),
                 WriteOp.set("t.gone", 1), WriteOp.delete("t.gone")])
    assert w.changed == 3 and w.seq == before + 3
    events = sub.drain()
    assert [(t, e["seq"], e["op"], e.get("value")) for t, e in events] == [
        ("state.t.x", before + 1, "update", 2),
        ("state.t.y", before + 2, "set", "y"),
        ("state.t.gone", before + 3, "delete", None)]
    sub.close()
    a.close()


# ---------------------------------------------------------------------------
#  SNAPSHOT paging with deletes

def test_deletes_during_paging(broker):
    a = parley.Client(broker.router, "A")
    a.write([WriteOp.set(f"p.{k}", k) for k in "abcde"])
    sub = Sub(a, "state.p.")
    first = a.snapshot(prefix="p.", limit=2)
    assert [e.key for e in first.entries] == ["p.a", "p.b"] and first.more
    b_seq = first.entries[1].seq
    a.write([WriteOp.delete("p.b"), WriteOp.delete("p.c")])
    second = a.snapshot(prefix="p.", after_key="p.b", limit=2)     # p.b is gone
    assert [e.key for e in second.entries] == ["p.d", "p.e"]
    deletes = {t: e["seq"] for t, e in sub.drain() if e["op"] == "delete"}
    assert deletes["state.p.b"] > b_seq
    a.write([WriteOp.delete("p.d"), WriteOp.delete("p.e")])
    last = a.snapshot(prefix="p.", after_key="p.a", limit=2)
    assert last.entries == [] and last.more is False
    sub.close()
    a.close()
