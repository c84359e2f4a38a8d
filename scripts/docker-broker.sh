#!/bin/sh
# SPDX-License-Identifier: MIT
# docker-broker.sh - the broker container's entry (installed in the image as
# /usr/local/bin/parley-docker-broker by the Dockerfile).
#
# CURVE on, keys made at first start (parley-keygen never overwrites):
#   $PARLEY_KEY_DIR      (default /var/lib/parley-keys, volume "keys", the
#                        broker only): the broker's pair, and allow/ with
#                        the public keys it accepts
#   $PARLEY_TEAM_KEY_DIR (default /var/lib/parley-team, volume "team-keys",
#                        shared read-only with the agents): the team pair
#                        (any agent id) and the broker's public key
#   $PARLEY_TAP_KEY_DIR  (default /var/lib/parley-tapkeys, volume
#                        "tap-keys", shared with the tap service): the tap
#                        pair and the broker's public key
# More keys (an agent on another machine, an operator with admin rights):
# parley-keygen, then copy the public file into $PARLEY_KEY_DIR/allow;
# the broker picks it up without a restart. See docs/SECURITY.md.
# Any arguments are passed on to parley-broker.
set -eu
keys=${PARLEY_KEY_DIR:-/var/lib/parley-keys}
team=${PARLEY_TEAM_KEY_DIR:-/var/lib/parley-team}
tap=${PARLEY_TAP_KEY_DIR:-/var/lib/parley-tapkeys}
parley-keygen --dir "$keys" --name broker --if-missing --copy-public "$team"
parley-keygen --dir "$keys" --name broker --if-missing --copy-public "$tap"
parley-keygen --dir "$team" --name team --agents '*' --rights agent --if-missing \
    --copy-public "$keys/allow"
parley-keygen --dir "$tap" --name tap --rights tap --if-missing --copy-public "$keys/allow"
exec parley-broker --curve-keys "$keys" --curve-allow "$keys/allow" "$@"
