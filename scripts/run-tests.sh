#!/usr/bin/env bash
# run-tests.sh VAR=VALUE... -- TEST_BINARY...
# Runs each Check suite with the given environment, prints Check's own summary
# lines, and ends with one line "tests: N passed, N failed" over all suites
# (", N skipped" added when a suite printed "SKIPPED: reason" lines: a suite
# that cannot run here registers no check and says why, e.g. check_netns).
# Exits non-zero if any check failed or any suite binary crashed.
set -u
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
passed=0; failed=0; skipped=0; broken=()
for t in "$@"; do
    name=$(basename "$t")
    out=$(mktemp)
    env "${envs[@]}" "$t" >"$out" 2>&1
    rc=$?
    # Check: "100%: Checks: 12, Failures: 0, Errors: 0"
    line=$(grep -E '^[0-9]+%: Checks: [0-9]+' "$out" | tail -1)
    if [ -n "$line" ]; then
        checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
        fails=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
        errs=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
        bad=$((fails + errs))
        passed=$((passed + checks - bad)); failed=$((failed + bad))
    fi
    if [ $rc -ne 0 ] || [ -z "$line" ]; then
        cat "$out"
        broken+=("$name (exit $rc)")
        [ -z "$line" ] && failed=$((failed + 1))
    else
        grep -E '^(Running suite|[0-9]+%: Checks|SKIPPED:)' "$out"
    fi
    skipped=$((skipped + $(grep -c '^SKIPPED:' "$out")))
    rm -f "$out"
done
[ ${#broken[@]} -eq 0 ] || printf 'FAILED suites: %s\n' "${broken[*]}"
if [ $skipped -gt 0 ]; then
    echo "tests: $passed passed, $failed failed, $skipped skipped"
else
    echo "tests: $passed passed, $failed failed"
fi
[ $failed -eq 0 ] && [ ${#broken[@]} -eq 0 ]
