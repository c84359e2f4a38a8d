#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# valgrind.sh BIN_DIR TEST_BINARY...
# Runs each Check suite under valgrind with CK_FORK=no, so the tests run in
# the suite's own process where valgrind sees them (forked children are not
# traced, and the binaries a suite starts are not either: run those by hand,
# see tests/README.md). A definite leak or any memory error fails the suite
# (exit 99); suppressions (tests/valgrind.supp) cover only third-party
# one-time allocations. Logs in build/valgrind/<suite>.log. Slow: FAISS and
# the spawned brokers run 10-50x slower, so expect tens of minutes.
# Then the binaries themselves: build/valgrind/bin holds parley-broker,
# parley-agent and parley-tap scripts that exec valgrind on the real ones
# (log per process in build/valgrind/bin-<name>.<pid>.log), and the suites
# in VALGRIND_BIN_SUITES (default: check_broker_mail check_tap_live
# check_agent_e2e - one that drives each binary) run normally with
# PARLEY_BIN_DIR pointing there.
# Ends with "valgrind: N clean, N failed"; exits non-zero if any failed.
set -u
bin_dir=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$root/build/valgrind
mkdir -p "$logs"
clean=0; failed=()
for t in "$@"; do
    name=$(basename "$t")
    log=$logs/$name.log
    env PARLEY_BIN_DIR="$bin_dir" PARLEY_TEST_DIR="$root/tests" CK_FORK=no \
        CK_DEFAULT_TIMEOUT=600 \
        valgrind --leak-check=full --errors-for-leak-kinds=definite \
                 --error-exitcode=99 --num-callers=30 \
                 --suppressions="$root/tests/valgrind.supp" \
                 --log-file="$log.vg" "$t" >"$log" 2>&1
    rc=$?
    summary=$(grep -E 'ERROR SUMMARY' "$log.vg" | tail -1 | sed 's/^==[0-9]*== //')
    checks=$(grep -E '^[0-9]+%: Checks' "$log" | tail -1)
    printf '%-26s rc=%-3s %s | %s\n' "$name" "$rc" "$checks" "$summary"
    if [ $rc -eq 0 ]; then clean=$((clean + 1)); else failed+=("$name"); fi
done

wrap=$logs/bin
mkdir -p "$wrap"
rm -f "$logs"/bin-*.log
for b in parley-broker parley-agent parley-tap; do
    cat >"$wrap/$b" <<WRAP
#!/bin/sh
exec valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \\
     --num-callers=30 --suppressions="$root/tests/valgrind.supp" \\
     --log-file="$logs/bin-$b.%p.log" "$bin_dir/$b" "\$@"
WRAP
    chmod +x "$wrap/$b"
done
for name in ${VALGRIND_BIN_SUITES:-check_broker_mail check_tap_live check_agent_e2e}; do
    t=
    for candidate in "$@"; do [ "$(basename "$candidate")" = "$name" ] && t=$candidate; done
    [ -n "$t" ] || continue
    env PARLEY_BIN_DIR="$wrap" PARLEY_TEST_DIR="$root/tests" CK_DEFAULT_TIMEOUT=600 \
        "$t" >"$logs/$name.bin.log" 2>&1
    rc=$?
    printf '%-26s rc=%-3s %s (binaries under valgrind)\n' "$name" "$rc" \
        "$(grep -E '^[0-9]+%: Checks' "$logs/$name.bin.log" | tail -1)"
    if [ $rc -eq 0 ]; then clean=$((clean + 1)); else failed+=("$name (binaries)"); fi
done
for b in parley-broker parley-agent parley-tap; do
    runs=$(ls "$logs"/bin-$b.*.log 2>/dev/null | wc -l)
    bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/bin-$b.*.log 2>/dev/null | wc -l)
    #  A run a test ended with SIGKILL has no summary (nothing to judge).
    killed=$(grep -L 'ERROR SUMMARY' "$logs"/bin-$b.*.log 2>/dev/null | wc -l)
    printf '%-26s %s runs under valgrind, %s with errors, %s killed before a summary\n' \
        "$b" "$runs" "$bad" "$killed"
    [ "$bad" -eq 0 ] || failed+=("$b")
done
echo "valgrind: $clean clean, ${#failed[@]} failed${failed:+ (${failed[*]})}"
[ ${#failed[@]} -eq 0 ]
