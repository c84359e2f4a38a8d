# SPDX-License-Identifier: MIT
"""Pushed mail (PROTOCOL.md, CONSUME) through both APIs against the real
broker: every message once and in order within the window, acks without a
round trip returning credit, the subscription opened again after the
broker took the session away (the unacknowledged mail comes again, what
was handed out is filtered), and bad windows refused before sending."""
import asyncio
import time

import pytest

import parley
import parley.aio
from parley import Message, errors


def _send(sender, to, first, count):
    for start in range(first, first + count, 8):
        n = min(8, first + count - start)
        sent = sender.send([Message(str(i), to=to) for i in range(start, start + n)])
        assert sent.accepted == n


def _take(client, want, credit, deadline=20.0):
    got = []
    until = time.monotonic() + deadline
    while len(got) < want:
        assert time.monotonic() < until, f"pushed {len(got)} of {want}"
        mail = client.next_pushed(0.5)
        if mail is None:
            continue
        assert 0 < len(mail.messages) <= credit
        got.extend(mail.messages)
        client.ack_nowait(mail.last_seq)
    return got


def test_consume_in_order_within_window(broker):
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b:
        _send(a, "B", 0, 40)
        b.consume(5)
        got = _take(b, 40, 5)
        _send(a, "B", 40, 60)
        got += _take(b, 60, 5)
        assert [m.body for m in got] == [str(i) for i in range(100)]
        assert [m.seq for m in got] == sorted(m.seq for m in got)
        stats = a.stats()
        assert stats.pushed >= 100 and stats.consumers == 1
        assert b.take_pushed() is None
        with pytest.raises(ValueError):
            b.consume(parley.requests.MAX_CREDIT + 1)
        with pytest.raises(errors.BadField):
            b.consume(10, 65 * 1024 * 1024)
        b.consume(0)
        assert a.stats().consumers == 0


def test_consume_again_after_takeover(broker, raw):
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b:
        _send(a, "B", 0, 5)
        b.consume(3)
        first = []
        until = time.monotonic() + 20
        while len(first) < 3:
            assert time.monotonic() < until
            mail = b.next_pushed(0.5)
            if mail:
                first.extend(mail.messages)
        # Another connection takes B over with its resume token: B's
        # session, and its subscription, end there.
        thief = raw()
        assert thief.call("HELLO", agent="B", token=b.session.token)["t"] == "WELCOME"
        thief.close()
        b.heartbeat()                   # NOT_HELLO, HELLO again, CONSUME again
        # The three taken come again and are filtered; acknowledging them
        # returns the window, and the other two come.
        until = time.monotonic() + 20
        while b.session.duplicates < 3:
            assert time.monotonic() < until, "the unacknowledged mail was not pushed again"
            assert b.next_pushed(0.1) is None
        assert b.session.hellos >= 2
        b.ack_nowait(first[-1].seq)
        rest = _take(b, 2, 3)
        assert [m.body for m in first + rest] == ["0", "1", "2", "3", "4"]


@pytest.mark.asyncio
async def test_aio_consume(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    b = await parley.aio.Client.connect(broker.router, "B")
    try:
        await b.consume(4)
        for i in range(20):
            await a.send([Message(str(i), to="B")])
        got = []
        deadline = time.monotonic() + 20
        while len(got) < 20:
            assert time.monotonic() < deadline
            mail = await b.next_pushed(0.5)
            if mail is None:
                continue
            assert len(mail.messages) <= 4
            got.extend(mail.messages)
            b.ack_nowait(mail.last_seq)
        assert [m.body for m in got] == [str(i) for i in range(20)]
        assert b.take_pushed() is None
        await asyncio.sleep(0)
    finally:
        await a.close()
        await b.close()
