# SPDX-License-Identifier: MIT
"""The examples run: a Python explorer in a team with two C parley-agents."""
import re
import select
import subprocess
import sys
from pathlib import Path

import parley

from conftest import BIN_DIR

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _summary(out: str) -> dict:
    line = next(l for l in out.splitlines() if "SUMMARY " in l)
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))


def test_python_explorer_joins_c_agents(broker_factory, tmp_path):
    broker = broker_factory("--grid", "7x5", "--seed", "11")
    procs = []
    # The Python explorer first, so it certainly moves before the world is
    # done (a slow start could find the C agents finished).
    py = subprocess.Popen([sys.executable, str(EXAMPLES / "explorer.py"), "--broker",
                           broker.router, "--id", "PyScout", "--max-steps", "80",
                           "--step-delay-ms", "50"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Its first progress line says it is in the world: now the C agents.
    ready, _, _ = select.select([py.stdout], [], [], 30)
    first = py.stdout.readline() if ready else ""
    assert "step 0" in first, (first, py.stderr.read() if py.poll() is not None else "")
    for name in ("Agent1", "Agent2"):
        procs.append(subprocess.Popen(
            [str(BIN_DIR / "parley-agent"), "--broker", broker.router, "--id", name,
             "--memory-dir", str(tmp_path / name), "--max-steps", "80",
             "--step-delay-ms", "20", "--log-level", "warn"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        py_out, py_err = py.communicate(timeout=60)
        py_out = first + py_out
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in [py] + procs:
            if p.poll() is None:
                p.kill()
    assert py.returncode == 0, py_err
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert _summary(out)["coverage"] == "100%", out
    s = _summary(py_out)
    assert s["coverage"] == "100%" and s["end"] == '"world fully explored"'
    report = py_out + "".join(o for o, _ in outs)
    assert int(s["moves"]) > 0 and int(s["sent"]) > 0 and int(s["received"]) > 0, report
    # The C agents heard from it: their mail came from PyScout among others.
    assert sum(int(_summary(o)["received"]) for o, _ in outs) > 0
    # The broker agrees.
    with parley.Client(broker.router, "observer") as c:
        assert c.welcome.world.done


def test_explorer_usage():
    out = subprocess.run([sys.executable, str(EXAMPLES / "explorer.py"), "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "--broker" in out.stdout and "PARLEY_BROKER" in out.stdout
    bad = subprocess.run([sys.executable, str(EXAMPLES / "explorer.py"), "--max-steps", "-1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    gone = subprocess.run([sys.executable, str(EXAMPLES / "explorer.py"), "--broker",
                           "tcp://127.0.0.1:1", "--timeout", "0.5"], capture_output=True,
                          text=True, timeout=30)
    assert gone.returncode == 1 and "explorer:" in gone.stderr
