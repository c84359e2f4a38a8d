#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""metrics_check - reads a Prometheus text page (file argument) the way a
scraper does and checks the conventions check_metrics asks for.

The page is parsed twice: by prometheus_client's own parser (Debian's
python3-prometheus-client: what the Python ecosystem reads), and line by line
here, strictly, because that parser forgives things Prometheus does not
(samples before their TYPE, a family announced twice, histogram buckets that
go down). Exit 1 with the reasons on stderr when anything is off; else print
one JSON object on stdout for the C test to check values with:

    {"types": {family: type}, "samples": {"name{k=\"v\",...}": value}}

with labels sorted by key.
"""
import json
import math
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")
TYPES = {"counter", "gauge", "histogram"}


def key(name, labels):
    inner = ",".join('%s="%s"' % (k, labels[k]) for k in sorted(labels))
    return "%s{%s}" % (name, inner) if inner else name


def parse_labels(text, problems, line):
    labels = {}
    if not text:
        return labels
    body = text[1:-1]
    pos = 0
    while pos < len(body):
        m = LABEL.match(body, pos)
        if not m:
            problems.append("bad labels: %s" % line)
            return labels
        if m.group(1) in labels:
            problems.append("label repeated: %s" % line)
        labels[m.group(1)] = m.group(2)
        pos = m.end()
        if pos < len(body):
            if body[pos] != ",":
                problems.append("bad label separator: %s" % line)
                return labels
            pos += 1
    return labels


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and types.get(base) == "histogram":
            return base
    return name


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    problems = []
    # The library's reading (raises on what it cannot parse).
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # noqa: BLE001 - any parse failure is the finding
        print("prometheus_client cannot parse the page: %s" % e, file=sys.stderr)
        return 1
    if not families:
        problems.append("no metric families")

    types, helps, samples, seen_samples = {}, {}, {}, set()
    finished = set()            # families whose samples ended
    current = None
    buckets = {}                # histogram series -> [(le, value)]
    if not text.endswith("\n"):
        problems.append("the page does not end with a newline")
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4 or not NAME.match(parts[2]):
                problems.append("bad comment line: %s" % line)
                continue
            name = parts[2]
            if not name.startswith("parley_"):
                problems.append("no parley_ prefix: %s" % name)
            if current != name:
                finished.add(current)
                current = name
            seen = helps if parts[1] == "HELP" else types
            if name in finished or name in seen:
                problems.append("family %s announced twice" % name)
            if parts[1] == "HELP":
                helps[name] = parts[3]
            else:
                if parts[3] not in TYPES:
                    problems.append("unknown type: %s" % line)
                types[name] = parts[3]
            continue
        if line.startswith("#") or not line:
            problems.append("unexpected line: %r" % line)
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append("bad sample line: %s" % line)
            continue
        name, labels = m.group(1), parse_labels(m.group(2), problems, line)
        family = family_of(name, types)
        if family != current or family not in types or family not in helps:
            problems.append("sample outside its family's HELP and TYPE: %s" % line)
        try:
            value = float(m.group(3))
        except ValueError:
            problems.append("bad value: %s" % line)
            continue
        k = key(name, labels)
        if k in seen_samples:
            problems.append("sample repeated: %s" % k)
        seen_samples.add(k)
        samples[k] = value
        kind = types.get(family)
        if kind == "counter" and not family.endswith("_total"):
            problems.append("counter without _total: %s" % family)
        if kind in ("counter", "histogram") and (value < 0 or math.isnan(value)):
            problems.append("negative counter: %s" % line)
        if name.endswith("_bucket") and kind == "histogram":
            le = labels.pop("le", None)
            if le is None:
                problems.append("bucket without le: %s" % line)
                continue
            buckets.setdefault(key(family, labels), []).append((le, value))

    for series, points in buckets.items():
        bounds = [math.inf if le == "+Inf" else float(le) for le, _ in points]
        values = [v for _, v in points]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            problems.append("%s: le bounds not increasing" % series)
        if bounds[-1] != math.inf:
            problems.append("%s: buckets do not end in +Inf" % series)
        if any(b < a for a, b in zip(values, values[1:])):
            problems.append("%s: buckets not cumulative: %s" % (series, values))
        name, _, rest = series.partition("{")
        count_key = name + "_count" + ("{" + rest if rest else "")
        if samples.get(count_key) != values[-1]:
            problems.append("%s: _count %s is not the +Inf bucket %s"
                            % (series, samples.get(count_key), values[-1]))
        if (name + "_sum" + ("{" + rest if rest else "")) not in samples:
            problems.append("%s: no _sum" % series)

    for family, kind in types.items():
        if kind == "histogram" and not family.endswith("_seconds"):
            problems.append("histogram not in seconds: %s" % family)
    # The library must have read the same families.
    read = {f.name + ("_total" if f.type == "counter" else ""): f.type for f in families}
    for family, kind in types.items():
        if read.get(family) != kind:
            problems.append("prometheus_client reads %s as %s, not %s"
                            % (family, read.get(family), kind))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    json.dump({"types": types, "samples": samples}, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
