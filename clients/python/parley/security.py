# SPDX-License-Identifier: MIT
"""security - CURVE keys and the plain-mode resume token (docs/SECURITY.md).

CURVE: ``parley-keygen`` writes CZMQ certificates in ZPL (ZeroMQ Property
Language): ``NAME`` holds the public key and the metadata, ``NAME_secret``
the secret key too (mode 0600). :func:`read_cert` parses them here, so no
CZMQ binding is needed; :class:`Curve` sets pyzmq's CURVE options on every
socket the client opens (the request DEALER and the events SUB: both are
CURVE servers on a broker with keys). Like the broker and parley-agent, a
secret file that group or others may read is refused.

Resume token: in plain mode WELCOME carries a token; HELLO with it takes
the id over at once. :func:`load_token` / :func:`store_token` keep it in a
file the user names, written whole to a temporary file (mode 0600) and
renamed over the old one, so a crash never leaves half a token.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Dict, Optional

import zmq

from . import errors

#: Z85 text of a 32-byte CURVE key.
_Z85_KEY = re.compile(r"^[0-9A-Za-z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}$")
#: What a broker issues: hex (or a canonical uuid), at most a name's length.
_TOKEN = re.compile(r"^[0-9A-Za-z-]{1,64}$")
_MAX_CERT = 64 * 1024
_MAX_DEPTH = 16


def parse_zpl(text: str, where: str = "") -> Dict[str, str]:
    """ZPL as a flat map of paths (``curve/public-key``) to values.

    Each level is indented by four spaces; ``#`` starts a comment line;
    values may be quoted with ``"`` or ``'``. Anything else is errors.KeyFileError."""
    values: Dict[str, str] = {}
    path: list = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent % 4 or indent // 4 > len(path) or indent // 4 >= _MAX_DEPTH:
            raise errors.KeyFileError(f"{where}:{number}: bad indentation in ZPL")
        del path[indent // 4:]
        body = line.strip()
        name, eq, value = body.partition("=")
        name = name.strip()
        if not name or not re.match(r"^[A-Za-z0-9$\-_@.&+/]+$", name):
            raise errors.KeyFileError(f"{where}:{number}: bad ZPL name {name!r}")
        path.append(name)
        if eq:
            value = value.strip()
            if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
                value = value[1:-1]
            elif value[:1] in ("\"", "'"):
                raise errors.KeyFileError(f"{where}:{number}: unterminated quoted ZPL value")
            else:
                value = value.split("#", 1)[0].strip()
            values["/".join(path)] = value
    return values


@dataclass
class Cert:
    """One CZMQ certificate: Z85 keys (``secret`` empty for a public file)."""
    public: str
    secret: str = ""
    metadata: Dict[str, str] = field(default_factory=dict)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_CERT + 1)
    except OSError as exc:
        raise errors.KeyFileError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > _MAX_CERT:
        raise errors.KeyFileError(f"{path} is over {_MAX_CERT} bytes: not a certificate")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.KeyFileError(f"{path} is not text: not a certificate") from None


def read_cert(path: str, secret: bool = False) -> Cert:
    """The certificate `path`; with `secret`, its pair from ``path_secret``
    (which must not be readable by group or others)."""
    source = path + "_secret" if secret else path
    if secret:
        try:
            mode = os.stat(source).st_mode
        except OSError as exc:
            raise errors.KeyFileError(f"cannot read {source}: {exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise errors.KeyFileError(f"{source} may be read by group or others (mode "
                            f"{stat.S_IMODE(mode):04o}); chmod 600 it")
    values = parse_zpl(_read(source), source)
    public = values.get("curve/public-key", "")
    if not _Z85_KEY.match(public):
        raise errors.KeyFileError(f"{source} has no curve public-key of 40 Z85 characters")
    cert = Cert(public, metadata={k[len("metadata/"):]: v for k, v in values.items()
                                  if k.startswith("metadata/")})
    if secret:
        cert.secret = values.get("curve/secret-key", "")
        if not _Z85_KEY.match(cert.secret):
            raise errors.KeyFileError(f"{source} has no curve secret-key of 40 Z85 characters")
    return cert


class Curve:
    """The client's pair (``key``: FILE and FILE_secret) and the broker's
    public certificate (``server_key``), read once, set on each socket."""

    def __init__(self, key: str, server_key: str) -> None:
        if not zmq.has("curve"):
            raise errors.KeyFileError("this libzmq was built without CURVE")
        self.key_path, self.server_key_path = key, server_key
        self.mine = read_cert(key, secret=True)
        self.server = read_cert(server_key)

    def apply(self, sock: zmq.Socket) -> None:
        sock.setsockopt(zmq.CURVE_SERVERKEY, self.server.public.encode())
        sock.setsockopt(zmq.CURVE_PUBLICKEY, self.mine.public.encode())
        sock.setsockopt(zmq.CURVE_SECRETKEY, self.mine.secret.encode())


def curve_from(key: Optional[str], server_key: Optional[str]) -> Optional[Curve]:
    """Curve for both paths, None for neither; one without the other is a
    mistake, reported before anything connects."""
    if not key and not server_key:
        return None
    if not key or not server_key:
        raise errors.KeyFileError("CURVE needs both curve_key (this client's pair) and "
                        "curve_server_key (the broker's public certificate)")
    return Curve(key, server_key)


def load_token(path: Optional[str]) -> str:
    """The token kept in `path` ("" when there is no such file yet)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise errors.KeyFileError(f"cannot read the token file {path}: {exc.strerror}") from None
    token = data.decode("ascii", "replace").strip()
    if token and not _TOKEN.match(token):
        raise errors.KeyFileError(f"{path} does not hold a resume token (1-64 of [0-9A-Za-z-]); "
                        "remove it to start without one")
    return token


def store_token(path: str, token: str) -> None:
    """Writes `token` to `path` atomically, mode 0600, and syncs it."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".parley-token-", dir=directory)   # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
