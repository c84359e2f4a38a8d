#!/bin/sh
# SPDX-License-Identifier: MIT
# docker-agent.sh - the agent container's entry (installed in the image as
# /usr/local/bin/parley-docker-agent by the Dockerfile).
#
# - The id is PARLEY_AGENT_ID, else the container's hostname, so
#   `docker compose up --scale agent=N` gives N distinct agents.
# - Memory goes to /var/lib/parley/<id> on the compose "memory" volume.
# - When docker-compose.yml's "llm" profile is up (the name "llm"
#   resolves) and PARLEY_LLM_URL is empty, agents use that server.
#   Explicit settings always win.
# - CURVE: unless PARLEY_CURVE_KEY is set, the team key pair and the
#   broker's public key from $PARLEY_TEAM_KEY_DIR (default
#   /var/lib/parley-team, the "team-keys" volume the broker fills at its
#   first start; waited for up to two minutes). Without that directory the
#   agent runs plain.
# Any arguments are passed on to parley-agent.
set -eu
# Docker sets HOSTNAME; /etc/hostname is the same name without relying on it.
id=${PARLEY_AGENT_ID:-${HOSTNAME:-$(cat /etc/hostname)}}
dir=${PARLEY_MEMORY_DIR:-/var/lib/parley/$id}
mkdir -p "$dir"
if [ -z "${PARLEY_LLM_URL:-}" ] && getent hosts llm >/dev/null 2>&1; then
    export PARLEY_LLM_URL=http://llm:11434/v1
    export PARLEY_LLM_MODEL="${PARLEY_LLM_MODEL:-${PARLEY_OLLAMA_MODEL:-llama3.2}}"
fi
team=${PARLEY_TEAM_KEY_DIR:-/var/lib/parley-team}
if [ -z "${PARLEY_CURVE_KEY:-}" ] && [ -d "$team" ]; then
    waited=0
    while [ ! -s "$team/team_secret" ] || [ ! -s "$team/broker" ]; do
        [ $waited -ge 120 ] && { echo "parley-docker-agent: no keys in $team after 120 s" >&2; exit 1; }
        sleep 1
        waited=$((waited + 1))
    done
    export PARLEY_CURVE_KEY="$team/team" PARLEY_CURVE_SERVER_KEY="$team/broker"
fi
exec parley-agent --id "$id" --memory-dir "$dir" "$@"
