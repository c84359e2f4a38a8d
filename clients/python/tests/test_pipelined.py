# SPDX-License-Identifier: MIT
"""Pipelined SENDs, cumulative CONFIRMs and backpressure, with the blocking
and the asyncio client against the real broker (PROTOCOL.md, SEND)."""
import asyncio
import threading
import time

import pytest

import parley
import parley.aio
from parley import Message, errors


def test_pipelined_confirms_only_failures(broker):
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b:
        futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(50)]
        bad = a.send_pipelined([Message("ok", to="B"), Message("lost", to="Nobody")])
        a.flush_pipelined()
        for f in futures:
            confirmed = f.result(0)
            assert confirmed.errors == [] and confirmed.complete and confirmed.count == 1
        confirmed = bad.result(0)
        assert [(e.index, e.code) for e in confirmed.errors] == \
            [(1, errors.UnknownRecipient.code)]
        with pytest.raises(errors.UnknownRecipient):
            confirmed.raise_for_errors()
        mail = b.fetch(max=100)
        assert [m.body for m in mail.messages] == [f"m{i}" for i in range(50)] + ["ok"]
        assert a.stats().confirms >= 1


def test_backpressure_waits_for_the_reader(broker_factory):
    broker = broker_factory("--max-inbox", "8")
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B") as b:
        a.pipeline_window = 16
        got = []

        def read() -> None:
            ack = None
            deadline = time.monotonic() + 60
            while len(got) < 200 and time.monotonic() < deadline:
                mail = b.fetch(ack=ack, max=4)
                got.extend(m.body for m in mail.messages)
                if mail.messages:
                    ack = mail.last_seq
                time.sleep(0.005)           # slower than the sender
            if ack is not None:
                b.ack(ack)

        reader = threading.Thread(target=read)
        reader.start()
        futures = [a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(200)]
        a.flush_pipelined()
        reader.join(90)
        assert all(f.result(0).errors == [] for f in futures)
        assert got == [f"m{i}" for i in range(200)]
        stats = a.stats()
        assert stats.sends_parked > 0
        assert stats.send_wait_timeouts == 0 and stats.rejected == 0


def test_wait_deadline_names_the_wait(broker_factory):
    broker = broker_factory("--max-inbox", "2")
    with parley.Client(broker.router, "A") as a, parley.Client(broker.router, "B"):
        assert a.send([Message("x", to="B"), Message("y", to="B")]).accepted == 2
        started = time.monotonic()
        sent = a.send([Message("late", to="B")], wait_ms=300)
        assert time.monotonic() - started >= 0.3
        assert sent.accepted == 0
        assert sent.errors[0].code == errors.InboxFull.code
        assert "waiting 300 ms" in sent.errors[0].message
        # Asked for more than the reply timeout allows: clamped inside it.
        assert a.session.clamp_wait(60000) == int(a.session.reply_timeout * 750)
        assert a.stats().send_wait_timeouts == 1


@pytest.mark.asyncio
async def test_aio_pipelined(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    b = await parley.aio.Client.connect(broker.router, "B")
    try:
        a.pipeline_window = 8
        futures = [await a.send_pipelined([Message(f"m{i}", to="B")]) for i in range(40)]
        bad = await a.send_pipelined([Message("lost", to="Nobody")])
        await a.flush_pipelined()
        assert all(f.result().errors == [] for f in futures)
        assert [(e.index, e.code) for e in bad.result().errors] == \
            [(0, errors.UnknownRecipient.code)]
        mail = await b.fetch(max=100)
        assert [m.body for m in mail.messages] == [f"m{i}" for i in range(40)]
        sent = await a.send([Message("x", to="B")], wait_ms=0)
        assert sent.accepted == 1
    finally:
        await a.close()
        await b.close()
