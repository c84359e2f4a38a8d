# SPDX-License-Identifier: MIT
"""replica - the state-replica rules both clients share (PROTOCOL.md §3, SNAPSHOT).

The replica follows every STATE_UPDATE (it subscribes to all of ``state.``,
so state seqs are contiguous and a lost update shows as a gap) and keeps the
entries under its prefix. Rules:

- each key keeps the seq of the last write applied to it; a page entry or an
  update is applied only when its seq is greater (a key not seen takes any);
  pages of one walk may be consistent with different seqs, and updates and
  pages arrive on different sockets, so this per-key rule, not one snapshot
  seq, decides;
- a delete is remembered (a tombstone with its seq) until the next walk, so
  an older page entry cannot bring the key back;
- an update whose seq is more than one past the last one seen means updates
  were lost (the subscriber's high-water mark): the replica is ``stale``
  until the next walk.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from .types import State, StateEntry, StateUpdate, WriteOp


class ReplicaCore:
    page_size = 1024

    def __init__(self, prefix: str, agent: str, lock: Any = None) -> None:
        self.prefix = prefix
        self.probe_key = f"parley.probe.{agent}"
        self._probe_count = 0
        self._lock = lock if lock is not None else threading.RLock()
        self._cond = threading.Condition(self._lock)
        self.entries: Dict[str, StateEntry] = {}
        self._tombstones: Dict[str, int] = {}
        self.last_seq = 0               # highest update seq seen
        self.stale = True
        self.gaps = 0
        self.updates = 0

    def probe_op(self) -> WriteOp:
        self._probe_count += 1
        return WriteOp.set(self.probe_key, self._probe_count)

    def wait_seq(self, seq: int, timeout: float) -> bool:
        """Blocking client: waits until an update with seq >= `seq` was seen."""
        with self._cond:
            return self._cond.wait_for(lambda: self.last_seq >= seq, timeout)

    def _newer(self, key: str, seq: int) -> bool:
        have = self.entries.get(key)
        if have is not None:
            return seq > have.seq
        return seq > self._tombstones.get(key, 0)

    def on_update(self, update: StateUpdate) -> None:
        with self._cond:
            if self.last_seq and update.seq > self.last_seq + 1:
                self.gaps += 1
                self.stale = True
            if update.seq > self.last_seq:
                self.last_seq = update.seq
            self._cond.notify_all()
            if not update.key.startswith(self.prefix) or not self._newer(update.key, update.seq):
                return
            self.updates += 1
            if update.op == "delete":
                self.entries.pop(update.key, None)
                self._tombstones[update.key] = update.seq
            else:
                self.entries[update.key] = StateEntry(update.key, update.reducer or "replace",
                                                      update.seq, update.value)

    def begin_sync(self) -> None:
        with self._lock:
            self.entries = {}
            self._tombstones = {}
            self.stale = False

    def apply_page(self, page: State) -> None:
        with self._lock:
            for entry in page.entries:
                if self._newer(entry.key, entry.seq):
                    self.entries[entry.key] = entry
            if page.seq > self.last_seq:
                # Updates up to the page's seq are in it: no gap below it.
                self.last_seq = page.seq

    def end_sync(self) -> None:
        with self._lock:
            self._tombstones.clear()

    def copy(self) -> Dict[str, Any]:
        with self._lock:
            return {k: e.value for k, e in self.entries.items()}

    def lookup(self, key: str, default: Any = None) -> Any:
        with self._lock:
            entry: Optional[StateEntry] = self.entries.get(key)
            return default if entry is None else entry.value
