#!/bin/sh
# SPDX-License-Identifier: MIT
# client_install.sh ROOT ENDPOINT - runs, word for word, the lines
# docs/CLIENT.md gives for building a program against a DESTDIR install
# (the shell block between its "install-test" markers): make install-lib
# into a stage, then examples/c/example.c and relay.c built outside the
# tree with pkg-config alone, dynamically (parley.pc) and statically
# (parley-static.pc), and run against the broker at ENDPOINT. Then checks
# what was built: the dynamic program loads libparley.so.2 from the stage,
# the static ones need no libparley at all and hold its symbols. Prints
# what it checked; exits non-zero at the first failure. Run by
# tests/check_client.c.
set -eu
root=$(cd "$1" && pwd)
endpoint=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
cp "$root/examples/c/example.c" "$root/examples/c/relay.c" "$work/src/"
sed -n '/<!-- install-test:begin -->/,/<!-- install-test:end -->/p' "$root/docs/CLIENT.md" \
    | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' > "$work/lines.sh"
test -s "$work/lines.sh" || { echo "no install-test block in docs/CLIENT.md" >&2; exit 1; }
echo "--- the documented lines:"
cat "$work/lines.sh"
echo "---"
cd "$work/src"
# A make of its own: the caller may be a make with a jobserver.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_LIBDIR \
    PARLEY_SRC="$root" BROKER="$endpoint" sh -eu "$work/lines.sh" > "$work/out" 2>&1 \
    || { cat "$work/out" >&2; exit 1; }
cat "$work/out"

lib=$work/src/stage/usr/lib
test -f "$work/src/stage/usr/include/parley/client.h"
test -f "$lib/libparley.a"
soname=$(objdump -p "$lib/libparley.so" | awk '$1 == "SONAME" { print $2 }')
echo "soname: $soname"
test "$(readlink "$lib/$soname")" = "$(basename "$(readlink -f "$lib/libparley.so")")"
LD_LIBRARY_PATH=$lib ldd ./example | grep -q "$soname => $lib/$soname"
echo "dynamic: example loads $lib/$soname"
for program in example-static relay; do
    if ldd "./$program" | grep -q libparley; then
        echo "static: $program needs libparley.so" >&2
        exit 1
    fi
    nm "./$program" | grep -q ' T parley_client_connect$'
    # Nothing of libparley's insides is global in the program.
    if nm "./$program" | grep -qE ' T (client_conn_call|pmsg_decode|plog_info)$'; then
        echo "static: $program exports libparley's internal symbols" >&2
        exit 1
    fi
done
echo "static: example-static and relay need no libparley.so, hold parley_* only"
