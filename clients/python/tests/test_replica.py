# SPDX-License-Identifier: MIT
"""The state replica: SNAPSHOT pages plus STATE_UPDATEs, by PROTOCOL.md's seq rules."""
import random
import threading

import parley
from parley import WriteOp
from parley.replica import ReplicaCore
from parley.types import State, StateEntry, StateUpdate


def test_replica_follows_writers(broker):
    a = parley.Client(broker.router, "A")
    b = parley.Client(broker.router, "B")
    a.write([WriteOp.declare("log", "append"), WriteOp.set("gone", 1)])
    replica = b.replica()
    assert replica.get("gone") == 1
    w = a.write([WriteOp.update("log", [1]), WriteOp.delete("gone")])
    assert replica.wait_seq(w.seq, 5.0)
    assert replica.get("log") == [1] and replica.get("gone") is None
    assert replica.values() == b.snapshot().values()
    a.close()
    b.close()


def test_replica_paging_while_writing_and_deleting(broker):
    """Writes and deletes run while the replica walks small pages; at the
    end it equals a snapshot taken when the writers have stopped."""
    a = parley.Client(broker.router, "A")
    b = parley.Client(broker.router, "B")
    a.write([WriteOp.set(f"k.{i:03d}", i) for i in range(300)])
    stop = threading.Event()
    rng = random.Random(5)

    def churn():
        while not stop.is_set():
            i = rng.randrange(300)
            key = f"k.{i:03d}"
            try:
                if rng.random() < 0.3:
                    a.write([WriteOp.delete(key)])
                else:
                    a.write([WriteOp.set(key, rng.randrange(1000))])
            except parley.errors.NoSuchKey:
                pass

    t = threading.Thread(target=churn)
    t.start()
    replica = parley.Replica(b, "k.")
    replica.page_size = 7
    replica.start()
    for _ in range(3):
        replica.refresh()
    stop.set()
    t.join(10)
    last = a.write([WriteOp.set("k.end", 1)])
    assert replica.wait_seq(last.seq, 5.0)
    final = b.snapshot(prefix="k.").values()
    assert replica.values() == final
    assert replica.gaps == 0
    a.close()
    b.close()


def test_rules_without_a_broker():
    r = ReplicaCore("", "me")
    r.begin_sync()
    # An update that arrives before an older page does not go back in time.
    r.on_update(StateUpdate("a", 10, "set", "replace", "new"))
    r.on_update(StateUpdate("b", 11, "delete"))
    r.apply_page(State(9, [StateEntry("a", "replace", 4, "old"),
                           StateEntry("b", "replace", 5, "alive")], more=True))
    r.end_sync()
    assert r.copy() == {"a": "new"}
    assert not r.stale
    r.on_update(StateUpdate("c", 13, "set", "replace", 1))    # 12 was lost
    assert r.stale and r.gaps == 1
