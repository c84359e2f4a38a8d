# SPDX-License-Identifier: MIT
"""Leaving a `with` block says BYE, so the same script runs again at once.

Without BYE the broker keeps the id held for the holder of its resume
token (until it forgets the agent, an hour by default), and a second run
of the same script fails with IdInUse. Each script here runs as its own
process, twice, against one broker, as a user would run it.
"""
import subprocess
import sys
import textwrap

import pytest

import parley
import parley.aio
from conftest import HERE

PACKAGE = HERE.parent

BLOCKING = """
    import sys, parley
    with parley.Client(sys.argv[1], "Rerun", reply_timeout=30.0) as c:
        obs = c.perceive()
    print("ran at", obs.position)
"""

ASYNCIO = """
    import asyncio, sys, parley.aio
    async def main():
        async with await parley.aio.Client.connect(sys.argv[1], "Rerun",
                                                   reply_timeout=30.0) as c:
            obs = await c.perceive()
        print("ran at", obs.position)
    asyncio.run(main())
"""


def run_script(tmp_path, text, endpoint):
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(text))
    return subprocess.run([sys.executable, str(script), endpoint], capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(PACKAGE),
                                                       "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("text", [BLOCKING, ASYNCIO], ids=["blocking", "asyncio"])
def test_same_script_runs_twice(broker, tmp_path, text):
    for attempt in (1, 2):
        run = run_script(tmp_path, text, broker.router)
        assert run.returncode == 0, f"run {attempt}:\n{run.stderr}"
        assert run.stdout.startswith("ran at "), run.stdout
    # The broker lists the agent offline: it said BYE, it was not expired.
    with parley.Client(broker.router, "Watcher") as w:
        rerun = [a for a in w.agents() if a.agent == "Rerun"]
    assert rerun and not rerun[0].online


def test_exception_in_block_survives_bye(broker):
    with pytest.raises(ZeroDivisionError):
        with parley.Client(broker.router, "Raiser") as c:
            c.perceive()
            1 / 0
    with parley.Client(broker.router, "Raiser") as again:    # BYE was said
        again.perceive()


def test_bye_in_block_then_exit(broker):
    with parley.Client(broker.router, "Early") as c:
        c.bye()
    with parley.Client(broker.router, "Early"):
        pass


def test_exit_with_broker_gone(broker_factory):
    # No broker to say goodbye to: leaving the block neither raises nor
    # hangs (BYE waits reply_timeout at most, then the client closes).
    # The broker listens on ipc in its own folder: on a tcp port the kernel
    # picked, the client would reconnect, within its second of waiting, to
    # whatever broker another test starts next on the same port, and
    # register there.
    broker = broker_factory(fixed_ports=True)
    c = parley.Client(broker.router, "Orphan", reply_timeout=1.0)
    with c:
        broker.kill()
    with pytest.raises(parley.errors.Closed):
        c.perceive()


@pytest.mark.asyncio
async def test_async_exit_with_broker_gone(broker_factory):
    broker = broker_factory(fixed_ports=True)     # see test_exit_with_broker_gone
    c = await parley.aio.Client.connect(broker.router, "Orphan", reply_timeout=1.0)
    async with c:
        broker.kill()
    with pytest.raises(parley.errors.Closed):
        await c.perceive()
