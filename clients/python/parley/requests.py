"""requests - every request of the protocol, built once for both clients.

A :class:`Request` is what a call needs: the type, its fields, how to read
the reply, and whether it is safe to send again when the connection breaks
before the reply (PROTOCOL.md: SEND with `batch`, ACT with `step`, FETCH,
ACK and the reads are; WRITE, WORLD_RESET, UNLISTEN and BYE are not). The
blocking and the asyncio client both turn these into frames through
:class:`parley.session.Session`; neither builds a request itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, \
    Sequence, TypeVar, Union

from . import codec, errors
from .types import (AgentInfo, Mail, Message, Observation, Sent, State, Stats, Welcome,
                    WriteOp, Written, _records)

R = TypeVar("R")
ACTIONS = ("forward", "backward", "left", "right", "stay")


@dataclass
class Request(Generic[R]):
    type: str
    fields: Dict[str, Any]
    reply: str                              #: the expected reply type
    parse: Callable[[Mapping[str, Any]], R]
    resend_safe: bool = True


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


def heartbeat() -> Request[None]:
    return Request("HEARTBEAT", {}, "OK", _ok)


def bye(forget: bool = False) -> Request[None]:
    return Request("BYE", {"forget": True} if forget else {}, "OK", _ok, resend_safe=False)


def agents() -> Request[List[AgentInfo]]:
    return Request("AGENTS", {}, "AGENT_LIST",
                   lambda m: [AgentInfo.from_wire(a) for a in _records(m, "agents", True)])


def _message(item: Union[Message, Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(item, Message):
        return item.wire()
    return Message(item["body"], item.get("to"), item.get("channel")).wire()


def send(messages: Iterable[Union[Message, Mapping[str, Any]]], batch: int,
         max_batch: int = codec.MAX_BATCH) -> Request[Sent]:
    items = [_message(m) for m in messages]
    if not items:
        raise ValueError("send() needs at least one message")
    if len(items) > max_batch:
        raise errors.TooLarge(f"{len(items)} messages; the broker takes at most {max_batch} "
                              "per SEND", request="SEND")
    return Request("SEND", {"messages": items, "batch": batch}, "SENT", Sent.from_wire)


def fetch(ack: Optional[int] = None, max: Optional[int] = None) -> Request[Mail]:
    return Request("FETCH", {"ack": ack, "max": max}, "MAIL", Mail.from_wire)


def ack(seq: int) -> Request[None]:
    return Request("ACK", {"seq": seq}, "OK", _ok)


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
