# SPDX-License-Identifier: MIT
"""Every request of the protocol through parley.Client, against the real broker."""
import re

import pytest

import parley
from parley import Message, WriteOp, errors
from parley import requests as rq

from conftest import ROOT, wait_for


@pytest.fixture
def pair(broker):
    a = parley.Client(broker.router, "A", caps=["explore", "py"])
    b = parley.Client(broker.router, "B")
    yield a, b
    a.close()
    b.close()


def test_hello_welcome_and_agents(broker, pair):
    a, b = pair
    w = a.welcome
    assert w.agent == "A" and w.version == 1
    assert w.pub == broker.endpoints["pub"]
    assert w.heartbeat_ms == 1000 and w.liveness_ms == 5000
    assert w.max_body == 65536 and w.max_batch == 4096
    assert w.world is not None and w.world.kind == "line" and w.world.width == 10
    infos = {i.agent: i for i in b.agents()}
    assert set(infos) == {"A", "B"}
    assert infos["A"].online and infos["A"].caps == ["explore", "py"]
    a.heartbeat()


def test_send_fetch_ack_direct_all_channel(pair):
    a, b = pair
    b.session.dedup = False             # to see the broker hand mail out again
    b.listen("news")
    sent = a.send([Message("direct", to="B"), Message(b"\x00bin", to="all"),
                   Message("post", channel="news")])
    assert sent.accepted == 3 and all(sent.seqs) and not sent.errors
    mail = b.fetch()
    assert [m.body for m in mail.messages] == ["direct", b"\x00bin", "post"]
    assert [m.seq for m in mail.messages] == sent.seqs
    assert mail.messages[0].sender == "A" and mail.messages[0].to == "B"
    assert mail.messages[1].to == "all" and mail.messages[2].channel == "news"
    # Unacknowledged mail comes again; an ack releases it.
    assert [m.seq for m in b.fetch().messages] == sent.seqs
    b.ack(sent.seqs[1])
    again = b.fetch()
    assert [m.seq for m in again.messages] == [sent.seqs[2]]
    assert b.fetch(ack=again.last_seq).acked == sent.seqs[2]
    assert b.fetch().messages == []
    assert b.stats().queued == 0


def test_fetch_max_and_pending(pair):
    a, b = pair
    a.send([Message(str(i), to="B") for i in range(5)])
    mail = b.fetch(max=2)
    assert len(mail.messages) == 2 and mail.pending == 3


def test_wait_mail_wakes_on_mail_ready(pair):
    a, b = pair
    # The SUB subscription comes up asynchronously: send until a wake-up arrives.
    assert wait_for(lambda: (a.send_to("B", "ping"), b.wait_mail(0.1))[1], 20.0)
    assert b.fetch().messages


def test_listen_unlisten(pair):
    a, b = pair
    b.listen("room")
    b.listen("room")                    # idempotent
    assert a.post("room", "one").accepted == 1
    b.unlisten("room")
    with pytest.raises(errors.NotListening) as info:
        b.unlisten("room")
    assert info.value.code == 24 and info.value.name == "NOT_LISTENING"
    a.post("room", "two")
    assert [m.body for m in b.fetch().messages] == ["one"]


def test_write_get_snapshot_and_reducers(pair):
    a, b = pair
    w = a.write([WriteOp.declare("log", "append"), WriteOp.update("log", [1]),
                 WriteOp.update("log", [2, 3]), WriteOp.declare("n", "add"),
                 WriteOp.update("n", 5), WriteOp.set("s", {"x": 1})])
    assert w.changed == 3
    state = b.get(["log", "n", "s", "missing"])
    assert state.values() == {"log": [1, 2, 3], "n": 5, "s": {"x": 1}}
    assert state.seq == w.seq
    entry = {e.key: e for e in state.entries}
    assert entry["log"].reducer == "append" and entry["n"].reducer == "add"
    a.write([WriteOp.clear("log"), WriteOp.delete("s")])
    assert b.get(["log", "s"]).values() == {"log": []}
    snap = b.snapshot(prefix="n")
    assert [e.key for e in snap.entries] == ["n"] and snap.more is False


def test_snapshot_paging(pair):
    a, b = pair
    a.write([WriteOp.set(f"page.{i:03d}", i) for i in range(25)])
    first = b.snapshot(prefix="page.", limit=10)
    assert len(first.entries) == 10 and first.more
    pages = b.snapshot_all(prefix="page.", page=10)
    assert [len(p.entries) for p in pages] == [10, 10, 5]
    assert pages[-1].more is False
    keys = [e.key for p in pages for e in p.entries]
    assert keys == sorted(keys) and len(keys) == 25


def test_perceive_act_world_reset(pair):
    a, b = pair
    obs = a.perceive()
    assert obs.outcome == "perceived" and obs.position == 0 and obs.objects
    moved = a.act("forward")
    assert moved.outcome == "moved" and moved.position == 1
    assert a.act("backward").position == 0
    assert a.act("backward").outcome == "edge"
    assert a.act("stay").outcome == "stayed"
    with pytest.raises(errors.BadAction):
        a.act("left")                   # a line has no left
    a.world_reset(seed=3)
    assert b.get(["world.agent_positions"]).values()["world.agent_positions"] == {}


def test_idempotent_act_retry(pair):
    a, _ = pair
    a.perceive()
    first = a.act("forward", step=7)
    again = a.act("forward", step=7)    # a retry: same answer, no second move
    assert again == first and first.position == 1
    assert a.act("forward", step=8).position == 2


def test_idempotent_send_resend_posts_once(pair):
    a, b = pair
    request = rq.send([Message("once", to="B")], batch=424242)
    first = a.call(request)
    second = a.call(request)
    assert first == second
    assert [m.body for m in b.fetch().messages] == ["once"]


def test_resolve_names_an_agent_a_channel_or_nothing(pair):
    """A name the broker resolves, as libparley's parley_outbox_resolve."""
    a, b = pair
    b.listen("news")
    sent = a.send([Message("direct", channel="B", resolve=True),
                   Message("post", channel="news", resolve=True),
                   Message("lost", channel="Nobody", resolve=True)])
    assert sent.accepted == 2 and sent.seqs[2] == 0
    assert [(e.index, e.code) for e in sent.errors] == [(2, errors.NoSuchTarget.code)]
    mail = b.fetch()
    assert [(m.body, m.to, m.channel) for m in mail.messages] == \
        [("direct", "B", None), ("post", None, "news")]
    with pytest.raises(ValueError):
        a.send([Message("x", to="B", resolve=True)])


def test_model_report_and_agent_counters(pair):
    """HEARTBEAT's model report, and what AGENTS says of each agent, as
    libparley's parley_client_set_report and parley_agent_*."""
    a, b = pair
    infos = {i.agent: i for i in b.agents()}
    assert infos["A"].model is None
    a.set_report(parley.ModelReport(calls=5, ok=4, failed=1, prompt_tokens=300,
                                    completion_tokens=45, latency_ms=900, latency_max_ms=400))
    a.heartbeat()
    a.perceive()
    a.act("forward", step=7)
    a.send([Message("one", to="B"), Message("two!", to="B")])
    assert len(b.fetch(max=1).messages) == 1
    infos = {i.agent: i for i in b.agents()}
    assert infos["A"].model == parley.ModelReport(calls=5, ok=4, failed=1, prompt_tokens=300,
                                                  completion_tokens=45, latency_ms=900,
                                                  latency_max_ms=400)
    assert infos["A"].step == 7 and infos["A"].acts == 1
    assert infos["B"].pending == 2 and infos["B"].unacked == 1 and infos["B"].inbox_bytes == 7
    # None stops sending it; the broker keeps the last one.
    a.set_report(None)
    a.heartbeat()
    assert {i.agent: i for i in b.agents()}["A"].model.calls == 5
    with pytest.raises(ValueError):
        a.set_report(parley.ModelReport(calls=-1))


def test_stats(pair):
    a, b = pair
    a.send_to("B", "x")
    s = a.stats()
    assert s.uptime_ms >= 0 and s.agents == 2 and s.online == 2
    assert s.msgs_in == 1 and s.delivered == 1 and s.queued == 1 and s.queued_bytes == 1
    assert s.requests > 0 and s.extra == {}


def test_bye_keeps_mail_and_forget_drops_it(broker):
    a = parley.Client(broker.router, "A")
    b = parley.Client(broker.router, "B")
    a.send_to("B", "kept")
    b.bye()
    assert a.send_to("B", "still").accepted == 1    # registration stays
    b = parley.Client(broker.router, "B")
    assert b.welcome.acked == 0
    assert [m.body for m in b.fetch().messages] == ["kept", "still"]
    b.bye(forget=True)
    sent = a.send_to("B", "gone")
    assert sent.seqs == [0] and sent.errors[0].name == "UNKNOWN_RECIPIENT"
    with pytest.raises(errors.UnknownRecipient):
        sent.raise_for_errors()
    with pytest.raises(errors.Closed):
        b.stats()
    a.close()


# ---------------------------------------------------------------------------
#  Errors become the class named after their code

def _raw_request(t, reply="OK", **fields):
    return rq.Request(t, fields, reply, lambda m: m)


@pytest.mark.parametrize("request_, cls", [
    (_raw_request("PING"), errors.UnknownType),
    (_raw_request("OK"), errors.NotRequest),
    (_raw_request("LISTEN", channel="bad name"), errors.BadName),
    (_raw_request("LISTEN", channel=5), errors.BadField),
    (_raw_request("LISTEN", channel="$mine"), errors.ReservedName),
    (_raw_request("WRITE", ops=[{"op": "declare", "key": "k", "reducer": "sum"}]),
     errors.BadReducer),
    (_raw_request("WRITE", ops=[{"op": "delete", "key": "nope"}]), errors.NoSuchKey),
    (_raw_request("ACT", action="jump"), errors.BadAction),
    (_raw_request("SEND", messages=[{"to": "B", "body": "x" * 70000}] * 0), errors.BadField),
])
def test_broker_errors_map_to_classes(pair, request_, cls):
    a, _ = pair
    with pytest.raises(cls) as info:
        a.call(request_)
    assert isinstance(info.value, errors.ParleyError)
    assert info.value.code == cls.code and info.value.message


def test_reducer_errors(pair):
    a, _ = pair
    a.write([WriteOp.declare("l", "append")])
    with pytest.raises(errors.ReducerConflict):
        a.write([WriteOp.declare("l", "add")])
    with pytest.raises(errors.ReducerMismatch):
        a.write([WriteOp.update("l", 5)])


def test_id_in_use(broker, pair):
    with pytest.raises(errors.IdInUse) as info:
        parley.Client(broker.router, "A")
    assert info.value.code == 11


def test_inbox_full_item_error(broker_factory):
    broker = broker_factory("--max-inbox", "1")
    a = parley.Client(broker.router, "A")
    b = parley.Client(broker.router, "B")
    assert a.send_to("B", "1").accepted == 1
    sent = a.send_to("B", "2")
    assert sent.accepted == 0 and sent.errors[0].agent == "B"
    with pytest.raises(errors.InboxFull):
        sent.raise_for_errors()
    a.close()
    b.close()


def test_too_large_checked_before_sending(pair):
    a, _ = pair
    with pytest.raises(errors.TooLarge):
        a.send([Message("x" * 60000, to="B")] * 20)   # a 1.2 MB frame
    assert a.stats().bad_frames == 0
    with pytest.raises(errors.TooLarge) as info:      # the decoder's 64 KiB body limit
        a.send_to("B", "x" * 65537)
    assert "body" in info.value.message and a.stats().bad_frames == 1


def test_client_side_name_checks(pair):
    a, _ = pair
    with pytest.raises(errors.BadName):
        a.listen("no spaces")
    with pytest.raises(errors.ReservedName):
        parley.Client("tcp://127.0.0.1:1", "all")


def test_error_table_mirrors_the_c_one():
    """parley.errors.ERROR_CODES and proto/perr.h list the same codes."""
    header = (ROOT / "proto" / "perr.h").read_text()
    c_codes = {int(n): name for name, n in re.findall(r"PERR_([A-Z_]+) = (\d+)", header)
               if name != "NONE"}
    py_codes = {code: name for code, name, _ in errors.ERROR_CODES}
    assert py_codes == c_codes
    # libparley's public header numbers the wire codes the same.
    base = (ROOT / "include" / "parley" / "base.h").read_text()
    lib_codes = {int(n): name for name, n in re.findall(r"PARLEY_ERR_([A-Z_]+) = (\d+)", base)
                 if int(n) < 1000}
    assert lib_codes == c_codes
    doc = (ROOT / "proto" / "PROTOCOL.md").read_text()
    for code, name in py_codes.items():
        assert f"| {code} | {name} |" in doc
        assert errors.BY_CODE[code].__name__ in dir(errors)
