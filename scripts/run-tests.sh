#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-tests.sh VAR=VALUE... -- TEST_BINARY...
# Runs each Check suite with the given environment, prints Check's own summary
# lines, and ends with one line "tests: N passed, N failed" over all suites
# (", N skipped" added when a suite printed "SKIPPED: reason" lines: a suite
# that cannot run here registers no check and says why, e.g. check_netns).
# An entry "pytest:DIR" runs pytest on DIR with $PARLEY_PYTHON (from the
# environment given) instead: its "N passed, N failed" counts are added, and
# a pytest that collected nothing (exit 5) or ended without a summary counts
# as one failure.
# Exits non-zero if any check failed or any suite binary crashed.
set -u
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
passed=0; failed=0; skipped=0; broken=()
echo "tests: running $# suites"
# One pytest run: adds its counts to passed/failed/skipped.
run_pytest() {
    local dir=$1 out rc line n python
    out=$(mktemp)
    python=$(env "${envs[@]}" sh -c 'echo "${PARLEY_PYTHON:-python3}"')
    env "${envs[@]}" "$python" -m pytest -q -p no:cacheprovider "$dir" >"$out" 2>&1
    rc=$?
    # pytest -q: "12 passed, 1 failed, 2 skipped in 3.40s" (any order, some absent)
    line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error|errors|skipped)' "$out" | tail -1)
    for kind in passed failed errors error skipped; do
        n=$(grep -oE "[0-9]+ $kind\b" <<<"$line" | grep -oE '^[0-9]+' || true)
        n=${n:-0}
        case $kind in
            passed) passed=$((passed + n)) ;;
            failed|errors|error) failed=$((failed + n)) ;;
            skipped) skipped=$((skipped + n)) ;;
        esac
    done
    if [ $rc -ne 0 ]; then
        cat "$out"
        broken+=("pytest $dir (exit $rc)")
        { [ -z "$line" ] || [ $rc -eq 5 ]; } && failed=$((failed + 1))
    else
        echo "pytest $dir: $line"
    fi
    rm -f "$out"
}

for t in "$@"; do
    case $t in pytest:*) run_pytest "${t#pytest:}"; continue ;; esac
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
