#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-ab.sh - the broker's benches against several builds of parley-broker,
# alternated in one sitting, as ratios to the first.
#
#   scripts/bench-ab.sh [--rounds N] [--quick] LABEL=BIN_DIR LABEL=BIN_DIR ...
#
# e.g. the broker before a change against the current one:
#   git worktree add /tmp/before <commit> && make -C /tmp/before build/rel/bin/parley-broker
#   scripts/bench-ab.sh before=/tmp/before/build/rel/bin after=build/rel/bin
#
# Each round runs, for every build in turn, this tree's bench_relay (the
# pulled relay, the request round trips and the default-settings rows),
# bench_push (the pushed relay and the A -> B -> A round trips),
# bench_state (WRITE) and bench_workflow (hand-overs) with
# PARLEY_BIN_DIR=BIN_DIR: the same clients against each broker, each with
# its default settings (journal, fsync everysec). The table
# (build/bench/ab.md; raw lines in build/bench/ab.txt) gives each figure's
# median over the rounds per build and its ratio to the first build's.
# Alternating builds within a round is what makes the ratios worth
# reading on a shared machine: a load that comes and goes falls on all of
# them. Not part of `make bench` (it is for a change, not for the product).
set -u
cd "$(dirname "$0")/.."
ROUNDS=3
QUICK=0
BUILDS=()
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) ROUNDS=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        *=*) BUILDS+=("$1"); shift ;;
        *) echo "usage: $0 [--rounds N] [--quick] LABEL=BIN_DIR ..." >&2; exit 2 ;;
    esac
done
[ ${#BUILDS[@]} -ge 2 ] || { echo "bench-ab: give at least two LABEL=BIN_DIR" >&2; exit 2; }
BENCH=build/rel/bench
for b in bench_relay bench_push bench_state bench_workflow; do
    [ -x "$BENCH/$b" ] || { echo "bench-ab: $BENCH/$b is missing (make)" >&2; exit 2; }
done
if [ "$QUICK" = 1 ]; then RELAY=100000; PUSH=100000; RTT=2000; Q=--quick
else RELAY=300000; PUSH=300000; RTT=5000; Q=; fi
OUT=build/bench
mkdir -p "$OUT"
RAW=$OUT/ab.txt
: > "$RAW"
export PARLEY_TESTBROKER_DURABLE=1
for round in $(seq 1 "$ROUNDS"); do
    for spec in "${BUILDS[@]}"; do
        label=${spec%%=*}; dir=$(cd "${spec#*=}" && pwd)
        echo "bench-ab: round $round, $label ($dir), load $(cut -d' ' -f1 /proc/loadavg)" >&2
        for cmd in "bench_relay --count $RELAY" "bench_push --count $PUSH --rounds $RTT" \
                   "bench_state $Q" "bench_workflow --quick"; do
            PARLEY_BIN_DIR=$dir $BENCH/$cmd 2>/dev/null | grep '^RESULT ' | sed "s/^RESULT /$label /" >> "$RAW"
        done
    done
done
python3 - "$RAW" "$OUT/ab.md" "${BUILDS[@]}" <<'EOF'
import sys, statistics, collections
raw, out, builds = sys.argv[1], sys.argv[2], [b.split("=")[0] for b in sys.argv[3:]]
v = collections.defaultdict(list)
units = {}
for line in open(raw):
    p = line.split()
    if len(p) >= 3:
        v[(p[0], p[1])].append(float(p[2]))
        units[p[1]] = p[3] if len(p) > 3 else ""
keys = [k for k in dict.fromkeys(k for (_, k) in v) if not k.endswith(("_lost", "_inbox_full", "_parked"))]
lower = lambda k: units.get(k) in ("us", "ms", "B")
L = ["| figure | " + " | ".join(builds) + " | " + " | ".join("%s / %s" % (b, builds[0]) for b in builds[1:]) + " |",
     "| --- |" + " --- |" * (2 * len(builds) - 1)]
for k in keys:
    med = [statistics.median(v[(b, k)]) if v.get((b, k)) else None for b in builds]
    cells = ["%.4g %s" % (m, units[k]) if m is not None else "n/a" for m in med]
    ratios = ["%.2f×" % (m / med[0]) if (m is not None and med[0]) else "" for m in med[1:]]
    L.append("| %s%s | %s | %s |" % (k, " (lower is better)" if lower(k) else "", " | ".join(cells), " | ".join(ratios)))
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
EOF
