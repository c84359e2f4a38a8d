# SPDX-License-Identifier: MIT
"""The asyncio API: the same requests, session and replica rules."""
import asyncio

import pytest

import parley.aio
from parley import Message, WriteOp, errors

pytestmark = pytest.mark.asyncio


async def test_requests(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    b = await parley.aio.Client.connect(broker.router, "B")
    try:
        await b.listen("news")
        sent = await a.send([Message("hi", to="B"), Message("post", channel="news")])
        assert sent.accepted == 2
        mail = await b.fetch()
        assert [m.body for m in mail.messages] == ["hi", "post"]
        await b.ack(mail.last_seq)
        assert (await b.fetch()).messages == []
        await b.unlisten("news")
        with pytest.raises(errors.NotListening):
            await b.unlisten("news")
        w = await a.write([WriteOp.update("k", 1)])
        assert (await b.get(["k"])).seq == w.seq
        assert (await b.snapshot(prefix="k")).values() == {"k": 1}
        await a.write([WriteOp.set(f"pg.{i}", i) for i in range(5)])
        pages = await b.snapshot_all(prefix="pg.", page=2)
        assert [len(p.entries) for p in pages] == [2, 2, 1]
        assert (await a.perceive()).outcome == "perceived"
        assert (await a.act("forward")).position == 1
        with pytest.raises(errors.BadAction):
            await a.act("right")
        assert (await a.stats()).agents == 2
        assert {i.agent for i in await a.agents()} == {"A", "B"}
        await a.world_reset()
        await a.heartbeat()
    finally:
        await a.close()
        await b.bye()


async def test_concurrent_calls_and_wait_mail(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    b = await parley.aio.Client.connect(broker.router, "B")
    try:
        results = await asyncio.gather(*(a.send_to("B", str(i)) for i in range(50)))
        assert sum(r.accepted for r in results) == 50
        assert len((await b.fetch()).messages) == 50
        woke = False
        for _ in range(50):
            await a.send_to("B", "ping")
            if await b.wait_mail(0.1):
                woke = True
                break
        assert woke
    finally:
        await a.close()
        await b.close()


async def test_heartbeats_while_awaiting_a_model(broker_factory):
    broker = broker_factory("--heartbeat-ms", "200", "--liveness-ms", "1500")
    c = await parley.aio.Client.connect(broker.router, "Slow")
    try:
        await asyncio.sleep(3.0)        # a slow model call
        infos = {i.agent: i for i in await c.agents()}
        assert infos["Slow"].online and c.session.hellos == 1
        assert "Slow expired" not in broker.log()
    finally:
        await c.close()


async def test_reconnect(broker_factory):
    broker = broker_factory(fixed_ports=True)
    c = await parley.aio.Client.connect(broker.router, "R", reply_timeout=1.0)
    try:
        await c.listen("news")
        broker.kill()
        broker.start()
        assert {i.agent for i in await c.agents()} == {"R"}
        assert c.session.hellos >= 2
        other = await parley.aio.Client.connect(broker.router, "P")
        await other.post("news", "back")
        assert [m.body for m in (await c.fetch()).messages] == ["back"]
        await other.close()
    finally:
        await c.close()


async def test_errors(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    try:
        with pytest.raises(errors.IdInUse):
            await parley.aio.Client.connect(broker.router, "A")
        with pytest.raises(errors.ReducerConflict):
            await a.write([WriteOp.declare("x", "add"), WriteOp.declare("x", "union")])
    finally:
        await a.close()
    with pytest.raises(errors.Closed):
        await a.stats()


async def test_replica(broker):
    a = await parley.aio.Client.connect(broker.router, "A")
    b = await parley.aio.Client.connect(broker.router, "B")
    try:
        await a.write([WriteOp.set("team.x", 1)])
        replica = await b.replica("team.")
        assert await replica.values() == {"team.x": 1}
        w = await a.write([WriteOp.set("team.y", 2), WriteOp.delete("team.x"),
                           WriteOp.set("other", 3)])
        assert await replica._wait_seq(w.seq, 5.0)
        assert await replica.values() == {"team.y": 2}
    finally:
        await a.close()
        await b.close()


async def test_token_file_and_observer(broker, tmp_path):
    token_file = tmp_path / "token"
    a = await parley.aio.Client.connect(broker.router, "A", token_file=str(token_file))
    tap = await parley.aio.Client.connect(broker.router, "Watch", observe=True)
    try:
        assert token_file.read_text().strip() == a.session.token == a.welcome.token
        # The first connection stays open (it looks live): the token alone
        # takes the id over, at once.
        again = await parley.aio.Client.connect(broker.router, "A",
                                                token_file=str(token_file))
        assert [i.agent for i in await again.agents()] == ["A"]    # the observer is not listed
        assert (await tap.stats()).agents >= 1                       # reads are answered
        with pytest.raises(errors.ObserverOnly):
            await tap.fetch()
        await again.close()
    finally:
        await tap.bye()
        await a.close()
