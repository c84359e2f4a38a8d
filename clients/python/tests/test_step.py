# SPDX-License-Identifier: MIT
"""STEP from Python (PROTOCOL.md, STEP): the parts apply in order and each
reports its own outcome; a resend of a step applies nothing twice; the
asyncio client does the same; arguments are checked before sending."""
from __future__ import annotations

import asyncio

import pytest

import parley
import parley.aio
from parley import Message, WriteOp, errors
from parley import requests as rq


@pytest.fixture
def pair(broker):
    a = parley.Client(broker.router, "A")
    b = parley.Client(broker.router, "B")
    yield a, b
    a.close()
    b.close()


def test_step_parts_in_order(pair):
    a, b = pair
    b.send_to("A", "old")
    first = a.step(perceive=True, fetch=8, step=0)       # a run's first look
    assert first.step is None and first.observation.outcome == "perceived"
    assert [m.body for m in first.mail.messages] == ["old"]
    seq = first.mail.last_seq
    done = a.step("forward", messages=[Message("hi B", to="B"), Message("lost", to="Nobody")],
                  ops=[WriteOp.declare("py.count", "add"), WriteOp.update("py.count", 1)],
                  ack=seq, fetch=8)
    assert done.step and not done.replayed
    assert done.acked == seq                             # the ack came first
    assert done.sent.accepted == 1 and done.sent.seqs[1] == 0
    assert done.sent.errors[0].code == errors.UnknownRecipient.code
    assert done.written.changed == 1 and done.ops_error is None
    assert done.observation.outcome == "moved" and done.action_error is None
    assert done.mail.messages == []
    assert [m.body for m in b.fetch().messages] == ["hi B"]
    assert b.get(["py.count"]).values()["py.count"] == 1


def test_step_partial_failure(pair):
    a, b = pair
    done = a.step("stay", ops=[WriteOp.set("py.x", 1), WriteOp.clear("py.nothing")],
                  messages=[Message("kept", to="B")])
    assert done.ops_error is not None and done.written is None
    assert isinstance(done.ops_error.exception(), errors.NoSuchKey)
    assert done.sent.accepted == 1 and done.observation.outcome == "stayed"
    assert b.get(["py.x"]).entries == []                 # all ops or none


def test_step_resend_applies_nothing_twice(pair):
    a, b = pair
    request = rq.step(41, messages=[Message("once", to="B")], action="forward",
                      ops=[WriteOp.declare("py.once", "add"), WriteOp.update("py.once", 1)])
    first = a.call(request)
    again = a.call(request)
    assert again.replayed and not first.replayed
    assert again.sent == first.sent and again.written == first.written
    assert again.observation == first.observation
    assert [m.body for m in b.fetch().messages] == ["once"]
    assert b.get(["py.once"]).values()["py.once"] == 1
    assert request.resend_safe
    assert not rq.step(None, messages=[Message("x", to="B")]).resend_safe
    assert rq.step(None, fetch=4).resend_safe


def test_step_checks_arguments(pair):
    a, _ = pair
    with pytest.raises(errors.BadAction):
        a.step("jump")
    with pytest.raises(errors.TooLarge):
        rq.step(1, messages=[Message("x", to="B")] * 5, max_batch=4)


def test_step_asyncio(broker):
    async def run() -> None:
        async with await parley.aio.Client.connect(broker.router, "Async") as c:
            first = await c.step(perceive=True, step=0)
            assert first.observation.outcome == "perceived"
            done = await c.step("forward", ops=[WriteOp.set("py.async", "yes")], fetch=4)
            assert done.written.changed == 1 and done.observation.outcome == "moved"
            assert done.mail is not None and done.mail.messages == []
    asyncio.run(run())
