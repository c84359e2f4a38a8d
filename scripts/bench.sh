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
#   - nats-server core pub/sub through libnats, redis-server pub/sub and SET
#     through hiredis: Debian packages, installed here when missing (as root,
#     else with sudo); their small clients (bench/baselines/*.c) are built
#     here too, so the project itself never needs those packages.
# Servers run on CPU 0 and clients on CPU 1 (taskset), as in the C benches.
# All traffic stays on 127.0.0.1.
#
# Output: build/bench/results.txt (RESULT lines), build/bench/bench.log
# (everything), build/bench/results.md (the tables; docs/PERFORMANCE.md
# holds a pasted copy of a real run). The whole run takes 2-4 minutes.
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
    [ ${#missing[@]} = 0 ] && return 0
    log "installing baseline packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$LOG" 2>&1 \
        || { $sudo apt-get update >>"$LOG" 2>&1 &&
             $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$LOG" 2>&1; }
}

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
else
    RELAY_N=1000000; SET_N=20000; SETP_N=1000000; QFLAG=
fi

if [ "$BASELINES" = 1 ]; then
    NPORT=$(free_port)
    printf 'listen: 127.0.0.1:%s\nmax_pending: 1073741824\n' "$NPORT" > "$OUT/nats.conf"
    $(pinned 0) nats-server -c "$OUT/nats.conf" >>"$LOG" 2>&1 &
    NATS_PID=$!; PIDS+=("$NATS_PID")
    RPORT=$(free_port)
    # Pub/sub buffers unbounded so a slow subscriber is not cut off; no
    # persistence: both as for an in-memory relay.
    $(pinned 0) redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
        --client-output-buffer-limit 'pubsub 0 0 0' >>"$LOG" 2>&1 &
    REDIS_PID=$!; PIDS+=("$REDIS_PID")
    sleep 1
    for size in 64 256; do
        run pin 1 "$OUT/nats_relay" "nats://127.0.0.1:$NPORT" "$RELAY_N" "$size"
        run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" relay "$RELAY_N" "$size"
    done
    run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" set "$SET_N" 1
    run pin 1 "$OUT/redis_bench" 127.0.0.1 "$RPORT" set "$SETP_N" 256
    cleanup; PIDS=()
fi

# --- Parley benches (each pins its own broker and clients) ---------------
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
r = {}
for line in open(results):
    p = line.split()
    if len(p) >= 3:
        r[p[1]] = float(p[2])

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
L.append("Pinning: servers (parley-broker, forwarder, echo, nats-server, redis-server) on CPU 0, clients on CPU 1, except the 50-agent run.")
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
# pipelined SEND against the forwarder's one message per frame, and
# pipelined batches of 4096 against nats; INBOX_FULL and lost must be 0.
for size in (64, 256):
    row("relay %d B, one message per SEND, pipelined, default settings" % size,
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
# Pushed delivery (CONSUME): the receiver takes MAIL_PUSH frames instead
# of FETCHing (the sender as above); and the agent-to-agent round trip,
# A sends to B and B answers, both pushed (and both pulled, for
# comparison), against A -> forwarder -> B -> forwarder -> A in the same run.
for size in (64, 256):
    for batch in (256, 4096):
        row("relay %d B, SEND batch %d, pushed receiver (CONSUME)" % (size, batch),
            "relay_push_%d_b%d" % (size, batch), "relay_forwarder_%d" % size,
            "ROUTER forwarder", "msg/s", 1.0, target_text="≥ forwarder")
row("round trip A → B → A, both pushed, p50", "rtt_push_ab_p50", "rtt_forwarder_ab_p50",
    "A → fwd → B → fwd → A", "µs", 1.0, True, "≤ forwarder")
row("round trip A → B → A, both pushed, p99", "rtt_push_ab_p99", "rtt_forwarder_ab_p99",
    "A → fwd → B → fwd → A", "µs")
row("round trip A → B → A, both pulled (MAIL_READY + FETCH), p50", "rtt_pull_ab_p50",
    "rtt_forwarder_ab_p50", "A → fwd → B → fwd → A", "µs")
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
# The original single-process Python program's step (model stubbed, FAISS
# flat, dim 384), measured on a machine of this kind: a quoted reference,
# not a baseline of this run.
python_step = {0: 0.28, 1000: 0.49, 10000: 2.5, 100000: 21}
for kind in ("", "hnsw_", "ivf_"):
    for n in (0, 1000, 10000, 100000):
        p50, p90 = r.get("step_median_%s%d" % (kind, n)), r.get("step_p90_%s%d" % (kind, n))
        if p50 is None and kind:
            continue
        target = "≤ 5 ms" if (n == 10000 and not kind) or (n == 100000 and kind) else ""
        met = ("yes" if p50 <= 5 else "**no**") if (target and p50 is not None) else ""
        L.append("| loop step (no LLM), %d memories, index %s: median / p90 (original Python program: %s ms, quoted) | %s / %s | %s | %s |" % (
            n, kind.rstrip("_") or "flat", python_step[n], fmt(p50, "ms"), fmt(p90, "ms"), target, met))
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
v = r.get("step_vs_python_0")
L.append("| loop step, 0 memories, vs the original Python program's 0.28 ms (reference, not same-run) | %s | ≤ 1.0 x | %s |" % (
    fmt(v, "x"), "" if v is None else ("yes" if v <= 1.0 else "**no**")))
L.append("| team of 10 x 200 steps: total steps/s | %s | | |" % fmt(r.get("team10_steps_per_s"), "steps/s"))
v = r.get("team10_vs_python")
L.append("| team of 10 vs the original Python program's 1,755 steps/s (reference, not same-run) | %s | ≥ 3 x | %s |" % (
    fmt(v, "x"), "" if v is None else ("yes" if v >= 3 else "**no**")))
c, s = r.get("team10_completed"), r.get("team10_started")
L.append("| team of 10: completed all steps | %s of %s | all | %s |" % (fmt(c), fmt(s), "" if c is None else ("yes" if c == s else "**no**")))
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
