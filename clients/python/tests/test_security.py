# SPDX-License-Identifier: MIT
"""Resume tokens, observers, the duplicate filter across a broker restart,
and CURVE with keys made by parley-keygen (docs/SECURITY.md), against the
real broker."""
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from pathlib import Path
import zmq

import parley
from parley import errors, security
from conftest import BIN_DIR, HERE, wait_for


# ---------------------------------------------------------------------------
#  Resume token (plain mode)

def test_token_file_takes_the_id_over_at_once_after_a_crash(broker_factory, tmp_path):
    # Liveness far longer than the test: only the token can get the id back.
    broker = broker_factory("--heartbeat-ms", "200", "--liveness-ms", "60000")
    token_file = tmp_path / "token"
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(HERE.parent)!r})
        import parley
        c = parley.Client({broker.router!r}, "Phoenix", token_file={str(token_file)!r})
        c.listen("news")
        print("ready", flush=True)
        time.sleep(120)
    """)
    agent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout.readline().strip() == "ready"
    finally:
        agent.kill()                    # a crash: no BYE
        agent.wait(10)
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    token = token_file.read_text().strip()
    assert len(token) == 32
    assert not [p for p in tmp_path.iterdir() if p.name != "token"]    # no temporary left

    with parley.Client(broker.router, "Sender") as sender:
        sender.post("news", "while it was down")
        # A stranger without the token is refused, even though the holder
        # crashed; a wrong token is UNAUTHORIZED.
        with pytest.raises(errors.IdInUse):
            parley.Client(broker.router, "Phoenix", connect_timeout=5)
        wrong = tmp_path / "wrong"
        wrong.write_text("0" * 32 + "\n")
        with pytest.raises(errors.Unauthorized):
            parley.Client(broker.router, "Phoenix", token_file=str(wrong), connect_timeout=5)
        # connect_timeout (10 s) is far below liveness_ms (60 s): only the
        # token can let it in.
        with parley.Client(broker.router, "Phoenix", token_file=str(token_file),
                           connect_timeout=10) as back:
            assert back.welcome.channels == ["news"]
            assert [m.body for m in back.fetch().messages] == ["while it was down"]
            assert back.session.token == token
        assert sender.stats().unauthorized == 1


def test_token_survives_reconnects_in_memory(broker_factory):
    broker = broker_factory("--heartbeat-ms", "200", "--liveness-ms", "60000")
    c = parley.Client(broker.router, "Mem", reply_timeout=1.0)
    try:
        token = c.session.token
        assert token and c.welcome.token == token
        # Drop the connection under the client: its next HELLO (a new
        # connection, the old one still "live") needs the token.
        with c._lock:
            c.session._broken(time.monotonic())
        c._wake()
        assert wait_for(lambda: c.session.reconnects == 1, 20)
        assert c.stats().online == 1
    finally:
        c.close()


def test_bad_token_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "token"
    bad.write_text("not a token\n")
    with pytest.raises(errors.KeyFileError, match="does not hold a resume token"):
        parley.Client("tcp://127.0.0.1:1", "X", token_file=str(bad))


def test_retry_id_in_use_gets_in_once_the_holder_says_bye(broker, raw):
    holder = raw()
    assert holder.call("HELLO", agent="Heir")["t"] == "WELCOME"
    with pytest.raises(errors.IdInUse):
        parley.Client(broker.router, "Heir", connect_timeout=5)
    result = {}

    def connect():
        result["client"] = parley.Client(broker.router, "Heir", retry_id_in_use=True,
                                         connect_timeout=20)

    t = threading.Thread(target=connect)
    t.start()
    time.sleep(0.3)                     # refused at least once meanwhile
    assert holder.call("BYE")["t"] == "OK"
    t.join(25)
    c = result["client"]
    assert c.session.hellos == 1 and c.welcome.agent == "Heir"
    c.close()


# ---------------------------------------------------------------------------
#  Observers


def test_observer_of_a_scenario_without_a_world(broker_factory):
    """observe=True on a broker whose scenario says world: none: a WELCOME
    without a world, reads answered, and the broker goes on serving."""
    scenario = Path(__file__).parent / "scenario_wf"
    b = broker_factory("--scenario", str(scenario))
    tap = parley.Client(b.router, "Watcher", observe=True)
    try:
        assert tap.welcome.world is None
        assert tap.stats().uptime_ms >= 0
    finally:
        tap.close()
    with parley.Client(b.router, "After") as after:
        assert after.stats().agents >= 1

def test_observer_is_not_an_agent(broker):
    with parley.Client(broker.router, "A") as a:
        tap = parley.Client(broker.router, "Watcher", observe=True)
        try:
            assert tap.welcome.pub and not tap.welcome.token
            assert [i.agent for i in a.agents()] == ["A"]
            assert [i.agent for i in tap.agents()] == ["A"]     # reads are answered
            with pytest.raises(errors.ObserverOnly):
                tap.fetch()
            tap.subscribe("state.")
            seen = []
            deadline = time.monotonic() + 10
            while not seen and time.monotonic() < deadline:
                a.write([parley.WriteOp.set("k", 1)])
                event = tap.next_event(0.1)
                if event is not None:
                    seen.append(event)
            assert seen and seen[0].key == "k"
            assert tap.session.heartbeats == 0
        finally:
            tap.bye()
        assert [i.agent for i in a.agents()] == ["A"]


# ---------------------------------------------------------------------------
#  Duplicate filter and a broker restart

def test_redelivered_mail_is_left_out_and_a_restart_resets_the_filter(broker_factory):
    broker = broker_factory("--heartbeat-ms", "200", fixed_ports=True)
    a = parley.Client(broker.router, "A", reply_timeout=1.0)
    b = parley.Client(broker.router, "B", reply_timeout=1.0)
    try:
        seqs = a.send([parley.Message(str(i), to="B") for i in range(3)]).seqs
        assert [m.seq for m in b.fetch().messages] == seqs
        again = b.fetch()                           # not acknowledged: handed out again
        assert again.messages == [] and again.duplicates == 3 and again.pending == 0
        origin = b.welcome.origin
        broker.kill()
        broker.start()
        # Both clients find the new broker (NOT_HELLO: HELLO again); its
        # mail counter starts at 1, below what B was handed.
        assert wait_for(lambda: a.stats().agents >= 1, 20)
        assert wait_for(lambda: b.stats().agents == 2, 20)
        assert b.welcome.origin != origin
        sent = a.send_to("B", "after the restart")
        assert sent.seqs == [1]
        assert [m.body for m in b.fetch().messages] == ["after the restart"]
        assert b.session.duplicates == 3
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------------------
#  CURVE

def keygen(tmp_path, name, *args):
    subprocess.run([str(BIN_DIR / "parley-keygen"), "--dir", str(tmp_path / "keys"),
                    "--name", name, *args], check=True, stderr=subprocess.DEVNULL)
    return str(tmp_path / "keys" / name)


@pytest.fixture
def curve_broker(broker_factory, tmp_path):
    if not zmq.has("curve"):
        pytest.skip("libzmq without CURVE")
    keygen(tmp_path, "broker")
    allow = str(tmp_path / "allow")
    keys = {"scout": keygen(tmp_path, "scout", "--agents", "Scout1", "--copy-public", allow),
            "tap": keygen(tmp_path, "tap", "--rights", "tap", "--copy-public", allow),
            "stranger": keygen(tmp_path, "stranger", "--agents", "*"),
            "server": str(tmp_path / "keys" / "broker")}
    broker = broker_factory("--curve-keys", str(tmp_path / "keys"), "--curve-allow", allow)
    return broker, keys


def test_curve_with_keys_from_parley_keygen(curve_broker):
    broker, keys = curve_broker
    c = parley.Client(broker.router, "Scout1", curve_key=keys["scout"],
                      curve_server_key=keys["server"])
    try:
        assert c.welcome.token == ""                # keys, not tokens, hold ids
        c.write([parley.WriteOp.set("k", 1)])
        replica = c.replica("k")                    # the events socket is CURVE too
        assert replica.values() == {"k": 1}
        with pytest.raises(errors.Unauthorized):    # the key does not name the id
            parley.Client(broker.router, "Scout2", curve_key=keys["scout"],
                          curve_server_key=keys["server"], connect_timeout=5)
        with pytest.raises(errors.Unauthorized):    # no admin right
            c.world_reset()
        tap = parley.Client(broker.router, "Tap", observe=True, curve_key=keys["tap"],
                            curve_server_key=keys["server"])
        assert [i.agent for i in c.agents()] == ["Scout1"]
        tap.close()
        assert c.stats().unauthorized == 2
    finally:
        c.close()


def test_curve_refuses_an_unknown_key_and_a_plain_client(curve_broker):
    broker, keys = curve_broker
    with pytest.raises(errors.Timeout):
        parley.Client(broker.router, "Scout1", curve_key=keys["stranger"],
                      curve_server_key=keys["server"], connect_timeout=2)
    with pytest.raises(errors.Timeout):
        parley.Client(broker.router, "Scout1", connect_timeout=1)
    with parley.Client(broker.router, "Scout1", curve_key=keys["scout"],
                       curve_server_key=keys["server"]) as c:
        assert wait_for(lambda: c.stats().auth_denied >= 1)


def test_key_files_are_checked_before_connecting(curve_broker, tmp_path):
    _, keys = curve_broker
    os.chmod(keys["scout"] + "_secret", 0o640)
    with pytest.raises(errors.KeyFileError, match="chmod 600"):
        parley.Client("tcp://127.0.0.1:1", "Scout1", curve_key=keys["scout"],
                      curve_server_key=keys["server"])
    with pytest.raises(errors.KeyFileError, match="both"):
        parley.Client("tcp://127.0.0.1:1", "Scout1", curve_key=keys["tap"])
    with pytest.raises(errors.KeyFileError, match="cannot read"):
        parley.Client("tcp://127.0.0.1:1", "Scout1", curve_key=keys["tap"],
                      curve_server_key=str(tmp_path / "missing"))
    garbage = tmp_path / "garbage"
    garbage.write_text("curve\n  public-key = \"x\"\n")
    with pytest.raises(errors.KeyFileError, match="indentation"):
        security.read_cert(str(garbage))
    cert = security.read_cert(keys["scout"])
    assert cert.metadata == {"rights": "agent", "agents": "Scout1"} and not cert.secret
