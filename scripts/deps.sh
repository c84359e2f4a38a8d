#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deps.sh - install what Parley needs on Debian 12, and nothing more.
#
# Two tiers:
#   build   what `make` and `make demo` need: the compiler, the libraries,
#           help2man for the man pages, libfaiss_c.a
#   test    build + what `make test` adds: python3 and its test modules,
#           iproute2, systemd and docker-compose (unit and compose checks),
#           abigail-tools (the ABI check), chromium + Node.js + npm and
#           tests/web's node modules (the browser test)
#
# Each package is checked on its own (dpkg's status) and only the missing
# ones are asked of apt, so a machine that already has something of its own
# (NodeSource's nodejs, which bundles npm and conflicts with Debian's npm)
# is never asked to swap it. A working `node` and `npm` on the PATH, whatever
# their origin, are used as they are.
#
# Idempotent and fast when nothing is missing (one dpkg-query), so `make`
# calls it on every build.
#
# Debian's libfaiss-dev ships the FAISS C API headers but not its object code,
# so libfaiss_c.a is built from Debian's own faiss source package into a
# project-local prefix (.deps/ by default). A system libfaiss_c wins.
#
# Usage: scripts/deps.sh [--check] [build|test]     (default: build)
#        --check   report what is missing, exit 1 if anything is; installs nothing
#        --list    print the packages the tier would install, one per line
# Env:   PARLEY_DEPS_PREFIX  where libfaiss_c.a goes (default: <repo>/.deps)
# Exit:  0 all present (or installed), 1 missing (--check) or install failed,
#        2 bad usage
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=${PARLEY_DEPS_PREFIX:-$here/.deps}

build_packages="pkg-config gcc g++ make dpkg-dev ca-certificates xxd help2man
libzmq3-dev libczmq-dev libmsgpack-dev libcurl4-openssl-dev libfaiss-dev libopenblas-dev
check libjansson-dev libyaml-dev zlib1g-dev libmicrohttpd-dev libsystemd-dev"
test_packages="python3 python3-venv python3-zmq python3-msgpack python3-pytest
python3-pytest-asyncio python3-setuptools python3-wheel python3-pip python3-prometheus-client
iproute2 procps psmisc systemd docker-compose abigail-tools chromium"

log() { printf 'deps: %s\n' "$*" >&2; }
usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }

check_only=0 list_only=0 tier=build
for a in "$@"; do
    case $a in
        --check) check_only=1 ;;
        --list) list_only=1 ;;
        build|test) tier=$a ;;
        -h|--help) usage; exit 0 ;;
        *) log "unknown argument: $a"; usage >&2; exit 2 ;;
    esac
done

wanted=$build_packages
[ "$tier" = test ] && wanted="$wanted $test_packages"

# Node.js and npm: only for the test tier, and only when no working ones are
# on the PATH. Debian's nodejs lacks npm (a separate package); NodeSource's
# nodejs bundles it and conflicts with Debian's npm.
works() { command -v "$1" >/dev/null 2>&1 && "$1" --version >/dev/null 2>&1; }
node_packages() {
    works node || echo nodejs
    works npm || echo npm
}
if [ "$tier" = test ]; then
    wanted="$wanted $(node_packages | tr '\n' ' ')"
fi

if [ "$list_only" = 1 ]; then
    printf '%s\n' $wanted
    exit 0
fi

# The packages of $wanted that dpkg does not have installed. One dpkg-query
# for all of them: it prints one line per known package, nothing (and an
# error) for one it never heard of.
missing_packages() {
    local installed p out=""
    # shellcheck disable=SC2086
    installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $wanted 2>/dev/null \
                | awk '$2 == "ii" { print $1 }' || true)
    for p in $wanted; do
        grep -qx "$p" <<<"$installed" || out="$out $p"
    done
    echo "${out# }"
}

have_faiss_c() {
    [ -f "$prefix/lib/libfaiss_c.a" ] && return 0
    local d
    for d in /usr/lib /usr/local/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
        ls "$d"/libfaiss_c.* >/dev/null 2>&1 && return 0
    done
    return 1
}

# The browser test drives Debian's chromium with puppeteer-core, installed
# from tests/web/package-lock.json into tests/web/node_modules (not committed;
# puppeteer-core downloads no browser).
have_web_modules() { [ -f "$here/tests/web/node_modules/puppeteer-core/package.json" ]; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else log "need root (or sudo) to run: $*"; exit 1; fi
}

apt_updated=0
apt_update_once() {
    [ "$apt_updated" = 1 ] && return
    as_root apt-get update -q
    apt_updated=1
}

install_packages() {
    log "installing Debian packages: $*"
    apt_update_once
    # shellcheck disable=SC2068
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $@
}

# Add deb-src lines for the mirror apt already uses, in either sources format.
enable_deb_src() {
    local out=/etc/apt/sources.list.d/parley-deb-src.sources uris suite
    [ -f "$out" ] && return
    # `|| true`: with pipefail, no *.sources file (debootstrap writes only a
    # one-line sources.list) would otherwise end the script silently here.
    uris=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 | awk '{print $2}' || true)
    if [ -z "$uris" ] && [ -f /etc/apt/sources.list ]; then
        uris=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; exit}}' /etc/apt/sources.list)
    fi
    [ -n "$uris" ] || uris=http://deb.debian.org/debian
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    log "adding deb-src for $uris $suite"
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$uris" "$suite" | as_root tee "$out" >/dev/null
    apt_updated=0
}

build_faiss_c() {
    local src objs=() jobs files work
    enable_deb_src
    apt_update_once
    work=$(mktemp -d); chmod 755 "$work"
    # As root, apt downloads as user _apt; let it write here so apt does not
    # warn "Download is performed unsandboxed as root".
    if [ "$(id -u)" = 0 ]; then chown _apt "$work" 2>/dev/null || true; fi
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    log "fetching Debian's faiss source package"
    (cd "$work" && apt-get source -q faiss >/dev/null)
    src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'faiss*' | head -1)
    [ -n "$src" ] || { log "apt-get source faiss gave no source tree"; exit 1; }
    log "compiling the FAISS C API from $src"
    mkdir -p "$work/obj" "$prefix/lib" "$prefix/include"
    jobs=$(nproc 2>/dev/null || echo 2)
    files=$(cd "$src" && ls faiss/c_api/*.cpp faiss/c_api/impl/*.cpp faiss/c_api/utils/*.cpp 2>/dev/null \
            || ls c_api/*.cpp c_api/impl/*.cpp c_api/utils/*.cpp)
    # The C API compiles against the installed libfaiss-dev headers, so the
    # objects match the library we link.
    # shellcheck disable=SC2086
    printf '%s\n' $files | xargs -P "$jobs" -I{} sh -c \
        'o="$1/obj/$(echo "$2" | tr / _).o"; g++ -std=c++17 -O2 -fPIC -fopenmp -I"$3" -I/usr/include -c "$3/$2" -o "$o"' \
        _ "$work" {} "$src"
    for f in "$work"/obj/*.o; do objs+=("$f"); done
    ar rcs "$prefix/lib/libfaiss_c.a.tmp" "${objs[@]}"
    mv "$prefix/lib/libfaiss_c.a.tmp" "$prefix/lib/libfaiss_c.a"
    log "built $prefix/lib/libfaiss_c.a (${#objs[@]} objects)"
}

install_web_modules() {
    log "installing tests/web's node modules (npm ci)"
    (cd "$here/tests/web" && npm ci --no-audit --no-fund --loglevel=error)
}

command -v dpkg-query >/dev/null 2>&1 || { log "not a Debian system: dpkg-query is missing"; exit 1; }
need_pkgs=$(missing_packages)
need_faiss=0; have_faiss_c || need_faiss=1
need_web=0
[ "$tier" = test ] && ! have_web_modules && need_web=1

if [ "$check_only" = 1 ]; then
    [ -z "$need_pkgs" ] && [ "$need_faiss" = 0 ] && [ "$need_web" = 0 ] && exit 0
    [ -n "$need_pkgs" ] && log "missing Debian packages: $need_pkgs"
    [ "$need_faiss" = 1 ] && log "missing libfaiss_c.a (scripts/deps.sh builds it)"
    [ "$need_web" = 1 ] && log "missing tests/web/node_modules (scripts/deps.sh test runs npm ci)"
    exit 1
fi

[ -z "$need_pkgs" ] && [ "$need_faiss" = 0 ] && [ "$need_web" = 0 ] && exit 0
started=$SECONDS
# shellcheck disable=SC2086
[ -z "$need_pkgs" ] || install_packages $need_pkgs
[ "$need_faiss" = 0 ] || build_faiss_c
[ "$need_web" = 0 ] || install_web_modules
log "done: the $tier tier is complete ($((SECONDS - started)) s)"
exit 0
