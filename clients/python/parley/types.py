# SPDX-License-Identifier: MIT
"""types - the replies, events and inputs of the protocol as dataclasses.

Each ``from_wire`` checks the fields PROTOCOL.md marks required and their
types, and raises ProtocolError naming the field otherwise; optional fields
get their documented default. Unknown fields are ignored (the version rule).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type, Union

from . import errors

Body = Union[str, bytes]


def _want(msg: Mapping[str, Any], key: str, kind: Union[Type[Any], tuple], required: bool,
          default: Any = None, where: str = "") -> Any:
    value = msg.get(key)
    if value is None:
        if required:
            raise errors.ProtocolError(f"{where or msg.get('t', '?')} lacks required field "
                                       f"'{key}'")
        return default
    ok = isinstance(value, kind)
    if kind is int or kind == (int, float):
        ok = ok and not isinstance(value, bool)
    if kind is int:
        ok = ok and value >= 0
    if not ok:
        raise errors.ProtocolError(f"{where or msg.get('t', '?')} field '{key}' is "
                                   f"{type(value).__name__} {value!r:.40}")
    return value


def _uint(m: Mapping[str, Any], k: str, req: bool = False, where: str = "") -> int:
    return _want(m, k, int, req, 0, where)


def _str_list(m: Mapping[str, Any], k: str, where: str = "") -> List[str]:
    value = _want(m, k, list, False, [], where)
    if not all(isinstance(v, str) for v in value):
        raise errors.ProtocolError(f"{where or m.get('t')} field '{k}' holds a non-str")
    return list(value)


def _records(m: Mapping[str, Any], k: str, req: bool, where: str = "") -> List[Mapping[str, Any]]:
    value = _want(m, k, list, req, [], where)
    for item in value:
        if not isinstance(item, dict):
            raise errors.ProtocolError(f"{where or m.get('t')} field '{k}' holds a "
                                       f"{type(item).__name__}, not a record")
    return value


# ---------------------------------------------------------------------------
#  Inputs

@dataclass(frozen=True)
class Message:
    """One SEND item: exactly one of `to` (an agent id or "all") and `channel`.
    With `resolve`, `channel` is a name the broker resolves (one a model
    wrote): a registered agent gets it as direct mail, a channel someone
    listens to as a post, anything else fails NO_SUCH_TARGET for this item
    (PROTOCOL.md, SEND)."""
    body: Body
    to: Optional[str] = None
    channel: Optional[str] = None
    resolve: bool = False

    def wire(self) -> Dict[str, Any]:
        if (self.to is None) == (self.channel is None):
            raise ValueError("a Message needs exactly one of to= and channel=")
        if self.resolve and self.to is not None:
            raise ValueError("resolve= goes with channel=, not to=")
        if not isinstance(self.body, (str, bytes)):
            raise TypeError("a message body is str or bytes")
        if self.to is not None:
            return {"to": self.to, "body": self.body}
        if self.resolve:
            return {"channel": self.channel, "body": self.body, "resolve": True}
        return {"channel": self.channel, "body": self.body}


#: The fields of a model report, as HEARTBEAT and AGENT_LIST carry them
#: (each "model_<field>" on the wire).
MODEL_FIELDS = ("calls", "ok", "failed", "skipped", "retries", "prompt_tokens",
                "completion_tokens", "latency_ms", "latency_max_ms")


@dataclass(frozen=True)
class ModelReport:
    """What an agent's model calls cost so far, as totals since it started
    (PROTOCOL.md, HEARTBEAT). Set with ``Client.set_report``: every HEARTBEAT
    carries it from then on; AGENTS lists each agent's last one."""
    calls: int = 0
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    latency_max_ms: int = 0

    def wire(self) -> Dict[str, Any]:
        fields = {}
        for name in MODEL_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"model report field {name} must be an int >= 0")
            fields["model_" + name] = value
        return fields

    @classmethod
    def from_wire(cls, m: Mapping[str, Any], where: str) -> Optional["ModelReport"]:
        """None when the record carries no model field (no report)."""
        if not any("model_" + name in m for name in MODEL_FIELDS):
            return None
        return cls(*(_uint(m, "model_" + name, where=where) for name in MODEL_FIELDS))


@dataclass(frozen=True)
class WriteOp:
    """One WRITE operation; build them with the class methods."""
    op: str
    key: str
    value: Any = None
    reducer: Optional[str] = None

    @classmethod
    def declare(cls, key: str, reducer: str) -> "WriteOp":
        return cls("declare", key, reducer=reducer)

    @classmethod
    def update(cls, key: str, value: Any) -> "WriteOp":
        return cls("update", key, value)

    @classmethod
    def set(cls, key: str, value: Any) -> "WriteOp":
        return cls("set", key, value)

    @classmethod
    def clear(cls, key: str) -> "WriteOp":
        return cls("clear", key)

    @classmethod
    def delete(cls, key: str) -> "WriteOp":
        return cls("delete", key)

    def wire(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"op": self.op, "key": self.key}
        if self.op in ("update", "set"):
            out["value"] = self.value
        if self.reducer is not None:
            out["reducer"] = self.reducer
        return out


# ---------------------------------------------------------------------------
#  Replies

@dataclass
class WorldSummary:
    kind: str
    width: int = 0
    height: int = 1
    objects_total: int = 0
    explored: int = 0
    coverage: float = 0.0
    done: bool = False

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "WorldSummary":
        w = "world"
        return cls(_want(m, "kind", str, True, where=w), _uint(m, "width", where=w),
                   _want(m, "height", int, False, 1, w), _uint(m, "objects_total", where=w),
                   _uint(m, "explored", where=w),
                   float(_want(m, "coverage", (int, float), False, 0.0, w)),
                   bool(_want(m, "done", bool, False, False, w)))


@dataclass
class Welcome:
    version: int
    agent: str
    pub: str
    heartbeat_ms: int
    liveness_ms: int
    max_body: int
    max_batch: int
    acked: int
    tap: str = ""
    mail_seq: int = 0
    state_seq: int = 0
    world: Optional[WorldSummary] = None
    channels: List[str] = field(default_factory=list)
    #: changes when the broker's counters restart (0: not sent)
    origin: int = 0
    #: the resume token (plain mode; "" when none was sent)
    token: str = ""
    #: what the broker can do beyond the protocol's base ("send_ack": an
    #: ACK may ride on a SEND); empty from older brokers
    features: List[str] = field(default_factory=list)

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Welcome":
        world = _want(m, "world", dict, False)
        return cls(_uint(m, "version", True), _want(m, "agent", str, True),
                   _want(m, "pub", str, True), _uint(m, "heartbeat_ms", True),
                   _uint(m, "liveness_ms", True), _uint(m, "max_body", True),
                   _uint(m, "max_batch", True), _uint(m, "acked", True),
                   _want(m, "tap", str, False, ""), _uint(m, "mail_seq"),
                   _uint(m, "state_seq"), WorldSummary.from_wire(world) if world else None,
                   _str_list(m, "channels"), _uint(m, "origin"),
                   _want(m, "token", str, False, ""), _str_list(m, "features"))


@dataclass
class ItemError:
    """A SEND item (or one recipient of a fan-out item) that was not delivered."""
    index: int
    code: int
    message: str
    agent: Optional[str] = None

    @property
    def name(self) -> str:
        cls = errors.BY_CODE.get(self.code)
        return cls.name if cls else "UNKNOWN"

    def exception(self) -> errors.BrokerError:
        who = f" (recipient {self.agent})" if self.agent else ""
        return errors.from_code(self.code, self.name, f"item {self.index}{who}: {self.message}",
                                "SEND")


@dataclass
class Confirmed:
    """What the broker's CONFIRM said about one pipelined SEND: the items
    that failed (empty: every item was accepted). ``complete`` is False
    when that CONFIRM left some errors out (``errors_omitted``), so an
    empty list is then not a proof. A SEND refused whole raises instead."""
    id: int
    count: int
    errors: List[ItemError] = field(default_factory=list)
    complete: bool = True

    def raise_for_errors(self) -> None:
        """Raises the first item error as its typed exception, if any item failed."""
        if self.errors:
            raise self.errors[0].exception()


@dataclass
class Sent:
    accepted: int
    seqs: List[int]
    errors: List[ItemError] = field(default_factory=list)
    errors_omitted: int = 0

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Sent":
        seqs = _want(m, "seqs", list, True)
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seqs):
            raise errors.ProtocolError("SENT field 'seqs' holds a non-uint")
        errs = [ItemError(_uint(e, "index", True, "item_error"),
                          _uint(e, "code", True, "item_error"),
                          _want(e, "message", str, True, where="item_error"),
                          _want(e, "agent", str, False, where="item_error"))
                for e in _records(m, "errors", False)]
        return cls(_uint(m, "accepted", True), list(seqs), errs, _uint(m, "errors_omitted"))

    def raise_for_errors(self) -> None:
        """Raises the first item error as its typed exception, if any item failed."""
        if self.errors:
            raise self.errors[0].exception()
        if 0 in self.seqs:
            raise errors.BrokerError(f"item {self.seqs.index(0)} was rejected "
                                     "(its error was omitted)", request="SEND")


@dataclass
class MailItem:
    seq: int
    ts: int
    sender: str
    body: Body
    to: Optional[str] = None
    channel: Optional[str] = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "MailItem":
        # The relay's hot path: the common, well-formed item is checked
        # inline; anything else takes the general checks (and their errors).
        seq, ts, sender, body = m.get("seq"), m.get("ts"), m.get("from"), m.get("body")
        if type(seq) is int and type(ts) is int and seq >= 0 and ts >= 0 \
                and type(sender) is str and type(body) in (str, bytes):
            to, channel = m.get("to"), m.get("channel")
            if (to is None or type(to) is str) and (channel is None or type(channel) is str):
                return cls(seq, ts, sender, body, to, channel)
        w = "mail_item"
        if not isinstance(body, (str, bytes)):
            raise errors.ProtocolError("mail_item field 'body' is not str or bin")
        return cls(_uint(m, "seq", True, w), _uint(m, "ts", True, w),
                   _want(m, "from", str, True, where=w), body,
                   _want(m, "to", str, False, where=w), _want(m, "channel", str, False, where=w))

    @property
    def text(self) -> str:
        return self.body if isinstance(self.body, str) else self.body.decode("utf-8", "replace")


@dataclass
class Mail:
    messages: List[MailItem]
    pending: int
    acked: int
    #: items the broker handed out again that the client's filter left out
    duplicates: int = 0

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Mail":
        return cls([MailItem.from_wire(i) for i in _records(m, "messages", True)],
                   _uint(m, "pending", True), _uint(m, "acked", True))

    @property
    def last_seq(self) -> int:
        return self.messages[-1].seq if self.messages else 0


@dataclass
class StateEntry:
    key: str
    reducer: str
    seq: int
    value: Any = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "StateEntry":
        w = "state_entry"
        return cls(_want(m, "key", str, True, where=w), _want(m, "reducer", str, True, where=w),
                   _uint(m, "seq", True, w), m.get("value"))


@dataclass
class State:
    seq: int
    entries: List[StateEntry]
    more: bool = False

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "State":
        return cls(_uint(m, "seq", True),
                   [StateEntry.from_wire(e) for e in _records(m, "entries", True)],
                   bool(_want(m, "more", bool, False, False)))

    def values(self) -> Dict[str, Any]:
        return {e.key: e.value for e in self.entries}


@dataclass
class Written:
    seq: int
    changed: int

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Written":
        return cls(_uint(m, "seq", True), _uint(m, "changed", True))


@dataclass
class Observation:
    position: int
    outcome: str
    x: int = 0
    y: int = 0
    objects: List[str] = field(default_factory=list)
    new_objects: List[str] = field(default_factory=list)
    explored: int = 0
    objects_total: int = 0
    coverage: float = 0.0
    done: bool = False

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Observation":
        return cls(_uint(m, "position", True), _want(m, "outcome", str, True),
                   _uint(m, "x"), _uint(m, "y"), _str_list(m, "objects"),
                   _str_list(m, "new_objects"), _uint(m, "explored"), _uint(m, "objects_total"),
                   float(_want(m, "coverage", (int, float), False, 0.0)),
                   bool(_want(m, "done", bool, False, False)))


@dataclass
class PartError:
    """A part of a STEP that was refused (``ops_error``, ``action_error``);
    the other parts applied."""
    code: int
    name: str
    message: str

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "PartError":
        w = "part_error"
        return cls(_uint(m, "code", True, w), _want(m, "error", str, True, where=w),
                   _want(m, "message", str, True, where=w))

    def exception(self) -> errors.BrokerError:
        return errors.from_code(self.code, self.name, self.message, "STEP")


@dataclass
class Stepped:
    """STEPPED: how each part of a STEP went (PROTOCOL.md, STEP). A part
    that was not sent is None; ``mail`` is None without ``fetch``."""
    acked: int
    step: Optional[int] = None
    replayed: bool = False
    sent: Optional[Sent] = None
    written: Optional[Written] = None
    ops_error: Optional[PartError] = None
    observation: Optional[Observation] = None
    action_error: Optional[PartError] = None
    mail: Optional[Mail] = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Stepped":
        def part(name: str, parse: Any) -> Any:
            value = _want(m, name, dict, False)
            return parse(value) if value is not None else None
        acked = _uint(m, "acked", True)
        mail = None
        if m.get("mail") is not None:
            mail = Mail([MailItem.from_wire(i) for i in _records(m, "mail", True)],
                        _uint(m, "pending"), acked)
        step = m.get("step")
        return cls(acked, _uint(m, "step") if step is not None else None,
                   bool(_want(m, "replayed", bool, False, False)),
                   part("sent", Sent.from_wire), part("written", Written.from_wire),
                   part("ops_error", PartError.from_wire),
                   part("observation", Observation.from_wire),
                   part("action_error", PartError.from_wire), mail)


@dataclass
class AgentInfo:
    agent: str
    online: bool
    idle_ms: int = 0
    pending: int = 0
    caps: List[str] = field(default_factory=list)
    #: its last HEARTBEAT's model report; None: it sent none
    model: Optional[ModelReport] = None
    unacked: int = 0            # of pending: handed out, not acknowledged
    inbox_bytes: int = 0        # body bytes of the pending messages
    step: int = 0               # the step of its last ACT that moved
    acts: int = 0               # ACTs that moved

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "AgentInfo":
        w = "agent_info"
        return cls(_want(m, "agent", str, True, where=w), _want(m, "online", bool, True, where=w),
                   _uint(m, "idle_ms", where=w), _uint(m, "pending", where=w),
                   _str_list(m, "caps", w), ModelReport.from_wire(m, w),
                   _uint(m, "unacked", where=w), _uint(m, "inbox_bytes", where=w),
                   _uint(m, "step", where=w), _uint(m, "acts", where=w))


@dataclass
class Stats:
    """STATS_REPLY. Units and meanings: PROTOCOL.md, STATS."""
    uptime_ms: int
    agents: int = 0
    online: int = 0
    channels: int = 0
    queued: int = 0
    queued_bytes: int = 0
    delivered: int = 0
    dropped: int = 0
    rejected: int = 0
    msgs_in: int = 0
    msgs_out: int = 0
    rate_in: float = 0.0
    rate_out: float = 0.0
    state_keys: int = 0
    state_bytes: int = 0
    state_seq: int = 0
    mail_seq: int = 0
    errors: int = 0
    bad_frames: int = 0
    unroutable: int = 0
    requests: int = 0
    tap_seq: int = 0
    forgotten: int = 0
    unauthorized: int = 0
    auth_denied: int = 0
    replies_dropped: int = 0
    replies_stalled: int = 0
    replies_waiting: int = 0
    connections_cut: int = 0
    requests_stalled: int = 0
    queued_memory: int = 0
    storage_errors: int = 0
    journal_healthy: int = 0
    version: str = ""
    sends_parked: int = 0
    send_wait_timeouts: int = 0
    sends_waiting: int = 0
    requests_held: int = 0
    requests_refused_held: int = 0
    confirms: int = 0
    pushed: int = 0
    push_frames: int = 0
    push_deferred: int = 0
    consumers: int = 0
    # the agents' model reports summed per role: {role: {agents, model_calls, ...}}
    model_roles: Dict[str, Dict[str, int]] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)

    _RATES = ("rate_in", "rate_out")

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "Stats":
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        values: Dict[str, Any] = {}
        for key in known:
            if key in cls._RATES:
                values[key] = float(_want(m, key, (int, float), False, 0.0))
            elif key == "version":
                values[key] = _want(m, key, (str,), False, "")
            elif key == "model_roles":
                roles = _want(m, key, (dict,), False, {})
                values[key] = {str(role): {str(k): v for k, v in (fields or {}).items()
                                           if isinstance(v, int)}
                               for role, fields in roles.items() if isinstance(fields, dict)}
            else:
                values[key] = _uint(m, key, key == "uptime_ms")
        extra = {k: v for k, v in m.items() if k not in known and k not in ("v", "t", "id")}
        return cls(extra=extra, **values)


# ---------------------------------------------------------------------------
#  Workflow (PROTOCOL.md 4.1)

class WorkflowStatus(str, enum.Enum):
    """A workflow's status. ``UNKNOWN`` stands for a status this client does
    not know (a newer broker); the text as sent is kept in ``status_name``."""
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    REVISION = "revision"
    DONE = "done"
    FAILED = "failed"
    UNKNOWN = ""

    @classmethod
    def parse(cls, name: str) -> "WorkflowStatus":
        try:
            return cls(name) if name else cls.UNKNOWN
        except ValueError:
            return cls.UNKNOWN

    @property
    def ended(self) -> bool:
        return self in (WorkflowStatus.DONE, WorkflowStatus.FAILED)


class WorkflowEventKind(str, enum.Enum):
    """WORKFLOW_EVENT ``event``; ``OTHER`` for one this client does not know."""
    TURN = "turn"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    RESUMED = "resumed"
    OTHER = ""

    @classmethod
    def parse(cls, name: str) -> "WorkflowEventKind":
        try:
            return cls(name) if name else cls.OTHER
        except ValueError:
            return cls.OTHER


def _status(m: Mapping[str, Any], where: str) -> Tuple[WorkflowStatus, str]:
    name = _want(m, "status", str, True, where=where)
    return WorkflowStatus.parse(name), name


@dataclass
class WorkflowInfo:
    """WORKFLOW_INFO: the reply to WORKFLOW, HANDOVER and RESUME."""
    status: WorkflowStatus
    turn: int
    revisions: int
    #: the status as sent (also a newer broker's status)
    status_name: str = ""
    holder: str = ""
    agent: str = ""
    paused: bool = False
    max_revisions: int = 0
    max_turns: int = 0
    reason: str = ""
    checkpoint: int = 0
    seq: int = 0

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "WorkflowInfo":
        status, name = _status(m, "WORKFLOW_INFO")
        return cls(status, _uint(m, "turn", True), _uint(m, "revisions", True), name,
                   _want(m, "holder", str, False, ""), _want(m, "agent", str, False, ""),
                   bool(_want(m, "paused", bool, False, False)), _uint(m, "max_revisions"),
                   _uint(m, "max_turns"), _want(m, "reason", str, False, ""),
                   _uint(m, "checkpoint"), _uint(m, "seq"))

    @property
    def ended(self) -> bool:
        return self.status.ended


@dataclass
class CheckpointInfo:
    """checkpoint_info: one checkpoint's workflow fields."""
    number: int
    turn: int
    status: WorkflowStatus
    status_name: str = ""
    holder: str = ""
    revisions: int = 0
    #: keys changed since the previous checkpoint
    changed: int = 0
    #: bytes stored for it (keys + values changed)
    bytes: int = 0

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "CheckpointInfo":
        w = "checkpoint_info"
        status, name = _status(m, w)
        return cls(_uint(m, "number", True, w), _uint(m, "turn", True, w), status, name,
                   _want(m, "holder", str, False, "", w), _uint(m, "revisions", where=w),
                   _uint(m, "changed", where=w), _uint(m, "bytes", where=w))


@dataclass
class CheckpointList:
    """CHECKPOINT_LIST: every checkpoint kept, oldest first."""
    checkpoints: List[CheckpointInfo]
    #: checkpoints folded away by the broker's --checkpoints bound
    dropped: int = 0

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "CheckpointList":
        return cls([CheckpointInfo.from_wire(c) for c in _records(m, "checkpoints", True)],
                   _uint(m, "dropped"))


@dataclass
class CheckpointEntry:
    """checkpoint_entry: a key at a checkpoint, or (``removed``) its absence."""
    key: str
    reducer: str = ""
    value: Any = None
    removed: bool = False

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "CheckpointEntry":
        w = "checkpoint_entry"
        return cls(_want(m, "key", str, True, where=w), _want(m, "reducer", str, False, "", w),
                   m.get("value"), bool(_want(m, "removed", bool, False, False, w)))


@dataclass
class CheckpointState:
    """CHECKPOINT_STATE: the whole state at ``number``, or with ``since``
    the keys that differ between the two checkpoints."""
    number: int
    info: CheckpointInfo
    entries: List[CheckpointEntry]
    since: Optional[int] = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "CheckpointState":
        info = _want(m, "info", dict, True)
        since = m.get("since")
        return cls(_uint(m, "number", True), CheckpointInfo.from_wire(info),
                   [CheckpointEntry.from_wire(e) for e in _records(m, "entries", True)],
                   None if since is None else _uint(m, "since"))

    def values(self) -> Dict[str, Any]:
        """key -> value of the entries that exist at ``number``."""
        return {e.key: e.value for e in self.entries if not e.removed}

    def removed(self) -> List[str]:
        return [e.key for e in self.entries if e.removed]


# ---------------------------------------------------------------------------
#  Events

@dataclass
class MailReady:
    agent: str
    seq: int


@dataclass
class StateUpdate:
    key: str
    seq: int
    op: str
    reducer: Optional[str] = None
    value: Any = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "StateUpdate":
        return cls(_want(m, "key", str, True), _uint(m, "seq", True), _want(m, "op", str, True),
                   _want(m, "reducer", str, False), m.get("value"))


@dataclass
class WorldEvent:
    event: str
    coverage: float = 0.0
    explored: int = 0
    objects_total: int = 0


@dataclass
class AgentEvent:
    agent: str
    event: str


@dataclass
class WorkflowEvent:
    """WORKFLOW_EVENT (topic ``workflow.<event>``). A role agent acts when
    ``kind`` is TURN, ``holder`` its role and ``agent`` its id."""
    kind: WorkflowEventKind
    #: the event as sent
    name: str
    status: WorkflowStatus
    status_name: str
    turn: int
    revisions: int = 0
    holder: str = ""
    agent: str = ""
    reason: str = ""
    #: the checkpoint recorded at this boundary (None: not sent)
    checkpoint: Optional[int] = None

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> "WorkflowEvent":
        name = _want(m, "event", str, True)
        status, status_name = _status(m, "WORKFLOW_EVENT")
        checkpoint = m.get("checkpoint")
        return cls(WorkflowEventKind.parse(name), name, status, status_name,
                   _uint(m, "turn", True), _uint(m, "revisions"),
                   _want(m, "holder", str, False, ""), _want(m, "agent", str, False, ""),
                   _want(m, "reason", str, False, ""),
                   None if checkpoint is None else _uint(m, "checkpoint"))


Event = Union[MailReady, StateUpdate, WorldEvent, AgentEvent, WorkflowEvent]


def event_from_wire(m: Mapping[str, Any]) -> Optional[Event]:
    """The typed event, or None for an event type this client does not know."""
    t = m["t"]
    if t == "MAIL_READY":
        return MailReady(_want(m, "agent", str, True), _uint(m, "seq", True))
    if t == "STATE_UPDATE":
        return StateUpdate.from_wire(m)
    if t == "WORLD_EVENT":
        return WorldEvent(_want(m, "event", str, True),
                          float(_want(m, "coverage", (int, float), False, 0.0)),
                          _uint(m, "explored"), _uint(m, "objects_total"))
    if t == "AGENT_EVENT":
        return AgentEvent(_want(m, "agent", str, True), _want(m, "event", str, True))
    if t == "WORKFLOW_EVENT":
        return WorkflowEvent.from_wire(m)
    return None

