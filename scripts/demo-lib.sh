# SPDX-License-Identifier: MIT
# demo-lib.sh - what the demo scripts (demo.sh, demo-scene.sh,
# demo-newsroom.sh) share: finding the binaries, a temporary directory
# whose processes are all stopped on exit or Ctrl-C, and a broker on
# loopback whose router is read from its ready file.
#
# Sourced, not run. Before sourcing, a script sets `demo_name` (the prefix
# of its messages); afterwards `here` (the source tree) and `bin` (the
# binaries) are set. On exit the script's processes stop in two rounds:
# first those in `pids` and in the variables named in `demo_with`, all
# together; then those in the variables named in `demo_after`, one at a
# time, in order (the broker last but for what it needs). `keep=1` keeps
# the temporary directory.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${PARLEY_BIN_DIR:-$here/build/rel/bin}
[ -x "$bin/parley-agent" ] || bin=$here/bin
pids=()
demo_with=()
demo_after=(broker_pid)
broker_pid=

# Exits 2 unless every binary named is built.
demo_need() {
    local b
    for b in "$@"; do
        [ -x "$bin/$b" ] || { echo "$demo_name: $bin/$b not found; run 'make' first" >&2; exit 2; }
    done
}

# The value of `key` in the ready file `file` (empty when none).
demo_ready_value() {
    sed -n "s/^$2=//p" "$1" 2>/dev/null
}

# Waits for the ready file `file` of process `pid`: up to `tries` tenths of
# a second, or until the process is gone.
demo_wait_ready() {
    local _
    for _ in $(seq 1 "$3"); do
        [ -s "$2" ] && break
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
}

# The temporary directory `tmp` (named after `1`), removed on exit unless
# keep=1 (then `2` says what it holds), with every process stopped.
demo_tmp() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    demo_kept=$2
    trap demo_cleanup EXIT
    trap 'echo; echo "$demo_name: interrupted"; exit 130' INT TERM
}

demo_cleanup() {
    local status=$? pid name first=("${pids[@]}") after=()
    trap - EXIT INT TERM
    for name in "${demo_with[@]}"; do [ -n "${!name:-}" ] && first+=("${!name}"); done
    for name in "${demo_after[@]}"; do [ -n "${!name:-}" ] && after+=("${!name}"); done
    for pid in "${first[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${first[@]}"; do wait "$pid" 2>/dev/null; done
    for pid in "${after[@]}"; do
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ "$keep" = 1 ]; then echo "$demo_name: $demo_kept kept in $tmp"; else rm -rf "$tmp"; fi
    exit "$status"
}

# parley-broker with these flags (and a ready file and log in `tmp`), in
# the background: sets broker_pid and router, exits 1 with its log when it
# does not come up within 15 s.
demo_broker() {
    "$bin/parley-broker" "$@" --ready-file "$tmp/ready" 2>"$tmp/broker.log" &
    broker_pid=$!
    demo_wait_ready "$broker_pid" "$tmp/ready" 150
    router=$(demo_ready_value "$tmp/ready" router)
    if [ -z "$router" ]; then
        echo "$demo_name: the broker did not start:" >&2; cat "$tmp/broker.log" >&2; exit 1
    fi
}
