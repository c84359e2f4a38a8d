# SPDX-License-Identifier: MIT
"""aio - the asyncio API: ``parley.aio.Client``, on zmq.asyncio.

The same Session and the same requests as the blocking client; here the
I/O is three tasks on the caller's event loop: one reads replies, one reads
events, one keeps time (heartbeats while the caller awaits a model,
deadlines, reconnecting). Use ``await Client.connect(endpoint, agent)``.
"""
from __future__ import annotations

import asyncio
import collections
import time
from typing import Any, Deque, Iterable, List, Mapping, Optional, Sequence, TypeVar, Union

import zmq
import zmq.asyncio

from . import codec, errors, requests as rq, security
from .replica import ReplicaCore
from .session import CLOSED, READY, Session, settler
from .types import (AgentInfo, CheckpointList, CheckpointState, Confirmed, Event, Mail, Message,
                    ModelReport, Observation, Sent, State, Stats, Stepped, Welcome, WorkflowEvent,
                    WorkflowInfo,
                    WorkflowStatus, WriteOp, Written)

R = TypeVar("R")


class Client:
    """A connection to parley-broker for one agent id, for asyncio code.
    Methods and options (token_file, observe, dedup, curve_key,
    curve_server_key) mirror parley.Client; methods are coroutines."""

    def __init__(self, endpoint: str, agent: str, caps: Sequence[str] = (), *,
                 timeout: float = 10.0, reply_timeout: float = 5.0,
                 retry_id_in_use: bool = False,
                 token_file: Optional[str] = None, observe: bool = False,
                 dedup: bool = True, curve_key: Optional[str] = None,
                 curve_server_key: Optional[str] = None,
                 context: Optional[zmq.asyncio.Context] = None) -> None:
        self.endpoint = endpoint
        self.session = Session(agent, caps, call_timeout=timeout, reply_timeout=reply_timeout,
                               retry_id_in_use=retry_id_in_use, token_file=token_file,
                               observe=observe, dedup=dedup)
        self._curve = security.curve_from(curve_key, curve_server_key)
        self._ctx = context or zmq.asyncio.Context.instance()
        self._dealer: Optional[zmq.asyncio.Socket] = None
        self._sub: Optional[zmq.asyncio.Socket] = None
        self._sub_endpoint = ""
        self._sub_topics: set = set()
        self._reader: Optional[asyncio.Task] = None
        self._events_task: Optional[asyncio.Task] = None
        self._timer: Optional[asyncio.Task] = None
        self._poke = asyncio.Event()
        self._mail = asyncio.Event()
        self._event_ready = asyncio.Event()
        self._workflow_ready = asyncio.Event()
        self._update_seen = asyncio.Event()
        self._welcomed = asyncio.Event()
        #: pipelined SENDs in flight at most (send_pipelined waits beyond)
        self.pipeline_window = 1024
        self._pipelined: Deque[asyncio.Future] = collections.deque()

    @classmethod
    async def connect(cls, endpoint: str, agent: str, caps: Sequence[str] = (), *,
                      connect_timeout: float = 10.0, **options: Any) -> "Client":
        """Connects and says HELLO; raises the broker's error or Timeout."""
        self = cls(endpoint, agent, caps, **options)
        self._timer = asyncio.ensure_future(self._keep_time())
        try:
            await asyncio.wait_for(self._welcomed.wait(), connect_timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise errors.Timeout(f"no WELCOME from {endpoint} within {connect_timeout} s",
                                 request="HELLO") from None
        if self.session.fatal is not None:
            fatal = self.session.fatal
            await self.close()
            raise fatal
        return self

    # ------------------------------------------------------------------
    #  Tasks

    def _open_dealer(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self._dealer is not None:
            self._dealer.close(linger=0)
        d = self._ctx.socket(zmq.DEALER)
        d.setsockopt(zmq.LINGER, 0)
        if self._curve is not None:
            self._curve.apply(d)
        d.setsockopt(zmq.MAXMSGSIZE, codec.MAX_FRAME)
        d.setsockopt(zmq.SNDHWM, 0)
        d.setsockopt(zmq.RCVHWM, 0)
        d.setsockopt(zmq.IMMEDIATE, 1)  # nothing queued for a broker not there
        d.connect(self.endpoint)
        self._dealer = d
        self._reader = asyncio.ensure_future(self._read_replies(d))

    async def _read_replies(self, dealer: zmq.asyncio.Socket) -> None:
        while True:
            frames = await dealer.recv_multipart()
            self.session.on_reply(frames[-1], time.monotonic())
            if self.session.pushed:
                self._mail.set()        # pushed mail (CONSUME)
            self._after_input()

    async def _read_events(self, sub: zmq.asyncio.Socket) -> None:
        while True:
            frames = await sub.recv_multipart()
            if len(frames) == 2:
                event = self.session.on_event(frames[0], frames[1])
                if event is not None and self.session.events:
                    self._event_ready.set()
                if self.session.workflow_queue:
                    self._workflow_ready.set()
                if self.session.mail_signal:
                    self._mail.set()
                self._update_seen.set()

    def _after_input(self) -> None:
        s = self.session
        if s.welcome is not None or s.phase == CLOSED:
            self._welcomed.set()
        self._sync_sub()
        self._flush()
        self._poke.set()

    def _sync_sub(self) -> None:
        welcome = self.session.welcome
        if welcome is None or self.session.phase == CLOSED:
            return
        if self._sub is None or self._sub_endpoint != welcome.pub:
            if self._events_task is not None:
                self._events_task.cancel()
            if self._sub is not None:
                self._sub.close(linger=0)
            s = self._ctx.socket(zmq.SUB)
            s.setsockopt(zmq.LINGER, 0)
            if self._curve is not None:
                self._curve.apply(s)
            s.setsockopt(zmq.MAXMSGSIZE, codec.MAX_FRAME)
            s.connect(welcome.pub)
            self._sub, self._sub_endpoint, self._sub_topics = s, welcome.pub, set()
            self._events_task = asyncio.ensure_future(self._read_events(s))
        for topic in self.session.subscriptions - self._sub_topics:
            self._sub.setsockopt(zmq.SUBSCRIBE, topic.encode())
        for topic in self._sub_topics - self.session.subscriptions:
            self._sub.setsockopt(zmq.UNSUBSCRIBE, topic.encode())
        self._sub_topics = set(self.session.subscriptions)

    def _flush(self) -> None:
        out = self.session.outbox
        while out and self._dealer is not None:
            # With NOBLOCK pyzmq tries the send at once and settles the
            # future with its outcome (a synchronous shadow socket would
            # steal the asyncio socket's edge-triggered wake-ups).
            sent = self._dealer.send(out[0], zmq.NOBLOCK)
            if sent.done() and isinstance(sent.exception(), zmq.Again):
                return                  # no connection yet (ZMQ_IMMEDIATE)
            self.session.flushed(time.monotonic())

    async def _keep_time(self) -> None:
        s = self.session
        while s.phase != CLOSED:
            now = time.monotonic()
            s.tick(now)
            if s.need_socket and now >= s.reconnect_at:
                self._open_dealer()
                s.on_connected(now)
            self._after_input()
            self._poke.clear()
            try:
                await asyncio.wait_for(self._poke.wait(), min(s.next_wakeup(now), 0.25) + 0.001)
            except asyncio.TimeoutError:
                pass
        self._welcomed.set()

    # ------------------------------------------------------------------
    #  Calls

    async def call(self, request: rq.Request[R], timeout: Optional[float] = None) -> R:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        done = settler(future)

        self.session.submit(request, done, timeout)
        self._flush()
        self._poke.set()
        return await future

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
        self.session.report = report

    async def heartbeat(self, timeout: Optional[float] = None) -> None:
        await self.call(rq.heartbeat(self.session.report), timeout)

    async def agents(self, timeout: Optional[float] = None) -> List[AgentInfo]:
        return await self.call(rq.agents(), timeout)

    async def send(self, messages: Iterable[Union[Message, Mapping[str, Any]]],
                   timeout: Optional[float] = None, wait_ms: Optional[int] = None) -> Sent:
        """As parley.Client.send."""
        return await self.call(rq.send(messages, self.session.next_batch(),
                                       self.welcome.max_batch,
                                       self.session.clamp_wait(wait_ms)), timeout)

    def submit(self, request: rq.Request[R], timeout: Optional[float] = None
               ) -> "asyncio.Future[R]":
        """Sends any request without waiting; its reply comes in the future."""
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        done = settler(future)

        self.session.submit(request, done, timeout)
        self._flush()
        self._poke.set()
        return future

    async def send_pipelined(self, messages: Iterable[Union[Message, Mapping[str, Any]]],
                             timeout: Optional[float] = None, wait_ms: Optional[int] = None
                             ) -> "asyncio.Future[Confirmed]":
        """As parley.Client.send_pipelined: waits while ``pipeline_window``
        posts are unsettled, then returns the future the CONFIRM settles
        (held and coalesced with the next posts as there)."""
        while True:
            while self._pipelined and self._pipelined[0].done():
                self._pipelined.popleft()
            if self.session.pipelined_in_flight() < self.pipeline_window \
                    or not self._pipelined:
                break
            await asyncio.wait([self._pipelined[0]])
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        done = settler(future)

        if self.session.post_pipelined(messages, self.welcome.max_batch,
                                       self.session.clamp_wait(wait_ms), done, timeout,
                                       window=self.pipeline_window):
            self._flush()
            self._poke.set()
        self._pipelined.append(future)
        return future

    async def flush_pipelined(self) -> None:
        """Sends the held posts, then waits until every pipelined SEND is settled."""
        if self.session.flush_held():
            self._flush()
            self._poke.set()
        pending = [f for f in self._pipelined if not f.done()]
        if pending:
            await asyncio.wait(pending)
        self._pipelined.clear()

    def set_coalesce(self, messages: int = 1024, bytes: int = 256 * 1024,
                     linger_us: int = 1000) -> None:
        """As parley.Client.set_coalesce (linger_us 0: off)."""
        self.session.coalesce_messages = max(1, int(messages))
        self.session.coalesce_bytes = max(1, int(bytes))
        self.session.coalesce_linger_us = max(0, int(linger_us))
        self._flush_held()

    def _flush_held(self, waiting: bool = False) -> None:
        flushed = self.session.flush_held(waiting=waiting)
        if waiting:
            flushed = self.session.flush_ack() or flushed  # no SEND carried it
        if flushed:
            self._flush()
            self._poke.set()

    async def send_to(self, to: str, body: Union[str, bytes],
                      timeout: Optional[float] = None) -> Sent:
        return await self.send([Message(body, to=to)], timeout)

    async def post(self, channel: str, body: Union[str, bytes],
                   timeout: Optional[float] = None) -> Sent:
        return await self.send([Message(body, channel=channel)], timeout)

    async def fetch(self, ack: Optional[int] = None, max: Optional[int] = None,
                    timeout: Optional[float] = None) -> Mail:
        self.session.mail_signal = bool(self.session.pushed)
        if not self.session.pushed:
            self._mail.clear()
        return await self.call(rq.fetch(ack, max), timeout)

    async def ack(self, seq: int, timeout: Optional[float] = None) -> None:
        await self.call(rq.ack(seq), timeout)
        self.session.noted_ack(seq)

    # ------------------------------------------------------------------
    #  Pushed mail (PROTOCOL.md, CONSUME); as in parley.Client

    async def consume(self, credit: int, credit_bytes: Optional[int] = None,
                      timeout: Optional[float] = None) -> None:
        """Has the broker push this agent's mail within a window of
        ``credit`` messages and ``credit_bytes`` body bytes (0 stops); kept
        over reconnects."""
        await self.call(rq.consume(credit, credit_bytes), timeout)
        self.session.credit, self.session.credit_bytes = credit, credit_bytes

    def take_pushed(self) -> Optional[Mail]:
        """The oldest pushed batch not yet taken; None when none."""
        mail = self.session.take_pushed()
        if not self.session.pushed:
            self._mail.clear()
        return mail

    async def next_pushed(self, timeout: float) -> Optional[Mail]:
        """The oldest pushed batch, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        if not self.session.pushed:
            self._flush_held(waiting=True)
        while not self.session.pushed:
            left = deadline - time.monotonic()
            if left <= 0 or self.session.phase == CLOSED:
                return None
            self._mail.clear()
            try:
                await asyncio.wait_for(self._mail.wait(), left)
            except asyncio.TimeoutError:
                return None
        return self.take_pushed()

    def ack_nowait(self, seq: int) -> None:
        """ACK without waiting for the reply; sent again after a reconnect."""
        self.session.ack_nowait(seq, time.monotonic())
        self._flush()
        self._poke.set()

    async def listen(self, channel: str, timeout: Optional[float] = None) -> None:
        await self.call(rq.listen(channel), timeout)
        self.session.channels.add(channel)

    async def unlisten(self, channel: str, timeout: Optional[float] = None) -> None:
        request = rq.unlisten(channel)
        self.session.channels.discard(channel)
        await self.call(request, timeout)

    async def write(self, ops: Iterable[WriteOp], timeout: Optional[float] = None) -> Written:
        return await self.call(rq.write(ops), timeout)

    async def get(self, keys: Iterable[str], timeout: Optional[float] = None) -> State:
        return await self.call(rq.get(keys), timeout)

    async def snapshot(self, prefix: Optional[str] = None, after_key: Optional[str] = None,
                       limit: Optional[int] = None, timeout: Optional[float] = None) -> State:
        return await self.call(rq.snapshot(prefix, after_key, limit), timeout)

    async def snapshot_all(self, prefix: Optional[str] = None, page: int = 1024,
                           timeout: Optional[float] = None) -> List[State]:
        """Every page of a paging SNAPSHOT walk, in key order."""
        pages: List[State] = []
        after: Optional[str] = None
        while True:
            state = await self.snapshot(prefix, after, page, timeout)
            pages.append(state)
            if not state.more or not state.entries:
                return pages
            after = state.entries[-1].key

    async def perceive(self, timeout: Optional[float] = None) -> Observation:
        return await self.call(rq.perceive(), timeout)

    async def act(self, action: str, step: Optional[int] = None,
                  timeout: Optional[float] = None) -> Observation:
        return await self.call(rq.act(action, self.session.next_step() if step is None
                                      else step), timeout)

    async def step(self, action: Optional[str] = None,
                   messages: Iterable[Union[Message, Mapping[str, Any]]] = (),
                   ops: Iterable[WriteOp] = (), ack: Optional[int] = None,
                   fetch: Optional[int] = None, stream: bool = False, perceive: bool = False,
                   step: Optional[int] = None, timeout: Optional[float] = None) -> Stepped:
        """STEP, as parley.Client.step."""
        if step is None:
            step = self.session.next_step()
        return await self.call(rq.step(step or None, ack, messages, ops, action, perceive,
                                       fetch, stream, self.welcome.max_batch), timeout)

    async def world_reset(self, seed: Optional[int] = None,
                          timeout: Optional[float] = None) -> None:
        await self.call(rq.world_reset(seed), timeout)

    async def stats(self, timeout: Optional[float] = None) -> Stats:
        return await self.call(rq.stats(), timeout)

    # ------------------------------------------------------------------
    #  Workflow: as parley.Client's (say HELLO with caps=["role:<name>"])

    async def workflow(self, timeout: Optional[float] = None) -> WorkflowInfo:
        return await self.call(rq.workflow(), timeout)

    async def handover(self, ops: Iterable[WriteOp] = (), next: Optional[str] = None,
                       status: Optional[Union[WorkflowStatus, str]] = None,
                       reason: Optional[str] = None,
                       timeout: Optional[float] = None) -> WorkflowInfo:
        return await self.call(rq.handover(ops, next, status, reason), timeout)

    async def checkpoints(self, timeout: Optional[float] = None) -> CheckpointList:
        return await self.call(rq.checkpoints(), timeout)

    async def checkpoint(self, number: int,
                         timeout: Optional[float] = None) -> CheckpointState:
        return await self.call(rq.checkpoint(number), timeout)

    async def checkpoint_diff(self, number: int, since: int,
                              timeout: Optional[float] = None) -> CheckpointState:
        return await self.call(rq.checkpoint(number, since), timeout)

    async def resume(self, number: int, timeout: Optional[float] = None) -> WorkflowInfo:
        return await self.call(rq.resume(number), timeout)

    def workflow_events(self, on: bool = True) -> None:
        self.session.set_workflow_events(on)
        self._sync_sub()

    def workflow_event(self) -> Optional[WorkflowEvent]:
        return self.session.take_workflow_event()

    async def wait_workflow_event(self, timeout: float) -> Optional[WorkflowEvent]:
        deadline = time.monotonic() + timeout
        while not self.session.workflow_queue:
            self._workflow_ready.clear()
            left = deadline - time.monotonic()
            if left <= 0 or self.session.phase == CLOSED:
                return None
            try:
                await asyncio.wait_for(self._workflow_ready.wait(), left)
            except asyncio.TimeoutError:
                return None
        return self.session.take_workflow_event()

    # ------------------------------------------------------------------
    #  Events

    async def wait_mail(self, timeout: float) -> bool:
        """Waits for MAIL_READY for this agent since the last fetch()."""
        if not self.session.mail_signal:
            self._flush_held(waiting=True)
        if self.session.mail_signal:
            return True
        try:
            await asyncio.wait_for(self._mail.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return self.session.mail_signal

    def subscribe(self, prefix: str) -> None:
        self.session.subscriptions.add(prefix)
        self.session.event_prefixes.add(prefix)
        self._sync_sub()

    async def next_event(self, timeout: float) -> Optional[Event]:
        deadline = time.monotonic() + timeout
        while not self.session.events:
            self._event_ready.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                await asyncio.wait_for(self._event_ready.wait(), left)
            except asyncio.TimeoutError:
                return None
        return self.session.events.popleft()

    async def replica(self, prefix: str = "", probe: bool = True,
                      timeout: Optional[float] = None) -> "Replica":
        replica = Replica(self, prefix)
        await replica.start(probe, timeout)
        return replica

    # ------------------------------------------------------------------
    #  End

    async def bye(self, forget: bool = False, timeout: Optional[float] = None) -> None:
        if self.session.observe:
            await self.close()          # nothing was registered
            return
        try:
            await self.call(rq.bye(forget), timeout)
        finally:
            await self.close()

    async def close(self) -> None:
        """Closes without BYE, as parley.Client.close(); ``bye()`` or
        leaving an ``async with`` block frees the id."""
        linger = 0
        if self.session.phase == READY \
                and (self.session.flush_held() | self.session.flush_ack()):
            # Held posts go, unconfirmed (flush_pipelined first to know);
            # the socket has up to a second to deliver them.
            self._flush()
            linger = 1000
        if self.session.phase != CLOSED:
            self.session.close()
        for task in (self._reader, self._events_task, self._timer):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        for task in (self._reader, self._events_task, self._timer):
            if task is not None and task is not asyncio.current_task():
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        if self._dealer is not None:
            self._dealer.close(linger=linger)
        if self._sub is not None:
            self._sub.close(linger=0)
        self._dealer = self._sub = None

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        # As the blocking client's __exit__: BYE (best effort, over a live
        # connection, within reply_timeout), then close, so the id is free
        # for the next run at once.
        try:
            if self.session.phase == READY and not self.session.observe:
                await self.call(rq.bye(False), self.session.reply_timeout)
        except errors.ParleyError:
            pass
        finally:
            await self.close()


class Replica(ReplicaCore):
    """parley.client.Replica for asyncio: same rules (parley.replica)."""

    def __init__(self, client: Client, prefix: str = "") -> None:
        super().__init__(prefix, client.agent)
        self._client = client

    async def start(self, probe: bool = True, timeout: Optional[float] = None) -> None:
        c = self._client
        c.session.listeners.append(self.on_update)
        c.session.subscriptions.add("state.")
        c._sync_sub()
        if probe:
            deadline = time.monotonic() + (c.session.call_timeout if timeout is None else timeout)
            while True:
                written = await c.write([self.probe_op()], timeout)
                if await self._wait_seq(written.seq, 0.1):
                    break
                if time.monotonic() > deadline:
                    raise errors.Timeout("the state subscription did not come up")
        await self.refresh(timeout)

    async def _wait_seq(self, seq: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.last_seq < seq:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._client._update_seen.clear()
            try:
                await asyncio.wait_for(self._client._update_seen.wait(), left)
            except asyncio.TimeoutError:
                return self.last_seq >= seq
        return True

    async def refresh(self, timeout: Optional[float] = None) -> None:
        self.begin_sync()
        after = None
        while True:
            page = await self._client.snapshot(self.prefix or None, after, self.page_size,
                                               timeout)
            self.apply_page(page)
            if not page.more or not page.entries:
                break
            after = page.entries[-1].key
        self.end_sync()

    async def values(self) -> dict:
        if self.stale:
            await self.refresh()
        return self.copy()

    def close(self) -> None:
        if self.on_update in self._client.session.listeners:
            self._client.session.listeners.remove(self.on_update)
