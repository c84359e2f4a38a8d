#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh - runs Parley's benchmarks and their baselines, writes the tables.
#
#   PARLEY_BIN_DIR=build/rel/bin ./scripts/bench.sh build/rel/bench/bench_*   (what `make bench` runs)
#   BENCH_QUICK=1 ...   smaller runs (a smoke test, figures not for the docs)
#   BENCH_NO_PIN=1 ...  no CPU pinning
#
# Not a timed test: every figure is a ratio against a baseline measured in
# the same run on the same machine. The baselines:
#   - a bare ZeroMQ ROUTER forwarder and ROUTER echo (inside bench_relay),
#   - for the Python client (bench/python_relay.py): a pyzmq ROUTER forwarder
#     and echo, and the same frames sent from bare pyzmq,
#   - nats-server core pub/sub and NATS JetStream (file storage) through
#     libnats, redis-server pub/sub and SET through hiredis: Debian packages,
#     installed here when missing (as root, else with sudo); their small
#     clients (bench/baselines/*.c) are built here too, so the project
#     itself never needs those packages,
#   - the original Python program (../shared/baselines/pyorig, or
#     $PARLEY_PYORIG), run by bench/pyorig.py beside Parley's agent benches.
# The pushed relay and the A -> B -> A round trip (bench_push) run in
# BENCH_ROUNDS rounds (3; 1 when quick), each alternating nats-server,
# JetStream and bench_push's broker and forwarder; the tables give the
# medians of the rounds.
# Servers run on CPU 0 and clients on CPU 1 (taskset), as in the C benches,
# except the "all on CPU 0" round trips and the agent runs.
# All traffic stays on 127.0.0.1.
#
# Output: build/bench/results.txt (RESULT lines), build/bench/bench.log
# (everything), build/bench/results.md (the tables; docs/PERFORMANCE.md
# holds a pasted copy of a real run). The whole run takes 10-15 minutes.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=build/bench
mkdir -p "$OUT"
: "${PARLEY_BIN_DIR:=$ROOT/build/rel/bin}"
export PARLEY_BIN_DIR
# Every broker a bench starts keeps a journal (fsync everysec): the
# default a user gets, so the figures are the product's (tests/lib/testbroker.c).
export PARLEY_TESTBROKER_DURABLE=1
QUICK=${BENCH_QUICK:-0}
RESULTS=$OUT/results.txt
LOG=$OUT/bench.log
: > "$RESULTS"
: > "$LOG"
PIDS=()

log() { echo "bench: $*" | tee -a "$LOG" >&2; }
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    return 0
}
trap cleanup EXIT

# "taskset -c CPU" when there are 2+ cores and pinning is on, else nothing.
# A prefix rather than a function, so "$(pinned 0) server &" gives $! = the
# server's own pid (taskset execs it) and cleanup can kill it.
pinned() {
    if [ "${BENCH_NO_PIN:-0}" != 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
        echo "taskset -c $1"
    fi
}
pin() { local cpu=$1; shift; $(pinned "$cpu") "$@"; }

run() {     # run a bench command, keep its output, collect its RESULT lines
    log "running: $*"
    "$@" 2>&1 | tee -a "$LOG" | grep '^RESULT ' >> "$RESULTS"
    local rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || log "warning: $1 exited $rc (its figures may be missing)"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- baselines: packages and clients -------------------------------------
install_baselines() {
    local missing=()
    command -v nats-server >/dev/null || missing+=(nats-server)
    command -v redis-server >/dev/null || missing+=(redis-server)
    pkg-config --exists libnats 2>/dev/null || missing+=(libnats-dev)
    pkg-config --exists hiredis 2>/dev/null || missing+=(libhiredis-dev)
    if [ -n "$PYORIG" ] && ! /usr/bin/python3 -c 'import faiss, numpy, yaml, requests' 2>/dev/null; then
        missing+=(python3-faiss python3-numpy python3-yaml python3-requests)
    fi
    [ ${#missing[@]} = 0 ] && return 0
    log "installing baseline packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$LOG" 2>&1 \
        || { $sudo apt-get update >>"$LOG" 2>&1 &&
             $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$LOG" 2>&1; }
}

# The original Python program, if its folder is here.
PYORIG=${PARLEY_PYORIG:-}
for dir in "$ROOT/../shared/baselines/pyorig" "$ROOT/../../shared/baselines/pyorig"; do
    [ -z "$PYORIG" ] && [ -f "$dir/run.py" ] && PYORIG=$(cd "$dir" && pwd)
done

BASELINES=0
if install_baselines; then
    if cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror bench/baselines/nats_relay.c \
            -o "$OUT/nats_relay" $(pkg-config --cflags --libs libnats) >>"$LOG" 2>&1 &&
       cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror bench/baselines/redis_bench.c \
            -o "$OUT/redis_bench" $(pkg-config --cflags --libs hiredis) >>"$LOG" 2>&1; then
        BASELINES=1
    else
        log "warning: the baseline clients did not build (see $LOG)"
    fi
else
    log "warning: could not install nats-server/redis-server; their baselines are skipped"
fi

if [ "$QUICK" = 1 ]; then
    RELAY_N=100000; SET_N=10000; SETP_N=100000; QFLAG=--quick
    ROUNDS=${BENCH_ROUNDS:-1}; PUSH_N=100000; JS_N=50000; RTT_N=2000
else
    RELAY_N=1000000; SET_N=20000; SETP_N=1000000; QFLAG=
    ROUNDS=${BENCH_ROUNDS:-3}; PUSH_N=500000; JS_N=200000; RTT_N=5000
fi

if [ "$BASELINES" = 1 ]; then
    RPORT=$(free_port)
    # Pub/sub buffers unbounded so a slow subscriber is not cut off; no
    # persistence: both as for an in-memory relay.
    $(pinned 0) redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
        --client-output-buffer-limit 'pubsub 0 0 0' >>"$LOG" 2>&1 &
    REDIS_PID=$!; PIDS+=("$REDIS_PID")
    sleep 1
    for size in 64 256; do
        run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" relay "$RELAY_N" "$size"
    done
    run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" set "$SET_N" 1
    run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" set "$SETP_N" 256
    cleanup; PIDS=()
fi

# --- pushed relay and round trip, alternated with nats and JetStream ------
# Each round: nats-server (in memory) and JetStream (file storage in a
# fresh directory) relays and A -> B -> A round trips, then bench_push
# (the forwarder and Parley). Servers on CPU 0; clients on CPU 1, and for
# the _cpu0 round trips on CPU 0 too.
PUSH_BENCH=
for bench in "$@"; do [ "$(basename "$bench")" = bench_push ] && PUSH_BENCH=$bench; done
for round in $(seq 1 "$ROUNDS"); do
    log "round $round of $ROUNDS: nats-server, JetStream, bench_push"
    if [ "$BASELINES" = 1 ]; then
        # A slow subscriber is not cut off (max_pending 1 GiB), as for
        # Parley's relay, whose receiver is never cut either.
        NPORT=$(free_port); JPORT=$(free_port)
        rm -rf "$OUT/jetstream"; mkdir -p "$OUT/jetstream"
        printf 'listen: 127.0.0.1:%s\nmax_pending: 1073741824\n' "$NPORT" > "$OUT/nats.conf"
        printf 'listen: 127.0.0.1:%s\nmax_pending: 1073741824\njetstream {\n  store_dir: "%s"\n}\n' \
            "$JPORT" "$ROOT/$OUT/jetstream" > "$OUT/jetstream.conf"
        $(pinned 0) nats-server -c "$OUT/nats.conf" >>"$LOG" 2>&1 &
        PIDS+=("$!")
        $(pinned 0) nats-server -c "$OUT/jetstream.conf" >>"$LOG" 2>&1 &
        PIDS+=("$!")
        sleep 1
        for size in 64 256; do
            run pin 1 "$OUT/nats_relay" "nats://127.0.0.1:$NPORT" "$PUSH_N" "$size"
            run pin 1 "$OUT/nats_relay" "nats://127.0.0.1:$JPORT" "$JS_N" "$size" --js
        done
        run pin 1 "$OUT/nats_relay" "nats://127.0.0.1:$NPORT" "$RTT_N" 64 --rtt
        run pin 0 "$OUT/nats_relay" "nats://127.0.0.1:$NPORT" "$RTT_N" 64 --rtt --suffix _cpu0
        run pin 1 "$OUT/nats_relay" "nats://127.0.0.1:$JPORT" "$RTT_N" 64 --rtt --js
        run pin 0 "$OUT/nats_relay" "nats://127.0.0.1:$JPORT" "$RTT_N" 64 --rtt --js --suffix _cpu0
        cleanup; PIDS=()
        rm -rf "$OUT/jetstream"
    fi
    [ -n "$PUSH_BENCH" ] && run "$PUSH_BENCH" --count "$PUSH_N" --rounds "$RTT_N"
done

# The original Python program, run once before Parley's agent benches and
# once after (the tables take the medians of both).
pyorig() {
    if [ -n "$PYORIG" ] && /usr/bin/python3 -c 'import faiss, numpy, yaml, requests' 2>/dev/null; then
        run /usr/bin/python3 bench/pyorig.py "$PYORIG" $QFLAG
    else
        log "warning: the original Python program (../shared/baselines/pyorig, or PARLEY_PYORIG) or Debian's python3-faiss is missing; its figures are skipped"
    fi
}

# --- Parley benches (each pins its own broker and clients) ---------------
pyorig
for bench in "$@"; do
    name=$(basename "$bench")
    case $name in
        bench_vmemory) run "$bench" ;;          # owned by the agent-mind engineer
        # The step with each memory index kind (flat is the default).
        bench_step)    run "$bench" $QFLAG
                       run "$bench" $QFLAG --memory-index hnsw
                       run "$bench" $QFLAG --memory-index ivf ;;
        bench_relay)   run "$bench" --count "$RELAY_N" ;;
        bench_curve)   run "$bench" --count "$((RELAY_N / 2))" ;;
        bench_push)    ;;                       #  in the rounds above
        bench_agents)  run "$bench" $QFLAG
                       pyorig ;;
        *)             run "$bench" $QFLAG ;;
    esac
done

# --- Python client (clients/python) against pyzmq alone -------------------
# The interpreter with Debian's python3-zmq and python3-msgpack (a pyenv
# python3 earlier in PATH usually has neither). It pins its own processes.
PYBENCH=$(for p in /usr/bin/python3 python3; do
              "$p" -c 'import zmq, msgpack' 2>/dev/null && { echo "$p"; break; }; done)
if [ -n "$PYBENCH" ]; then
    run "$PYBENCH" bench/python_relay.py $QFLAG
else
    log "warning: no python3 with zmq and msgpack; the Python client's figures are skipped"
fi

# --- tables ---------------------------------------------------------------
python3 - "$RESULTS" "$OUT/results.md" "$QUICK" "$LOG" <<'EOF'
import sys, subprocess, datetime
results, out, quick, logfile = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
# A figure measured in several rounds (or runs) is their median.
import statistics
seen = {}
for line in open(results):
    p = line.split()
    if len(p) >= 3:
        seen.setdefault(p[1], []).append(float(p[2]))
r = {k: statistics.median(v) for k, v in seen.items()}

def sh(cmd):
    try: return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception: return "?"

def fmt(v, unit=""):
    if v is None: return "n/a"
    if abs(v) >= 1e6: s = "%.2fM" % (v / 1e6)
    elif abs(v) >= 1e4: s = "%.0fk" % (v / 1e3)
    elif abs(v) >= 100: s = "%.0f" % v
    else: s = "%.2f" % v
    return s + (" " + unit if unit else "")

L = []
L.append("Generated by `make bench` (scripts/bench.sh) on %s." % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"))
L.append("Machine: `nproc` = %s, %s; kernel %s.%s" % (sh("nproc"), sh("lscpu | grep 'Model name' | sed 's/  */ /g'"),
         sh("uname -r"), " **QUICK run (BENCH_QUICK=1): smaller counts, not for the docs.**" if quick else ""))
L.append("Pinning: servers (parley-broker, forwarder, echo, nats-server, redis-server) on CPU 0, clients on CPU 1, except the \"one CPU\" round trips (all on CPU 0) and the agent runs (not pinned).")
L.append("Load average (1, 5, 15 min) at the end: %s." % sh("cut -d' ' -f1-3 /proc/loadavg"))
L.append("")
L.append("| figure | Parley | baseline | ratio | target | met |")
L.append("| --- | --- | --- | --- | --- | --- |")

def row(name, pk, bk, bname, unit, target_ratio=None, lower_is_better=False, target_text=""):
    p, b = r.get(pk), r.get(bk) if bk else None
    ratio = (p / b) if (p is not None and b) else None
    met = ""
    if target_ratio is not None and ratio is not None:
        met = "yes" if ((ratio <= target_ratio) if lower_is_better else (ratio >= target_ratio)) else "**no**"
    L.append("| %s | %s | %s | %s | %s | %s |" % (name, fmt(p, unit), (bname + ": " + fmt(b, unit)) if bk else "", 
             ("%.2f×" % ratio) if ratio is not None else "", target_text, met))

# The relay figure is the pipelined receiver (3 streaming FETCHes in
# flight); the _f1 rows are the old one-FETCH-at-a-time receiver, kept for
# comparison (no target: a client may pipeline).
for size in (64, 256):
    for batch, base, label in ((256, "nats", "nats-server"), (4096, "nats", "nats-server"),
                               (4096, "forwarder", "ROUTER forwarder"), (4096, "redis", "redis pub/sub")):
        row("relay %d B, SEND/FETCH batch %d, 3 FETCHes in flight" % (size, batch),
            "relay_parley_%d_b%d" % (size, batch),
            "relay_%s_%d" % (base, size), label, "msg/s",
            1.0 if base == "nats" else None, target_text="≥ nats" if base == "nats" else "")
    for batch in (256, 4096):
        row("relay %d B, SEND/FETCH batch %d, 1 FETCH in flight (old client)" % (size, batch),
            "relay_parley_%d_b%d_f1" % (size, batch), "relay_nats_%d" % size, "nats-server", "msg/s")
    # Every Parley client here is libparley; this row is its blocking calls
    # only (one SEND and one FETCH at a time) against the pipelined sender
    # (4 SENDs in flight) with the same one-FETCH receiver.
    row("relay %d B, libparley blocking calls only, batch 256" % size,
        "relay_libparley_%d_b256" % size, "relay_parley_%d_b256_f1" % size,
        "4 SENDs in flight, 1 FETCH", "msg/s")
# Default broker settings (bench_relay's sender side): one message per
# pipelined call (libparley coalesces them) against the forwarder's one
# message per frame, and pipelined batches of 4096 against nats;
# INBOX_FULL and lost must be 0.
for size in (64, 256):
    row("relay %d B, one message per call, pipelined (coalesced), default settings" % size,
        "relay_default_%d_b1" % size, "relay_forwarder_%d" % size, "ROUTER forwarder", "msg/s",
        1.0, target_text="≥ 1.0× forwarder")
    row("relay %d B, SEND batch 4096 pipelined, default settings" % size,
        "relay_default_%d_b4096" % size, "relay_nats_%d" % size, "nats-server", "msg/s",
        1.2, target_text="≥ 1.2× nats")
    for batch in (1, 4096):
        full = r.get("relay_default_%d_b%d_inbox_full" % (size, batch))
        lost = r.get("relay_default_%d_b%d_lost" % (size, batch))
        parked = r.get("relay_default_%d_b%d_parked" % (size, batch))
        ok = full is not None and lost is not None and full == 0 and lost == 0
        L.append("| relay %d B, batch %d, default settings: INBOX_FULL / lost (SENDs parked) | %s / %s (%s) | | | 0 / 0 | %s |"
                 % (size, batch, fmt(full), fmt(lost), fmt(parked), "yes" if ok else "**no**"))
row("round trip HEARTBEAT p50", "rtt_heartbeat_p50", "rtt_echo_p50", "ROUTER echo", "µs", 1.5, True, "≤ 1.5× echo")
row("round trip HEARTBEAT p99", "rtt_heartbeat_p99", "rtt_echo_p99", "ROUTER echo", "µs")
row("round trip empty FETCH p50", "rtt_fetch_empty_p50", "rtt_echo_p50", "ROUTER echo", "µs", 1.5, True, "≤ 1.5× echo")
row("round trip empty FETCH p99", "rtt_fetch_empty_p99", "rtt_echo_p99", "ROUTER echo", "µs")
p = r.get("fanout_deliveries")
L.append("| \"all\" fan-out to 100 agents | %s | | | ≥ 2M/s | %s |" % (fmt(p, "deliveries/s"),
         "" if p is None else ("yes" if p >= 2e6 else "**no**")))
p = r.get("fanout_deliveries_1000")
L.append("| \"all\" fan-out to 1,000 agents | %s | | | reported | |" % fmt(p, "deliveries/s"))
for key, label in (("codec_mail_encode_record", "codec: encode one MAIL record (of 1,000, 64 B body)"),
                   ("codec_mail_decode_record", "codec: decode one MAIL record (strict)"),
                   ("codec_send1_decode", "codec: decode a SEND of one message"),
                   ("codec_write1_decode", "codec: decode a WRITE of one op")):
    v = r.get(key)
    L.append("| %s | %s | | | | |" % (label, fmt(v, "ns")))
row("state WRITE, 1 op, sync", "state_parley_sync", "state_redis_set_p1", "redis SET", "ops/s",
    1.0, target_text="≥ redis")
row("bare ZeroMQ round trip, WRITE-sized frame, sync (the floor)", "state_echo_sync",
    "state_redis_set_p1", "redis SET", "round trips/s")
row("state WRITE, 1 op, 256 in flight", "state_parley_pipelined", "state_redis_set_p256", "redis SET pipelined 256", "ops/s",
    1.0, target_text="≥ redis")
row("bare ZeroMQ round trip, WRITE-sized frame, 256 in flight (the floor)", "state_echo_pipelined",
    "state_redis_set_p256", "redis SET pipelined 256", "round trips/s")
row("state WRITE, 256 ops per WRITE", "state_parley_batched", "state_redis_set_p256", "redis SET pipelined 256", "ops/s")
row("relay 256 B with CURVE (bench_curve, best of 3)", "curve_relay_curve_256",
    "curve_relay_plain_256", "same relay, plain", "msg/s", 0.7, target_text="≥ 0.7× plain")
for shape in ("sync", "pipelined", "batched"):
    p = r.get("state_replica_" + shape)
    L.append("| replica (SUB) updates received, %s | %s | | | keeps up | |" % (shape, fmt(p, "updates/s")))
row("workflow hand-over p50 (HANDOVER sent -> next agent's first request)", "handover_p50",
    "handover_rtt_p50", "request round trip", "µs")
row("workflow hand-over p99", "handover_p99", "handover_rtt_p99", "request round trip", "µs")
for turns in (10, 100, 1000):
    row("checkpoint storage per turn, %d turns, ~1 MB state" % turns,
        "checkpoint_bytes_per_turn_%d" % turns, "checkpoint_full_copy_%d" % turns,
        "full copy per turn", "B", 0.01, True, "≤ 1% of a copy")
for kind, unit in (("state", "ops/s"), ("relay", "msg/s")):
    row("journal everysec: %s" % ("state WRITE, 256 in flight" if kind == "state" else "relay SEND 256 + FETCH 4096"),
        "journal_%s_everysec" % kind, "journal_%s_off" % kind, "journal off", unit, 0.8, target_text="≥ 0.8× off")
    row("journal always (group commit): %s" % ("state WRITE, 256 in flight" if kind == "state" else "relay SEND 256 + FETCH 4096"),
        "journal_%s_always" % kind, "journal_%s_off" % kind, "journal off", unit, 0.3, target_text="≥ 0.3× off")
for size in (64, 4096, 65536):
    row("journal record checksum, %d B records: CRC-32C (this CPU's instruction)" % size,
        "journal_checksum_crc32c_%d" % size, "journal_checksum_zlib_%d" % size,
        "zlib CRC-32 (the first format)", "MB/s")
mb = 50 if quick else 500
for what, unit in (("fork", "ms"), ("start", "ms"), ("install", "ms"), ("faults", "faults"),
                   ("rtt_during_p99", "µs"), ("rtt_during_max", "µs")):
    row("compaction of %d MB of mail, heap on huge pages: %s" % (mb, what.replace("_", " ")),
        "compaction_%dmb_%s_huge" % (mb, what), "compaction_%dmb_%s" % (mb, what),
        "glibc malloc as it comes", unit)
row("HEARTBEAT p99 during a compaction of %d MB of mail" % mb, "compaction_%dmb_rtt_during_p99" % mb,
    "compaction_%dmb_rtt_outside_p99" % mb, "without a compaction", "µs")
for m, k in ((100, 10), (1000, 100)):
    for how in ("log", "snapshot"):
        v = r.get("recovery_%s_%dk_%dk" % (how, m, k))
        met = "" if v is None else ("yes" if v < 2000 else "**no**")
        L.append("| recovery from the %s: %dk queued messages, %dk state keys | %s | | | < 2 s | %s |" % (
            how, m, k, fmt(v, "ms"), met))
L.append("")
# The pushed relay and the A -> B -> A round trip (bench_push) against the
# forwarder, nats-server and JetStream, each the median of the rounds that
# alternated them (ROUNDS in scripts/bench.sh).
def ratio(a, b):
    return ("%.2f×" % (a / b)) if (a is not None and b) else ""
def yes(ok):
    return "" if ok is None else ("yes" if ok else "**no**")
rounds = len(seen.get("relay_push1_64", []))
L.append("Pushed relay at default settings (journal, fsync everysec), one sender → server → one receiver, medians of %d alternated rounds:" % rounds)
L.append("")
for size in (64, 256):
    fwd, nats, js = (r.get("relay_push_forwarder_%d" % size), r.get("relay_nats_%d" % size),
                     r.get("relay_jetstream_%d" % size))
    one, batched = r.get("relay_push1_%d" % size), r.get("relay_pushb_%d" % size)
    L.append("| %d B | msg/s | × forwarder | × nats | × JetStream | × Parley batched | lost / INBOX_FULL | target | met |" % size)
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    def prow(name, v, lost_key=None, target="", met=""):
        lost = ""
        if lost_key:
            lost = "%s / %s" % (fmt(r.get(lost_key + "_lost")), fmt(r.get(lost_key + "_inbox_full")))
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt(v), ratio(v, fwd), ratio(v, nats), ratio(v, js), ratio(v, batched), lost, target, met))
    prow("bare ZeroMQ ROUTER forwarder, one message per frame", fwd)
    prow("nats-server (in memory), libnats publisher", nats)
    prow("NATS JetStream (file), 1,024 async publishes in flight, ack-all", js)
    ok1 = None if None in (one, fwd, batched, js) else (one >= fwd and one >= 0.9 * batched and one >= 10 * js)
    prow("Parley, pushed, one message per call (libparley coalesces them)", one, "relay_push1_%d" % size,
         "≥ 1.0× fwd, ≥ 0.9× batched, ≥ 10× JetStream", yes(ok1))
    prow("Parley, pushed, one message per call, coalescing off (one SEND each)",
         r.get("relay_push1_off_%d" % size), "relay_push1_off_%d" % size)
    okb = None if None in (batched, nats) else batched >= nats
    prow("Parley, pushed, SEND batches of 4096 (3730 at 256 B: the 1 MiB frame)", batched,
         "relay_pushb_%d" % size, "≥ 1.0× nats", yes(okb))
    prow("Parley, pushed, one message per call (coalesced), `--data-dir none`", r.get("relay_push1_nodata_%d" % size),
         "relay_push1_nodata_%d" % size)
    L.append("")
L.append("Round trip A → B → A, 64 B (A sends, B takes and answers, A takes; both ends in one thread), µs, medians of %d rounds:" % rounds)
L.append("")
L.append("| | p50 apart | p99 apart | p50 one CPU | p99 one CPU | p50 × fwd apart | p99 × fwd apart | p50 × fwd one CPU | p99 × fwd one CPU | target | met |")
L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
fa50, fa99, fo50, fo99 = (r.get("rtt_forwarder_ab_p50"), r.get("rtt_forwarder_ab_p99"),
                          r.get("rtt_forwarder_ab_cpu0_p50"), r.get("rtt_forwarder_ab_cpu0_p99"))
for name, key, target in (("bare ZeroMQ forwarder", "rtt_forwarder_ab", ""),
                          ("nats-server (in memory)", "rtt_nats_ab", ""),
                          ("NATS JetStream (file)", "rtt_jetstream_ab", ""),
                          ("Parley, both pushed (CONSUME)", "rtt_push_ab", "p50 ≤ 1.0×, p99 ≤ 2× fwd"),
                          ("Parley, both pulled (MAIL_READY + FETCH), apart only", "rtt_pull_ab", "")):
    a50, a99, o50, o99 = (r.get(key + "_p50"), r.get(key + "_p99"), r.get(key + "_cpu0_p50"),
                          r.get(key + "_cpu0_p99"))
    met = ""
    if target and None not in (a50, a99, o50, o99, fa50, fa99, fo50, fo99):
        met = "yes" if (a50 <= fa50 and o50 <= fo50 and a99 <= 2 * fa99 and o99 <= 2 * fo99) else "**no**"
    L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, fmt(a50), fmt(a99), fmt(o50), fmt(o99), ratio(a50, fa50), ratio(a99, fa99),
        ratio(o50, fo50), ratio(o99, fo99), target, met))
L.append("")
L.append("Apart: the server on CPU 0, both ends on CPU 1. One CPU: everything on CPU 0.")
L.append("")
L.append("| Python client figure | parley (Python) | baseline | ratio |")
L.append("| --- | --- | --- | --- |")
def pyrow(name, pk, bk, bname, unit):
    p, b = r.get(pk), r.get(bk)
    ratio = ("%.2f×" % (p / b)) if (p is not None and b) else ""
    L.append("| %s | %s | %s | %s |" % (name, fmt(p, unit), bname + ": " + fmt(b, unit), ratio))
pyrow("relay 64 B, batch 256, parley.Client", "py_relay_client", "py_relay_pyzmq", "pyzmq ROUTER forwarder, 1 msg/frame", "msg/s")
pyrow("relay 64 B, batch 256, parley.Client", "py_relay_client", "py_relay_raw", "same frames from bare pyzmq", "msg/s")
for q in ("p50", "p99"):
    pyrow("round trip HEARTBEAT %s, parley.Client" % q, "py_rtt_client_" + q, "py_rtt_echo_" + q, "pyzmq ROUTER echo", "µs")
    pyrow("round trip HEARTBEAT %s, parley.aio.Client" % q, "py_rtt_aio_" + q, "py_rtt_echo_" + q, "pyzmq ROUTER echo", "µs")
    pyrow("round trip HEARTBEAT %s, bare pyzmq DEALER" % q, "py_rtt_raw_" + q, "py_rtt_echo_" + q, "pyzmq ROUTER echo", "µs")
L.append("")
L.append("| agent figure | value | target | met |")
L.append("| --- | --- | --- | --- |")
for kind in ("", "hnsw_", "ivf_"):
    for n in (0, 1000, 10000, 100000):
        p50, p90 = r.get("step_median_%s%d" % (kind, n)), r.get("step_p90_%s%d" % (kind, n))
        if p50 is None and kind:
            continue
        target = "≤ 5 ms" if (n == 10000 and not kind) or (n == 100000 and kind) else ""
        met = ("yes" if p50 <= 5 else "**no**") if (target and p50 is not None) else ""
        L.append("| loop step (no LLM), %d memories, index %s: median / p90 | %s / %s | %s | %s |" % (
            n, kind.rstrip("_") or "flat", fmt(p50, "ms"), fmt(p90, "ms"), target, met))
for kind in ("hnsw", "ivf"):
    for n in (10000, 100000):
        q, rc, fq = (r.get("vmemory_query_us_%s_%d" % (kind, n)), r.get("vmemory_recall_%s_%d" % (kind, n)),
                     r.get("vmemory_query_us_flat_%d" % n))
        if q is None:
            continue
        L.append("| memory search (embed + top-3), %d memories, %s: median; recall@3 vs flat | %s (flat %s); recall %s | | |" % (
            n, kind, fmt(q, "µs"), fmt(fq, "µs"), "n/a" if rc is None else "%.3f" % rc))
v = r.get("rss_per_memory_beyond_vector")
L.append("| RSS per stored memory, beyond its vector | %s (total %s) | ≤ 2 KB + vector | %s |" % (
    fmt(v, "B"), fmt(r.get("rss_per_memory"), "B"), "" if v is None else ("yes" if v <= 2048 else "**no**")))
L.append("| 50 agents: total steps/s | %s | | |" % fmt(r.get("agents50_steps_per_s"), "steps/s"))
L.append("| 50 agents: broker CPU | %s of one core | | |" % fmt(r.get("agents50_broker_cpu"), "%"))
c, s = r.get("agents50_completed"), r.get("agents50_started")
L.append("| 50 agents: completed all steps | %s of %s | all | %s |" % (fmt(c), fmt(s), "" if c is None else ("yes" if c == s else "**no**")))
L.append("| team of 10 x 200 steps: total steps/s | %s | | |" % fmt(r.get("team10_steps_per_s"), "steps/s"))
c, s = r.get("team10_completed"), r.get("team10_started")
L.append("| team of 10: completed all steps | %s of %s | all | %s |" % (fmt(c), fmt(s), "" if c is None else ("yes" if c == s else "**no**")))
L.append("")
# Parley's agent against the original Python program in the same run
# (bench/pyorig.py: its step with the model and embedder stubbed, its team
# of 10 as threads of one process).
L.append("| agent against the original Python program, same run | Parley | original | ratio | target | met |")
L.append("| --- | --- | --- | --- | --- | --- |")
for n in (0, 1000):
    p, b = r.get("step_median_%d" % n), r.get("pyorig_step_median_%d" % n)
    L.append("| one step, %d memories (median) | %s | %s | %s | ≤ 1.0× | %s |" % (
        n, fmt(p, "ms"), fmt(b, "ms"), ratio(p, b), yes(None if None in (p, b) else p <= b)))
p, b = r.get("team10_steps_per_s"), r.get("pyorig_team10_steps_per_s")
L.append("| team of 10 x 200 steps, total steps/s | %s | %s | %s | ≥ 1.5× | %s |" % (
    fmt(p), fmt(b), ratio(p, b), yes(None if None in (p, b) else p >= 1.5 * b)))
L.append("")
# How many agents one machine hosts (bench_host).
sizes = sorted({int(k[4:].split("_")[0]) for k in r if k.startswith("host") and k.endswith("_agents")})
if sizes:
    py = r.get("python_pss_kib")
    def mib(v):
        return fmt(None if v is None else v / 1024, "MiB")
    L.append("Agents stepping once a second (heuristic, `--step-delay-ms 1000`, posting to the team channel, 64×64 world), not pinned:")
    L.append("")
    L.append("| agents | steps/s per agent: min / median | under 0.95 / no step | offline at once / ever | PSS per agent: median, max | × Python process | agent CPU (median) | CPU per step | step time | broker CPU | broker RSS (peak) | load | met |")
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        g = lambda k: r.get("host%d_%s" % (n, k))
        ok = None
        if None not in (g("slow"), g("offline_ever"), g("pss_median_kib")):
            ok = g("slow") == 0 and g("offline_ever") == 0 and (py is None or g("pss_median_kib") <= py / 3)
        L.append("| %d | %s / %s | %s / %s | %s / %s | %s, %s | %s | %s %% | %s | %s | %s %% | %s (%s) | %s | %s |" % (
            n, fmt(g("steps_per_s_min")), fmt(g("steps_per_s_median")), fmt(g("slow")), fmt(g("stalled")),
            fmt(g("offline_max")), fmt(g("offline_ever")), mib(g("pss_median_kib")), mib(g("pss_max_kib")),
            ratio(g("pss_median_kib"), py), fmt(g("agent_cpu_median")), fmt(g("cpu_ms_per_step"), "ms"),
            fmt(g("step_ms_median"), "ms"), fmt(g("broker_cpu")), mib(g("broker_rss_kib")),
            mib(g("broker_hwm_kib")), fmt(g("load")), yes(ok)))
    L.append("")
    L.append("Python process: /usr/bin/python3 with numpy and faiss imported and a flat index built, PSS %s. "
             "Met: every agent ≥ 0.95 steps/s, none ever offline, PSS ≤ 1/3 of the Python process's."
             % mib(py))
L.append("")
vm = [l.strip() for l in open(logfile) if l.startswith("vmemory index=")]
if vm:
    L.append("bench_vmemory (memory search alone, embed + top-3):")
    L.append("")
    L += ["    " + l for l in vm]
    L.append("")
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
EOF
log "tables in $OUT/results.md, raw figures in $RESULTS, full output in $LOG"
