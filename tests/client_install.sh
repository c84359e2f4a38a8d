#!/bin/sh
# SPDX-License-Identifier: MIT
# client_install.sh ROOT ENDPOINT - installs libparley into a temporary
# DESTDIR with `make install-lib`, builds examples/c/example.c outside the
# tree with exactly `cc example.c $(pkg-config --cflags --libs parley)`,
# and runs it against the broker at ENDPOINT. Prints what it checked;
# exits non-zero at the first failure. Run by tests/check_client.c.
set -eu
root=$1
endpoint=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
dest=$work/dest
# A make of its own: the caller may be a make with a jobserver.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$root" install-lib PREFIX=/usr DESTDIR="$dest" >"$work/make.log" 2>&1 \
    || { cat "$work/make.log" >&2; exit 1; }
lib=$dest/usr/lib
test -f "$dest/usr/include/parley/client.h"
test -f "$lib/libparley.a"
test -f "$lib/libparley.so.1.0.0"
test "$(readlink "$lib/libparley.so.1")" = libparley.so.1.0.0
test "$(readlink "$lib/libparley.so")" = libparley.so.1
soname=$(objdump -p "$lib/libparley.so.1.0.0" | awk '$1 == "SONAME" { print $2 }')
echo "soname: $soname"
mkdir "$work/src"
cp "$root/examples/c/example.c" "$work/src/"
cd "$work/src"
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
echo "pkg-config: $(pkg-config --cflags --libs parley)"
cc example.c $(pkg-config --cflags --libs parley)
LD_LIBRARY_PATH=$lib ldd ./a.out | grep -q "libparley.so.1 => $lib/libparley.so.1"
echo "linked: $lib/libparley.so.1"
LD_LIBRARY_PATH=$lib ./a.out "$endpoint" Example1
