# SPDX-License-Identifier: MIT
"""codec - frames to and from msgpack, with the protocol's limits.

Requests are one msgpack map (PROTOCOL.md section 2): the envelope ``v``,
``t``, ``id`` and the type's fields. Replies and events are checked on the
way in: at most ``MAX_FRAME`` bytes, exactly one msgpack map, ``v`` 1, ``t``
a str, ``id`` a uint; anything else is a :class:`ProtocolError` naming
what was wrong, never a hang or a crash. Bodies sent as msgpack str come
back as ``str`` (invalid UTF-8 kept through ``surrogateescape``), bodies sent
as bin as ``bytes``.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Mapping

import msgpack

from . import errors

VERSION = 1
MAX_FRAME = 1 << 20               #: bytes in one frame (also ZMQ_MAXMSGSIZE)
MAX_TAP_FRAME = MAX_FRAME + 4096
MAX_DEPTH = 16
MAX_BODY = 64 * 1024              #: until WELCOME says otherwise
MAX_BATCH = 4096
MAX_KEY = 256
MAX_NAME = 64
MAX_TEXT = 4096

_NAME = re.compile(r"^\$?[A-Za-z0-9_:][A-Za-z0-9_.:-]{0,63}$")


def name_valid(name: str) -> bool:
    """True when `name` follows PROTOCOL.md's agent/channel name rules."""
    if not isinstance(name, str) or not _NAME.match(name):
        return False
    return len(name.encode()) - (1 if name.startswith("$") else 0) <= MAX_NAME


def encode(msg_type: str, request_id: int, fields: Mapping[str, Any]) -> bytes:
    """One request frame. TooLarge (before anything is sent) over MAX_FRAME."""
    body: Dict[str, Any] = {"v": VERSION, "t": msg_type, "id": request_id}
    for key, value in fields.items():
        if value is not None:
            body[key] = value
    frame = msgpack.packb(body, use_bin_type=True)
    if len(frame) > MAX_FRAME:
        raise errors.TooLarge(f"the frame would be {len(frame)} bytes; the limit is "
                              f"{MAX_FRAME} (the broker's socket would drop the connection)",
                              request=msg_type)
    return frame


def decode(frame: bytes, limit: int = MAX_FRAME) -> Dict[str, Any]:
    """A reply or event body, checked; ProtocolError otherwise."""
    if len(frame) > limit:
        raise errors.ProtocolError(f"a {len(frame)}-byte frame is over the {limit}-byte limit")
    try:
        msg = msgpack.unpackb(frame, raw=False, strict_map_key=False,
                              unicode_errors="surrogateescape")
    except Exception as exc:    # msgpack raises several unrelated types
        raise errors.ProtocolError(f"a frame that is not one msgpack value ({exc})") from None
    if not isinstance(msg, dict):
        raise errors.ProtocolError(f"a frame whose top level is a {type(msg).__name__}, "
                                   "not a map")
    if msg.get("v") != VERSION:
        raise errors.ProtocolError(f"a frame of protocol version {msg.get('v')!r}; "
                                   f"this client speaks {VERSION}")
    if not isinstance(msg.get("t"), str):
        raise errors.ProtocolError("a frame without a str field 't'")
    rid = msg.get("id", 0)
    if not isinstance(rid, int) or isinstance(rid, bool) or rid < 0:
        raise errors.ProtocolError(f"a frame whose 'id' is {rid!r}, not a uint")
    return msg
