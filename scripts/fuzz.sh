#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh [SECONDS] - bounded libFuzzer runs of the parsers that eat untrusted input.
#
# Targets (FUZZ_TARGETS, default "decode answer journal"), each run for
# SECONDS (default 60), one after the other:
#   decode  tests/fuzz/fuzz_decode.c: the wire frame decoder (proto/, common/),
#           seeds tests/fuzz/seeds/
#   answer  tests/fuzz/fuzz_answer.c: the LLM answer parser (agent/answer.c),
#           seeds tests/answers/
#   journal tests/fuzz/fuzz_journal.c: the broker's recovery of journal and
#           snapshot records into its core (broker/core/), seeds
#           tests/fuzz/journal-seeds/
# Each is built with clang -fsanitize=fuzzer,address,undefined (runtime from
# Debian's libclang-rt-14-dev) into build/fuzz/ and fuzzes a scratch copy of
# its seeds, so the committed seeds never change. Prints the number of
# executions. Exits non-zero on any crash, leak,
# timeout or out-of-memory; the offending input is left in build/fuzz/ as
# crash-*, leak-*, timeout-* or oom-* (add it to tests/corpus/ once fixed).
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/fuzz
cc=${FUZZ_CC:-clang}
mkdir -p "$out"

if ! command -v "$cc" >/dev/null; then
    echo "fuzz.sh: $cc not found (apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
fi

flags=(-g -O1 -std=c11 -D_GNU_SOURCE -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$root" -I"$root/include" -I"$root/proto" -I"$root/common")
# shellcheck disable=SC2207
pkg_cflags=($(pkg-config --cflags msgpack libczmq libzmq libsystemd jansson yaml-0.1))
# shellcheck disable=SC2207
pkg_libs=($(pkg-config --libs msgpack libczmq libzmq libsystemd jansson yaml-0.1) -lz)

# fuzz_one NAME SOURCES... -- SEED_DIR
fuzz_one() {
    local name=$1; shift
    local sources=()
    while [ "$1" != "--" ]; do sources+=("$1"); shift; done
    local seeds=$2
    "$cc" "${flags[@]}" "${pkg_cflags[@]}" "${sources[@]}" \
        "${pkg_libs[@]}" -lm -lpthread -o "$out/fuzz_$name"

    local corpus=$out/corpus_$name log=$out/fuzz_$name.log rc execs rate
    rm -rf "$corpus"
    mkdir -p "$corpus"
    cp "$seeds"/* "$corpus"/ 2>/dev/null || true
    echo "fuzz.sh: fuzzing $name for ${seconds}s, log in $log"
    set +e
    (cd "$out" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ./fuzz_"$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
            -max_len=1100000 -print_final_stats=1 "$corpus") >"$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1)
    rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}' | tail -1)
    echo "fuzz.sh: $name: ${execs:-?} executions in ${seconds}s (${rate:-?}/s), exit $rc"
    if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
        tail -60 "$log" >&2
        ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null >&2 || true
        echo "fuzz.sh: $name FAILED" >&2
        return 1
    fi
    echo "fuzz.sh: $name: no crash, leak, timeout or out-of-memory"
}

# common/ without the files that sit on libparley's client API (the
# targets link no client).
# shellcheck disable=SC2207
common=($(ls "$root"/common/*.c | grep -v -e /wfjson.c -e /jsonops.c))

status=0
for target in ${FUZZ_TARGETS:-decode answer journal}; do
    case $target in
        decode) fuzz_one decode "$root"/tests/fuzz/fuzz_decode.c "$root"/proto/*.c \
                    "${common[@]}" -- "$root"/tests/fuzz/seeds || status=1 ;;
        answer) fuzz_one answer "$root"/tests/fuzz/fuzz_answer.c "$root"/agent/answer.c \
                    "${common[@]}" -- "$root"/tests/answers || status=1 ;;
        journal) fuzz_one journal "$root"/tests/fuzz/fuzz_journal.c "$root"/broker/core/*.c \
                    "$root"/proto/*.c "${common[@]}" \
                    -iquote "$root/broker" \
                    -- "$root"/tests/fuzz/journal-seeds || status=1 ;;
        *) echo "fuzz.sh: unknown target $target" >&2; status=2 ;;
    esac
done
exit $status
