# SPDX-License-Identifier: MIT
"""The install commands of clients/python/README.md, run as written.

The block between `<!-- install:begin -->` and `<!-- install:end -->` is
run by bash in a temporary home, from a folder holding a copy of the
package at clients/python (as the top of the tree would), with the package
index switched off (PIP_NO_INDEX): Debian's python3, a venv that sees
Debian's modules, and pip without build isolation must need nothing from
the network. Then the venv's python runs a small agent of one's own
against a real broker, twice (leaving `with` says BYE). The top README
must show the same commands, and the reply tables must name exactly the
dataclasses' fields.
"""
import dataclasses
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from conftest import HERE
from parley import types

PACKAGE = HERE.parent
ROOT = HERE.parents[2]
README = PACKAGE / "README.md"


def install_block() -> str:
    text = README.read_text()
    m = re.search(r"<!-- install:begin -->\s*```sh\n(.*?)```\s*<!-- install:end -->", text, re.S)
    assert m, "clients/python/README.md has no install block"
    return m.group(1)


def test_top_readme_shows_the_same_commands():
    block = install_block()
    assert block in (ROOT / "README.md").read_text(), \
        "README.md's Python install commands differ from clients/python/README.md's"


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    tree = home / "tree"
    shutil.copytree(PACKAGE, tree / "clients" / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "tests", "build", "*.egg-info"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PIP_NO_INDEX="1")
    run = subprocess.run(["bash", "-euc", install_block()], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"the README's install commands failed:\n{run.stdout}\n{run.stderr}"
    assert "parley 0.1.0" in run.stdout, run.stdout
    python = home / ".venvs" / "parley" / "bin" / "python"
    assert python.exists()
    return python, env


AGENT = """
    import sys, parley
    with parley.Client(sys.argv[1], "PyScout") as c:
        world = c.session.welcome.world
        print(f"{world.kind} of {world.width} x {world.height} cells, "
              f"{world.objects_total} objects")
        c.listen("explorers")
        obs = c.perceive()
        c.send_to("all", f"I am at position {obs.position} and found: {', '.join(obs.objects)}.")
        print("from", parley.__file__)
"""


def test_installed_package_runs_an_agent_twice(venv_python, broker, tmp_path):
    python, env = venv_python
    script = tmp_path / "scout.py"
    script.write_text(textwrap.dedent(AGENT))
    for attempt in (1, 2):
        run = subprocess.run([str(python), str(script), broker.router], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, f"run {attempt}:\n{run.stderr}"
        lines = run.stdout.splitlines()
        assert re.fullmatch(r"(line|grid) of \d+ x \d+ cells, \d+ objects", lines[0]), lines
        # The installed copy, not the tree's.
        assert lines[1].startswith(f"from {python.parent.parent}/lib/"), lines


def table_fields(heading: str) -> set:
    """The backticked names in the first column of the table after `heading`."""
    text = README.read_text()
    at = text.index(heading)
    rows = []
    for line in text[at:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    names = set()
    for row in rows[2:]:
        names.update(re.findall(r"`(\w+)`", row.split("|")[1]))
    return names


@pytest.mark.parametrize("heading,cls,extra", [
    ("`Observation` (from", types.Observation, set()),
    ("`MailItem`:", types.MailItem, {"text"}),
    ("is a `WorldSummary`", types.WorldSummary, set()),
])
def test_reply_tables_name_every_field(heading, cls, extra):
    documented = table_fields(heading)
    fields = {f.name for f in dataclasses.fields(cls)} | extra
    assert documented == fields, f"{cls.__name__}: README lists {sorted(documented)}, " \
                                 f"the class has {sorted(fields)}"
