#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deps.sh - install everything Parley needs to build and test on Debian 12.
#
# Idempotent and fast when nothing is missing: the check at the top only asks
# pkg-config and looks for files, so `make` can call it on every build.
#
# Debian's libfaiss-dev ships the FAISS C API headers but not its object code,
# so we build libfaiss_c.a from Debian's own faiss source package into a
# project-local prefix (.deps/ by default). A system libfaiss_c is used instead
# when the linker can already find one.
#
# Usage: scripts/deps.sh [--check]     (--check: report only, exit 1 if missing)
# Env:   PARLEY_DEPS_PREFIX  where libfaiss_c.a goes (default: <repo>/.deps)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=${PARLEY_DEPS_PREFIX:-$here/.deps}

# Debian package -> how we recognise it is there.
packages="pkg-config gcc g++ make dpkg-dev libzmq3-dev libczmq-dev libmsgpack-dev
libcurl4-openssl-dev libfaiss-dev libopenblas-dev check libjansson-dev libyaml-dev
python3 iproute2 systemd docker-compose zlib1g-dev help2man libmicrohttpd-dev chromium nodejs npm xxd
libsystemd-dev python3-zmq python3-msgpack python3-pytest python3-pytest-asyncio python3-setuptools python3-pip
python3-prometheus-client"
pc_modules="libzmq libczmq msgpack libcurl check jansson yaml-0.1 zlib libmicrohttpd libsystemd"

log() { printf 'deps: %s\n' "$*" >&2; }

have_faiss_c() {
    [ -f "$prefix/lib/libfaiss_c.a" ] && return 0
    # A system-wide C API (e.g. a future Debian package) wins over building one.
    for d in /usr/lib /usr/local/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
        ls "$d"/libfaiss_c.* >/dev/null 2>&1 && return 0
    done
    return 1
}

missing_packages() {
    local missing=""
    command -v pkg-config >/dev/null 2>&1 || { echo "$packages"; return; }
    for m in $pc_modules; do
        pkg-config --exists "$m" || missing="$missing $m"
    done
    for f in /usr/include/faiss/c_api/IndexFlat_c.h /usr/include/faiss/Index.h \
             /usr/bin/gcc /usr/bin/g++ /usr/bin/make /usr/sbin/ip \
             /usr/bin/dpkg-source /usr/bin/python3 \
             /usr/bin/systemd-analyze /usr/bin/docker-compose /usr/bin/help2man \
             /usr/lib/python3/dist-packages/zmq /usr/lib/python3/dist-packages/msgpack \
             /usr/lib/python3/dist-packages/pytest /usr/lib/python3/dist-packages/pytest_asyncio \
             /usr/lib/python3/dist-packages/setuptools /usr/lib/python3/dist-packages/pip \
             /usr/bin/chromium /usr/bin/node /usr/bin/npm /usr/bin/xxd \
             /usr/lib/python3/dist-packages/prometheus_client; do
        [ -e "$f" ] || missing="$missing $f"
    done
    ls /usr/lib/x86_64-linux-gnu/libopenblas* /usr/lib/*/openblas*/libblas* >/dev/null 2>&1 \
        || missing="$missing openblas"
    [ -z "$missing" ] || echo "$packages"
}

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
    log "installing Debian packages"
    apt_update_once
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends $packages
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
    local src objs=() jobs
    enable_deb_src
    apt_update_once
    work=$(mktemp -d); chmod 755 "$work"
    # As root, apt downloads as user _apt; let it write here so apt does not
    # warn "Download is performed unsandboxed as root".
    if [ "$(id -u)" = 0 ]; then chown _apt "$work" 2>/dev/null || true; fi
    trap 'rm -rf "$work"' EXIT
    log "fetching Debian's faiss source package"
    (cd "$work" && apt-get source -q faiss >/dev/null)
    src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'faiss*' | head -1)
    [ -n "$src" ] || { log "apt-get source faiss gave no source tree"; exit 1; }
    log "compiling the FAISS C API from $src"
    mkdir -p "$work/obj" "$prefix/lib" "$prefix/include"
    jobs=$(nproc 2>/dev/null || echo 2)
    local files
    files=$(cd "$src" && ls faiss/c_api/*.cpp faiss/c_api/impl/*.cpp faiss/c_api/utils/*.cpp 2>/dev/null \
            || ls c_api/*.cpp c_api/impl/*.cpp c_api/utils/*.cpp)
    # The C API compiles against the installed libfaiss-dev headers, so the
    # objects match the library we link.
    printf '%s\n' $files | xargs -P "$jobs" -I{} sh -c \
        'o="$1/obj/$(echo "$2" | tr / _).o"; g++ -std=c++17 -O2 -fPIC -fopenmp -I"$3" -I/usr/include -c "$3/$2" -o "$o"' \
        _ "$work" {} "$src"
    for f in "$work"/obj/*.o; do objs+=("$f"); done
    ar rcs "$prefix/lib/libfaiss_c.a.tmp" "${objs[@]}"
    mv "$prefix/lib/libfaiss_c.a.tmp" "$prefix/lib/libfaiss_c.a"
    log "built $prefix/lib/libfaiss_c.a (${#objs[@]} objects)"
}

# The browser test drives Debian's chromium with puppeteer-core, installed
# from tests/web/package-lock.json into tests/web/node_modules (not committed;
# puppeteer-core downloads no browser).
have_web_modules() { [ -f "$here/tests/web/node_modules/puppeteer-core/package.json" ]; }
install_web_modules() {
    log "installing tests/web's node modules (npm ci)"
    (cd "$here/tests/web" && npm ci --no-audit --no-fund --loglevel=error)
}

need_pkgs=$(missing_packages)
need_faiss=0; have_faiss_c || need_faiss=1
need_web=0; have_web_modules || need_web=1

if [ "${1:-}" = "--check" ]; then
    [ -z "$need_pkgs" ] && [ "$need_faiss" = 0 ] && [ "$need_web" = 0 ] && exit 0
    [ -n "$need_pkgs" ] && log "missing Debian packages"
    [ "$need_faiss" = 1 ] && log "missing libfaiss_c.a"
    [ "$need_web" = 1 ] && log "missing tests/web/node_modules"
    exit 1
fi

[ -z "$need_pkgs" ] || install_packages
[ "$need_faiss" = 0 ] || build_faiss_c
[ "$need_web" = 0 ] || install_web_modules
exit 0
