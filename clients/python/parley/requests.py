# SPDX-License-Identifier: MIT
"""requests - every request of the protocol, built once for both clients.

A :class:`Request` is what a call needs: the type, its fields, how to read
the reply, and whether it is safe to send again when the connection breaks
before the reply (PROTOCOL.md: SEND with `batch`, ACT and STEP with `step`, FETCH,
ACK and the reads are; WRITE, HANDOVER, RESUME, WORLD_RESET, UNLISTEN and
BYE are not). The
blocking and the asyncio client both turn these into frames through
:class:`parley.session.Session`; neither builds a request itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, \
    Sequence, TypeVar, Union

from . import codec, errors
from .types import (AgentInfo, CheckpointList, CheckpointState, Confirmed, Mail, Message,
                    ModelReport,
                    Observation, Sent, State, Stats, Stepped, Welcome, WorkflowInfo,
                    WorkflowStatus, WriteOp,
                    Written, _records)

R = TypeVar("R")
ACTIONS = ("forward", "backward", "left", "right", "stay")


@dataclass
class Request(Generic[R]):
    type: str
    fields: Dict[str, Any]
    reply: str                              #: the expected reply type
    parse: Callable[[Mapping[str, Any]], R]
    resend_safe: bool = True


#: the largest CONSUME window the broker accepts, in messages
MAX_CREDIT = 65536


def _ok(_: Mapping[str, Any]) -> None:
    return None


def _name(kind: str, name: str) -> str:
    if not codec.name_valid(name):
        raise errors.BadName(f"{kind} {name!r} is not 1-64 bytes of [A-Za-z0-9_.:-] "
                             "starting with a letter, digit, '_' or ':'")
    return name


def hello(agent: str, caps: Sequence[str] = (), token: str = "",
          observe: bool = False) -> Request[Welcome]:
    """HELLO; `token` is the resume token an earlier WELCOME gave this id,
    `observe` asks for the endpoints only (nothing is registered)."""
    if agent == "all" or agent.startswith("$"):
        raise errors.ReservedName(f"{agent!r} is reserved for the broker", request="HELLO")
    fields: Dict[str, Any] = {"agent": _name("agent id", agent)}
    if caps:
        fields["caps"] = list(caps)
    if token:
        fields["token"] = token
    if observe:
        fields["observe"] = True
    return Request("HELLO", fields, "WELCOME", Welcome.from_wire)


def heartbeat(report: Optional[ModelReport] = None) -> Request[None]:
    return Request("HEARTBEAT", report.wire() if report else {}, "OK", _ok)


def bye(forget: bool = False) -> Request[None]:
    return Request("BYE", {"forget": True} if forget else {}, "OK", _ok, resend_safe=False)


def agents() -> Request[List[AgentInfo]]:
    return Request("AGENTS", {}, "AGENT_LIST",
                   lambda m: [AgentInfo.from_wire(a) for a in _records(m, "agents", True)])


def _message(item: Union[Message, Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(item, Message):
        return item.wire()
    return Message(item["body"], item.get("to"), item.get("channel"),
                   bool(item.get("resolve", False))).wire()


def _items(messages: Iterable[Union[Message, Mapping[str, Any]]],
           max_batch: int) -> List[Dict[str, Any]]:
    items = [_message(m) for m in messages]
    if not items:
        raise ValueError("send() needs at least one message")
    if len(items) > max_batch:
        raise errors.TooLarge(f"{len(items)} messages; the broker takes at most {max_batch} "
                              "per SEND", request="SEND")
    return items


def send(messages: Iterable[Union[Message, Mapping[str, Any]]], batch: int,
         max_batch: int = codec.MAX_BATCH, wait_ms: Optional[int] = None) -> Request[Sent]:
    """SEND with `batch`; `wait_ms`: how long the broker may wait for room
    in an online recipient's full inbox (None: the broker's default)."""
    return Request("SEND", {"messages": _items(messages, max_batch), "batch": batch,
                            "wait_ms": wait_ms}, "SENT", Sent.from_wire)


def _no_parse(_: Mapping[str, Any]) -> Confirmed:
    raise errors.ProtocolError("a pipelined SEND is answered by CONFIRM (parley.session)")


def send_pipelined(messages: Iterable[Union[Message, Mapping[str, Any]]],
                   max_batch: int = codec.MAX_BATCH,
                   wait_ms: Optional[int] = None) -> Request[Confirmed]:
    """SEND with `pipelined`: no SENT, its outcome comes in the connection's
    next CONFIRM. At-least-once: resent after a reconnect (no batch id)."""
    return Request("SEND", {"messages": _items(messages, max_batch), "pipelined": True,
                            "wait_ms": wait_ms}, "CONFIRM", _no_parse)


def fetch(ack: Optional[int] = None, max: Optional[int] = None) -> Request[Mail]:
    return Request("FETCH", {"ack": ack, "max": max}, "MAIL", Mail.from_wire)


def ack(seq: int) -> Request[None]:
    return Request("ACK", {"seq": seq}, "OK", _ok)


def consume(credit: int, credit_bytes: Optional[int] = None) -> Request[None]:
    """CONSUME: push this agent's mail within a window of ``credit``
    messages (0 stops) and ``credit_bytes`` body bytes (None: the broker's
    default)."""
    if not isinstance(credit, int) or isinstance(credit, bool) or not 0 <= credit <= MAX_CREDIT:
        raise ValueError(f"credit must be an int in 0..{MAX_CREDIT}")
    if credit_bytes is not None and (not isinstance(credit_bytes, int)
                                     or isinstance(credit_bytes, bool) or credit_bytes <= 0):
        raise ValueError("credit_bytes must be a positive int (or None)")
    return Request("CONSUME", {"credit": credit, "credit_bytes": credit_bytes}, "OK", _ok)


def listen(channel: str) -> Request[None]:
    return Request("LISTEN", {"channel": _name("channel", channel)}, "OK", _ok)


def unlisten(channel: str) -> Request[None]:
    return Request("UNLISTEN", {"channel": _name("channel", channel)}, "OK", _ok,
                   resend_safe=False)


def write(ops: Iterable[WriteOp]) -> Request[Written]:
    wire = [op.wire() for op in ops]
    if not wire:
        raise ValueError("write() needs at least one operation")
    return Request("WRITE", {"ops": wire}, "WRITTEN", Written.from_wire, resend_safe=False)


def get(keys: Iterable[str]) -> Request[State]:
    keys = list(keys)
    if not keys:
        raise ValueError("get() needs at least one key")
    return Request("GET", {"keys": keys}, "STATE", State.from_wire)


def snapshot(prefix: Optional[str] = None, after_key: Optional[str] = None,
             limit: Optional[int] = None) -> Request[State]:
    return Request("SNAPSHOT", {"prefix": prefix, "after_key": after_key, "limit": limit},
                   "STATE", State.from_wire)


def perceive() -> Request[Observation]:
    return Request("PERCEIVE", {}, "OBSERVATION", Observation.from_wire)


def step(step: Optional[int], ack: Optional[int] = None,
         messages: Iterable[Union[Message, Mapping[str, Any]]] = (),
         ops: Iterable[WriteOp] = (), action: Optional[str] = None, perceive: bool = False,
         fetch: Optional[int] = None, stream: bool = False,
         max_batch: int = codec.MAX_BATCH) -> Request[Stepped]:
    """STEP: an agent's whole step in one request. With a `step` it is safe
    to resend (the broker answers a repeat from memory); without one it is
    applied every time, so only a STEP that sends and writes nothing is."""
    items = [_message(m) for m in messages]
    if len(items) > max_batch:
        raise errors.TooLarge(f"{len(items)} messages; the broker takes at most {max_batch} "
                              "per STEP", request="STEP")
    wire = [op.wire() for op in ops]
    fields: Dict[str, Any] = {"step": step, "ack": ack}
    if items:
        fields["messages"] = items
    if wire:
        fields["ops"] = wire
    if action is not None:
        if action not in ACTIONS:
            raise errors.BadAction(f"unknown action {action!r} (one of {', '.join(ACTIONS)})",
                                   request="STEP")
        fields["action"] = action
    elif perceive:
        fields["perceive"] = True
    if fetch:
        fields["fetch"] = fetch
        if stream:
            fields["stream"] = True
    return Request("STEP", fields, "STEPPED", Stepped.from_wire,
                   resend_safe=step is not None or not (items or wire))


def act(action: str, step: int) -> Request[Observation]:
    if action not in ACTIONS:
        raise errors.BadAction(f"unknown action {action!r} (one of {', '.join(ACTIONS)})",
                               request="ACT")
    return Request("ACT", {"action": action, "step": step}, "OBSERVATION",
                   Observation.from_wire)


def world_reset(seed: Optional[int] = None) -> Request[None]:
    return Request("WORLD_RESET", {"seed": seed}, "OK", _ok, resend_safe=False)


def stats() -> Request[Stats]:
    return Request("STATS", {}, "STATS_REPLY", Stats.from_wire)


# ---------------------------------------------------------------------------
#  Workflow (PROTOCOL.md 4.1)

def workflow() -> Request[WorkflowInfo]:
    return Request("WORKFLOW", {}, "WORKFLOW_INFO", WorkflowInfo.from_wire)


def handover(ops: Iterable[WriteOp] = (), next: Optional[str] = None,
             status: Optional[Union[WorkflowStatus, str]] = None,
             reason: Optional[str] = None) -> Request[WorkflowInfo]:
    """HANDOVER: this turn's writes and the next role, one atomic request.
    `next` is required unless `status` is done or failed; `status` None
    leaves it as it is. Not safe to resend: a lost reply may hide a
    hand-over that took place (the WORKFLOW tells)."""
    st = WorkflowStatus(status) if status is not None else None
    if st in (WorkflowStatus.PENDING, WorkflowStatus.UNKNOWN):
        raise ValueError(f"a HANDOVER status is in_progress, revision, done or failed, "
                         f"not {st.value!r}")
    if next is None and st not in (WorkflowStatus.DONE, WorkflowStatus.FAILED):
        raise ValueError("handover() needs next= unless the status is done or failed")
    fields: Dict[str, Any] = {"ops": [op.wire() for op in ops] or None,
                              "next": None if next is None else _name("role", next),
                              "status": None if st is None else st.value,
                              "reason": reason}
    return Request("HANDOVER", fields, "WORKFLOW_INFO", WorkflowInfo.from_wire,
                   resend_safe=False)


def checkpoints() -> Request[CheckpointList]:
    return Request("CHECKPOINTS", {}, "CHECKPOINT_LIST", CheckpointList.from_wire)


def checkpoint(number: int, since: Optional[int] = None) -> Request[CheckpointState]:
    """CHECKPOINT: the whole state at `number`, or with `since` what differs."""
    return Request("CHECKPOINT", {"number": number, "since": since}, "CHECKPOINT_STATE",
                   CheckpointState.from_wire)


def resume(number: int) -> Request[WorkflowInfo]:
    """RESUME: fork the run from checkpoint `number` (an operator's request)."""
    return Request("RESUME", {"number": number}, "WORKFLOW_INFO", WorkflowInfo.from_wire,
                   resend_safe=False)
