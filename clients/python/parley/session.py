# SPDX-License-Identifier: MIT
"""session - the connection's state machine, without any I/O.

Both clients (the blocking one's I/O thread and the asyncio one's task)
drive one Session: they hand it the frames they receive and the time, and
send what it puts in ``outbox``. The Session decides everything else, the
same way for both:

- request ids (one counter; replies are matched by id), the frame of each
  request encoded once, so a resend is the very same frame (PROTOCOL.md
  asks for that for SEND `batch` and ACT `step`);
- HELLO and the WELCOME's limits; HEARTBEAT when nothing was sent for
  ``heartbeat_ms``, so an agent waiting for a model stays live;
- a request unanswered for ``reply_timeout`` after it left (the driver's
  DEALER has ZMQ_IMMEDIATE, so nothing waits in a pipe to a broker that is
  not there, and ``flushed()`` starts the clock) means the connection is dead:
  the driver gets ``need_socket`` and opens a new one after a backoff
  (``reconnect_min`` doubling to ``reconnect_max``), HELLO again, LISTEN
  again on every channel, then the requests that are safe to resend go out
  again in their order; the unsafe ones fail with ConnectionLost;
- ERROR NOT_HELLO (the broker restarted, or expired us) means the request
  did not take effect: HELLO again on the same socket and resend it;
- the resume token of the last WELCOME (plain mode) goes into every later
  HELLO, so a reconnect takes the id over at once; with ``token_file`` it
  is also kept on disk for the next run (parley.security);
- mail handed out before is left out of later FETCH replies (a reconnect or
  a plain FETCH starts again at ``acked``), unless ``dedup`` is off; a new
  WELCOME ``origin`` (the broker restarted) resets that watermark;
- ``observe``: HELLO asks for the endpoints only; nothing is registered,
  so there are no heartbeats and every request but the reads (GET, SNAPSHOT,
  AGENTS, STATS) fails ObserverOnly;
- every call has a deadline: past it the call fails with Timeout;
- pushed mail (CONSUME): MAIL_PUSH frames (id 0, between the replies) go
  through the same duplicate filter and wait in ``pushed`` for the caller;
  after every WELCOME the session sends its highest acknowledgement again
  (one lost with the old connection would hold the window) and CONSUME
  again, so the unacknowledged mail is pushed again;
- pipelined posts are coalesced (``post_pipelined``, as libparley 2.1):
  a post made while earlier pipelined SENDs are unconfirmed is held and
  leaves with the posts after it as ONE multi-item SEND frame, which costs
  the broker and both sockets about what one post does. Held posts go when
  nothing is in flight, when the frame is full (``coalesce_messages``,
  ``coalesce_bytes``, WELCOME's ``max_batch``), at the linger's end
  (``coalesce_linger_us``, 1000; 0 turns coalescing off), before any
  other request (so the broker sees requests in the order they were
  made), and when the caller flushes or waits. Each post keeps its own
  callback: an item error is given to the post that holds the item, at
  its index there; a frame refused whole fails each of its posts;
- when WELCOME lists the feature ``send_ack``, an ``ack_nowait`` is held
  and rides on the next SEND that leaves (its ``ack`` field) instead of
  an ACK frame and its OK; it goes as an ACK frame at the linger's end,
  before any other request, or when the caller waits. A SEND refused whole
  may not have applied its ``ack``: it is held again;
- WORKFLOW_EVENTs, once asked for (``set_workflow_events``), are kept in
  their own queue of at most ``WF_EVENT_QUEUE`` (the oldest is dropped and
  counted beyond that, as in the C client), apart from ``events``, so a
  role agent's wake-ups are never crowded out by other traffic.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Set

from . import codec, errors, requests as rq, security
from .types import (Confirmed, ItemError, Mail, MailReady, ModelReport, StateUpdate, Stepped,
                    Welcome,
                    WorkflowEvent, event_from_wire, Event, _records, _uint, _want)

log = logging.getLogger("parley")

Done = Callable[[Any, Optional[BaseException]], None]

DISCONNECTED, CONNECTING, READY, CLOSED = "disconnected", "connecting", "ready", "closed"

#: WORKFLOW_EVENTs kept at most (PARLEY_WF_EVENT_QUEUE in the C client)
WF_EVENT_QUEUE = 64
WF_TOPIC = "workflow."


# The reads a broker answers without HELLO, so an observer may make them.
OBSERVER_READS = frozenset(("GET", "SNAPSHOT", "AGENTS", "STATS"))

#: coalescing's defaults, as libparley's parley_client_set_coalesce
COALESCE_MESSAGES = 1024
COALESCE_BYTES = 256 * 1024
COALESCE_LINGER_US = 1000


def settler(future: Any) -> Done:
    """The callback a request is submitted with: settles ``future`` (a
    concurrent.futures or an asyncio one) with the reply or the error,
    once; a later call (a reply after a timeout) changes nothing."""
    def done(result: Any, exc: Optional[BaseException]) -> None:
        if future.done():
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    return done


class Pending:
    __slots__ = ("request", "id", "frame", "call_deadline", "reply_deadline", "done",
                 "internal", "posts")

    def __init__(self, request: rq.Request[Any], rid: int, frame: bytes,
                 call_deadline: float, done: Done, internal: bool) -> None:
        self.request = request
        self.id = rid
        self.frame = frame
        self.call_deadline = call_deadline
        self.reply_deadline = 0.0
        self.done = done
        self.internal = internal
        self.posts = 1                  # pipelined posts this frame carries


class _Post:
    """One held pipelined post: its checked items and its callback."""
    __slots__ = ("items", "done", "deadline")

    def __init__(self, items: List[Dict[str, Any]], done: Done, deadline: float) -> None:
        self.items = items
        self.done = done
        self.deadline = deadline


def _item_bytes(item: Dict[str, Any]) -> int:
    """About what an item weighs in the frame (a str body counted at its
    UTF-8 worst, so the frame limit is never passed by a guess)."""
    body = item["body"]
    size = len(body) if isinstance(body, bytes) or body.isascii() else 4 * len(body)
    return size + len(item.get("to") or item.get("channel") or "") + 16


def _split(posts: List[_Post]) -> Done:
    """The callback of a coalesced frame: hands each post its own share of
    the frame's outcome (item indexes made relative to the post)."""
    def done(result: Any, exc: Optional[BaseException]) -> None:
        if exc is not None:
            for post in posts:
                post.done(None, exc)
            return
        first = 0
        for post in posts:
            count = len(post.items)
            mine = [ItemError(e.index - first, e.code, e.message, e.agent)
                    for e in result.errors if first <= e.index < first + count]
            post.done(Confirmed(result.id, count, mine, result.complete), None)
            first += count
    return done


class Session:
    """One agent's session with the broker. Not thread-safe: the blocking
    client guards it with a lock, the asyncio one uses it from its loop."""

    def __init__(self, agent: str, caps: Any = (), *, call_timeout: float = 10.0,
                 reply_timeout: float = 5.0, reconnect_min: float = 0.05,
                 reconnect_max: float = 2.0, retry_id_in_use: bool = False,
                 token_file: Optional[str] = None, observe: bool = False,
                 dedup: bool = True) -> None:
        rq.hello(agent, caps)           # checks the id before any connection
        self.token_file = token_file
        #: the resume token: from token_file, then from each WELCOME
        self.token = security.load_token(token_file)
        self.observe = observe
        self.dedup = dedup
        self.agent = agent
        self.caps = list(caps)
        self.call_timeout = call_timeout
        self.reply_timeout = reply_timeout
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.retry_id_in_use = retry_id_in_use
        self.phase = DISCONNECTED
        self.welcome: Optional[Welcome] = None
        self.fatal: Optional[BaseException] = None
        self.outbox: List[bytes] = []
        self._outbox_pending: Deque[Pending] = deque()     # one per outbox frame
        self.need_socket = True
        self.reconnect_at = 0.0
        self.channels: Set[str] = set()
        self.subscriptions: Set[str] = set() if observe else {f"mail.{agent}"}
        self.event_prefixes: Set[str] = set()
        self.events: Deque[Event] = deque()
        self.max_events = 10000
        self.events_dropped = 0
        self.listeners: List[Callable[[StateUpdate], None]] = []
        #: WORKFLOW_EVENTs not yet taken; None until set_workflow_events(True)
        self.workflow_queue: Optional[Deque[WorkflowEvent]] = None
        self.workflow_events = 0        # WORKFLOW_EVENTs queued
        self.workflow_dropped = 0       # dropped from a full queue
        self.mail_ready_seq = 0
        self.mail_signal = False
        # Pushed mail: the window asked for (0: pulling), the MAIL_PUSH
        # batches not yet taken, and the highest ack sent (with the broker
        # lifetime it belongs to).
        self.credit = 0
        self.credit_bytes: Optional[int] = None
        self.pushed: Deque[Mail] = deque()
        self.pushes = 0                 # MAIL_PUSH frames received
        self.ack_sent = 0
        self._ack_origin: Optional[int] = None
        # Counters a user (and the tests) can read.
        self.hellos = 0
        self.reconnects = 0
        self.heartbeats = 0
        self.resends = 0
        self.bad_frames = 0
        self.duplicates = 0             # mail items left out by the filter
        self._handed_seq = 0            # the highest mail seq handed to the caller
        self._handed_origin: Optional[int] = None
        # Batch ids and steps start at the clock in microseconds, so a
        # restarted client never reuses its previous run's last id.
        self._batch = int(time.time() * 1e6)
        self._step = self._batch
        self._next_id = 1
        self._backoff = reconnect_min
        self._pending: Dict[int, Pending] = {}
        self._waiting: List[Pending] = []
        self._last_send = 0.0
        self._heartbeat_out = False
        # Coalescing of pipelined posts: the bounds, the posts held now
        # (with their item and byte totals, when the oldest came and the
        # wait_ms they share) and counters named as libparley's.
        self.coalesce_messages = COALESCE_MESSAGES
        self.coalesce_bytes = COALESCE_BYTES
        self.coalesce_linger_us = COALESCE_LINGER_US
        self._held: List[_Post] = []
        self._held_items = 0
        self._held_bytes = 0
        self._held_since = 0.0
        self._held_wait: Optional[int] = None
        self.posted = 0                 # pipelined posts made
        self.send_frames = 0            # pipelined SEND frames made of them
        self.flush_full = 0             # frames that went full
        self.flush_timer = 0            # frames that went at the linger's end
        self.flush_wait = 0             # frames a wait sent before they were due
        self.flush_idle = 0             # frames that went because nothing was in flight
        self.flush_call = 0             # frames a flush, another request or close sent
        # An ack_nowait waiting for a SEND to ride on (0: none), since when.
        self.send_ack = False           # this session's WELCOME lists "send_ack"
        self._ack_held = 0
        self._ack_since = 0.0
        self.acks_ridden = 0            # acknowledgements carried by a SEND
        self.acks_sent = 0              # ACK frames ack_nowait sent
        #: the model report every HEARTBEAT carries (the keepalive ones too,
        #: so a restarted broker learns it again); None: none
        self.report: Optional[ModelReport] = None

    # ------------------------------------------------------------------
    #  Ids

    def next_batch(self) -> int:
        self._batch += 1
        return self._batch

    def next_step(self) -> int:
        self._step += 1
        return self._step

    # ------------------------------------------------------------------
    #  Workflow events

    def set_workflow_events(self, on: bool) -> None:
        """Subscribes to ``workflow.`` and queues its events (kept over
        reconnects), or stops and forgets the queue."""
        if on:
            if self.workflow_queue is None:
                self.workflow_queue = deque()
            self.subscriptions.add(WF_TOPIC)
        else:
            self.workflow_queue = None
            if WF_TOPIC not in self.event_prefixes:
                self.subscriptions.discard(WF_TOPIC)

    def take_workflow_event(self) -> Optional[WorkflowEvent]:
        if not self.workflow_queue:
            return None
        return self.workflow_queue.popleft()

    # ------------------------------------------------------------------
    #  Calls

    def submit(self, request: rq.Request[Any], done: Done, timeout: Optional[float] = None,
               now: Optional[float] = None, internal: bool = False) -> Pending:
        """Queues a request; `done(result, error)` is called exactly once.
        Raises TooLarge at once for a frame over the limit."""
        now = time.monotonic() if now is None else now
        if self._held:
            self.flush_held(now)        # held posts go first: order holds
        if self._ack_held and request.type != "SEND":
            self._send_ack_frame(now)   # the acknowledgement first, as it was made
        return self._submit(request, done, timeout, now, internal)

    def _submit(self, request: rq.Request[Any], done: Done, timeout: Optional[float],
                now: float, internal: bool) -> Pending:
        if self._ack_held and request.type == "SEND" and self.phase == READY:
            # It rides: the same frame carries it on a resend.
            request = rq.Request(request.type, dict(request.fields, ack=self._ack_held),
                                 request.reply, request.parse, request.resend_safe)
            self._ack_held = 0
            self.acks_ridden += 1
        rid = self._next_id
        self._next_id += 1
        frame = codec.encode(request.type, rid, request.fields)
        deadline = now + (self.call_timeout if timeout is None else timeout)
        p = Pending(request, rid, frame, deadline, done, internal)
        if self.observe and self.phase != CLOSED and request.type not in OBSERVER_READS:
            done(None, errors.ObserverOnly("an observer registered nothing; the broker "
                                           "would answer NOT_HELLO", request=request.type))
        elif self.phase == CLOSED:
            done(None, self.fatal or errors.Closed("the client is closed", request=request.type))
        elif self.phase == READY:
            self._send(p, now)
        else:
            self._waiting.append(p)
        return p

    # ------------------------------------------------------------------
    #  Pipelined posts, coalesced

    @property
    def held(self) -> int:
        """Pipelined posts held now (a level, not a count)."""
        return len(self._held)

    def post_pipelined(self, messages: Any, max_batch: int, wait_ms: Optional[int],
                       done: Done, timeout: Optional[float] = None,
                       now: Optional[float] = None, window: int = 0) -> bool:
        """One pipelined SEND of `messages`: sent now or held to go with
        the next posts (see the module's comment); `done` is called once
        with its Confirmed or its exception. Checks the messages at once
        (BadName, TooLarge, ...). True when the driver has to wake: a
        frame is waiting in ``outbox`` or the linger's clock started.
        `window`: the caller's window of unsettled posts (0: none); a frame
        takes at most half of it, so one frame fills while one is in
        flight (and a small window keeps frames small, for a small inbox
        that a big frame would wait for, then fail in part)."""
        now = time.monotonic() if now is None else now
        request = rq.send_pipelined(messages, max_batch, wait_ms)
        self.posted += 1
        items = request.fields["messages"]
        if self.coalesce_linger_us <= 0 or self.phase != READY or self.observe:
            self.send_frames += 1
            self.submit(request, done, timeout, now)
            return True
        size = sum(_item_bytes(item) for item in items)
        most_items = max(1, min(self.coalesce_messages, max_batch,
                                window // 2 if window else max_batch))
        most_bytes = max(1, min(self.coalesce_bytes, codec.MAX_FRAME // 2))
        woke = False
        if self._held and (wait_ms != self._held_wait
                           or self._held_items + len(items) > most_items
                           or self._held_bytes + size > most_bytes):
            self.flush_full += 1
            self._flush(now)
            woke = True
        elif self._held and now >= self._held_since + self.coalesce_linger_us / 1e6:
            self.flush_timer += 1       # the driver's timer was late: due anyway
            self._flush(now)
            woke = True
        if not self._held and (len(items) >= most_items or size >= most_bytes
                               or not self._confirms_out()):
            if self._confirms_out():
                self.flush_full += 1
            else:
                self.flush_idle += 1
            self.send_frames += 1
            self.submit(request, done, timeout, now)
            return True
        deadline = now + (self.call_timeout if timeout is None else timeout)
        if not self._held:
            self._held_since, self._held_wait = now, wait_ms
            woke = True                 # the linger's clock starts
        self._held.append(_Post(items, done, deadline))
        self._held_items += len(items)
        self._held_bytes += size
        if self._held_items >= most_items or self._held_bytes >= most_bytes:
            self.flush_full += 1
            self._flush(now)
            woke = True
        return woke

    def flush_held(self, now: Optional[float] = None, waiting: bool = False) -> bool:
        """Sends the held posts now (a flush, another request, a wait when
        ``waiting``); True if there were any."""
        if not self._held:
            return False
        if waiting:
            self.flush_wait += 1
        else:
            self.flush_call += 1
        self._flush(time.monotonic() if now is None else now)
        return True

    @property
    def ack_held(self) -> int:
        """The acknowledgement waiting for a SEND to ride on (0: none)."""
        return self._ack_held

    def flush_ack(self, now: Optional[float] = None) -> bool:
        """Sends a held acknowledgement as an ACK frame now (the caller
        waits, or closes); True if there was one."""
        if not self._ack_held:
            return False
        self._send_ack_frame(time.monotonic() if now is None else now)
        return True

    def _send_ack_frame(self, now: float) -> None:
        seq, self._ack_held = self._ack_held, 0
        self.acks_sent += 1
        self._submit(rq.ack(seq), _ignore, None, now, True)

    def _ack_not_applied(self, p: Pending, now: float) -> None:
        """A SEND refused whole may not have applied the ``ack`` it carried:
        held again, for the next request (a repeat changes nothing)."""
        seq = p.request.fields.get("ack") if p.request.type == "SEND" else None
        if seq and self.phase == READY and seq > self._ack_held:
            if not self._ack_held:
                self._ack_since = now
            self._ack_held = seq

    def _flush(self, now: float) -> None:
        posts, self._held = self._held, []
        self._held_items = self._held_bytes = 0
        if len(posts) == 1:
            items, done = posts[0].items, posts[0].done
        else:
            items, done = [item for post in posts for item in post.items], _split(posts)
        request: rq.Request[Any] = rq.Request(
            "SEND", {"messages": items, "pipelined": True, "wait_ms": self._held_wait},
            "CONFIRM", rq._no_parse)
        self.send_frames += 1
        try:
            p = self._submit(request, done, min(post.deadline for post in posts) - now, now,
                             False)
        except errors.ParleyError as exc:   # TooLarge: the bounds keep it from coming
            done(None, exc)
            return
        p.posts = len(posts)

    def _confirms_out(self) -> bool:
        """Whether a pipelined SEND is unconfirmed (the oldest requests
        come first in the dict, so this stops early while any is)."""
        return any(p.request.reply == "CONFIRM" for p in self._pending.values()) \
            or any(p.request.reply == "CONFIRM" for p in self._waiting)

    def _send(self, p: Pending, now: float) -> None:
        # The reply clock starts when the frame leaves (flushed()): a HELLO
        # held back while the broker is down must not be given up the
        # moment it goes out. Given up too early, a HELLO the broker still
        # answers registers the id with a token this client never sees.
        p.reply_deadline = float("inf")
        self._pending[p.id] = p
        self.outbox.append(p.frame)
        self._outbox_pending.append(p)
        self._last_send = now

    def flushed(self, now: float) -> None:
        """The driver handed the first frame of ``outbox`` to its socket."""
        self.outbox.pop(0)
        p = self._outbox_pending.popleft()
        p.reply_deadline = now + self.reply_timeout

    def has_work(self) -> bool:
        return bool(self._pending or self._waiting)

    # ------------------------------------------------------------------
    #  Connection

    def on_connected(self, now: float) -> None:
        """The driver opened a new socket: say HELLO on it."""
        self.need_socket = False
        self._hello(now)

    def _hello(self, now: float) -> None:
        self.phase = CONNECTING
        p = Pending(rq.hello(self.agent, self.caps, self.token, self.observe),
                    self._next_id, b"", now + 3600.0,
                    self._on_welcome, True)
        self._next_id += 1
        p.frame = codec.encode(p.request.type, p.id, p.request.fields)
        self._send(p, now)

    def _on_welcome(self, welcome: Optional[Welcome], exc: Optional[BaseException]) -> None:
        now = time.monotonic()
        if exc is not None:
            if isinstance(exc, errors.IdInUse) and (self.hellos > 0 or self.retry_id_in_use):
                # The id is held for an agent with its resume token (until
                # it says BYE or is forgotten) or, without tokens, by a live
                # connection: keep asking, with the reconnect backoff.
                self._broken(now, reconnect=True)
                return
            self.close(exc)
            return
        assert welcome is not None
        self._new_origin(welcome)
        self.welcome = welcome
        self.send_ack = "send_ack" in welcome.features     # for this session only
        held_ack, self._ack_held = self._ack_held, 0
        if welcome.token and welcome.token != self.token:
            self.token = welcome.token
            if self.token_file:
                try:
                    security.store_token(self.token_file, self.token)
                except OSError as why:
                    # The session goes on; only the next run loses its way in.
                    log.warning("cannot keep the resume token in %s: %s", self.token_file, why)
        self.phase = READY
        self._backoff = self.reconnect_min
        if self.hellos:
            self.reconnects += 1
        self.hellos += 1
        self._heartbeat_out = False
        for channel in sorted(self.channels):
            self.submit(rq.listen(channel), _ignore, now=now, internal=True)
        if self._ack_origin != welcome.origin:
            self.ack_sent = 0           # a restarted broker: old seqs mean nothing
        if self.credit:
            if self.ack_sent > welcome.acked:
                self.submit(rq.ack(self.ack_sent), _ignore, now=now, internal=True)
            self.submit(rq.consume(self.credit, self.credit_bytes), _ignore, now=now,
                        internal=True)
        elif held_ack > welcome.acked and self._ack_origin == welcome.origin:
            # A consumer's ACK above covers it; anyone else's goes now.
            self.acks_sent += 1
            self.submit(rq.ack(held_ack), _ignore, now=now, internal=True)
        waiting, self._waiting = sorted(self._waiting, key=lambda p: p.id), []
        for p in waiting:
            if p.call_deadline > now:
                self._send(p, now)
            else:
                self._fail(p, errors.Timeout("no answer within the call's timeout",
                                             request=p.request.type))

    def _new_origin(self, welcome: Welcome) -> None:
        """A restarted broker counts mail from 1 again (WELCOME ``origin``
        changed, or an older broker's ``mail_seq`` below what we handed
        out): the duplicate filter starts again from ``acked``, or the
        new broker's first messages would be taken for duplicates."""
        if self.hellos and (welcome.origin != self._handed_origin
                            or welcome.mail_seq < self._handed_seq):
            if self._handed_seq > welcome.acked:
                log.info("the broker's mail counter restarted; resuming at %d", welcome.acked)
            self._handed_seq = welcome.acked
        self._handed_origin = welcome.origin

    def _filter_mail(self, mail: Mail) -> Mail:
        kept = []
        for item in mail.messages:
            if self.dedup and item.seq <= self._handed_seq:
                self.duplicates += 1
                mail.duplicates += 1
                continue
            self._handed_seq = max(self._handed_seq, item.seq)
            kept.append(item)
        mail.messages = kept
        return mail

    # ------------------------------------------------------------------
    #  Pushed mail

    def ack_nowait(self, seq: int, now: Optional[float] = None) -> None:
        """ACK without waiting for the OK (cumulative). Sent again with
        the next HELLO, so a connection that breaks cannot lose it."""
        if seq <= self.ack_sent:
            return
        self.ack_sent = seq
        self._ack_origin = self.welcome.origin if self.welcome else None
        if self.phase != READY:
            return                      # the next WELCOME's ACK carries it
        now = time.monotonic() if now is None else now
        if self.send_ack and self.coalesce_linger_us > 0:
            if not self._ack_held:
                self._ack_since = now
            self._ack_held = seq        # rides on the next SEND, or goes at the linger
            return
        self.acks_sent += 1
        self.submit(rq.ack(seq), _ignore, now=now, internal=True)

    def noted_ack(self, seq: int) -> None:
        """An ACK (or FETCH ack) the caller made itself: remembered for
        the next session like ack_nowait's."""
        if seq > self.ack_sent:
            self.ack_sent = seq
            self._ack_origin = self.welcome.origin if self.welcome else None

    def take_pushed(self) -> Optional[Mail]:
        """The oldest pushed batch not yet taken; None when none."""
        if not self.pushed:
            return None
        mail = self.pushed.popleft()
        if not self.pushed:
            self.mail_signal = False
        return mail

    def _on_push(self, msg: Dict[str, Any]) -> None:
        try:
            mail = Mail.from_wire(msg)
        except errors.ProtocolError:
            self.bad_frames += 1
            return
        self.pushes += 1
        mail = self._filter_mail(mail)
        if mail.messages:
            self.pushed.append(mail)
            self.mail_signal = True

    def _broken(self, now: float, reconnect: bool = True) -> None:
        """The connection cannot be trusted: requeue what is safe, fail the rest."""
        self.phase = DISCONNECTED
        self.need_socket = True
        self.reconnect_at = now + self._backoff
        self._backoff = min(self._backoff * 2, self.reconnect_max)
        self.outbox.clear()
        self._outbox_pending.clear()
        self._heartbeat_out = False
        for p in sorted(self._pending.values(), key=lambda p: p.id):
            if p.internal:
                continue
            if p.request.resend_safe:
                self.resends += 1
                self._waiting.append(p)
            else:
                self._fail(p, errors.ConnectionLost(
                    "the connection broke before the reply; the request may or may not "
                    "have taken effect", request=p.request.type))
        self._pending.clear()

    def close(self, exc: Optional[BaseException] = None) -> None:
        """Fails everything still waiting; later calls fail with Closed (or `exc`)."""
        self.phase = CLOSED
        self.fatal = exc
        self.need_socket = False
        self.outbox.clear()
        self._outbox_pending.clear()
        pending = list(self._pending.values()) + self._waiting
        self._pending.clear()
        self._waiting = []
        held, self._held = self._held, []
        self._held_items = self._held_bytes = 0
        for p in pending:
            self._fail(p, exc or errors.Closed("the client was closed", request=p.request.type))
        for post in held:
            post.done(None, exc or errors.Closed("the client was closed", request="SEND"))

    @staticmethod
    def _fail(p: Pending, exc: BaseException) -> None:
        p.done(None, exc)

    # ------------------------------------------------------------------
    #  Input

    def on_reply(self, frame: bytes, now: float) -> None:
        try:
            msg = codec.decode(frame)
        except errors.ProtocolError:
            # Nobody to give it to: the request it answered times out and
            # the connection is replaced.
            self.bad_frames += 1
            return
        if msg["t"] == "CONFIRM":
            self._on_confirm(msg, now)
            return
        if msg["t"] == "MAIL_PUSH":
            self._on_push(msg)          # pushed mail comes between the replies
            return
        p = self._pending.pop(msg.get("id", 0), None)
        if p is None:
            return                      # a late reply to a request already settled
        if p.request.type == "HEARTBEAT":
            self._heartbeat_out = False
        t = msg["t"]
        if t == "ERROR":
            code = msg.get("code")
            if code == errors.NotHello.code and p.request.type != "HELLO":
                # Nothing took effect: say HELLO again and resend it.
                if not p.internal:
                    self._waiting.append(p)
                if self.phase == READY:
                    self._hello(now)
                return
            exc: BaseException = errors.from_code(
                code if isinstance(code, int) else 0, str(msg.get("error", "")),
                str(msg.get("message", "")), p.request.type)
            self._ack_not_applied(p, now)
            p.done(None, exc)
            return
        if t != p.request.reply:
            p.done(None, errors.ProtocolError(f"{p.request.type} was answered by {t}, "
                                              f"not {p.request.reply}"))
            return
        try:
            result = p.request.parse(msg)
        except errors.ProtocolError as exc2:
            p.done(None, exc2)
            return
        if isinstance(result, Mail):
            result = self._filter_mail(result)
        elif isinstance(result, Stepped) and result.mail is not None:
            result.mail = self._filter_mail(result.mail)
        p.done(result, None)

    def clamp_wait(self, wait_ms: Optional[int]) -> int:
        """A SEND's wait_ms, at most three quarters of the reply timeout, so
        the broker answers before this client gives the connection up."""
        most = int(self.reply_timeout * 750)
        return most if wait_ms is None else max(0, min(int(wait_ms), most))

    def pipelined_in_flight(self) -> int:
        """Pipelined posts not yet settled: held, or in SENDs unconfirmed."""
        return len(self._held) + sum(p.posts for p in list(self._pending.values()) + self._waiting
                                     if p.request.reply == "CONFIRM")

    def _on_confirm(self, msg: Dict[str, Any], now: float) -> None:
        """Settles every pipelined SEND the CONFIRM covers (ids up to
        ``through``): its item errors, or its whole refusal as the typed
        exception. One refused NOT_HELLO did not take effect: it and the
        later ones go again after HELLO (at-least-once)."""
        try:
            through = _uint(msg, "through", True, "CONFIRM")
            omitted = _uint(msg, "errors_omitted")
            items: Dict[int, List[ItemError]] = {}
            whole: Dict[int, BaseException] = {}
            for e in _records(msg, "errors", False, "CONFIRM"):
                rid = _uint(e, "id", True, "confirm_error")
                code = _uint(e, "code", True, "confirm_error")
                text = _want(e, "message", str, True, where="confirm_error")
                if "index" in e:
                    items.setdefault(rid, []).append(ItemError(
                        _uint(e, "index", True, "confirm_error"), code, text,
                        _want(e, "agent", str, False, where="confirm_error")))
                else:
                    whole[rid] = errors.from_code(code, "", text, "SEND")
        except errors.ProtocolError:
            self.bad_frames += 1
            return
        covered = sorted((p for p in self._pending.values()
                          if p.request.reply == "CONFIRM" and p.id <= through),
                         key=lambda p: p.id)
        lost = False
        for p in covered:
            del self._pending[p.id]
            exc = whole.get(p.id)
            if lost or isinstance(exc, errors.NotHello):
                lost = True
                self._waiting.append(p)
                continue
            if exc is not None:
                self._ack_not_applied(p, now)
                p.done(None, exc)
            else:
                p.done(Confirmed(p.id, len(p.request.fields["messages"]), items.get(p.id, []),
                                 omitted == 0), None)
        if lost and self.phase == READY:
            # The broker forgot us: the later ones are lost with the session.
            for p in sorted((p for p in self._pending.values()
                             if p.request.reply == "CONFIRM"), key=lambda p: p.id):
                del self._pending[p.id]
                self._waiting.append(p)
            self.resends += len(self._waiting)
            self._hello(now)
        if self._held and self.phase == READY and not self._confirms_out():
            self.flush_idle += 1        # nothing in flight: what is held goes
            self._flush(now)

    def on_event(self, topic: bytes, body: bytes) -> Optional[Event]:
        try:
            event = event_from_wire(codec.decode(body))
        except errors.ProtocolError:
            self.bad_frames += 1
            return None
        if isinstance(event, MailReady) and event.agent == self.agent:
            self.mail_ready_seq = max(self.mail_ready_seq, event.seq)
            self.mail_signal = True
        if isinstance(event, StateUpdate):
            for listener in self.listeners:
                listener(event)
        if isinstance(event, WorkflowEvent) and self.workflow_queue is not None:
            if len(self.workflow_queue) >= WF_EVENT_QUEUE:
                self.workflow_queue.popleft()   # the oldest goes, counted
                self.workflow_dropped += 1
            self.workflow_queue.append(event)
            self.workflow_events += 1
        name = topic.decode("utf-8", "replace")
        if event is not None and any(name.startswith(p) for p in self.event_prefixes):
            if len(self.events) >= self.max_events:
                self.events.popleft()           # the oldest goes, counted
                self.events_dropped += 1
            self.events.append(event)
        return event

    # ------------------------------------------------------------------
    #  Time

    def tick(self, now: float) -> None:
        """Deadlines and heartbeats; call it after every wake-up."""
        if self.phase == CLOSED:
            return
        if self._held and now >= self._held_since + self.coalesce_linger_us / 1e6:
            self.flush_timer += 1
            self._flush(now)
        if self._ack_held and self.phase == READY \
                and now >= self._ack_since + self.coalesce_linger_us / 1e6:
            self._send_ack_frame(now)   # no SEND came to carry it
        for p in [p for p in list(self._pending.values()) + self._waiting
                  if p.call_deadline <= now and not p.internal]:
            self._pending.pop(p.id, None)
            if p in self._waiting:
                self._waiting.remove(p)
            self._fail(p, errors.Timeout("no answer within the call's timeout",
                                         request=p.request.type))
        if any(p.reply_deadline <= now for p in self._pending.values()):
            self._broken(now)
            return
        if self.phase == READY and self.welcome and not self._heartbeat_out and not self.observe \
                and now - self._last_send >= self.welcome.heartbeat_ms / 1000.0:
            self._heartbeat_out = True
            self.heartbeats += 1
            self.submit(rq.heartbeat(self.report), _ignore, now=now, internal=True)

    def next_wakeup(self, now: float) -> float:
        """Seconds until tick() has something to do (at most one second)."""
        times = [now + 1.0]
        if self.phase == READY and self.welcome and not self.observe:
            times.append(self._last_send + self.welcome.heartbeat_ms / 1000.0)
        if self.need_socket:
            times.append(self.reconnect_at)
        if self.outbox:
            times.append(now + 0.05)    # held back until the connection is up
        if self._held:
            times.append(self._held_since + self.coalesce_linger_us / 1e6)
        if self._ack_held:
            times.append(self._ack_since + self.coalesce_linger_us / 1e6)
        for p in self._pending.values():
            times.append(min(p.reply_deadline, p.call_deadline))
        for p in self._waiting:
            times.append(p.call_deadline)
        return max(0.0, min(times) - now)


def _ignore(_result: Any, _exc: Optional[BaseException]) -> None:
    return None
