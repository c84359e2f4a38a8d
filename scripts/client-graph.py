#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""client-graph.py [CLIENT_DIR] - checks the shape of libparley's sources.

A module is a .c file and its headers (foo.c, foo.h, foo_int.h or
foo_internal.h). The checks:

  - no include cycle: module A depends on B when a file of A includes a
    header of B, and the modules can be put in layers, each depending
    only on the ones below (printed, lowest first);
  - a header declares only its own module's functions (one header that
    declares every file's functions would hide a cycle from the check
    above);
  - no call cycle either: A depends on B when A's code names a function
    B defines;
  - no struct with fields in a header of CLIENT_DIR: a class's fields are
    its .c file's, so no other file can reach into them;
  - no file longer than 600 lines.

Exits 1, saying what is wrong, when a check fails. Run by
tests/check_libparley.c in `make test`.
"""
import os
import re
import sys

MAX_LINES = 600


def module_of (name):
    stem = os.path.splitext (name) [0]
    for suffix in ("_internal", "_int"):
        if stem.endswith (suffix):
            return stem [: -len (suffix)]
    return stem


def strip (text):
    """The code without comments and string literals."""
    text = re.sub (r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub (r"//[^\n]*", " ", text)
    return re.sub (r'"(?:\\.|[^"\\\n])*"', '""', text)


def layers_of (modules, depends):
    """Layers, lowest first, and one cycle (empty when there is none)."""
    placed, layers = set (), []
    while len (placed) < len (modules):
        layer = sorted (m for m in modules if m not in placed and depends [m] <= placed)
        if not layer:
            break
        layers.append (layer)
        placed |= set (layer)
    if len (placed) == len (modules):
        return layers, []
    #  Name one cycle: walk unplaced dependencies until one repeats.
    start = next (m for m in modules if m not in placed)
    path, seen = [start], {start: 0}
    while True:
        step = sorted (d for d in depends [path [-1]] if d not in placed) [0]
        if step in seen:
            return layers, path [seen [step]:] + [step]
        seen [step] = len (path)
        path.append (step)


def tangles (modules, depends):
    """The strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, groups, counter = {}, {}, [], set (), [], [0]

    def visit (m):
        index [m] = low [m] = counter [0]
        counter [0] += 1
        stack.append (m)
        on.add (m)
        for d in sorted (depends [m]):
            if d not in index:
                visit (d)
                low [m] = min (low [m], low [d])
            elif d in on:
                low [m] = min (low [m], index [d])
        if low [m] == index [m]:
            group = []
            while True:
                d = stack.pop ()
                on.discard (d)
                group.append (d)
                if d == m:
                    break
            if len (group) > 1:
                groups.append (sorted (group))

    for m in modules:
        if m not in index:
            visit (m)
    return groups


def main ():
    root = sys.argv [1] if len (sys.argv) > 1 else os.path.join (
        os.path.dirname (os.path.abspath (__file__)), "..", "client")
    files = sorted (f for f in os.listdir (root) if f.endswith ((".c", ".h")))
    headers = {f for f in files if f.endswith (".h")}
    modules = sorted ({module_of (f) for f in files})
    depends = {m: set () for m in modules}
    problems = []
    for name in files:
        text = open (os.path.join (root, name), encoding="utf-8").read ()
        lines = text.count ("\n")
        if lines > MAX_LINES:
            problems.append (f"{name}: {lines} lines (at most {MAX_LINES})")
        for included in re.findall (r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            if included in headers and module_of (included) != module_of (name):
                depends [module_of (name)].add (module_of (included))
        if name.endswith (".h"):
            code = re.sub (r"/\*.*?\*/", "", text, flags=re.S)
            code = re.sub (r"//[^\n]*", "", code)
            for match in re.finditer (r"\b(?:struct|union)\s*\w*\s*\{", code):
                line = code [: match.start ()].count ("\n") + 1
                problems.append (f"{name}:{line}: a struct with fields in a header: "
                                 "keep the fields in the .c file")

    #  Functions: where each is defined, and what each module names.
    code = {name: strip (open (os.path.join (root, name), encoding="utf-8").read ())
            for name in files}
    defined = {}
    for name in files:
        if name.endswith (".c"):
            for function in re.findall (r"^(?:\w[\w \*]*?\b)?(\w+)\s*\([^;{)]*\)\s*\{",
                                        code [name], re.M):
                #  File-local functions (the s_ prefix, docs/CODING.md) are
                #  no module's interface.
                if not function.startswith ("s_"):
                    defined.setdefault (function, module_of (name))
    for name in sorted (headers):
        for function in re.findall (r"\b(\w+)\s*\([^;{()]*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?;",
                                    code [name], re.S):
            owner = defined.get (function)
            if owner and owner != module_of (name):
                problems.append (f"{name} declares {function}, which {owner}.c defines")
    calls = {m: set () for m in modules}
    for name in files:
        if name.endswith (".c"):
            for word in set (re.findall (r"\b\w+\b", code [name])):
                owner = defined.get (word)
                if owner and owner != module_of (name):
                    calls [module_of (name)].add (owner)

    layers, cycle = layers_of (modules, depends)
    if cycle:
        problems.append ("include cycle: " + " -> ".join (cycle))
    call_layers, call_cycle = layers_of (modules, calls)
    if call_cycle:
        problems.append ("call cycle: " + " -> ".join (call_cycle))
        for group in tangles (modules, calls):
            problems.append (f"{len (group)} modules call each other in a circle: "
                             + " ".join (group))

    for index, layer in enumerate (layers):
        print (f"layer {index}: {' '.join (layer)}")
    for problem in problems:
        print (f"client-graph: {problem}")
    if problems:
        return 1
    print (f"client-graph: {len (modules)} modules in {len (layers)} layers, no include or "
           f"call cycle, each header its own module's, no struct in a header, no file "
           f"over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit (main ())
