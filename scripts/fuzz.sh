#!/usr/bin/env bash
# fuzz.sh [SECONDS] - bounded libFuzzer run of the frame decoder.
#
# Builds tests/fuzz/fuzz_decode.c with clang -fsanitize=fuzzer,address,undefined
# (runtime from Debian's libclang-rt-14-dev) together with proto/*.c and
# common/*.c into build/fuzz/, then fuzzes a scratch copy of the seed corpus
# tests/fuzz/seeds/ for SECONDS (default 60), so the committed seeds never
# change. Prints the number of executions. Exits non-zero on any crash, leak,
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
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$root/proto" -I"$root/common")
# shellcheck disable=SC2207
pkg_cflags=($(pkg-config --cflags msgpack libczmq))
# shellcheck disable=SC2207
pkg_libs=($(pkg-config --libs msgpack libczmq))
"$cc" "${flags[@]}" "${pkg_cflags[@]}" \
    "$root"/tests/fuzz/fuzz_decode.c "$root"/proto/*.c "$root"/common/*.c \
    "${pkg_libs[@]}" -lm -lpthread -o "$out/fuzz_decode"

corpus=$out/corpus
rm -rf "$corpus"
mkdir -p "$corpus"
cp "$root"/tests/fuzz/seeds/* "$corpus"/

log=$out/fuzz.log
echo "fuzz.sh: fuzzing for ${seconds}s, log in $log"
set +e
(cd "$out" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ./fuzz_decode -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -max_len=1100000 -print_final_stats=1 "$corpus") >"$log" 2>&1
rc=$?
set -e
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1)
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}' | tail -1)
echo "fuzz.sh: ${execs:-?} executions in ${seconds}s (${rate:-?}/s), exit $rc"
if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
    tail -60 "$log" >&2
    ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null >&2 || true
    echo "fuzz.sh: FAILED" >&2
    exit 1
fi
echo "fuzz.sh: no crash, leak, timeout or out-of-memory"
