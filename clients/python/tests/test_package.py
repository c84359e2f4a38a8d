# SPDX-License-Identifier: MIT
"""The package installs with pip, offline, from its pyproject.toml."""
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def test_pip_install(tmp_path):
    # A copy, so the build's leftovers stay out of the tree.
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("__pycache__", "tests",
                                                                 "build", "*.egg-info"))
    target = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index",
                          "--no-build-isolation", "--no-deps", "--target", str(target),
                          str(src)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (target / "parley" / "py.typed").exists()
    check = subprocess.run([sys.executable, "-c",
                            "import parley, parley.aio, parley.errors as e; "
                            "print(parley.__file__, parley.__version__, e.InboxFull.code)"],
                           capture_output=True, text=True, cwd=tmp_path,
                           env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert check.returncode == 0, check.stderr
    where, version, code = check.stdout.split()
    assert where.startswith(str(target)) and version == "0.1.0" and code == "21"
