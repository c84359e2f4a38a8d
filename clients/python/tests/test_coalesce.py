# SPDX-License-Identifier: MIT
"""Coalesced pipelined posts (parley.session, "pipelined posts are
coalesced"), blocking and asyncio, against the real broker.

To make holding certain rather than likely, the broker is stopped
(SIGSTOP) while the posts are made: the first post goes out and stays
unconfirmed, so every later one is held, and frames go only when full.
The linger is set far beyond the test's length, so no frame goes by the
clock. Frames are counted twice: by the client (``session.send_frames``)
and by the broker (STATS ``requests``, asked on another connection).
"""
import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

import parley
import parley.aio
from parley import Message, WriteOp, errors

#: a linger no test lasts: frames go full, idle, or by a call, never by the clock
LONG_LINGER_US = 600 * 1000 * 1000

#: no keepalive HEARTBEAT within a test: one would be a request, and send
#: the held posts before the test counts them
QUIET = ("--heartbeat-ms", "600000", "--liveness-ms", "1800000")


@pytest.fixture
def broker(broker_factory):
    return broker_factory(*QUIET)


def freeze(broker) -> None:
    """Stops the broker; returns once the kernel says it is stopped."""
    broker.proc.send_signal(signal.SIGSTOP)
    stat = Path(f"/proc/{broker.proc.pid}/stat")
    deadline = time.monotonic() + 20
    while True:
        text = stat.read_text()
        if text[text.rindex(")") + 2] == "T":
            return
        assert time.monotonic() < deadline, f"the broker did not stop: {text}"
        time.sleep(0.001)


def thaw(broker) -> None:
    broker.proc.send_signal(signal.SIGCONT)


def requests_seen(probe) -> int:
    """The broker's count of requests handled, less the STATS asking."""
    return probe.stats().requests


def receive(b, count: int, timeout: float = 30.0):
    """B's next `count` message bodies (FETCH, acknowledged as it goes)."""
    got, ack = [], None
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        mail = b.fetch(ack=ack, max=1000)
        got.extend(m.body for m in mail.messages)
        if mail.messages:
            ack = mail.last_seq
        else:
            b.wait_mail(0.2)
    if ack is not None:
        b.ack(ack)
    return got


def test_coalesced_posts_arrive_in_order_in_fewer_frames(broker):
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a, \
            parley.Client(broker.router, "Probe") as probe:
        a.set_coalesce(messages=64, linger_us=LONG_LINGER_US)
        before = requests_seen(probe)
        posts = 500
        freeze(broker)
        try:
            futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(posts)]
            # One went alone (nothing in flight), the rest held and sent 64 at a time.
            assert a.session.posted == posts
            assert a.session.send_frames == 1 + (posts - 1) // 64
            assert a.session.held == (posts - 1) % 64
            assert a.session.flush_idle == 1 and a.session.flush_full == (posts - 1) // 64
        finally:
            thaw(broker)
        a.flush_pipelined()
        assert a.session.held == 0
        frames = a.session.send_frames
        assert frames == 2 + (posts - 1) // 64 and a.session.flush_timer == 0
        for f in futures:
            confirmed = f.result(0)
            assert confirmed.count == 1 and confirmed.errors == [] and confirmed.complete
        assert receive(b, posts) == [f"m{i}" for i in range(posts)]
        # The broker saw the frames, not the posts (its count also has the
        # FETCHes, ACKs and heartbeats of this test: few).
        assert requests_seen(probe) - before < posts // 4
        assert a.session.pipelined_in_flight() == 0


def test_linger_zero_sends_one_frame_per_post(broker):
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a, \
            parley.Client(broker.router, "Probe") as probe:
        a.set_coalesce(linger_us=0)
        before = requests_seen(probe)
        posts = 100
        freeze(broker)
        try:
            futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(posts)]
            assert a.session.send_frames == posts and a.session.held == 0
        finally:
            thaw(broker)
        a.flush_pipelined()
        assert all(f.result(0).errors == [] for f in futures)
        assert receive(b, posts) == [f"m{i}" for i in range(posts)]
        assert requests_seen(probe) - before >= posts


def test_item_refusal_fails_only_its_post(broker):
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a:
        a.set_coalesce(messages=1024, linger_us=LONG_LINGER_US)
        posts, expected, futures = 200, [], []
        freeze(broker)
        try:
            for i in range(posts):
                if i % 10 == 5:
                    futures.append(a.send_pipelined([Message(f"x{i}", to="Nobody")]))
                elif i % 10 == 7:
                    # Two items in one post: the second fails, at index 1 of this post.
                    futures.append(a.send_pipelined([Message(f"m{i}", to="B"),
                                                     Message(f"y{i}", to="Nobody")]))
                    expected.append(f"m{i}")
                else:
                    futures.append(a.send_pipelined([Message(f"m{i}", to="B")]))
                    expected.append(f"m{i}")
            assert a.session.send_frames == 1 and a.session.held == posts - 1
        finally:
            thaw(broker)
        a.flush_pipelined()
        assert a.session.send_frames == 2
        for i, f in enumerate(futures):
            confirmed = f.result(0)
            if i % 10 == 5:
                assert confirmed.count == 1
                assert [(e.index, e.code) for e in confirmed.errors] == \
                    [(0, errors.UnknownRecipient.code)], i
                with pytest.raises(errors.UnknownRecipient):
                    confirmed.raise_for_errors()
            elif i % 10 == 7:
                assert confirmed.count == 2
                assert [(e.index, e.code) for e in confirmed.errors] == \
                    [(1, errors.UnknownRecipient.code)], i
            else:
                assert confirmed.count == 1 and confirmed.errors == [], i
        assert receive(b, len(expected)) == expected


def test_frame_refused_whole_fails_every_post(broker_factory, tmp_path, monkeypatch):
    full = tmp_path / "full"
    monkeypatch.setenv("PARLEY_TEST_JOURNAL_FULL", str(full))
    broker = broker_factory("--data-dir", str(tmp_path / "data"), "--fsync", "always",
                            *QUIET)
    monkeypatch.delenv("PARLEY_TEST_JOURNAL_FULL")
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a:
        a.set_coalesce(messages=8, linger_us=LONG_LINGER_US)
        posts = 50
        freeze(broker)
        try:
            full.write_text("")
            futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(posts)]
            assert a.session.send_frames < posts // 4
        finally:
            thaw(broker)
        a.flush_pipelined()
        for f in futures:
            with pytest.raises(errors.BrokerError) as refused:
                f.result(0)
            assert refused.value.code == 54      # STORAGE
        full.unlink()
        futures = [a.send_pipelined([Message(f"n{i}", to="B")]) for i in range(10)]
        a.flush_pipelined()
        assert all(f.result(0).errors == [] for f in futures)
        assert receive(b, 10) == [f"n{i}" for i in range(10)]


def test_request_after_held_posts_keeps_order(broker):
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a, \
            parley.Client(broker.router, "Probe") as probe:
        a.set_coalesce(messages=1024, linger_us=LONG_LINGER_US)
        posts = 200
        freeze(broker)
        try:
            futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(posts)]
            assert a.session.held == posts - 1
        finally:
            thaw(broker)
        # The WRITE goes after the held posts: when it returns, the broker
        # has queued every one of them for B.
        a.write([WriteOp.set("k", 1)])
        assert a.session.held == 0
        pending = {info.agent: info.pending for info in probe.agents()}
        assert pending["B"] == posts
        # More held posts, then a plain SEND: it comes after them.
        freeze(broker)
        try:
            futures += [a.send_pipelined([Message(f"m{i}", to="B")])
                        for i in range(posts, 2 * posts)]
        finally:
            thaw(broker)
        assert a.send([Message(f"m{2 * posts}", to="B")]).accepted == 1
        a.flush_pipelined()
        assert all(f.result(0).errors == [] for f in futures)
        assert receive(b, 2 * posts + 1) == [f"m{i}" for i in range(2 * posts + 1)]


def test_close_sends_held_posts(broker):
    with parley.Client(broker.router, "B") as b:
        a = parley.Client(broker.router, "A")
        a.set_coalesce(messages=1024, linger_us=LONG_LINGER_US)
        posts = 500
        freeze(broker)
        try:
            for i in range(posts):
                a.send_pipelined([Message(f"m{i}", to="B")])
            assert a.session.held == posts - 1
            a.close()
        finally:
            thaw(broker)
        got = receive(b, posts)
        assert got == [f"m{i}" for i in range(posts)]
        # None twice: nothing more comes (checked for a while, not waited for).
        until = time.monotonic() + 0.3
        while time.monotonic() < until:
            assert b.fetch(max=10).messages == []
            b.wait_mail(0.05)


def test_linger_sends_held_posts_by_the_clock(broker):
    with parley.Client(broker.router, "B") as b, parley.Client(broker.router, "A") as a:
        a.set_coalesce(messages=1024, linger_us=20000)
        freeze(broker)
        try:
            first = a.send_pipelined([Message("m0", to="B")])
            second = a.send_pipelined([Message("m1", to="B")])
            assert a.session.held == 1
            deadline = time.monotonic() + 20
            while a.session.held and time.monotonic() < deadline:
                time.sleep(0.005)           # the I/O thread's timer sends it
            assert a.session.held == 0 and a.session.flush_timer == 1
        finally:
            thaw(broker)
        assert first.result(20).errors == [] and second.result(20).errors == []
        assert receive(b, 2) == ["m0", "m1"]


@pytest.mark.asyncio
async def test_aio_coalesced(broker):
    b = await parley.aio.Client.connect(broker.router, "B")
    a = await parley.aio.Client.connect(broker.router, "A")
    c = await parley.aio.Client.connect(broker.router, "C")
    try:
        a.set_coalesce(messages=32, linger_us=LONG_LINGER_US)
        posts = 300
        freeze(broker)
        try:
            futures = [await a.send_pipelined([Message(f"m{i}", to="B" if i % 50 != 9
                                                       else "Nobody")])
                       for i in range(posts)]
            assert a.session.send_frames == 1 + (posts - 1) // 32
        finally:
            thaw(broker)
        await a.flush_pipelined()
        for i, f in enumerate(futures):
            if i % 50 == 9:
                assert [(e.index, e.code) for e in f.result().errors] == \
                    [(0, errors.UnknownRecipient.code)]
            else:
                assert f.result().errors == []
        mail = await b.fetch(max=1000)
        assert [m.body for m in mail.messages] == \
            [f"m{i}" for i in range(posts) if i % 50 != 9]
        # close() sends what is held.
        c.set_coalesce(messages=1024, linger_us=LONG_LINGER_US)
        freeze(broker)
        try:
            for i in range(100):
                await c.send_pipelined([Message(f"c{i}", to="B")])
            assert c.session.held == 99
            await c.close()
        finally:
            thaw(broker)
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 100 and time.monotonic() < deadline:
            mail = await b.fetch(ack=mail.last_seq if mail.messages else None, max=1000)
            got.extend(m.body for m in mail.messages)
            if not mail.messages:
                await b.wait_mail(0.2)
        assert got == [f"c{i}" for i in range(100)]
    finally:
        await a.close()
        await b.close()
        await c.close()


def test_acks_ride_on_send(broker):
    """B answers each pushed message with a pipelined post and, before the
    last answer of each batch, acknowledges the batch without waiting: the
    acknowledgement rides on a SEND (WELCOME lists send_ack), no ACK frame
    goes, and the broker holds nothing unacknowledged for B at the end."""
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b, \
            parley.Client(broker.router, "Probe") as probe:
        assert "send_ack" in b.welcome.features and b.session.send_ack
        b.set_coalesce(linger_us=LONG_LINGER_US)
        b.consume(64)
        total = 300
        sent = [a.send_pipelined([Message(f"q{i}", to="B")]) for i in range(total)]
        a.flush_pipelined()
        assert all(f.result(0).errors == [] for f in sent)
        answers, acks, seen = [], 0, 0
        deadline = time.monotonic() + 30
        while seen < total and time.monotonic() < deadline:
            mail = b.next_pushed(1.0)
            if mail is None:
                continue
            for i, m in enumerate(mail.messages):
                if i == len(mail.messages) - 1:
                    b.ack_nowait(mail.last_seq)
                    acks += 1
                answers.append(b.send_pipelined([Message(f"re {m.body}", to="A")]))
            seen += len(mail.messages)
        b.flush_pipelined()
        assert seen == total
        assert all(f.result(0).errors == [] for f in answers)
        # Two acknowledgements made while B's answers were held are one
        # (they are cumulative): at most one ride per batch, and no ACK frame.
        assert 1 <= b.session.acks_ridden <= acks and b.session.acks_sent == 0
        info = {i.agent: i for i in probe.agents()}["B"]
        assert info.unacked == 0 and info.pending == 0
        assert receive(a, total) == [f"re q{i}" for i in range(total)]


def test_ack_on_a_send_refused_whole_goes_again(broker_factory, tmp_path, monkeypatch):
    """A SEND refused whole may not have applied the acknowledgement it
    carried: the client holds it again and the next SEND carries it."""
    full = tmp_path / "full"
    monkeypatch.setenv("PARLEY_TEST_JOURNAL_FULL", str(full))
    broker = broker_factory("--data-dir", str(tmp_path / "data"), "--fsync", "always",
                            *QUIET)
    monkeypatch.delenv("PARLEY_TEST_JOURNAL_FULL")
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b, \
            parley.Client(broker.router, "Probe") as probe:
        b.set_coalesce(linger_us=LONG_LINGER_US)
        b.consume(16)
        assert a.send([Message(f"q{i}", to="B") for i in range(5)]).accepted == 5
        mail, deadline = [], time.monotonic() + 30
        while len(mail) < 5 and time.monotonic() < deadline:
            got = b.next_pushed(1.0)
            mail += got.messages if got else []
        assert [m.body for m in mail] == [f"q{i}" for i in range(5)]
        last = mail[-1].seq
        b.ack_nowait(last)
        assert b.session.ack_held == last
        full.write_text("")
        with pytest.raises(errors.BrokerError) as refused:
            b.send([Message("answer", to="A")])
        assert refused.value.code == 54          # STORAGE
        assert b.session.acks_ridden == 1 and b.session.ack_held == last
        full.unlink()
        assert b.send([Message("answer", to="A")]).accepted == 1
        assert b.session.acks_ridden == 2 and b.session.ack_held == 0
        assert b.session.acks_sent == 0
        info = {i.agent: i for i in probe.agents()}["B"]
        assert info.unacked == 0 and info.pending == 0
        assert receive(a, 1) == ["answer"]
