#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runtime-packages.sh BINARY... - print the Debian packages that provide
# the shared libraries the given binaries load, one per line.
#
# The Dockerfile's runtime stage installs exactly these, so its package list
# follows the Makefile's link line instead of being a second list to keep
# in step. Libraries are resolved through their symlinks first: libblas.so.3
# is an alternatives link that no package owns, its target is.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
for bin in "$@"; do
    ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
    real=$(realpath "$lib")
    owner=""
    # Debian 12 is merged-/usr, but dpkg may have the file under either
    # spelling; ask for each.
    for path in "$real" "${real#/usr}" "/usr$real" "$lib"; do
        owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$owner" ] && break
    done
    [ -n "$owner" ] || { echo "runtime-packages: no package owns $lib" >&2; exit 1; }
    echo "$owner"
done | sort -u
