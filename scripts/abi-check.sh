#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# abi-check.sh check|baseline LIBRARY BASELINE HEADERS_DIR MAP
#
# libparley's ABI, kept in the repository as BASELINE (abidw's XML of the
# released library, public types only: the types the headers in
# HEADERS_DIR define).
#
#   check     (make test, make abi-check) the library as built against the
#             baseline: any difference fails, with abidiff's report and
#             what to do. Also fails when the headers, the version script
#             (MAP) and the library's exported functions name different
#             functions, or an exported function has no version node.
#   baseline  (make abi-baseline) writes the baseline anew from the library
#             as built, on purpose, and only for a change it may accept:
#               - incompatible (a function removed or changed, a public type
#                 changed): only with a new soname (PARLEY_VERSION_MAJOR);
#               - compatible (functions added): only when each added
#                 function is in a version node the old baseline did not
#                 have (PARLEY_2.1 for what 2.1 adds), so a program that
#                 uses it refuses to load against an older library.
#
# The changes abidiff reports are sorted in two: functions (or variables)
# added and nothing else is compatible; anything else (a function removed,
# or changed through any type it uses, e.g. a field added to a public
# struct: abidiff calls that "a change", not "incompatible", since some
# programs survive it) is incompatible. MAP's .abignore (libabigail's
# suppression format) lists what is not a change at all: an enum's
# counting sentinel moving when a value is added before it.
set -u
if [ $# -ne 5 ]; then
    echo "usage: $0 check|baseline LIBRARY BASELINE HEADERS_DIR MAP" >&2
    exit 2
fi
mode=$1 lib=$2 baseline=$3 headers=$4 map=$5
for tool in abidw abidiff nm python3; do
    command -v "$tool" >/dev/null || { echo "abi-check: $tool is missing (Debian: abigail-tools, binutils)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-abi-XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- the names: headers, version script, exported symbols -----------------
python3 - "$headers" > "$work/declared" <<'EOF'
import glob, re, sys
names = set ()
for path in glob.glob (sys.argv [1] + "/*.h"):
    text = open (path).read ()
    text = re.sub (r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub (r"//[^\n]*", "", text)
    names |= set (re.findall (r"\b(parley_\w+)\s*\(", text))
print ("\n".join (sorted (names)))
EOF
sed -n 's/^[[:space:]]*\(parley_[a-z0-9_]*\);.*/\1/p' "$map" | sort > "$work/mapped"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' > "$work/exported_versioned"
sed 's/@.*//' "$work/exported_versioned" | sort > "$work/exported"
names_ok=1
report_diff() {         # report_diff A B "only in A" "only in B"
    local only_a only_b
    only_a=$(comm -23 "$1" "$2")
    only_b=$(comm -13 "$1" "$2")
    [ -n "$only_a" ] && { echo "abi-check: $3:"; sed 's/^/    /' <<<"$only_a"; names_ok=0; }
    [ -n "$only_b" ] && { echo "abi-check: $4:"; sed 's/^/    /' <<<"$only_b"; names_ok=0; }
}
report_diff "$work/declared" "$work/mapped" \
    "declared in $headers but not in $map" "in $map but declared in no header"
report_diff "$work/mapped" "$work/exported" \
    "in $map but not exported by $lib" "exported by $lib but not in $map"
unversioned=$(grep -v '@' "$work/exported_versioned")
[ -n "$unversioned" ] && { echo "abi-check: exported without a version node:"; sed 's/^/    /' <<<"$unversioned"; names_ok=0; }
[ $names_ok = 1 ] || exit 1

# --- the ABI -----------------------------------------------------------------
current=$work/current.abi
abidw --headers-dir "$headers" --drop-private-types --no-show-locs --no-corpus-path \
      --no-comp-dir-path --out-file "$current" "$lib" || { echo "abi-check: abidw failed" >&2; exit 1; }
soname_of() { sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$1"; }

if [ ! -f "$baseline" ]; then
    if [ "$mode" = baseline ]; then
        cp "$current" "$baseline"
        echo "abi-check: first baseline written: $baseline ($(soname_of "$current"))"
        exit 0
    fi
    echo "abi-check: no baseline $baseline: make abi-baseline writes the first one" >&2
    exit 1
fi

ignore=()
[ -f "${map%.map}.abignore" ] && ignore=(--suppressions "${map%.map}.abignore")
abidiff --no-show-locs "${ignore[@]}" "$baseline" "$current" > "$work/report" 2>&1
rc=$?
if [ $((rc & 3)) -ne 0 ]; then
    cat "$work/report" >&2
    echo "abi-check: abidiff failed (exit $rc)" >&2
    exit 1
fi
old_soname=$(soname_of "$baseline")
new_soname=$(soname_of "$current")
# Functions or variables removed or changed, or symbols removed: incompatible.
incompatible=0
[ $((rc & 8)) -ne 0 ] && incompatible=1
grep -qE "summary: [1-9][0-9]* Removed|[1-9][0-9]* Changed|SONAME changed" "$work/report" \
    && incompatible=1

if [ "$mode" = check ]; then
    if [ $rc -eq 0 ]; then
        echo "abi-check: $lib matches $baseline ($new_soname, $(wc -l < "$work/mapped") functions)"
        exit 0
    fi
    cat "$work/report"
    if [ $incompatible = 1 ]; then
        echo "abi-check: INCOMPATIBLE with the released ABI ($old_soname). Either undo the change, or"
        echo "  release it as a new ABI on purpose: raise PARLEY_VERSION_MAJOR in $headers/base.h"
        echo "  (the soname follows), start a new version node in $map, then make abi-baseline."
    else
        echo "abi-check: the ABI changed compatibly (functions added?). Put what was added in a new"
        echo "  version node of $map (PARLEY_<major>.<minor>), raise PARLEY_VERSION_MINOR, then"
        echo "  make abi-baseline."
    fi
    exit 1
fi

# mode baseline
if [ $rc -eq 0 ]; then
    echo "abi-check: no change; $baseline kept"
    exit 0
fi
cat "$work/report"
if [ $incompatible = 1 ] && [ "$old_soname" = "$new_soname" ]; then
    echo "abi-check: refused: an incompatible change that keeps the soname $new_soname would break"
    echo "  every program linked against it. Raise PARLEY_VERSION_MAJOR first." >&2
    exit 1
fi
if [ $incompatible = 0 ] && [ "$old_soname" = "$new_soname" ]; then
    # Functions added: each in a node the old baseline did not have.
    old_nodes=$(grep -o "version='[^']*'" "$baseline" | sort -u)
    stale=$(python3 - "$baseline" "$current" "$old_nodes" <<'EOF'
import re, sys
def symbols (path):
    return dict (re.findall (r"<elf-symbol name='([^']*)' version='([^']*)'", open (path).read ()))
old, new = symbols (sys.argv [1]), symbols (sys.argv [2])
old_nodes = set (old.values ())
for name in sorted (set (new) - set (old)):
    if new [name] in old_nodes:
        print (f"{name}@{new [name]}")
EOF
)
    if [ -n "$stale" ]; then
        echo "abi-check: refused: added in a version node an older library already has:"
        sed 's/^/    /' <<<"$stale"
        echo "  put them in a new node (PARLEY_<major>.<minor>) and raise PARLEY_VERSION_MINOR." >&2
        exit 1
    fi
fi
cp "$current" "$baseline"
echo "abi-check: baseline written: $baseline ($old_soname -> $new_soname)"
