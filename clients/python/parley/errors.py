# SPDX-License-Identifier: MIT
"""Exceptions: one class per protocol error code, plus the client's own.

``ERROR_CODES`` mirrors the C list in ``proto/perr.h`` / ``proto/perr.c``
(PROTOCOL.md section 6) number for number; a test compares the two. Each
broker error becomes the class named after its code in CamelCase
(``INBOX_FULL`` -> ``InboxFull``), generated from that table, so adding a code
is one line here. Every class derives from :class:`ParleyError` and carries
``code`` (the wire number, or ``None`` for the client's own errors) and
``name`` (the wire name).
"""
from __future__ import annotations

from typing import Dict, Optional, Type

#: (code, name, meaning) in the order of proto/perr.h.
ERROR_CODES = (
    (1, "MALFORMED", "not one complete msgpack map; truncated; trailing bytes; duplicate key"),
    (2, "TOO_LARGE", "frame, string, batch or nesting over a limit"),
    (3, "UNKNOWN_TYPE", "`t` names no message type"),
    (4, "BAD_FIELD", "missing required field, wrong type, bad value"),
    (5, "VERSION", "unsupported `v`"),
    (6, "NOT_REQUEST", "a reply or event type sent as a request"),
    (10, "NOT_HELLO", "a request before HELLO"),
    (11, "ID_IN_USE", "the agent id is held by another agent (its resume token, or a live connection)"),
    (12, "BAD_NAME", "agent or channel name outside the rules"),
    (13, "RESERVED_NAME", "`all` or `$...` used as an agent or channel name"),
    (14, "TOO_MANY_AGENTS", "the broker's agent limit is reached"),
    (20, "UNKNOWN_RECIPIENT", "`to` names no registered agent"),
    (21, "INBOX_FULL", "the recipient's inbox is at its count or byte limit"),
    (22, "CHANNEL_FULL", "the channel is at its limit"),
    (23, "TOO_MANY_CHANNELS", "the broker's channel limit is reached"),
    (24, "NOT_LISTENING", "UNLISTEN on a channel not listened to"),
    (25, "NO_SUCH_TARGET", "a SEND item with `resolve` names no registered agent and no channel anyone listens to"),
    (30, "BAD_REDUCER", "unknown reducer name"),
    (31, "REDUCER_MISMATCH", "the value does not fit the key's reducer"),
    (32, "REDUCER_CONFLICT", "the key is declared with another reducer"),
    (33, "STATE_FULL", "the state's key or byte limit is reached"),
    (34, "NO_SUCH_KEY", "clear or delete of a key that does not exist"),
    (40, "BAD_ACTION", "unknown action, or left/right on a line"),
    (41, "NOT_IN_WORLD", "reserved; not sent by this broker"),
    (50, "INTERNAL", "a broker bug or out of memory; the request had no effect"),
    (51, "SHUTTING_DOWN", "reserved; not sent by this broker"),
    (52, "UNAUTHORIZED", "the connection's key does not allow this, or a wrong resume token"),
    (53, "QUEUES_FULL", "the queued messages of every inbox and channel together reach the broker's memory bound"),
    (54, "STORAGE", "the broker cannot write its journal (disk full, I/O error); the request changed nothing"),
    (60, "NOT_TURN_HOLDER", "HANDOVER from an agent that does not hold the turn"),
    (61, "NO_WORKFLOW", "a workflow request to a broker running no workflow"),
    (62, "WORKFLOW_ENDED", "HANDOVER after the workflow is done or failed"),
    (63, "NO_SUCH_CHECKPOINT", "a checkpoint number that was never recorded or is no longer kept"),
)


class ParleyError(Exception):
    """Base of every error this package raises."""

    code: Optional[int] = None
    name: str = "CLIENT"

    def __init__(self, message: str = "", *, request: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.request = request

    def __str__(self) -> str:
        where = f"{self.request}: " if self.request else ""
        return f"{where}{self.name}: {self.message}" if self.code is not None else \
            f"{where}{self.message}"


class BrokerError(ParleyError):
    """The broker answered ERROR. Subclasses exist for every known code;
    an unknown code (a newer broker) raises BrokerError itself."""


class ProtocolError(ParleyError):
    """A reply or event that breaks the protocol (not msgpack, wrong type,
    a required field missing): the client cannot trust the connection."""


class Timeout(ParleyError):
    """No answer within the call's timeout. For a request that is safe to
    resend the client kept resending it until then."""


class ConnectionLost(ParleyError):
    """The connection broke while a request that is not safe to resend
    (WRITE, WORLD_RESET, UNLISTEN, BYE) was in flight: it may or may not
    have taken effect. Read the state to find out."""


class KeyFileError(ParleyError):
    """A CURVE certificate or resume-token file that cannot be used
    (missing, unreadable, not ZPL, no key, a secret readable by others)."""


class ObserverOnly(ParleyError):
    """An observer (``observe=True``) registered nothing: it may subscribe
    to events, but the broker answers its requests NOT_HELLO."""


class Closed(ParleyError):
    """The client was closed (or said BYE) before the call completed."""


def _class_name(wire: str) -> str:
    return "".join(part.capitalize() for part in wire.split("_"))


BY_CODE: Dict[int, Type[BrokerError]] = {}
BY_NAME: Dict[str, Type[BrokerError]] = {}

for _code, _name, _meaning in ERROR_CODES:
    _cls = type(_class_name(_name), (BrokerError,),
                {"code": _code, "name": _name, "__doc__": f"ERROR {_code} {_name}: {_meaning}.",
                 "__module__": __name__})
    BY_CODE[_code] = _cls
    BY_NAME[_name] = _cls
    globals()[_cls.__name__] = _cls


def from_code(code: int, name: str, message: str, request: Optional[str] = None) -> BrokerError:
    """The exception for ERROR `code` (BrokerError with .code for unknown ones)."""
    cls = BY_CODE.get(code)
    if cls is None:
        err = BrokerError(message, request=request)
        err.code = code
        err.name = name or "UNKNOWN"
        return err
    return cls(message, request=request)


# Names the generated classes for type checkers and readers of this module.
Malformed: Type[BrokerError]
TooLarge: Type[BrokerError]
UnknownType: Type[BrokerError]
BadField: Type[BrokerError]
Version: Type[BrokerError]
NotRequest: Type[BrokerError]
NotHello: Type[BrokerError]
IdInUse: Type[BrokerError]
BadName: Type[BrokerError]
ReservedName: Type[BrokerError]
TooManyAgents: Type[BrokerError]
UnknownRecipient: Type[BrokerError]
InboxFull: Type[BrokerError]
ChannelFull: Type[BrokerError]
TooManyChannels: Type[BrokerError]
NotListening: Type[BrokerError]
BadReducer: Type[BrokerError]
ReducerMismatch: Type[BrokerError]
ReducerConflict: Type[BrokerError]
StateFull: Type[BrokerError]
NoSuchKey: Type[BrokerError]
BadAction: Type[BrokerError]
NotInWorld: Type[BrokerError]
Internal: Type[BrokerError]
ShuttingDown: Type[BrokerError]
Unauthorized: Type[BrokerError]
NoSuchTarget: Type[BrokerError]
QueuesFull: Type[BrokerError]
Storage: Type[BrokerError]
NotTurnHolder: Type[BrokerError]
NoWorkflow: Type[BrokerError]
WorkflowEnded: Type[BrokerError]
NoSuchCheckpoint: Type[BrokerError]
