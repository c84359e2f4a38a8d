#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scene_critic.py - a Python agent that plays the scene director's critic.

It takes the critic's place in scenarios/scene next to the five other
roles run by parley-agent (``--role scenarios/scene/roles/<role>.yaml``),
with the same checks as parley-agent's built-in critic
(agent/policy_scene_critic.c), each an issue with the category the
orchestrator routes by:

    clipping       two objects whose footprints overlap by more than 0.05 m
                   on both axes while their heights meet
    floating       an object above the floor that nothing holds up
    placement      an object with no position
    material       an object with no material
    lighting       no lighting, or daylight for a warm mood
    camera         no camera
    missing_asset  an object the plan asks for that is not in the scene

With no issue it writes final_report and ends the run (status done);
otherwise it writes validation_issues and hands the turn to the
orchestrator with status revision.

How a role agent runs: HELLO with the capability ``role:critic``, subscribe
to the workflow's events, then look at the WORKFLOW once (an event
published before the subscription joined is not lost that way), once
after every event, and every few seconds as a safety net. When the turn is
its own (holder = its role, agent = its id) it reads its keys with GET,
decides, and sends one HANDOVER. It prints one line per turn it plays and
exits when the workflow ends.

    clients/python/examples/scene_critic.py --broker tcp://127.0.0.1:5555

Exit status: 0 when the workflow is done, 1 when it failed or on a broker
error, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from the tree
import parley                                                     # noqa: E402
from parley import WorkflowStatus, WriteOp, errors               # noqa: E402

#: the critic's overlap tolerance, metres (SCENE_TOLERANCE in C)
TOLERANCE = 0.05
#: the keys the critic reads (scenarios/scene/roles/critic.yaml, connectors.state)
READS = ["scene_objects", "lighting_setup", "camera_setup", "master_plan", "user_prompt"]
#: how often the workflow is looked at without an event, seconds
RECHECK = 5.0


# ---------------------------------------------------------------------------
#  JSON-like access that forgives a missing or mistyped field, as jansson's
#  json_object_get / json_number_value do in the C critic.

def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _num(obj: Any, group: str, field: str) -> float:
    value = _get(_get(obj, group), field)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _name(obj: Any) -> str:
    return _str(_get(obj, "name")) or "?"


def objects_latest(objects: Any) -> List[Dict[str, Any]]:
    """scene_objects is append-only: merge the versions by id, later fields
    over earlier ones, in order of first appearance."""
    merged: List[Dict[str, Any]] = []
    by_id: Dict[str, Dict[str, Any]] = {}
    for obj in objects if isinstance(objects, list) else []:
        oid = _get(obj, "id")
        if not isinstance(oid, str):
            continue
        if oid in by_id:
            by_id[oid].update(obj)
        else:
            copy = dict(obj)
            by_id[oid] = copy
            merged.append(copy)
    return merged


# ---------------------------------------------------------------------------
#  The checks

def _issue(issues: List[Dict[str, Any]], severity: str, category: str, obj: Any, fix: str,
           text: str) -> None:
    issue = {"severity": severity, "category": category, "description": text[:255],
             "suggested_fix": fix}
    if isinstance(obj, dict) and "id" in obj:
        issue["affected_object_id"] = obj["id"]
    issues.append(issue)


def _overlap(a: float, wa: float, b: float, wb: float) -> float:
    return min(a + wa / 2, b + wb / 2) - max(a - wa / 2, b - wb / 2)


def _check_pair(issues: List[Dict[str, Any]], a: Dict[str, Any], b: Dict[str, Any]) -> None:
    az, bz = _num(a, "position", "z"), _num(b, "position", "z")
    ah, bh = _num(a, "bounding_box", "height"), _num(b, "bounding_box", "height")
    # Stacked (one rests on the other's top) is not clipping.
    if az >= bz + bh - TOLERANCE or bz >= az + ah - TOLERANCE:
        return
    dx = _overlap(_num(a, "position", "x"), _num(a, "bounding_box", "width"),
                  _num(b, "position", "x"), _num(b, "bounding_box", "width"))
    dy = _overlap(_num(a, "position", "y"), _num(a, "bounding_box", "depth"),
                  _num(b, "position", "y"), _num(b, "bounding_box", "depth"))
    # Inclusive, with room for the rounding of positions in binary.
    if dx > TOLERANCE + 1e-9 and dy > TOLERANCE + 1e-9:
        _issue(issues, "error", "clipping", b, "move it clear of the other by its bounding box",
               f"'{_name(b)}' intersects with '{_name(a)}' by {dx:.2f} m")


def _supported(objects: List[Dict[str, Any]], index: int) -> bool:
    obj = objects[index]
    z = _num(obj, "position", "z")
    if z <= TOLERANCE:
        return True
    for i, under in enumerate(objects):
        if i == index:
            continue
        top = _num(under, "position", "z") + _num(under, "bounding_box", "height")
        dx = abs(_num(obj, "position", "x") - _num(under, "position", "x"))
        dy = abs(_num(obj, "position", "y") - _num(under, "position", "y"))
        if abs(top - z) <= TOLERANCE and dx <= _num(under, "bounding_box", "width") / 2 \
                and dy <= _num(under, "bounding_box", "depth") / 2:
            return True
    return False


def _check_objects(issues: List[Dict[str, Any]], objects: List[Dict[str, Any]]) -> None:
    for i, a in enumerate(objects):
        if "position" not in a:
            _issue(issues, "error", "placement", a, "place it", f"'{_name(a)}' has no position")
            continue
        if "material" not in a:
            _issue(issues, "warning", "material", a, "give it a material",
                   f"'{_name(a)}' has no material")
        if not _supported(objects, i):
            _issue(issues, "error", "floating", a, "put it on the floor or on a surface",
                   f"'{_name(a)}' floats {_num(a, 'position', 'z'):.2f} m above the floor")
        for b in objects[i + 1:]:
            if "position" in b:
                _check_pair(issues, a, b)


def _check_scene(state: Dict[str, Any], issues: List[Dict[str, Any]],
                 objects: List[Dict[str, Any]]) -> None:
    plan = state.get("master_plan")
    lighting = state.get("lighting_setup")
    mood = _str(_get(_get(plan, "lighting_requirements"), "mood"))
    if not isinstance(lighting, dict):
        _issue(issues, "error", "lighting", None, "light the scene", "the scene has no lighting")
    elif mood == "warm" and _num(lighting, "key_light", "color_temperature") > 4000:
        _issue(issues, "warning", "lighting", None, "use a key light below 4000 K",
               f"daylight key light ({_num(lighting, 'key_light', 'color_temperature'):.0f} K) "
               "for a warm mood")
    if not isinstance(state.get("camera_setup"), dict):
        _issue(issues, "error", "camera", None, "frame the scene", "the scene has no camera")
    wanted_list = _get(plan, "required_objects")
    for wanted in wanted_list if isinstance(wanted_list, list) else []:
        if not any(_name(obj) == (_str(wanted) or "") for obj in objects):
            _issue(issues, "error", "missing_asset", None, "fetch an asset for it",
                   f"the prompt asks for '{_str(wanted) or '?'}' and the scene has none")


def _report(state: Dict[str, Any], objects: List[Dict[str, Any]]) -> str:
    lines = [f'Scene for "{_str(state.get("user_prompt")) or ""}": {len(objects)} objects.']
    for obj in objects:
        material = _get(obj, "material")
        lines.append(f"  {_name(obj):<10} at ({_num(obj, 'position', 'x'):.2f}, "
                     f"{_num(obj, 'position', 'y'):.2f}, {_num(obj, 'position', 'z'):.2f}), "
                     f"{_str(_get(material, 'color')) or ''} "
                     f"{_str(_get(material, 'style')) or ''}, "
                     f"{_str(_get(obj, 'asset_path')) or ''}")
    lighting = state.get("lighting_setup")
    focal = _get(state.get("camera_setup"), "focal_length")
    focal = float(focal) if isinstance(focal, (int, float)) and not isinstance(focal, bool) \
        else 0.0
    text = "\n".join(lines) + "\n"
    text += (f"  lighting: key {_num(lighting, 'key_light', 'color_temperature'):.0f} K, "
             f"{_str(_get(lighting, 'time_of_day')) or 'day'}; camera focal {focal:.0f} mm")
    return text[:4095]


class Turn:
    """What the critic decided: the HANDOVER's ops, next role and status."""

    def __init__(self) -> None:
        self.ops: List[WriteOp] = []
        self.next: Optional[str] = None
        self.status: Optional[WorkflowStatus] = None
        self.summary = ""
        self.issues: List[Dict[str, Any]] = []


def critique(state: Dict[str, Any]) -> Turn:
    """The critic's turn for `state` (its keys, as GET returns them)."""
    objects = objects_latest(state.get("scene_objects"))
    turn = Turn()
    issues = turn.issues
    _check_objects(issues, objects)
    _check_scene(state, issues, objects)
    if not issues:
        turn.ops += [WriteOp.update("validation_passed", True),
                     WriteOp.update("final_report", _report(state, objects))]
        turn.status = WorkflowStatus.DONE
        turn.summary = f"passed: {len(objects)} objects, no issue"
    else:
        first = _str(issues[0].get("description")) or "?"
        turn.summary = (f"{len(issues)} issue{'s' if len(issues) > 1 else ''}, "
                        f"first: {first}")[:511]
        turn.ops += [WriteOp.update("validation_issues", issues),
                     WriteOp.update("validation_passed", False)]
        turn.status = WorkflowStatus.REVISION
        turn.next = "orchestrator"
    turn.ops.append(WriteOp.update("messages", [{"from": "critic", "text": turn.summary}]))
    return turn


# ---------------------------------------------------------------------------
#  The role's loop

class Critic:
    def __init__(self, client: parley.Client, role: str) -> None:
        self.c = client
        self.role = role
        self.turns = 0

    def take_turn(self, info: parley.WorkflowInfo) -> None:
        try:
            state = self.c.get(READS).values()
            turn = critique(state)
            reply = self.c.handover(turn.ops, next=turn.next, status=turn.status)
            summary = turn.summary
        except errors.NotTurnHolder:
            return                      # the turn moved on (a timeout gave it away)
        except errors.ConnectionLost:
            return                      # did it land? the next look at WORKFLOW tells
        except (errors.BrokerError, ValueError, TypeError) as why:
            # A turn that cannot be decided or sent ends the run with the
            # reason rather than leaving it stalled.
            reason = f"{self.role} ({self.c.agent}) could not take its turn: {why}"
            print(f"scene_critic: {reason}", file=sys.stderr)
            reply = self.c.handover(status=WorkflowStatus.FAILED, reason=reason[:4000])
            summary = "gave up"
        self.turns += 1
        print(f"[{self.c.agent}] turn {info.turn}: {summary} -> {reply.holder or 'end'} "
              f"({reply.status_name})", flush=True)

    def check(self) -> Optional[parley.WorkflowInfo]:
        """Plays the turn if it is ours; the WORKFLOW_INFO once the run ended."""
        info = self.c.workflow()
        if info.ended:
            return info
        if info.holder == self.role and info.agent == self.c.agent:
            self.take_turn(info)
        return None

    def run(self) -> parley.WorkflowInfo:
        self.c.workflow_events()
        recheck = 0.0
        wake = True
        while True:
            if wake or time.monotonic() >= recheck:
                ended = self.check()
                if ended is not None:
                    return ended
                recheck = time.monotonic() + RECHECK
            event = self.c.wait_workflow_event(max(0.01, recheck - time.monotonic()))
            wake = event is not None
            # Every queued event is taken: one look at the workflow covers them.
            while self.c.workflow_event() is not None:
                pass


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="The scene director's critic, in Python (see the module text).",
        epilog="Environment: PARLEY_BROKER (default for --broker), PARLEY_AGENT_ID (--id), "
               "PARLEY_TOKEN_FILE, PARLEY_CURVE_KEY, PARLEY_CURVE_SERVER_KEY. "
               "Exit status: 0 done, 1 failed or broker error, 2 usage.")
    parser.add_argument("--broker", default=os.environ.get("PARLEY_BROKER", "tcp://127.0.0.1:5555"),
                        help="the broker's request endpoint")
    parser.add_argument("--id", default=os.environ.get("PARLEY_AGENT_ID", "critic"),
                        help="this agent's id")
    parser.add_argument("--role", default="critic",
                        help="the role it plays (HELLO capability role:<role>)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    parser.add_argument("--token-file", default=os.environ.get("PARLEY_TOKEN_FILE"),
                        help="keep the broker's resume token here (plain mode)")
    parser.add_argument("--curve-key", default=os.environ.get("PARLEY_CURVE_KEY"),
                        help="this agent's CURVE pair (FILE and FILE_secret, parley-keygen)")
    parser.add_argument("--curve-server-key", default=os.environ.get("PARLEY_CURVE_SERVER_KEY"),
                        help="the broker's public certificate")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    if not parley.codec.name_valid(args.role):
        parser.error(f"--role {args.role!r} is not a valid role name")
    try:
        with parley.Client(args.broker, args.id, caps=[f"role:{args.role}", "python"],
                           token_file=args.token_file, curve_key=args.curve_key,
                           curve_server_key=args.curve_server_key,
                           timeout=args.timeout, connect_timeout=args.timeout) as client:
            critic = Critic(client, args.role)
            try:
                ended = critic.run()
            except errors.NoWorkflow:
                print("scene_critic: the broker runs no workflow (start it with --scenario)",
                      file=sys.stderr)
                client.bye()
                return 1
            client.bye()
    except errors.ParleyError as exc:
        print(f"scene_critic: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"SUMMARY agent={args.id} role={args.role} workflow={ended.status_name} "
          f"turns={ended.turn} revisions={ended.revisions} mine={critic.turns}"
          + (f' reason="{ended.reason}"' if ended.reason else ""), flush=True)
    return 0 if ended.status is WorkflowStatus.DONE else 1


if __name__ == "__main__":
    sys.exit(main())
