#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""readme-flags.py - keep README.md's flag reference equal to the binaries' --help.

Every binary documents its flags once, in its pconfig option table, which
also drives --help. This script turns each binary's --help into a markdown
table and writes it between the README markers

    <!-- flags:BINARY:begin --> ... <!-- flags:BINARY:end -->

    scripts/readme-flags.py BIN_DIR            rewrite README.md in place
    scripts/readme-flags.py BIN_DIR --check    exit 1 (and say which) if stale

tests/check_docs.c runs --check, so a flag added without `make readme`
fails the tests instead of leaving the README wrong.
"""
import os
import re
import subprocess
import sys

BINARIES = ["parley-broker", "parley-agent", "parley-tap", "parley-keygen", "parley-ctl", "parley-web"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")

FLAG_LINE = re.compile(r"^  (?:-(\w), )?\s*--(\[no-\])?([\w-]+)(?:=(\S+))?\s*(.*)$")
# The line under a flag's help: "env: X", "default: Y", "range A to B",
# joined by "; ", each part there only when it applies.
ENV_LINE = re.compile(r"^\s{20,}((?:env: |default: |range ).*)$")


def options(binary_dir, name):
    out = subprocess.run([os.path.join(binary_dir, name), "--help"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    rows, current = [], None
    for line in out.splitlines():
        flag = FLAG_LINE.match(line)
        if flag:
            short, negatable, long_name, metavar, text = flag.groups()
            current = {"flag": ("-%s, " % short if short else "") + "--" + long_name
                       + ("=" + metavar if metavar else ""),
                       "negatable": bool(negatable), "help": text.strip(),
                       "env": "", "default": ""}
            rows.append(current)
            continue
        env = ENV_LINE.match(line)
        if env and current:
            rest = []
            for part in env.group(1).split("; "):
                if part.startswith("env: "):
                    current["env"] = part[len("env: "):].strip()
                elif part.startswith("default: "):
                    rest.append(part[len("default: "):].strip())
                else:
                    rest.append(part.strip())
            current["default"] = "; ".join(rest)
            current = None
        elif current and line.startswith(" " * 20) and line.strip():
            current["help"] = (current["help"] + " " + line.strip()).strip()
    return rows


def table(rows):
    def cell(text):
        return text.replace("|", "\\|")
    lines = ["| flag | env | default | meaning |", "| --- | --- | --- | --- |"]
    for r in rows:
        flag = "`%s`" % r["flag"] + (" (`--no-…`)" if r["negatable"] else "")
        env = "`%s`" % r["env"] if r["env"] else ""
        default = cell(r["default"]) if r["default"] not in ("", "none") else ""
        lines.append("| %s | %s | %s | %s |" % (flag, env, default, cell(r["help"])))
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: readme-flags.py BIN_DIR [--check]")
    binary_dir, check = sys.argv[1], "--check" in sys.argv[2:]
    text = open(README, encoding="utf-8").read()
    new = text
    for name in BINARIES:
        begin, end = "<!-- flags:%s:begin -->" % name, "<!-- flags:%s:end -->" % name
        if begin not in new or end not in new:
            sys.exit("README.md has no %s ... %s markers" % (begin, end))
        head, rest = new.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + begin + "\n" + table(options(binary_dir, name)) + "\n" + end + tail
    if check:
        if new != text:
            sys.exit("README.md's flag tables differ from the binaries' --help: "
                     "run `make readme` and commit README.md")
        print("README.md flag tables match --help")
        return
    if new != text:
        open(README, "w", encoding="utf-8").write(new)
        print("README.md flag tables updated")


if __name__ == "__main__":
    main()
