#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fresh-check.sh - the README's first hour on a Debian 12 nobody touched.
#
# Builds a bare Debian 12 root with debootstrap (minbase; bookworm,
# bookworm-updates and bookworm-security), copies the tree into it with
# `git archive`, and runs inside, as a newcomer would, what the README
# says: the step a bare Debian 12 needs first (apt-get update, apt-get
# install make), then `make demo`, then `make test`. Nothing of the host's
# build, packages or .deps is used: a step the README forgot fails here.
#
# Variants (--variant, repeatable; default: debian as root, then nodesource
# as a user with sudo rights, so one run covers both ways the README
# promises):
#   debian      the bare root
#   nodesource  a root that already has a NodeSource-style `nodejs` package
#               (node with its own bundled npm; Conflicts: npm), built here
#               with dpkg-deb from the host's /usr/bin/node and
#               /usr/lib/node_modules/npm (the host's nodejs is NodeSource's)
#
# What reaches the root from the host: its CA bundle and local CA
# certificates, its proxy settings (http_proxy, https_proxy, no_proxy and
# the like, and Acquire::*::Proxy lines of /etc/apt/apt.conf.d), the
# variables that point tools at the CA bundle (SSL_CERT_FILE,
# NODE_EXTRA_CA_CERTS, ...) and /etc/resolv.conf: downloads work where the
# host's do, and nothing else is carried in.
#
# The tree: `git archive` of the working tree's tracked files, uncommitted
# changes included (`git stash create`; untracked files are not, as a clone
# would not have them); --head takes HEAD alone.
#
# Mounts: /proc, /sys, /dev, /dev/pts, a fresh /dev/shm and a tmpfs /tmp,
# made inside a private mount namespace (unshare) for each command, so
# they vanish with it however the command ends; on exit or interrupt every
# process still running in the root is killed, anything still mounted
# under it is unmounted, the root is removed (rm --one-file-system) and
# the script fails if a mount is left.
#
# The debootstrap download is cached as a tarball (build/fresh/, or
# PARLEY_FRESH_DIR): the first run fetches it (about a minute), later runs
# unpack it. CI starts from nothing and makes it.
#
# Usage: scripts/fresh-check.sh [options]
#   --variant NAME      debian or nodesource (repeatable)
#   --as-user           run the given variants' commands as a user with sudo
#                       rights (the root's `newcomer`), not as root
#   --test MODE         full: `make test` (default); deps: `scripts/deps.sh
#                       test` only (what make test installs, not the suites)
#   --head              archive HEAD, without uncommitted changes
#   --keep              keep the root(s) (under $TMPDIR or /var/tmp) afterwards
#   -h, --help          this text
# Env:  PARLEY_FRESH_DIR      cache and roots (default <repo>/build/fresh)
#       PARLEY_FRESH_MIRROR   Debian mirror (default http://deb.debian.org/debian)
#       PARLEY_FRESH_SECURITY security mirror (default http://deb.debian.org/debian-security)
# Needs root (debootstrap, chroot, mount); installs debootstrap on the host
# if it is missing.
# Exit: 0 every variant passed, 1 a step failed, 2 bad usage
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
work=${PARLEY_FRESH_DIR:-$here/build/fresh}
mirror=${PARLEY_FRESH_MIRROR:-http://deb.debian.org/debian}
security=${PARLEY_FRESH_SECURITY:-http://deb.debian.org/debian-security}
suite=bookworm
tarball=$work/$suite-minbase.tgz
tree_tar=$work/tree.tar
user=newcomer

usage() { sed -n '2,57p' "$0" | sed 's/^# \{0,1\}//'; }
log() { printf 'fresh-check: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

variants=() as_user=0 test_mode=full head_only=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
        --variant) [ $# -ge 2 ] || { usage >&2; exit 2; }
                   case $2 in debian|nodesource) variants+=("$2") ;;
                              *) log "unknown variant: $2"; exit 2 ;; esac
                   shift ;;
        --as-user) as_user=1 ;;
        --test) case ${2:-} in full|deps) test_mode=$2 ;; *) log "--test: full or deps"; exit 2 ;; esac
                shift ;;
        --head) head_only=1 ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) log "unknown argument: $1"; usage >&2; exit 2 ;;
    esac
    shift
done
# Each job is VARIANT:WHO.
jobs=()
for v in "${variants[@]}"; do jobs+=("$v:$([ "$as_user" = 1 ] && echo "$user" || echo root)"); done
[ ${#jobs[@]} -gt 0 ] || jobs=(debian:root "nodesource:$user")
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mount)"
for tool in unshare chroot mount umount git tar; do
    command -v "$tool" >/dev/null || die "$tool is missing on the host"
done
if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; } ||
        die "cannot install debootstrap"
fi
mkdir -p "$work"
# The roots live outside the tree: the Makefile's dependency search and
# `make clean` must never wander into a Debian root.
roots=$(mktemp -d "${TMPDIR:-/var/tmp}/parley-fresh-XXXXXX") || die "cannot make a folder for the roots"

# ---------------------------------------------------------------------------
# Phases: each is timed by the wall clock and listed at the end.
declare -a report=()
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

# ---------------------------------------------------------------------------
# Long steps run in the background and are waited for: bash acts on a
# trapped signal during `wait` at once, while it would wait for a
# foreground child that ignores the signal (dpkg does) to finish first.
in_background() {
    "$@" &
    wait "$!"
}

# Cleanup: the script's own children (by pid, depth first), processes whose
# root is inside `root` (a daemon a test left, dpkg in a session of its
# own), mounts under it, the root.
root=""
kill_tree() {
    local child
    for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
    kill -TERM "$1" 2>/dev/null
}
kill_children() {
    local child
    for child in $(ps -o pid= --ppid "$$" 2>/dev/null); do kill_tree "$child"; done
}
inside_pids() {
    find /proc -mindepth 2 -maxdepth 2 -name root \( -lname "$1" -o -lname "$1/*" \) 2>/dev/null |
        cut -d/ -f3
}
kill_inside() {
    local r=$1 pids tries=0
    # Until none is left: dpkg runs in a session of its own and may start
    # a maintainer script while the others die.
    while pids=$(inside_pids "$r") && [ -n "$pids" ]; do
        [ $tries = 0 ] && log "killing the processes left in $r:" $pids
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        sleep 0.2
        tries=$((tries + 1))
        [ $tries -lt 50 ] || { log "processes still running in $r:" $pids; return 1; }
    done
}
mounts_under() {
    # mountinfo field 5 is the mount point (octal escapes for spaces).
    awk -v r="$1" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
unmount_all() {
    local r=$1 m
    for m in $(mounts_under "$r"); do umount "$m" 2>/dev/null || umount -l "$m"; done
    [ -z "$(mounts_under "$r")" ]
}
remove_root() {
    local r=$1
    [ -n "$r" ] && [ -d "$r" ] || return 0
    kill_inside "$r" || return 1
    unmount_all "$r" || { log "mounts left under $r:"; mounts_under "$r" >&2; return 1; }
    if [ "$keep" = 1 ]; then log "kept $r"; return 0; fi
    rm -rf --one-file-system "$r" 2>/dev/null || { kill_inside "$r" && rm -rf --one-file-system "$r"; } ||
        { log "could not remove $r"; return 1; }
}
on_exit() {
    local rc=$?
    # The cleanup runs to its end: a second Ctrl-C must not leave a root.
    trap '' INT TERM
    trap - EXIT
    kill_children
    if [ -n "$root" ]; then remove_root "$root" || rc=1; fi
    [ "$keep" = 1 ] || rmdir "$roots" 2>/dev/null
    rm -f "$tree_tar"
    exit "$rc"
}
trap on_exit EXIT
trap 'log interrupted; exit 130' INT TERM

# ---------------------------------------------------------------------------
# The tree to copy in, archived once for every variant.
archive_tree() {
    local ref=HEAD
    if [ "$head_only" = 0 ]; then
        ref=$(git -C "$here" stash create 2>/dev/null) || ref=""
        [ -n "$ref" ] || ref=HEAD
    fi
    git -C "$here" archive --format=tar -o "$tree_tar" "$ref" ||
        die "git archive failed (is $here a git checkout?)"
    log "tree: $(git -C "$here" rev-parse --short HEAD)$([ "$ref" = HEAD ] || echo ' + uncommitted changes')"
}

# ---------------------------------------------------------------------------
# The environment a command sees inside: a login's basics plus what the
# host needs to reach the registries (proxies, CA bundle locations).
carried_vars="http_proxy https_proxy ftp_proxy no_proxy all_proxy HTTP_PROXY HTTPS_PROXY
FTP_PROXY NO_PROXY ALL_PROXY SSL_CERT_FILE SSL_CERT_DIR NODE_EXTRA_CA_CERTS CURL_CA_BUNDLE
REQUESTS_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO"
inside_env() {
    local home=$1 name=$2 v
    printf '%s\n' "HOME=$home" "USER=$name" "LOGNAME=$name" "LANG=C.UTF-8" "TERM=dumb" \
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    for v in $carried_vars; do
        [ -n "${!v:-}" ] && printf '%s=%s\n' "$v" "${!v}"
    done
}

# Files the carried variables name (a CA bundle outside /etc/ssl, say).
carry_files() {
    local r=$1 v f
    for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS CURL_CA_BUNDLE REQUESTS_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO; do
        f=${!v:-}
        [ -n "$f" ] && [ -f "$f" ] && [ ! -e "$r$f" ] || continue
        mkdir -p "$r$(dirname "$f")" && cp -L "$f" "$r$f"
    done
}

# Runs `command` (a bash script) in the root, in a mount namespace of its
# own with the mounts a machine has. As root, or as $user with --as-user.
in_root() {
    local r=$1 who=$2 script=$3 home=/root spec=""
    if [ "$who" != root ]; then
        home=/home/$who
        spec="--userspec=$(awk -F: -v u="$who" '$1 == u { print $3 ":" $4 }' "$r/etc/passwd")"
    fi
    local -a envs
    mapfile -t envs < <(inside_env "$home" "$who")
    # shellcheck disable=SC2016
    unshare --mount --propagation private -- bash -c '
        set -e
        r=$1; shift
        mount -t proc proc "$r/proc"
        mount -t sysfs sysfs "$r/sys"
        mount --bind /dev "$r/dev"
        mount --bind /dev/pts "$r/dev/pts"
        mount -t tmpfs -o mode=1777,nosuid,nodev shm "$r/dev/shm"
        mount -t tmpfs -o mode=1777,nosuid,nodev tmp "$r/tmp"
        exec "$@"' _ "$r" chroot $spec "$r" /usr/bin/env -i "${envs[@]}" \
        /bin/bash -c "cd \"\$HOME\" && $script" </dev/null
}

# Runs a step in the root with every output line time-stamped into the
# variant's log (seconds since the step began); prints the last lines when
# it fails. Returns the step's status.
step_log=""
stamp() {
    local t0=${EPOCHREALTIME/./} line d
    while IFS= read -r line || [ -n "$line" ]; do
        d=$(( (${EPOCHREALTIME/./} - t0) / 100000 ))
        printf '%5d.%d %s\n' $((d / 10)) $((d % 10)) "$line"
    done
}
run_step() {
    local name=$1 r=$2 who=$3 script=$4 rc
    printf '### %s: %s\n' "$name" "$script" >>"$step_log"
    local rcfile=$work/step.rc
    rm -f "$rcfile"
    { in_root "$r" "$who" "$script" 2>&1; echo $? >"$rcfile"; } | stamp >>"$step_log" &
    wait "$!"
    rc=$(cat "$rcfile" 2>/dev/null) || rc=1
    if [ "$rc" != 0 ]; then
        log "$name failed (exit $rc); the last lines of $step_log:"
        tail -n 60 "$step_log" >&2
    fi
    return "$rc"
}

# The time (seconds into the step) of the first line of step `name`
# matching `re` after `from` seconds; empty when none.
mark() {
    awk -v name="### $1:" -v re="$2" -v from="${3:-0}" '
        index($0, "### ") == 1 { on = index($0, name) == 1; next }
        on && $1 + 0 >= from + 0 && substr($0, 9) ~ re { print $1; exit }' "$step_log"
}
# Seconds the step took (its last line's time stamp).
step_end() {
    awk -v name="### $1:" 'index($0, "### ") == 1 { on = index($0, name) == 1; next }
                           on { t = $1 } END { print t + 0 }' "$step_log"
}
# Seconds between deps.sh's first line and its "done" line in a step: the
# packages, libfaiss_c.a and npm ci.
deps_secs() {
    local a b
    a=$(mark "$1" '^deps: ')
    b=$(mark "$1" '^deps: done' "${a:-0}")
    [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", b - a }' || echo 0
}

# ---------------------------------------------------------------------------
# The root: a bare minbase, from the cached tarball.
make_root() {
    local r=$1 t0
    t0=$(now)
    if [ ! -s "$tarball" ]; then
        log "debootstrap: downloading $suite minbase from $mirror (cached in $tarball)"
        rm -rf --one-file-system "$work/tarball-root"
        in_background debootstrap --variant=minbase --make-tarball="$tarball.tmp" "$suite" \
            "$work/tarball-root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
            { tail -20 "$work/debootstrap.log" >&2; die "debootstrap --make-tarball failed"; }
        mv "$tarball.tmp" "$tarball"
        rm -rf --one-file-system "$work/tarball-root"
    fi
    # Its own mount namespace: the /proc it mounts in the root while
    # packages configure goes away with it, however it ends.
    in_background unshare --mount --propagation private \
        debootstrap --variant=minbase --unpack-tarball="$tarball" "$suite" "$r" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
    report+=("debootstrap $(secs "$t0" "$(now)") s")
}

# What a Debian 12 machine has that debootstrap does not write: the
# standard sources, and the host's way out (CA, proxies, resolver).
prepare_root() {
    local r=$1 f
    cat >"$r/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
    cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    # A machine knows its own name (sudo looks it up); the root shares the
    # host's, which debootstrap does not write down.
    hostname >"$r/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "$(hostname)" >"$r/etc/hosts"
    mkdir -p "$r/etc/ssl/certs" "$r/usr/local/share/ca-certificates"
    [ -f /etc/ssl/certs/ca-certificates.crt ] && cp -L /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
    # Local CAs survive ca-certificates' own bundle rebuild when installed.
    for f in /usr/local/share/ca-certificates/*.crt; do
        [ -f "$f" ] && cp -L "$f" "$r/usr/local/share/ca-certificates/"
    done
    carry_files "$r"
    grep -hiE '^[[:space:]]*Acquire::[a-z]+::Proxy' /etc/apt/apt.conf.d/* 2>/dev/null \
        >"$r/etc/apt/apt.conf.d/01proxy" || rm -f "$r/etc/apt/apt.conf.d/01proxy"
}

# A NodeSource-style nodejs .deb from the host's node and npm.
nodesource_deb() {
    local out=$1 pkg version
    [ -x /usr/bin/node ] && [ -f /usr/lib/node_modules/npm/bin/npm-cli.js ] ||
        die "the nodesource variant needs the host's /usr/bin/node and /usr/lib/node_modules/npm"
    version=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null) || version=""
    [ -n "$version" ] || version="$(/usr/bin/node --version | sed 's/^v//')-1nodesource1"
    pkg=$work/nodejs-pkg
    rm -rf "$pkg"
    mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/lib/node_modules"
    cp -a /usr/bin/node "$pkg/usr/bin/node"
    cp -a /usr/lib/node_modules/npm "$pkg/usr/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$pkg/usr/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$pkg/usr/bin/npx"
    # NodeSource's control fields: its npm is inside, Debian's conflicts.
    cat >"$pkg/DEBIAN/control" <<EOF
Package: nodejs
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: Parley fresh-check <nobody@localhost>
Depends: libc6 (>= 2.28), libgcc-s1, libstdc++6 (>= 5.2), python3, ca-certificates
Conflicts: nodejs-dev, nodejs-doc, nodejs-legacy, npm
Replaces: nodejs-dev (<= 0.8.22), nodejs-legacy, npm (<= 1.2.14)
Provides: nodejs-dev, nodejs-doc, nodejs-legacy, npm
Section: web
Priority: optional
Description: Node.js with its bundled npm (NodeSource-style, built by fresh-check)
EOF
    dpkg-deb --root-owner-group -Zgzip -z1 -b "$pkg" "$out" >/dev/null || die "dpkg-deb failed"
    rm -rf "$pkg"
}

# What the README says a bare Debian 12 needs before the first command:
# its line marked "# as root" (or "# as a user with sudo rights").
readme_first_step() {
    local mark="# as root" line
    [ "$1" = root ] || mark="# as a user with sudo rights"
    line=$(grep -m1 -F -- "$mark" "$here/README.md" | sed 's/[[:space:]]*#.*$//')
    [ -n "$line" ] || { log "README.md has no line marked '$mark' (the bare machine's first step)"; return 1; }
    printf '%s\n' "$line"
}

# ---------------------------------------------------------------------------
one_variant() {
    local variant=$1 who=$2 home=/root t0 tree rc=0
    root=$roots/$variant
    step_log=$work/$variant.log
    : >"$step_log"
    report=()
    log "== $variant ($([ "$who" = root ] && echo root || echo "user $who with sudo")), log in $step_log"
    remove_root "$root" || return 1
    make_root "$root"
    t0=$(now)
    prepare_root "$root"
    if [ "$variant" = nodesource ]; then
        in_background nodesource_deb "$root/root/nodejs.deb" || return 1
        run_step "install NodeSource nodejs" "$root" root \
            'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./nodejs.deb && rm nodejs.deb && node --version && npm --version' ||
            return 1
    fi
    if [ "$who" != root ]; then
        home=/home/$who
        run_step "add a user with sudo" "$root" root \
            "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q sudo &&
             useradd -m -s /bin/bash $who && echo '$who ALL=(ALL) NOPASSWD: ALL' >/etc/sudoers.d/$who &&
             chmod 440 /etc/sudoers.d/$who" || return 1
    fi
    tree=$root$home/parley
    mkdir -p "$tree" && tar -xf "$tree_tar" -C "$tree"
    [ "$who" = root ] || chroot "$root" chown -R "$who:$who" "$home/parley"
    report+=("setup $(secs "$t0" "$(now)") s")

    # The README's steps, exactly: its line for a bare machine (as root,
    # or as a user with sudo rights), then its two commands.
    local first
    first=$(readme_first_step "$who") || return 1
    run_step bootstrap "$root" "$who" "$first" || return 1
    report+=("bootstrap (apt-get install make) $(printf '%.0f' "$(step_end bootstrap)") s")

    run_step "make demo" "$root" "$who" "cd parley && make demo" || rc=1
    local deps end demo_at build
    deps=$(deps_secs "make demo")
    end=$(step_end "make demo")
    demo_at=$(mark "make demo" '^\./scripts/demo\.sh')
    demo_at=${demo_at:-$end}
    build=$(awk -v a="$demo_at" -v d="$deps" 'BEGIN { printf "%.0f", a - d }')
    report+=("make demo: deps $deps s, build $build s, demo $(awk -v a="$demo_at" -v e="$end" 'BEGIN { printf "%.0f", e - a }') s")
    [ "$rc" = 0 ] || return 1
    grep -q 'SUMMARY\|summary' "$step_log" || log "warning: no team summary seen in make demo's output"

    if [ "$test_mode" = full ]; then
        run_step "make test" "$root" "$who" "cd parley && make test" || rc=1
        local runs_at
        deps=$(deps_secs "make test")
        end=$(step_end "make test")
        runs_at=$(mark "make test" '^tests: running')
        runs_at=${runs_at:-$end}
        report+=("make test: deps $deps s, build $(awk -v a="$runs_at" -v d="$deps" 'BEGIN { printf "%.0f", a - d }') s, suites $(awk -v a="$runs_at" -v e="$end" 'BEGIN { printf "%.0f", e - a }') s")
        grep -E '^ *[0-9.]+ tests: [0-9]+ passed' "$step_log" | tail -1 | sed 's/^ *[0-9.]* /fresh-check: /' >&2
    else
        run_step "scripts/deps.sh test" "$root" "$who" "cd parley && ./scripts/deps.sh test && ./scripts/deps.sh --check test" || rc=1
        report+=("scripts/deps.sh test $(printf '%.0f' "$(step_end "scripts/deps.sh test")") s")
    fi
    return "$rc"
}

archive_tree
failed=()
summary=()
for job in "${jobs[@]}"; do
    v=${job%%:*} who=${job#*:}
    t_all=$(now)
    if one_variant "$v" "$who"; then status=passed; else status=FAILED; failed+=("$v"); fi
    remove_root "$root" || { status=FAILED; failed+=("$v (mounts left)"); }
    root=""
    summary+=("$v ($who): $status in $(secs "$t_all" "$(now)") s: $(IFS=';'; echo "${report[*]}" | sed 's/;/; /g')")
done
rm -f "$tree_tar"
for line in "${summary[@]}"; do log "$line"; done
[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]}"
log "every variant passed"
