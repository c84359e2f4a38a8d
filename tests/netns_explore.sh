#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns_explore.sh - Parley across machines, on one machine.
#
# Two network namespaces stand in for two hosts: the broker runs in one,
# bound only to its veth address 10.77.0.1; three agents and a parley-tap run
# in the other (10.77.0.2) and reach it only through the veth pair, exactly
# as they would over a LAN (ports 5555 requests, 5556 events, 5557 tap). The
# agents must explore the whole world: each must exit 0 with coverage=100%
# in its summary, and the tap, across the same link, must see the broker's
# WORLD_EVENT "explored" with coverage 1.
#
# Everything crosses the link with CURVE, as a team across machines should
# run (docs/SECURITY.md): parley-keygen makes the broker's pair, one key per
# agent naming its id, and a tap key; the broker allows the public halves.
# A client without a key, and a tap holding only an agent key, are refused.
#
# The namespaces, the veth pair and the addresses exist only inside this
# test's own sandbox and are removed on every exit path (trap), as are the
# processes started here.
#
# Usage: tests/netns_explore.sh [--probe]
#   --probe  only check that namespaces can be created here, then clean up
# Env:    PARLEY_BIN_DIR  directory of parley-broker, parley-agent, parley-tap
# Exit:   0 passed, 1 failed, 77 skipped (cannot create namespaces: not root,
#         no CAP_NET_ADMIN, or no `ip`); the reason is printed on stdout.
set -u

bin=${PARLEY_BIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)/bin}
id=$$
ns_broker=parley-b-$id
ns_agents=parley-a-$id
veth_broker=pvb$id          # interface names must stay under 16 bytes
veth_agents=pva$id
addr_broker=10.77.0.1
addr_agents=10.77.0.2
router=tcp://$addr_broker:5555
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-netns-XXXXXX")

log() { printf 'netns_explore: %s\n' "$*"; }
# Runs a command in a named namespace's network stack. nsenter (util-linux)
# rather than `ip netns exec` / `ip -n`: those first remount / as a slave,
# which fails where / is not a mount point (a plain chroot), while entering
# only the network namespace needs nothing of the mount table. nsenter
# execs the command itself, so "$!" of a background job is the command.
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }

cleanup() {
    local pid ns running
    # Only our own background jobs that are still running (no reused pids).
    running=$(jobs -p)
    for pid in $running; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in $running; do
        wait "$pid" 2>/dev/null
    done
    # Anything still inside our namespaces was started by this script.
    for ns in "$ns_broker" "$ns_agents"; do
        if ip netns list 2>/dev/null | grep -qw "$ns"; then
            for pid in $(ip netns pids "$ns" 2>/dev/null); do
                kill -KILL "$pid" 2>/dev/null
            done
            ip netns del "$ns" 2>/dev/null
        fi
    done
    ip link del "$veth_broker" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

skip() { log "SKIPPED: $*"; exit 77; }
fail() {
    log "FAILED: $*"
    for f in "$work"/*.log; do
        [ -f "$f" ] && { echo "---- $(basename "$f") ----"; tail -n 40 "$f"; }
    done
    exit 1
}

command -v ip >/dev/null 2>&1 || skip "iproute2's ip command is not installed"
out=$(ip netns add "$ns_broker" 2>&1) ||
    skip "cannot create network namespaces here (needs root or CAP_NET_ADMIN): $out"
ip netns add "$ns_agents" || skip "cannot create a second network namespace"
out=$(ip link add "$veth_broker" type veth peer name "$veth_agents" 2>&1) ||
    skip "cannot create a veth pair (no veth support?): $out"
ip link set "$veth_broker" netns "$ns_broker" || fail "cannot move $veth_broker"
ip link set "$veth_agents" netns "$ns_agents" || fail "cannot move $veth_agents"
for side in broker agents; do
    ns_var=ns_$side; veth_var=veth_$side; addr_var=addr_$side
    in_ns "${!ns_var}" ip link set lo up || fail "lo up in ${!ns_var}"
    in_ns "${!ns_var}" ip addr add "${!addr_var}/24" dev "${!veth_var}" || fail "address ${!addr_var}"
    in_ns "${!ns_var}" ip link set "${!veth_var}" up || fail "link up ${!veth_var}"
done
if [ "${1:-}" = "--probe" ]; then
    log "network namespaces work here"
    exit 0
fi

for b in parley-broker parley-agent parley-tap parley-keygen; do
    [ -x "$bin/$b" ] || fail "$bin/$b is missing (run make)"
done
# Background jobs are started with nsenter itself, not through a shell
# function, so $! is the program (nsenter execs it) and signals reach it.
in_agents() { in_ns "$ns_agents" "$@"; }

# Keys: the broker's pair, one per agent (naming its id), one for the tap.
keys=$work/keys
mkdir -p "$work/allow"
"$bin/parley-keygen" --dir "$keys" --name broker >/dev/null 2>&1 || fail "keygen broker"
for i in 1 2 3; do
    "$bin/parley-keygen" --dir "$keys" --name "agent$i" --agents "Agent$i" >/dev/null 2>&1 ||
        fail "keygen agent$i"
    cp "$keys/agent$i" "$work/allow/"
done
"$bin/parley-keygen" --dir "$keys" --name tap --rights tap >/dev/null 2>&1 || fail "keygen tap"
cp "$keys/tap" "$work/allow/"
curve_tap=(--curve-key "$keys/tap" --curve-server-key "$keys/broker")

# The broker, bound to its veth address only, CURVE on every socket.
nsenter --net="/run/netns/$ns_broker" "$bin/parley-broker" --router "$router" --pub "tcp://$addr_broker:5556" \
    --tap "tcp://$addr_broker:5557" --ready-file "$work/ready" --data-dir "$work/data" \
    --curve-keys "$keys" --curve-allow "$work/allow" >"$work/broker.log" 2>&1 &
broker_pid=$!
for _ in $(seq 600); do
    [ -s "$work/ready" ] && break
    kill -0 "$broker_pid" 2>/dev/null || fail "the broker exited"
    sleep 0.1
done
[ -s "$work/ready" ] || fail "the broker did not come up within 60 s"
log "broker up in $ns_broker: $(tr '\n' ' ' <"$work/ready")"

# Nothing in the agents' namespace listens on 5555: a connection there
# reaches the broker only across the veth.
in_agents "$bin/parley-tap" --broker tcp://127.0.0.1:5555 --connect-timeout-ms 300 \
    >/dev/null 2>&1 && fail "a broker answered on 127.0.0.1 inside $ns_agents"

# Without a key, or with a key that lacks the tap right, nothing gets in.
in_agents "$bin/parley-tap" --broker "$router" --connect-timeout-ms 1000 >/dev/null 2>&1 &&
    fail "a plaintext parley-tap was answered by the CURVE broker"
in_agents "$bin/parley-tap" --broker "$router" --connect-timeout-ms 1000 \
    --curve-key "$keys/agent1" --curve-server-key "$keys/broker" >/dev/null 2>&1 &&
    fail "a parley-tap with an agent key was let in"
log "a plaintext tap and a tap with an agent key were refused"

# A tap across the link. It is subscribed once it prints a frame; the
# HELLO observe of short-lived taps give it frames to print.
nsenter --net="/run/netns/$ns_agents" "$bin/parley-tap" --broker "$router" --json "${curve_tap[@]}" \
    >"$work/tap.jsonl" 2>"$work/tap.log" &
tap_pid=$!
for _ in $(seq 600); do
    [ -s "$work/tap.jsonl" ] && break
    kill -0 "$tap_pid" 2>/dev/null || fail "parley-tap exited"
    in_agents "$bin/parley-tap" --broker "$router" --timeout-ms 1 "${curve_tap[@]}" >/dev/null 2>&1
    sleep 0.1
done
[ -s "$work/tap.jsonl" ] || fail "parley-tap saw no frame within 60 s"
log "tap subscribed across the link"

# Three agents on the other "host".
agent_pids=()
for i in 1 2 3; do
    nsenter --net="/run/netns/$ns_agents" timeout 300 "$bin/parley-agent" --broker "$router" --id "Agent$i" \
        --memory-dir none --quiet --max-steps 200 --curve-key "$keys/agent$i" --curve-server-key "$keys/broker" \
        >"$work/agent$i.log" 2>&1 &
    agent_pids+=($!)
done
for i in 1 2 3; do
    wait "${agent_pids[$((i - 1))]}"
    rc=$?
    [ $rc -eq 0 ] || fail "Agent$i exited with $rc"
    summary=$(grep "^\[Agent$i\] SUMMARY" "$work/agent$i.log")
    [ -n "$summary" ] || fail "Agent$i printed no summary"
    log "$summary"
    case "$summary" in
        *coverage=100%*) ;;
        *) fail "Agent$i ended below full coverage" ;;
    esac
done

# The broker's own word, seen through the tap.
for _ in $(seq 600); do
    grep -q '"type":"WORLD_EVENT"' "$work/tap.jsonl" &&
        grep '"type":"WORLD_EVENT"' "$work/tap.jsonl" | grep -q '"event":"explored"' && break
    sleep 0.1
done
event=$(grep '"type":"WORLD_EVENT"' "$work/tap.jsonl" | grep '"event":"explored"' | head -1)
[ -n "$event" ] || fail "the tap saw no WORLD_EVENT explored"
python3 -c 'import json,sys; m=json.loads(sys.argv[1])["msg"]; assert m["coverage"]==1, m' "$event" ||
    fail "WORLD_EVENT explored with coverage below 1: $event"
# (Async jobs of a non-interactive shell start with SIGINT ignored, so the
# tap is stopped the way systemd or docker would stop it: SIGTERM.)
kill -TERM "$tap_pid"
wait "$tap_pid" || fail "parley-tap did not exit cleanly on SIGTERM"
log "$(grep totals "$work/tap.log")"
grep -q "refused" "$work/broker.log" || fail "the broker logged no refusal"
log "PASSED: 3 agents in $ns_agents explored the world of the broker in $ns_broker over CURVE"
exit 0
