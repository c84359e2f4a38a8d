#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo-newsroom.sh - a team of one's own driven by a model: scenarios/newsroom.
#
#   make demo-newsroom               against the project's SCRIPTED test server
#   scripts/demo-newsroom.sh --llm-url http://127.0.0.1:11434/v1 --llm-model qwen2.5:7b
#
# A writer drafts a story, a reviewer sends it back once with a note, an
# editor writes the headline, and a person approves. Without --llm-url the
# model is tests/openai_server.py, a scripted server that answers the way a
# model would from a fixed script (it is not a model: the story is always
# the same). With --llm-url every role but the person asks your model
# (docs/MODEL.md, "Running the newsroom on your own model").
#
# The person is you with --ask (the script waits and prints the
# parley-ctl command to type), or the script approving in your place
# (the default). Everything runs on 127.0.0.1 in a temporary directory;
# every process this script started is stopped on exit or Ctrl-C. Exit
# status: 0 when the workflow is done, 1 when it failed, 2 on a bad
# option, 130 on Ctrl-C.
set -u

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF2

Options:
  --llm-url URL       --llm-model MODEL    your model instead of the scripted server
  --llm-mode MODE     auto (default), tools, json-schema or text
  --ask               you approve (parley-ctl submit), the script waits
  --keep              keep the temporary directory (logs)
  -h, --help          this text
EOF2
}

demo_name=demo-newsroom
# shellcheck source=scripts/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"
scenario=$here/scenarios/newsroom keep=0 ask=0 mode=auto
llm_url=${PARLEY_LLM_URL:-} llm_model=${PARLEY_LLM_MODEL:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --llm-url) llm_url=$2; shift ;;
        --llm-model) llm_model=$2; shift ;;
        --llm-mode) mode=$2; shift ;;
        --ask) ask=1 ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "demo-newsroom: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
demo_need parley-broker parley-agent parley-ctl
if [ -n "$llm_url" ] && [ -z "$llm_model" ]; then
    echo "demo-newsroom: --llm-model is needed with --llm-url" >&2; exit 2
fi

server_pid= watch_pid=
demo_with=(watch_pid)
demo_after=(broker_pid server_pid)
demo_tmp parley-newsroom logs

if [ -z "$llm_url" ]; then
    # The scripted server prints its port, and exits when its stdin closes.
    mkfifo "$tmp/server-in"
    python3 "$here/tests/openai_server.py" <"$tmp/server-in" >"$tmp/server-port" 2>"$tmp/server.log" &
    server_pid=$!
    exec 9>"$tmp/server-in"
    for _ in $(seq 1 100); do [ -s "$tmp/server-port" ] && break; sleep 0.1; done
    port=$(head -n 1 "$tmp/server-port" 2>/dev/null)
    [ -n "$port" ] || { echo "demo-newsroom: the scripted server did not start" >&2; exit 1; }
    llm_url=http://127.0.0.1:$port/v1 llm_model=news:demo
    echo "== The model is the project's SCRIPTED test server (tests/openai_server.py), not a model:"
    echo "   it answers as a model would, from a fixed script. Use --llm-url for a real one."
fi

demo_broker --scenario "$scenario" --router 'tcp://127.0.0.1:*' \
    --pub 'tcp://127.0.0.1:*' --tap off --advertise-host 127.0.0.1 --data-dir none \
    --log-level warn
ctl() { "$bin/parley-ctl" --broker "$router" "$@"; }
holder() { ctl workflow 2>/dev/null | awk '/^holder/ { print $2 }'; }

echo "== Parley newsroom, broker $router, model $llm_model at $llm_url (--llm-mode $mode)"
echo "== assignment: $(sed -n 's/.*assignment: { reducer: replace, value: "\(.*\)" }.*/\1/p' "$scenario/scenario.yaml")"
echo

ctl --id watch watch headline draft &
watch_pid=$!
sleep 0.3                    # the watcher's SUB joins before the first turn
for role in writer reviewer editor; do
    "$bin/parley-agent" --broker "$router" --role "$scenario/roles/$role.yaml" --id "$role" \
        --memory-dir none --llm-url "$llm_url" --llm-model "$llm_model" --llm-mode "$mode" \
        --log-level warn >"$tmp/$role.out" 2>"$tmp/$role.log" &
    pids+=($!)
done

# The person: once the approver holds the turn.
approve="ctl --role approver submit --status done - update approval '\"approved\"'"
while kill -0 "$watch_pid" 2>/dev/null; do
    if [ "$(holder)" = approver ]; then
        echo
        echo "== The approver's turn (a person). The draft and the headline:"
        ctl state get draft headline 2>/dev/null | sed 's/^/   /'
        if [ "$ask" = 1 ]; then
            echo "   approve:  parley-ctl --broker $router --role approver submit --status done - update approval '\"approved\"'"
            echo "   or send back:  parley-ctl --broker $router --role approver submit writer update notes '[\"shorter, please\"]'"
            while [ "$(holder)" = approver ]; do sleep 0.5; done
        else
            echo "   (the script approves in your place: $approve)"
            eval "$approve" >/dev/null
        fi
    fi
    sleep 0.3
done
wait "$watch_pid"; status=$?
watch_pid=
for i in "${!pids[@]}"; do wait "${pids[$i]}" 2>/dev/null; done
pids=()
echo
echo "== Each role's own account"
cat "$tmp"/writer.out "$tmp"/reviewer.out "$tmp"/editor.out | grep '] turn ' | sort -t' ' -k3,3n
echo
echo "== Model use, per agent (its MODEL line) and per role (STATS model_roles)"
cat "$tmp"/writer.out "$tmp"/reviewer.out "$tmp"/editor.out | grep '] MODEL '
ctl stats 2>/dev/null | sed -n 's/^model_roles *\([^ ]*\).*/   \1/p'
exit $status
