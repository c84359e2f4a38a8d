# SPDX-License-Identifier: MIT
"""The workflow requests (PROTOCOL.md 4.1) against a broker running
tests/scenario_wf: a writer and a reviewer take turns on a draft."""
import asyncio
import threading
import time
from pathlib import Path

import pytest

import parley
import parley.aio
from parley import (WorkflowEventKind, WorkflowStatus, WriteOp, errors, requests as rq,
                    session as sess, types)

SCENARIO = str(Path(__file__).resolve().parent / "scenario_wf")


@pytest.fixture
def wf(broker_factory):
    """A broker running the scenario, and the clients a test opens."""
    broker = broker_factory("--scenario", SCENARIO)
    made = []

    def client(agent, role=None, **options):
        c = parley.Client(broker.router, agent, [f"role:{role}"] if role else [], **options)
        made.append(c)
        return c

    yield broker, client
    for c in made:
        c.close()


def _live(client):
    """Returns once the client's SUB socket takes events: its workflow
    subscription came first on the same socket, so it is live too."""
    client.replica("parley.probe.").close()


def test_no_workflow(broker):
    with parley.Client(broker.router, "A") as c:
        with pytest.raises(errors.NoWorkflow):
            c.workflow()
        with pytest.raises(errors.NoWorkflow):
            c.handover(next="anyone")
        with pytest.raises(errors.NoWorkflow):
            c.checkpoints()


def test_requests_check_their_input():
    with pytest.raises(ValueError):
        rq.handover([WriteOp.set("k", 1)])              # no next, no end
    with pytest.raises(ValueError):
        rq.handover(next="r", status="pending")
    with pytest.raises(ValueError):
        rq.handover(next="r", status="sideways")
    with pytest.raises(errors.BadName):
        rq.handover(next="not a role")
    assert rq.handover(status=WorkflowStatus.DONE, reason="ok").fields["status"] == "done"
    assert not rq.handover(next="r").resend_safe and not rq.resume(1).resend_safe
    assert rq.workflow().resend_safe and rq.checkpoint(1, 0).fields == {"number": 1, "since": 0}
    # A status or event a newer broker may send is kept as text.
    info = types.WorkflowInfo.from_wire({"t": "WORKFLOW_INFO", "status": "paused_forever",
                                         "turn": 1, "revisions": 0})
    assert info.status is WorkflowStatus.UNKNOWN and info.status_name == "paused_forever"
    with pytest.raises(errors.ProtocolError):
        types.WorkflowInfo.from_wire({"t": "WORKFLOW_INFO", "status": "done", "turn": -1,
                                      "revisions": 0})
    event = types.event_from_wire({"t": "WORKFLOW_EVENT", "event": "later", "status": "done",
                                   "turn": 2})
    assert event.kind is WorkflowEventKind.OTHER and event.checkpoint is None


def test_turns_and_atomic_handover(wf):
    broker, client = wf
    watcher = client("watcher")
    info = watcher.workflow()
    assert (info.status, info.turn, info.holder, info.agent) == \
        (WorkflowStatus.PENDING, 0, "writer", "")
    assert info.max_revisions == 2 and info.max_turns == 20
    w = client("W", "writer")
    r = client("R", "reviewer")
    info = r.workflow()
    assert (info.status, info.turn, info.holder, info.agent) == \
        (WorkflowStatus.IN_PROGRESS, 1, "writer", "W")
    # Only the holder hands over; a refused HANDOVER changes nothing.
    with pytest.raises(errors.NotTurnHolder):
        r.handover([WriteOp.set("draft", "mine")], next="writer")
    with pytest.raises(errors.BadField):        # an op on a workflow key
        w.handover([WriteOp.set("draft", "v1"), WriteOp.set("turn", 7)], next="reviewer")
    with pytest.raises(errors.BadField):        # a key the writer's role may not write
        w.handover([WriteOp.set("draft", "v1"), WriteOp.update("issues", ["x"])],
                   next="reviewer")
    with pytest.raises(errors.BadField):        # no such role
        w.handover([WriteOp.set("draft", "v1")], next="editor")
    assert watcher.get(["draft"]).values() == {"draft": None}
    assert watcher.workflow().turn == 1
    # The writes and the hand-over land together: a replica sees the
    # draft and the new holder in one state batch.
    replica = watcher.replica("")
    info = w.handover([WriteOp.set("draft", "v1"), WriteOp.update("notes", ["w1"])],
                      next="reviewer")
    assert (info.holder, info.agent, info.turn, info.status) == \
        ("reviewer", "R", 2, WorkflowStatus.IN_PROGRESS)
    assert parley_wait(lambda: replica.last_seq >= info.seq)
    values = replica.values()
    assert values["draft"] == "v1" and values["current_agent"] == "reviewer"
    assert values["turn"] == 2 and values["notes"] == ["w1"]
    replica.close()
    with pytest.raises(errors.NotTurnHolder):   # the writer's turn is over
        w.handover(next="reviewer")
    # A revision clears the issues first, counts, and the run ends done.
    info = r.handover([WriteOp.update("issues", ["too short"])], next="writer",
                      status="revision")
    assert info.status is WorkflowStatus.REVISION and info.revisions == 1
    w.handover([WriteOp.set("draft", "v2")], next="reviewer")
    info = r.handover(status=WorkflowStatus.DONE, reason="fine")
    assert info.ended and info.reason == "fine" and info.holder == ""
    with pytest.raises(errors.WorkflowEnded):
        r.handover(next="writer")


def parley_wait(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_events_wake_a_waiting_client(wf):
    broker, client = wf
    r = client("R", "reviewer")
    r.workflow_events()
    _live(r)
    got = []
    waiter = threading.Thread(target=lambda: got.append(r.wait_workflow_event(20)))
    waiter.start()
    w = client("W", "writer")                   # turn 1 starts: the writer's
    w.handover([WriteOp.set("draft", "v1")], next="reviewer")
    waiter.join(25)
    assert got and got[0] is not None
    first = got[0]
    assert first.kind is WorkflowEventKind.TURN and first.holder == "writer" \
        and first.agent == "W" and first.turn == 1 and first.checkpoint == 1
    event = r.wait_workflow_event(10)
    assert (event.kind, event.holder, event.agent, event.turn) == \
        (WorkflowEventKind.TURN, "reviewer", "R", 2)
    r.handover(status="failed", reason="gave up")
    event = r.wait_workflow_event(10)
    assert event.kind is WorkflowEventKind.FAILED and event.reason == "gave up"
    assert event.status is WorkflowStatus.FAILED
    assert r.workflow_event() is None and r.session.workflow_events == 3
    # Off: nothing more is queued.
    r.workflow_events(False)
    assert r.workflow_event() is None and r.session.workflow_queue is None


def test_event_queue_is_bounded():
    s = sess.Session("A")
    s.set_workflow_events(True)
    assert "workflow." in s.subscriptions
    body = parley.codec.encode("WORKFLOW_EVENT", 0, {"event": "turn", "status": "in_progress",
                                                     "turn": 0, "holder": "x"})
    for turn in range(sess.WF_EVENT_QUEUE + 5):
        frame = parley.codec.encode("WORKFLOW_EVENT", 0, {"event": "turn",
                                                          "status": "in_progress",
                                                          "turn": turn, "holder": "x"})
        s.on_event(b"workflow.turn", frame)
    assert len(s.workflow_queue) == sess.WF_EVENT_QUEUE and s.workflow_dropped == 5
    assert s.take_workflow_event().turn == 5         # the oldest were dropped
    s.on_event(b"workflow.turn", b"\xc1")            # not msgpack: counted, not queued
    assert s.bad_frames == 1 and len(s.workflow_queue) == sess.WF_EVENT_QUEUE - 1
    s.set_workflow_events(False)
    assert "workflow." not in s.subscriptions
    s.on_event(b"workflow.turn", body)
    assert s.take_workflow_event() is None


def test_checkpoints_diff_and_resume(wf):
    broker, client = wf
    op = client("op")
    w = client("W", "writer")
    r = client("R", "reviewer")
    w.handover([WriteOp.set("draft", "v1"), WriteOp.update("notes", ["w1"])], next="reviewer")
    r.handover([WriteOp.update("issues", ["too short"])], next="writer", status="revision")
    w.handover([WriteOp.set("draft", "v2")], next="reviewer")
    r.handover(status="done")
    listing = op.checkpoints()
    numbers = [c.number for c in listing.checkpoints]
    assert numbers == list(range(6)) and listing.dropped == 0
    assert [c.turn for c in listing.checkpoints] == [0, 1, 2, 3, 4, 4]
    assert listing.checkpoints[3].status is WorkflowStatus.REVISION
    assert listing.checkpoints[3].revisions == 1 and listing.checkpoints[3].holder == "writer"
    assert listing.checkpoints[-1].status is WorkflowStatus.DONE
    assert all(c.changed > 0 and c.bytes > 0 for c in listing.checkpoints)
    at2 = op.checkpoint(2)
    assert at2.number == 2 and at2.since is None and at2.info.holder == "reviewer"
    values = at2.values()
    assert values["draft"] == "v1" and values["notes"] == ["w1"] and values["issues"] == []
    diff = op.checkpoint_diff(4, 2)
    assert diff.since == 2
    changed = diff.values()
    assert changed["draft"] == "v2" and changed["issues"] == ["too short"]
    assert "notes" not in changed               # the same at both
    with pytest.raises(errors.NoSuchCheckpoint):
        op.checkpoint(99)
    with pytest.raises(errors.NoSuchCheckpoint):
        op.resume(99)
    # Back to the writer's revision turn: state, workflow and holder return,
    # later checkpoints go, and the writer is woken again.
    w.workflow_events()
    _live(w)
    info = op.resume(3)
    assert (info.status, info.turn, info.holder, info.agent, info.checkpoint) == \
        (WorkflowStatus.REVISION, 3, "writer", "W", 3)
    kinds = [w.wait_workflow_event(10), w.wait_workflow_event(10)]
    assert [e.kind for e in kinds] == [WorkflowEventKind.RESUMED, WorkflowEventKind.TURN]
    assert kinds[1].agent == "W" and kinds[1].turn == 3
    assert op.get(["draft", "issues"]).values() == {"draft": "v1", "issues": ["too short"]}
    assert [c.number for c in op.checkpoints().checkpoints] == [0, 1, 2, 3]
    info = w.handover([WriteOp.set("draft", "v3")], next="reviewer")
    assert info.turn == 4 and info.holder == "reviewer"


@pytest.mark.asyncio
async def test_asyncio_roles(broker_factory):
    broker = broker_factory("--scenario", SCENARIO)
    r = await parley.aio.Client.connect(broker.router, "R", ["role:reviewer"])
    w = None
    try:
        r.workflow_events()
        (await r.replica("parley.probe.")).close()          # the SUB is live
        waiting = asyncio.ensure_future(r.wait_workflow_event(20))
        w = await parley.aio.Client.connect(broker.router, "W", ["role:writer"])
        first = await waiting
        assert first.kind is WorkflowEventKind.TURN and first.agent == "W"
        with pytest.raises(errors.NotTurnHolder):
            await r.handover(next="writer")
        info = await w.handover([WriteOp.set("draft", "a")], next="reviewer")
        assert info.agent == "R"
        event = await r.wait_workflow_event(10)
        assert event.holder == "reviewer" and event.turn == 2
        assert (await r.workflow()).turn == 2
        info = await r.handover(status="done")
        assert info.ended
        with pytest.raises(errors.WorkflowEnded):
            await w.handover(next="reviewer")
        listing = await r.checkpoints()
        assert [c.number for c in listing.checkpoints] == [0, 1, 2, 3]
        state = await r.checkpoint(2)
        assert state.values()["draft"] == "a"
        diff = await r.checkpoint_diff(3, 2)
        assert diff.values()["workflow_status"] == "done"
        info = await r.resume(2)
        assert info.holder == "reviewer" and info.status is WorkflowStatus.IN_PROGRESS
        assert (await r.wait_workflow_event(10)).kind is WorkflowEventKind.DONE
        assert (await r.wait_workflow_event(10)).kind is WorkflowEventKind.RESUMED
    finally:
        if w is not None:
            await w.close()
        await r.close()
