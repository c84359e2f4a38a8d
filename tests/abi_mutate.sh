#!/bin/sh
# SPDX-License-Identifier: MIT
# abi_mutate.sh ROOT - shows that scripts/abi-check.sh catches what breaks
# libparley's ABI, on copies: the library as built (ROOT/build/libparley)
# relinked with one change at a time, the headers and version script
# copied and changed to match. Nothing in ROOT changes. Prints one line
# per case ("case NAME: ..."), with abi-check's report; exits non-zero at
# the first case that does not turn out as expected. Run by
# tests/check_libparley.c.
#
#   unchanged       the library as built matches the baseline
#   removed         parley_client_epoch removed (header, map, library):
#                   check fails as incompatible; baseline refuses it with
#                   the same soname and takes it with libparley.so.3
#   added           a function added in a new node (PARLEY_2.<minor+1>, after
#                   the header's minor): check fails (the baseline must be
#                   updated on purpose); baseline takes it; the same
#                   function in the first node, PARLEY_2.0, is refused
#   struct_field    a public struct (of the added function) gains a field:
#                   check against the baseline that has it fails as
#                   incompatible
set -eu
root=$1
check=$root/scripts/abi-check.sh
all=$root/build/libparley/libparley-all.o
test -f "$all" || { echo "no $all: build libparley first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-abi-mutate-XXXXXX")
trap 'rm -rf "$work"' EXIT
libs="$(pkg-config --libs libzmq msgpack) -lpthread"

# link OUT SONAME MAP [OBJECT...]
link() {
    out=$1 soname=$2 map=$3
    shift 3
    cc -shared -Wl,-soname,"$soname" -Wl,--version-script="$map" -Wl,--no-undefined \
       "$all" "$@" $libs -o "$out"
}
# expect CASE WANT_EXIT COMMAND...: runs it, prints its output, checks the exit
expect() {
    name=$1 want=$2
    shift 2
    set +e
    "$@" > "$work/out" 2>&1
    got=$?
    set -e
    sed "s/^/    /" "$work/out"
    if [ "$got" != "$want" ]; then
        echo "case $name: FAILED (exit $got, expected $want)"
        exit 1
    fi
}

# --- unchanged ---------------------------------------------------------------
cp -r "$root/include/parley" "$work/headers"
cp "$root/client/libparley.map" "$work/libparley.map"
cp "$root/client/libparley.abignore" "$work/libparley.abignore"
cp "$root/client/libparley.abi" "$work/baseline.abi"
link "$work/same.so" libparley.so.2 "$work/libparley.map"
expect unchanged 0 "$check" check "$work/same.so" "$work/baseline.abi" "$work/headers" \
    "$work/libparley.map"
echo "case unchanged: passes"

# --- removed -----------------------------------------------------------------
mkdir "$work/removed"
cp -r "$work/headers" "$work/removed/headers"
sed -i '/^uint64_t parley_client_epoch (parley_client_t \*self);$/d' \
    "$work/removed/headers/client.h"
sed '/^ *parley_client_epoch;$/d' "$work/libparley.map" > "$work/removed/libparley.map"
cp "$work/libparley.abignore" "$work/removed/"
if grep -q "parley_client_epoch" "$work/removed/headers/client.h" "$work/removed/libparley.map"; then
    echo "case removed: FAILED (the declaration or the map line was not found)"
    exit 1
fi
link "$work/removed.so" libparley.so.2 "$work/removed/libparley.map"
expect removed 1 "$check" check "$work/removed.so" "$work/baseline.abi" \
    "$work/removed/headers" "$work/removed/libparley.map"
grep -q "Removed function" "$work/out" && grep -q "parley_client_epoch" "$work/out" \
    && grep -q "INCOMPATIBLE" "$work/out" || { echo "case removed: FAILED (report)"; exit 1; }
echo "case removed: check fails: incompatible, parley_client_epoch removed"
cp "$work/baseline.abi" "$work/removed/baseline.abi"
expect removed 1 "$check" baseline "$work/removed.so" "$work/removed/baseline.abi" \
    "$work/removed/headers" "$work/removed/libparley.map"
grep -q "refused: an incompatible change that keeps the soname" "$work/out" \
    || { echo "case removed: FAILED (baseline report)"; exit 1; }
cmp -s "$work/baseline.abi" "$work/removed/baseline.abi" \
    || { echo "case removed: FAILED (the baseline was written)"; exit 1; }
echo "case removed: baseline refused with the soname kept"
link "$work/removed3.so" libparley.so.3 "$work/removed/libparley.map"
expect removed 0 "$check" baseline "$work/removed3.so" "$work/removed/baseline.abi" \
    "$work/removed/headers" "$work/removed/libparley.map"
grep -q "soname='libparley.so.3'" "$work/removed/baseline.abi" \
    || { echo "case removed: FAILED (no new baseline)"; exit 1; }
echo "case removed: baseline taken with libparley.so.3"

# --- added, then struct_field --------------------------------------------------
mkdir "$work/added"
cp -r "$work/headers" "$work/added/headers"
cp "$work/libparley.abignore" "$work/added/"
cat > "$work/added/headers/probe.h" <<'EOF'
#include <stddef.h>
typedef struct { int first; } parley_probe_t;
size_t parley_probe_size (const parley_probe_t *probe);
EOF
cat > "$work/added/probe.c" <<'EOF'
#include "probe.h"
size_t parley_probe_size (const parley_probe_t *probe) { return sizeof *probe; }
EOF
cc -g -fPIC -I"$work/added/headers" -c "$work/added/probe.c" -o "$work/added/probe.o"
minor=$(sed -n 's/^#define PARLEY_VERSION_MINOR \([0-9]*\).*/\1/p' "$work/headers/base.h")
node=PARLEY_2.$((minor + 1))
{ cat "$work/libparley.map"
  printf '%s {\n    global:\n        parley_probe_size;\n} PARLEY_2.%s;\n' "$node" "$minor"; } \
    > "$work/added/libparley.map"
link "$work/added.so" libparley.so.2 "$work/added/libparley.map" "$work/added/probe.o"
expect added 1 "$check" check "$work/added.so" "$work/baseline.abi" "$work/added/headers" \
    "$work/added/libparley.map"
grep -q "1 Added function" "$work/out" && grep -q "changed compatibly" "$work/out" \
    || { echo "case added: FAILED (report)"; exit 1; }
echo "case added: check fails until the baseline is updated"
cp "$work/baseline.abi" "$work/added/baseline.abi"
expect added 0 "$check" baseline "$work/added.so" "$work/added/baseline.abi" \
    "$work/added/headers" "$work/added/libparley.map"
echo "case added: baseline taken ($node)"
# The same function in the released node.
sed 's/^        parley_written_seq;$/        parley_written_seq;\n        parley_probe_size;/' \
    "$work/libparley.map" > "$work/added/old-node.map"
cp "$work/libparley.abignore" "$work/added/old-node.abignore"
link "$work/added-old.so" libparley.so.2 "$work/added/old-node.map" "$work/added/probe.o"
cp "$work/baseline.abi" "$work/added/old-baseline.abi"
expect added 1 "$check" baseline "$work/added-old.so" "$work/added/old-baseline.abi" \
    "$work/added/headers" "$work/added/old-node.map"
grep -q "parley_probe_size@PARLEY_2.0" "$work/out" \
    || { echo "case added: FAILED (old node report)"; exit 1; }
echo "case added: baseline refused in the released node PARLEY_2.0"

sed -i 's/int first;/int first; int second;/' "$work/added/headers/probe.h"
cc -g -fPIC -I"$work/added/headers" -c "$work/added/probe.c" -o "$work/added/probe.o"
link "$work/grown.so" libparley.so.2 "$work/added/libparley.map" "$work/added/probe.o"
expect struct_field 1 "$check" check "$work/grown.so" "$work/added/baseline.abi" \
    "$work/added/headers" "$work/added/libparley.map"
grep -q "data member insertion" "$work/out" && grep -q "INCOMPATIBLE" "$work/out" \
    || { echo "case struct_field: FAILED (report)"; exit 1; }
echo "case struct_field: check fails: incompatible, a field added to parley_probe_t"
echo "abi_mutate: all cases as expected"
