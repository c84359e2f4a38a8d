#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# man.sh BINARY OUT - a man page (section 1) for a Parley binary, made by
# help2man from its own --help and --version, so the page says exactly what
# the binary accepts. The NAME line is the first sentence of the --help
# description. SOURCE_DATE_EPOCH, when set, fixes the page's date
# (help2man honours it) for reproducible builds.
set -euo pipefail
bin=$1
out=$2
command -v help2man >/dev/null || { echo "man.sh: help2man is missing (make deps)" >&2; exit 1; }
# The paragraph after "Usage:", joined, up to its first ": " or ". ".
# awk reads to the end: quitting early would kill the binary with SIGPIPE
# mid-help, which pipefail reports as a failure.
name=$("$bin" --help | awk 'NR > 2 && /^$/ { done = 1 } NR > 2 && !done { printf "%s ", $0 }' \
       | sed -e 's/[:.] .*//' -e 's/[ .:]*$//')
tmp="$out.tmp.$$"
mkdir -p "$(dirname "$out")"
help2man --no-info --no-discard-stderr --section 1 --name "$name" --output "$tmp" "$bin"
# An empty page means help2man could not read the binary: fail loudly.
grep -q '^\.SH OPTIONS' "$tmp" || grep -q '^\.TP' "$tmp" \
    || { echo "man.sh: no options in the page help2man made for $bin" >&2; rm -f "$tmp"; exit 1; }
mv "$tmp" "$out"
