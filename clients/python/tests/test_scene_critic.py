# SPDX-License-Identifier: MIT
"""The Python critic (examples/scene_critic.py): its checks at the edges
(those of tests/check_scene.c for the C critic), and a scene director run
with five C role agents, compared with the same run by the C critic."""
import importlib.util
import subprocess
import sys
from pathlib import Path


import parley
from parley import WorkflowStatus

from conftest import BIN_DIR, ROOT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "scene_critic.py"
SCENE = ROOT / "scenarios" / "scene"
OTHERS = ["orchestrator", "librarian", "architect", "material_scientist", "cinematographer"]

_spec = importlib.util.spec_from_file_location("scene_critic", EXAMPLE)
critic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(critic)


def _object(name, x, y, z, w, d, h, material=True):
    obj = {"id": f"obj-{name}", "name": name, "position": {"x": x, "y": y, "z": z},
           "bounding_box": {"width": w, "depth": d, "height": h}}
    if material:
        obj["material"] = {"style": "wood"}
    return obj


def _critique(objects, mood="warm", kelvin=2700):
    state = {"scene_objects": objects,
             "master_plan": {"required_objects": ["a", "b"],
                             "lighting_requirements": {"mood": mood}},
             "lighting_setup": {"key_light": {"color_temperature": kelvin}},
             "camera_setup": {"focal_length": 35}, "user_prompt": "test"}
    return critic.critique(state)


def _categories(turn):
    return {i["category"] for i in turn.issues}


def test_critic_checks():
    # Side by side, touching: passes, with the report.
    turn = _critique([_object("a", 0, 0, 0, 1, 1, 1), _object("b", 1.0, 0, 0, 1, 1, 1)])
    assert turn.issues == [] and turn.status is WorkflowStatus.DONE and turn.next is None
    keys = [op.key for op in turn.ops]
    assert keys == ["validation_passed", "final_report", "messages"]
    report = turn.ops[1].value
    assert report.startswith('Scene for "test": 2 objects.\n  a          at (0.00, 0.00, 0.00)')
    assert report.endswith("lighting: key 2700 K, day; camera focal 35 mm")
    # Overlapping by the tolerance exactly: not clipping; a bit more: clipping.
    assert "clipping" not in _categories(_critique([_object("a", 0, 0, 0, 1, 1, 1),
                                                    _object("b", 0.95, 0, 0, 1, 1, 1)]))
    turn = _critique([_object("a", 0, 0, 0, 1, 1, 1), _object("b", 0.9, 0, 0, 1, 1, 1)])
    assert _categories(turn) == {"clipping"} and turn.status is WorkflowStatus.REVISION
    assert turn.next == "orchestrator"
    assert turn.issues[0] == {"severity": "error", "category": "clipping",
                              "description": "'b' intersects with 'a' by 0.10 m",
                              "suggested_fix": "move it clear of the other by its bounding box",
                              "affected_object_id": "obj-b"}
    assert [op.key for op in turn.ops] == ["validation_issues", "validation_passed", "messages"]
    assert turn.ops[2].value == [{"from": "critic",
                                  "text": "1 issue, first: 'b' intersects with 'a' by 0.10 m"}]
    # Resting on top is not clipping; hovering is floating; no material,
    # daylight for a warm mood, a planned object missing.
    assert _critique([_object("a", 0, 0, 0, 1, 1, 0.75),
                      _object("b", 0, 0, 0.75, 0.3, 0.3, 0.5)]).issues == []
    turn = _critique([_object("a", 0, 0, 0, 1, 1, 0.75, material=False),
                      _object("c", 3, 0, 1.2, 0.3, 0.3, 0.5)], kelvin=5500)
    assert _categories(turn) == {"floating", "material", "lighting", "missing_asset"}
    # Nothing placed, lit or framed.
    turn = critic.critique({"scene_objects": [{"id": "x", "name": "a"}, {"id": "x",
                                                                           "name": "b"}]})
    assert _categories(turn) == {"placement", "lighting", "camera"}
    assert turn.issues[0]["description"] == "'b' has no position"     # merged by id


def test_objects_latest():
    merged = critic.objects_latest([{"id": "a", "n": 1}, "junk", {"name": "no id"},
                                    {"id": "b"}, {"id": "a", "n": 2, "m": 3}])
    assert merged == [{"id": "a", "n": 2, "m": 3}, {"id": "b"}]
    assert critic.objects_latest(None) == []


def _team(broker_factory, python_critic):
    """One scene director run; returns (critic stdout, the observer's view)."""
    broker = broker_factory("--scenario", str(SCENE))
    procs = {}
    if python_critic:
        procs["critic"] = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--broker", broker.router, "--id", "critic"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for role in OTHERS + ([] if python_critic else ["critic"]):
        procs[role] = subprocess.Popen(
            [str(BIN_DIR / "parley-agent"), "--broker", broker.router, "--role",
             str(SCENE / "roles" / f"{role}.yaml"), "--id", role, "--memory-dir", "none",
             "--log-level", "warn"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outs = {}
    try:
        for role, proc in procs.items():
            outs[role] = proc.communicate(timeout=60)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for role, proc in procs.items():
        assert proc.returncode == 0, (role, outs[role])
    with parley.Client(broker.router, "observer") as c:
        info = c.workflow()
        states = [c.checkpoint(cp.number).values() for cp in c.checkpoints().checkpoints]
    return outs["critic"][0], info, states


def test_python_critic_in_the_scene_team(broker_factory):
    out, info, states = _team(broker_factory, python_critic=True)
    # The first layout overlaps: one failed validation, the fix, then done.
    assert info.status is WorkflowStatus.DONE and info.revisions == 1 and info.turn == 9, info
    assert "intersects" in out and "-> orchestrator (revision)" in out, out
    assert "passed: 3 objects, no issue -> end (done)" in out, out
    assert "SUMMARY agent=critic role=critic workflow=done turns=9 revisions=1 mine=2" in out
    final = states[-1]
    assert final["validation_passed"] is True and final["final_report"].startswith("Scene for")
    failed = [s for s in states if s.get("validation_issues")]
    assert failed and failed[0]["validation_issues"][0]["category"] == "clipping"
    # The same run with the C critic leaves the very same state at every
    # checkpoint: every write of the Python critic is the C critic's.
    _, c_info, c_states = _team(broker_factory, python_critic=False)
    assert (c_info.status, c_info.turn, c_info.revisions) == (info.status, info.turn,
                                                              info.revisions)
    assert len(c_states) == len(states)
    for number, (mine, theirs) in enumerate(zip(states, c_states)):
        assert mine == theirs, f"checkpoint {number} differs"


def test_critic_usage(broker):
    out = subprocess.run([sys.executable, str(EXAMPLE), "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "--broker" in out.stdout and "PARLEY_BROKER" in out.stdout
    bad = subprocess.run([sys.executable, str(EXAMPLE), "--role", "no role"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    # A broker without a workflow: a clear error, exit 1.
    none = subprocess.run([sys.executable, str(EXAMPLE), "--broker", broker.router,
                           "--timeout", "5"], capture_output=True, text=True, timeout=30)
    assert none.returncode == 1 and "runs no workflow" in none.stderr, none.stderr
