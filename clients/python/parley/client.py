# SPDX-License-Identifier: MIT
"""client - the blocking API: ``parley.Client``.

One background thread owns the sockets (a DEALER for requests, a SUB for
events) and runs the Session: it sends HEARTBEATs while the caller's thread
is busy elsewhere (waiting for a model, say), reconnects and says HELLO
again when the broker goes away, and matches replies to calls. A call
builds its request (parley.requests), hands it to the session under a lock,
wakes the thread through a pipe, and waits for its future with the call's
timeout. Any number of threads may call at once.
"""
from __future__ import annotations

import collections
import concurrent.futures
import os
import threading
import time
from typing import Any, Deque, Iterable, List, Mapping, Optional, Sequence, TypeVar, Union

import zmq

from . import codec, errors, requests as rq, security
from .replica import ReplicaCore
from .session import CLOSED, READY, Session, settler
from .types import (AgentInfo, CheckpointList, CheckpointState, Confirmed, Event, Mail, Message,
                    ModelReport, Observation, Sent, State, Stats, Stepped, Welcome, WorkflowEvent,
                    WorkflowInfo,
                    WorkflowStatus, WriteOp, Written)

R = TypeVar("R")


class Client:
    """A connection to parley-broker speaking for one agent id.

    ``Client(endpoint, agent)`` connects and says HELLO before it returns
    (raising the broker's error, e.g. ``IdInUse``, or ``Timeout``). Every
    method sends one request and returns its typed reply, or raises the
    ``parley.errors`` class named after the broker's error code.

    Options (README.md has more):

    - ``token_file``: keeps the plain-mode resume token there (mode 0600,
      replaced atomically) and sends it in the next run's HELLO, so a
      restarted agent takes its id over at once. The token of the last
      WELCOME is always kept in memory for reconnects.
    - ``retry_id_in_use=True``: keep saying HELLO while the id is held by
      another agent (until it says BYE or is forgotten) instead of raising
      ``IdInUse``; ``connect_timeout`` still bounds the wait.
    - ``observe=True``: the endpoints only, nothing registered (taps and
      tools): not in AGENTS, no mail, no heartbeats; subscribe() and the
      reads (get, snapshot, agents, stats) work, other requests raise
      ``ObserverOnly``.
    - ``dedup`` (default on): FETCH leaves out mail handed out before.
    - ``curve_key`` (this client's pair: FILE and FILE_secret) and
      ``curve_server_key`` (the broker's public certificate), as written
      by parley-keygen: CURVE on every socket. A broker that refuses the
      key never answers: ``Timeout``.
    """

    def __init__(self, endpoint: str, agent: str, caps: Sequence[str] = (), *,
                 timeout: float = 10.0, reply_timeout: float = 5.0,
                 connect_timeout: float = 10.0, retry_id_in_use: bool = False,
                 token_file: Optional[str] = None, observe: bool = False,
                 dedup: bool = True, curve_key: Optional[str] = None,
                 curve_server_key: Optional[str] = None,
                 context: Optional[zmq.Context] = None) -> None:
        self.endpoint = endpoint
        self.session = Session(agent, caps, call_timeout=timeout, reply_timeout=reply_timeout,
                               retry_id_in_use=retry_id_in_use, token_file=token_file,
                               observe=observe, dedup=dedup)
        self._curve = security.curve_from(curve_key, curve_server_key)
        self._ctx = context or zmq.Context.instance()
        self._lock = threading.RLock()
        self._mail = threading.Condition(self._lock)
        self._events = threading.Condition(self._lock)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._stop = False
        self._dealer: Optional[zmq.Socket] = None
        self._sub: Optional[zmq.Socket] = None
        self._sub_endpoint = ""
        self._sub_topics: set = set()
        self._welcomed = threading.Event()
        #: pipelined SENDs in flight at most (send_pipelined waits beyond)
        self.pipeline_window = 1024
        self._pipelined: Deque[concurrent.futures.Future] = collections.deque()
        self._drained = threading.Condition(self._lock)     # the outbox went out
        self._close_linger = 0          # ms the DEALER keeps frames close() sent
        self._thread = threading.Thread(target=self._run, name=f"parley-{agent}", daemon=True)
        self._thread.start()
        if not self._welcomed.wait(connect_timeout):
            self._shutdown()
            raise errors.Timeout(f"no WELCOME from {endpoint} within {connect_timeout} s",
                                 request="HELLO")
        if self.session.fatal is not None:
            self._shutdown()
            raise self.session.fatal

    # ------------------------------------------------------------------
    #  The I/O thread

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass                        # already awake, or closing

    def _open_dealer(self) -> None:
        if self._dealer is not None:
            self._dealer.close(linger=0)
        d = self._ctx.socket(zmq.DEALER)
        d.setsockopt(zmq.LINGER, 0)
        if self._curve is not None:
            self._curve.apply(d)
        d.setsockopt(zmq.MAXMSGSIZE, codec.MAX_FRAME)
        d.setsockopt(zmq.RCVHWM, 0)
        d.setsockopt(zmq.SNDHWM, 0)
        d.setsockopt(zmq.IMMEDIATE, 1)  # nothing queued for a broker not there
        d.connect(self.endpoint)
        self._dealer = d

    def _sync_sub(self) -> None:
        welcome = self.session.welcome
        if welcome is None:
            return
        if self._sub is None or self._sub_endpoint != welcome.pub:
            if self._sub is not None:
                self._sub.close(linger=0)
            s = self._ctx.socket(zmq.SUB)
            s.setsockopt(zmq.LINGER, 0)
            if self._curve is not None:
                self._curve.apply(s)
            s.setsockopt(zmq.MAXMSGSIZE, codec.MAX_FRAME)
            s.connect(welcome.pub)
            self._sub, self._sub_endpoint, self._sub_topics = s, welcome.pub, set()
        for topic in self.session.subscriptions - self._sub_topics:
            self._sub.setsockopt(zmq.SUBSCRIBE, topic.encode())
        for topic in self._sub_topics - self.session.subscriptions:
            self._sub.setsockopt(zmq.UNSUBSCRIBE, topic.encode())
        self._sub_topics = set(self.session.subscriptions)

    def _run(self) -> None:
        s = self.session
        try:
            poller, polled = zmq.Poller(), (None, None)
            poller.register(self._wake_r, zmq.POLLIN)
            while not self._stop:
                if polled != (self._dealer, self._sub):
                    # A socket was replaced (reconnect, new PUB endpoint).
                    for sock in polled:
                        if sock is not None:
                            poller.unregister(sock)
                    for sock in (self._dealer, self._sub):
                        if sock is not None:
                            poller.register(sock, zmq.POLLIN)
                    polled = (self._dealer, self._sub)
                with self._lock:
                    wait = s.next_wakeup(time.monotonic())
                ready = dict(poller.poll(max(1, int(wait * 1000) + 1)))
                if self._wake_r in ready:
                    try:
                        while os.read(self._wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                with self._lock:
                    now = time.monotonic()
                    if self._dealer is not None and self._dealer in ready:
                        self._drain_dealer(now)
                    if self._sub is not None and self._sub in ready:
                        self._drain_sub()
                    s.tick(now)
                    if s.need_socket and now >= s.reconnect_at:
                        self._open_dealer()
                        s.on_connected(now)
                    if s.phase == CLOSED:
                        self._welcomed.set()
                    elif s.welcome is not None:
                        self._welcomed.set()
                    self._sync_sub()
                    self._flush()
                    if not s.outbox:
                        self._drained.notify_all()
                    if s.mail_signal:
                        self._mail.notify_all()
        finally:
            if self._dealer is not None:
                self._dealer.close(linger=self._close_linger)
            if self._sub is not None:
                self._sub.close(linger=0)

    def _drain_dealer(self, now: float) -> None:
        assert self._dealer is not None
        while True:
            try:
                frames = self._dealer.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                return
            # A REQ-style empty delimiter never comes to a DEALER; take the last part.
            self.session.on_reply(frames[-1], now)

    def _drain_sub(self) -> None:
        assert self._sub is not None
        for _ in range(10000):
            try:
                frames = self._sub.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                break
            if len(frames) == 2 and self.session.on_event(frames[0], frames[1]) is not None \
                    and (self.session.events or self.session.workflow_queue):
                self._events.notify_all()

    def _flush(self) -> None:
        out = self.session.outbox
        while out and self._dealer is not None:
            try:
                self._dealer.send(out[0], zmq.NOBLOCK)
            except zmq.Again:
                return                  # no connection yet (ZMQ_IMMEDIATE)
            self.session.flushed(time.monotonic())

    # ------------------------------------------------------------------
    #  Calls

    def call(self, request: rq.Request[R], timeout: Optional[float] = None) -> R:
        """Sends any request and returns its parsed reply."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        done = settler(future)

        with self._lock:
            self.session.submit(request, done, timeout)
        self._wake()
        limit = (self.session.call_timeout if timeout is None else timeout) + 5.0
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            raise errors.Timeout("the client's I/O thread did not answer", request=request.type)

    @property
    def welcome(self) -> Welcome:
        assert self.session.welcome is not None
        return self.session.welcome

    @property
    def agent(self) -> str:
        return self.session.agent

    def set_report(self, report: Optional[ModelReport]) -> None:
        """The model report every HEARTBEAT carries from now on (the
        keepalive ones too); None stops sending it (the broker keeps the
        last one). ``heartbeat()`` delivers it at once."""
        if report is not None:
            report.wire()                   # checked here, not in the session thread
        with self._lock:
            self.session.report = report

    def heartbeat(self, timeout: Optional[float] = None) -> None:
        with self._lock:
            report = self.session.report
        self.call(rq.heartbeat(report), timeout)

    def agents(self, timeout: Optional[float] = None) -> List[AgentInfo]:
        return self.call(rq.agents(), timeout)

    def send(self, messages: Iterable[Union[Message, Mapping[str, Any]]],
             timeout: Optional[float] = None, wait_ms: Optional[int] = None) -> Sent:
        """One SEND with a fresh `batch` id: resent safely after a reconnect.
        An online recipient's full inbox is waited for up to `wait_ms`
        (None: three quarters of the reply timeout; 0: INBOX_FULL at once)."""
        with self._lock:
            max_batch = self.welcome.max_batch
            batch = self.session.next_batch()
            wait = self.session.clamp_wait(wait_ms)
        return self.call(rq.send(messages, batch, max_batch, wait), timeout)

    def submit(self, request: rq.Request[R], timeout: Optional[float] = None
               ) -> "concurrent.futures.Future[R]":
        """Sends any request without waiting; its reply comes in the future."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        done = settler(future)

        with self._lock:
            self.session.submit(request, done, timeout)
        self._wake()
        return future

    def send_pipelined(self, messages: Iterable[Union[Message, Mapping[str, Any]]],
                       timeout: Optional[float] = None, wait_ms: Optional[int] = None
                       ) -> "concurrent.futures.Future[Confirmed]":
        """A pipelined SEND (PROTOCOL.md): no SENT, the broker's CONFIRM
        settles the future with the items that failed. At most
        ``pipeline_window`` posts are unsettled: beyond, this waits for the
        oldest (backpressure). At-least-once: resent after a reconnect.

        Made while earlier ones are unconfirmed, a post is held and goes
        with the next ones as one SEND frame (``set_coalesce``); its future
        still tells only its own outcome (item indexes are its own)."""
        while True:
            with self._lock:
                while self._pipelined and self._pipelined[0].done():
                    self._pipelined.popleft()
                in_flight = self.session.pipelined_in_flight()
                oldest = self._pipelined[0] if self._pipelined else None
            if in_flight < self.pipeline_window or oldest is None:
                break
            concurrent.futures.wait([oldest], (self.session.call_timeout
                                               if timeout is None else timeout) + 5.0)
        future: concurrent.futures.Future = concurrent.futures.Future()
        done = settler(future)

        with self._lock:
            wake = self.session.post_pipelined(messages, self.welcome.max_batch,
                                               self.session.clamp_wait(wait_ms), done,
                                               timeout, window=self.pipeline_window)
            self._pipelined.append(future)
        if wake:
            self._wake()
        return future

    def flush_pipelined(self, timeout: Optional[float] = None) -> None:
        """Sends the held posts, then waits until every pipelined SEND is
        settled (their futures say how)."""
        with self._lock:
            self.session.flush_held()
            pending = [f for f in self._pipelined if not f.done()]
        self._wake()
        concurrent.futures.wait(pending, (self.session.call_timeout
                                          if timeout is None else timeout) + 5.0)
        with self._lock:
            while self._pipelined and self._pipelined[0].done():
                self._pipelined.popleft()

    def set_coalesce(self, messages: int = 1024, bytes: int = 256 * 1024,
                     linger_us: int = 1000) -> None:
        """Coalescing of pipelined posts (as libparley's
        parley_client_set_coalesce): held posts go as one SEND frame at
        ``messages`` messages or ``bytes`` bytes of messages (within
        WELCOME's max_batch, half of ``pipeline_window`` and half the
        frame limit), or once the oldest has been held ``linger_us``
        microseconds. 0 turns it off: every post is its own SEND, sent at
        once."""
        with self._lock:
            self.session.coalesce_messages = max(1, int(messages))
            self.session.coalesce_bytes = max(1, int(bytes))
            self.session.coalesce_linger_us = max(0, int(linger_us))
            self.session.flush_held()
        self._wake()

    def send_to(self, to: str, body: Union[str, bytes], timeout: Optional[float] = None) -> Sent:
        return self.send([Message(body, to=to)], timeout)

    def post(self, channel: str, body: Union[str, bytes], timeout: Optional[float] = None) -> Sent:
        return self.send([Message(body, channel=channel)], timeout)

    def fetch(self, ack: Optional[int] = None, max: Optional[int] = None,
              timeout: Optional[float] = None) -> Mail:
        with self._lock:
            self.session.mail_signal = bool(self.session.pushed)
        return self.call(rq.fetch(ack, max), timeout)

    def ack(self, seq: int, timeout: Optional[float] = None) -> None:
        self.call(rq.ack(seq), timeout)
        with self._lock:
            self.session.noted_ack(seq)

    # ------------------------------------------------------------------
    #  Pushed mail (PROTOCOL.md, CONSUME)

    def consume(self, credit: int, credit_bytes: Optional[int] = None,
                timeout: Optional[float] = None) -> None:
        """Has the broker push this agent's mail as it arrives, while at
        most ``credit`` messages (and ``credit_bytes`` body bytes; None: the
        broker's default, 8 MiB) it pushed are not acknowledged; 0 stops.
        Kept over reconnects: the unacknowledged mail is pushed again (what
        was handed out before is filtered as a duplicate)."""
        self.call(rq.consume(credit, credit_bytes), timeout)
        with self._lock:
            self.session.credit, self.session.credit_bytes = credit, credit_bytes

    def take_pushed(self) -> Optional[Mail]:
        """The oldest pushed batch not yet taken, without waiting; None
        when none. Acknowledge what you handled (ack, ack_nowait): the
        window stays used until then."""
        with self._lock:
            return self.session.take_pushed()

    def next_pushed(self, timeout: float) -> Optional[Mail]:
        """The oldest pushed batch, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        if not self.session.pushed:
            self._flush_before_wait()
        with self._mail:
            while not self.session.pushed:
                left = deadline - time.monotonic()
                if left <= 0 or self.session.phase == CLOSED:
                    return None
                self._mail.wait(left)
            return self.session.take_pushed()

    def ack_nowait(self, seq: int) -> None:
        """ACK without waiting for the reply (everything up to ``seq``);
        sent again with the next HELLO if the connection breaks."""
        with self._lock:
            self.session.ack_nowait(seq, time.monotonic())
        self._wake()

    def listen(self, channel: str, timeout: Optional[float] = None) -> None:
        request = rq.listen(channel)
        self.call(request, timeout)
        with self._lock:
            self.session.channels.add(channel)

    def unlisten(self, channel: str, timeout: Optional[float] = None) -> None:
        request = rq.unlisten(channel)
        with self._lock:
            self.session.channels.discard(channel)
        self.call(request, timeout)

    def write(self, ops: Iterable[WriteOp], timeout: Optional[float] = None) -> Written:
        return self.call(rq.write(ops), timeout)

    def get(self, keys: Iterable[str], timeout: Optional[float] = None) -> State:
        return self.call(rq.get(keys), timeout)

    def snapshot(self, prefix: Optional[str] = None, after_key: Optional[str] = None,
                 limit: Optional[int] = None, timeout: Optional[float] = None) -> State:
        return self.call(rq.snapshot(prefix, after_key, limit), timeout)

    def snapshot_all(self, prefix: Optional[str] = None, page: int = 1024,
                     timeout: Optional[float] = None) -> List[State]:
        """Every page of a paging SNAPSHOT walk, in key order."""
        pages, after = [], None
        while True:
            state = self.snapshot(prefix, after, page, timeout)
            pages.append(state)
            if not state.more or not state.entries:
                return pages
            after = state.entries[-1].key

    def perceive(self, timeout: Optional[float] = None) -> Observation:
        return self.call(rq.perceive(), timeout)

    def act(self, action: str, step: Optional[int] = None,
            timeout: Optional[float] = None) -> Observation:
        """One move. `step` names it for a safe retry; by default a fresh one."""
        if step is None:
            with self._lock:
                step = self.session.next_step()
        return self.call(rq.act(action, step), timeout)

    def step(self, action: Optional[str] = None,
             messages: Iterable[Union[Message, Mapping[str, Any]]] = (),
             ops: Iterable[WriteOp] = (), ack: Optional[int] = None,
             fetch: Optional[int] = None, stream: bool = False, perceive: bool = False,
             step: Optional[int] = None, timeout: Optional[float] = None) -> Stepped:
        """STEP: the agent's whole step in one request (PROTOCOL.md, STEP).

        The broker applies the `ack`, the `messages` (as SEND), the `ops`
        (as WRITE, all or none), the `action` (as ACT; without one,
        `perceive` asks for the observation), then returns up to `fetch`
        messages of mail (after earlier reads with `stream`). Each part
        reports its own outcome in the result (a refused part is an
        ``ops_error`` / ``action_error``, not an exception). `step` names
        it for a safe resend; by default a fresh number, 0 for none (a
        run's first STEP: always applied)."""
        with self._lock:
            max_batch = self.welcome.max_batch
            if step is None:
                step = self.session.next_step()
        return self.call(rq.step(step or None, ack, messages, ops, action, perceive, fetch,
                                 stream, max_batch), timeout)

    def world_reset(self, seed: Optional[int] = None, timeout: Optional[float] = None) -> None:
        self.call(rq.world_reset(seed), timeout)

    def stats(self, timeout: Optional[float] = None) -> Stats:
        return self.call(rq.stats(), timeout)

    # ------------------------------------------------------------------
    #  Workflow (PROTOCOL.md 4.1): play a role by saying HELLO with the
    #  capability "role:<name>" (caps=["role:critic"]).

    def workflow(self, timeout: Optional[float] = None) -> WorkflowInfo:
        """WORKFLOW: where the workflow stands (NoWorkflow without one)."""
        return self.call(rq.workflow(), timeout)

    def handover(self, ops: Iterable[WriteOp] = (), next: Optional[str] = None,
                 status: Optional[Union[WorkflowStatus, str]] = None,
                 reason: Optional[str] = None,
                 timeout: Optional[float] = None) -> WorkflowInfo:
        """HANDOVER: this turn's writes and the next role, all or nothing.
        Raises NotTurnHolder, WorkflowEnded, NoWorkflow, BadField and every
        WRITE error; ConnectionLost when the connection broke before the
        reply (ask workflow() whether it took place)."""
        return self.call(rq.handover(ops, next, status, reason), timeout)

    def checkpoints(self, timeout: Optional[float] = None) -> CheckpointList:
        return self.call(rq.checkpoints(), timeout)

    def checkpoint(self, number: int, timeout: Optional[float] = None) -> CheckpointState:
        """The whole state at checkpoint `number` (NoSuchCheckpoint if not kept)."""
        return self.call(rq.checkpoint(number), timeout)

    def checkpoint_diff(self, number: int, since: int,
                        timeout: Optional[float] = None) -> CheckpointState:
        """The keys whose value or reducer differ between `since` and `number`."""
        return self.call(rq.checkpoint(number, since), timeout)

    def resume(self, number: int, timeout: Optional[float] = None) -> WorkflowInfo:
        """RESUME: fork the run from checkpoint `number` (CURVE: admin right)."""
        return self.call(rq.resume(number), timeout)

    def workflow_events(self, on: bool = True) -> None:
        """Queue WORKFLOW_EVENTs (at most parley.session.WF_EVENT_QUEUE, the
        oldest dropped and counted in session.workflow_dropped beyond
        that); kept over reconnects. An event published before the
        subscription joined is not queued: ask workflow() once after this."""
        with self._lock:
            self.session.set_workflow_events(on)
        self._wake()

    def workflow_event(self) -> Optional[WorkflowEvent]:
        """The oldest queued WORKFLOW_EVENT, without waiting; None when none."""
        with self._lock:
            return self.session.take_workflow_event()

    def wait_workflow_event(self, timeout: float) -> Optional[WorkflowEvent]:
        """The oldest queued WORKFLOW_EVENT, waiting up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._events:
            while not self.session.workflow_queue:
                left = deadline - time.monotonic()
                if left <= 0 or self.session.phase == CLOSED:
                    return None
                self._events.wait(left)
            return self.session.take_workflow_event()

    # ------------------------------------------------------------------
    #  Events

    def wait_mail(self, timeout: float) -> bool:
        """Waits for MAIL_READY for this agent since the last fetch();
        True if one came. FETCH afterwards (a wake-up carries no mail)."""
        deadline = time.monotonic() + timeout
        if not self.session.mail_signal:
            self._flush_before_wait()
        with self._mail:
            while not self.session.mail_signal:
                left = deadline - time.monotonic()
                if left <= 0 or self.session.phase == CLOSED:
                    return False
                self._mail.wait(left)
            return True

    def _flush_before_wait(self) -> None:
        # A caller about to wait has nothing more to post for now: what is
        # held goes (the answer it waits for may depend on it), and a held
        # acknowledgement as an ACK frame if no SEND carried it.
        with self._lock:
            flushed = self.session.flush_held(waiting=True)
            flushed = self.session.flush_ack() or flushed
        if flushed:
            self._wake()

    def subscribe(self, prefix: str) -> None:
        """Receive events whose topic starts with `prefix` through next_event()."""
        with self._lock:
            self.session.subscriptions.add(prefix)
            self.session.event_prefixes.add(prefix)
        self._wake()

    def next_event(self, timeout: float) -> Optional[Event]:
        deadline = time.monotonic() + timeout
        with self._events:
            while not self.session.events:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._events.wait(left)
            return self.session.events.popleft()

    def replica(self, prefix: str = "", probe: bool = True,
                timeout: Optional[float] = None) -> "Replica":
        """A live copy of the state keys starting with `prefix` (see Replica)."""
        replica = Replica(self, prefix)
        replica.start(probe, timeout)
        return replica

    # ------------------------------------------------------------------
    #  End

    def bye(self, forget: bool = False, timeout: Optional[float] = None) -> None:
        """BYE, then close. Mail stays queued for the id unless `forget`."""
        if self.session.observe:
            self.close()                # nothing was registered
            return
        try:
            self.call(rq.bye(forget), timeout)
        finally:
            self.close()

    def close(self) -> None:
        """Closes without BYE: the id stays held for this client's resume
        token (a restart with ``token_file`` takes it over at once) until
        the broker forgets it. ``bye()`` or leaving a ``with`` block frees it."""
        with self._lock:
            if self.session.phase == READY \
                    and (self.session.flush_held() | self.session.flush_ack()) \
                    and threading.current_thread() is not self._thread:
                # Held posts go, unconfirmed (flush_pipelined first to
                # know): the I/O thread hands them to the socket, which
                # then has up to a second to deliver them.
                self._close_linger = 1000
                self._wake()
                deadline = time.monotonic() + 1.0
                while self.session.outbox and self.session.phase == READY \
                        and time.monotonic() < deadline:
                    self._drained.wait(max(0.0, deadline - time.monotonic()))
            if self.session.phase != CLOSED:
                self.session.close()
            self._mail.notify_all()
        self._shutdown()

    def _shutdown(self) -> None:
        self._stop = True
        self._wake()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        # Leaving the block ends the agent's run: BYE frees its id at once,
        # so the same script can run again (close() alone leaves the id
        # held for the holder of its resume token until the broker forgets
        # it, an hour by default). Best effort, as the C client's BYE: only
        # over a live connection, within reply_timeout, and an exception
        # leaving the block is never replaced by BYE's.
        try:
            if self.session.phase == READY and not self.session.observe:
                self.call(rq.bye(False), self.session.reply_timeout)
        except errors.ParleyError:
            pass
        finally:
            self.close()


class Replica(ReplicaCore):
    """A live copy of the state under a prefix, for the blocking client.

    Start: subscribe to ``state.``, make sure the subscription is live (a
    probe write to ``parley.probe.<agent>`` until its STATE_UPDATE arrives;
    ``probe=False`` skips it), then SNAPSHOT page by page. From then on the
    I/O thread applies every STATE_UPDATE under the prefix; a seq gap (an
    update lost at the subscriber's high-water mark) marks the replica
    stale, and ``refresh()`` (or ``get()``/``values()``, which call it when
    stale) walks the snapshot again.
    """

    def __init__(self, client: Client, prefix: str = "") -> None:
        super().__init__(prefix, client.agent, client._lock)
        self._client = client

    def start(self, probe: bool = True, timeout: Optional[float] = None) -> None:
        c = self._client
        with c._lock:
            c.session.listeners.append(self.on_update)
            c.session.subscriptions.add("state.")
        c._wake()
        if probe:
            deadline = time.monotonic() + (c.session.call_timeout if timeout is None else timeout)
            while True:
                written = c.write([self.probe_op()], timeout)
                if self.wait_seq(written.seq, 0.1):
                    break
                if time.monotonic() > deadline:
                    raise errors.Timeout("the state subscription did not come up")
        self.refresh(timeout)

    def refresh(self, timeout: Optional[float] = None) -> None:
        self.begin_sync()
        after = None
        while True:
            page = self._client.snapshot(self.prefix or None, after, self.page_size, timeout)
            self.apply_page(page)
            if not page.more or not page.entries:
                break
            after = page.entries[-1].key
        self.end_sync()

    def values(self) -> dict:
        if self.stale:
            self.refresh()
        return self.copy()

    def get(self, key: str, default: Any = None) -> Any:
        if self.stale:
            self.refresh()
        return self.lookup(key, default)

    def close(self) -> None:
        c = self._client
        with c._lock:
            if self.on_update in c.session.listeners:
                c.session.listeners.remove(self.on_update)
