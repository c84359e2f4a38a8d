#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo.sh - a broker and N agents exploring together on loopback.
#
#   make demo                      3 agents, heuristic policy, built-in embedder
#   scripts/demo.sh --agents 5 --world-size 30
#   scripts/demo.sh --llm-url http://127.0.0.1:11434/v1 --llm-model llama3.1 \
#                   [--embed-url http://127.0.0.1:11434/v1 --embed-model nomic-embed-text]
#
# The same PARLEY_* variables as the agents work too (PARLEY_LLM_URL,
# PARLEY_LLM_MODEL, PARLEY_EMBED_URL, PARLEY_EMBED_MODEL, PARLEY_POLICY, and
# the key in PARLEY_LLM_API_KEY or OPENAI_API_KEY). With a model URL the
# policy is "llm" unless PARLEY_POLICY says otherwise.
#
# parley-web serves the live view at http://127.0.0.1:8080/ (--web-bind,
# PARLEY_WEB_BIND; "off" for none); --stay keeps the broker and the view up
# after the agents are done, until Ctrl-C.
#
# Everything runs on 127.0.0.1 with ports the broker picks (reported in its
# ready file), memories go to a temporary directory, and every process this
# script started is stopped on exit or Ctrl-C. Exit status: 0 when every
# agent ended normally, 1 otherwise, 2 on a bad option, 130 on Ctrl-C.
set -u

usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF

Options:
  --agents N          number of agents (default 3)
  --world-size N      positions on the line (default 20)
  --seed N            world and heuristic seed (default 7)
  --max-steps N       per agent (default 30)
  --delay MS          pause between an agent's steps (default 250)
  --llm-url URL       --llm-model MODEL    use a chat model (policy llm)
  --embed-url URL     --embed-model MODEL  use an embeddings server
  --web-bind H:P      where parley-web serves the view (default 127.0.0.1:8080; off: none)
  --stay              keep the broker and the view running after the agents end
  --keep              keep the temporary directory (logs, memories)
  -h, --help          this text
EOF
}

demo_name=demo
# shellcheck source=scripts/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"
agents=3 world_size=20 seed=7 max_steps=30 delay=250 keep=0 stay=0
web_bind=${PARLEY_WEB_BIND:-127.0.0.1:8080}
llm_url=${PARLEY_LLM_URL:-} llm_model=${PARLEY_LLM_MODEL:-}
embed_url=${PARLEY_EMBED_URL:-} embed_model=${PARLEY_EMBED_MODEL:-}

while [ $# -gt 0 ]; do
    case "$1" in
        --agents) agents=$2; shift ;;
        --world-size) world_size=$2; shift ;;
        --seed) seed=$2; shift ;;
        --max-steps) max_steps=$2; shift ;;
        --delay) delay=$2; shift ;;
        --llm-url) llm_url=$2; shift ;;
        --llm-model) llm_model=$2; shift ;;
        --embed-url) embed_url=$2; shift ;;
        --embed-model) embed_model=$2; shift ;;
        --web-bind) web_bind=$2; shift ;;
        --stay) stay=1 ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "demo: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$agents$world_size$seed$max_steps$delay" in
    *[!0-9]*) echo "demo: numbers expected for --agents, --world-size, --seed, --max-steps, --delay" >&2; exit 2 ;;
esac
[ "$agents" -ge 1 ] && [ "$agents" -le 50 ] || { echo "demo: --agents must be 1..50" >&2; exit 2; }
demo_need parley-broker parley-agent

policy=${PARLEY_POLICY:-heuristic}
if [ -n "$llm_url" ] && [ -z "${PARLEY_POLICY:-}" ]; then policy=llm; fi
if [ "$policy" = llm ] && [ -z "$llm_model" ]; then
    echo "demo: --llm-model (or PARLEY_LLM_MODEL) is needed with a model URL" >&2; exit 2
fi

web_pid=
demo_after=(web_pid broker_pid)
demo_tmp parley-demo "logs and memories"

# The exploration team is scenarios/explore (its world settings are
# overridden by the flags below, so the options keep their meaning).
demo_broker --scenario "$here/scenarios/explore" \
    --router 'tcp://127.0.0.1:*' --pub 'tcp://127.0.0.1:*' \
    --tap 'tcp://127.0.0.1:*' --advertise-host 127.0.0.1 \
    --seed "$seed" --world-size "$world_size" --data-dir "$tmp/data" --log-level warn
tap=$(demo_ready_value "$tmp/ready" tap)

echo "== Parley demo: $agents agents, line of $world_size positions, policy $policy" \
     "(embedder: ${embed_url:-built-in})"
echo "== broker $router (watch live: $bin/parley-tap --tap $tap)"
if [ "$web_bind" != off ] && [ -x "$bin/parley-web" ]; then
    "$bin/parley-web" --broker "$router" --bind "$web_bind" --ready-file "$tmp/web.ready" \
        --log-level warn 2>"$tmp/web.log" &
    web_pid=$!
    demo_wait_ready "$web_pid" "$tmp/web.ready" 50
    url=$(demo_ready_value "$tmp/web.ready" url)
    if [ -n "$url" ]; then
        echo "== live view: $url"
    else
        echo "demo: parley-web did not start (port taken? try --web-bind 127.0.0.1:0):" >&2
        cat "$tmp/web.log" >&2
        web_pid=
    fi
fi
echo

agent_env=(PARLEY_POLICY="$policy")
[ -n "$llm_url" ] && agent_env+=(PARLEY_LLM_URL="$llm_url")
[ -n "$llm_model" ] && agent_env+=(PARLEY_LLM_MODEL="$llm_model")
[ -n "$embed_url" ] && agent_env+=(PARLEY_EMBED_URL="$embed_url")
[ -n "$embed_model" ] && agent_env+=(PARLEY_EMBED_MODEL="$embed_model")

for i in $(seq 1 "$agents"); do
    id="Agent$i"
    env "${agent_env[@]}" "$bin/parley-agent" --broker "$router" --id "$id" \
        --role "$here/scenarios/explore/roles/explorer.yaml" \
        --memory-dir "$tmp/memory/$id" --max-steps "$max_steps" --seed "$seed" \
        --step-delay-ms "$delay" --log-level warn \
        > >(tee "$tmp/$id.out") 2>"$tmp/$id.log" &
    pids+=($!)
done

failed=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"; rc=$?
    if [ $rc -ne 0 ]; then
        failed=1
        echo "demo: Agent$((i + 1)) exited with $rc; its log:" >&2
        tail -20 "$tmp/Agent$((i + 1)).log" >&2
    fi
done
pids=()
sleep 0.2    # let tee flush the last lines

field() { sed -n "s/.*SUMMARY.* $2=\([^ ]*\).*/\1/p" "$1"; }
echo
echo "== Team summary"
printf '%-10s %6s %9s %8s %6s %9s  %s\n' agent steps position objects sent received "ended because"
coverage=0 steps=0 sent=0 received=0
for i in $(seq 1 "$agents"); do
    out="$tmp/Agent$i.out"
    s=$(field "$out" steps); c=$(field "$out" coverage); c=${c%\%}
    m=$(field "$out" sent); r=$(field "$out" received)
    why=$(sed -n 's/.*SUMMARY.* end="\([^"]*\)".*/\1/p' "$out")
    printf '%-10s %6s %9s %8s %6s %9s  %s\n' "Agent$i" "${s:-?}" "$(field "$out" position)" \
        "$(field "$out" objects)" "${m:-?}" "${r:-?}" "${why:-no summary}"
    steps=$((steps + ${s:-0})); sent=$((sent + ${m:-0})); received=$((received + ${r:-0}))
    [ "${c:-0}" -gt "$coverage" ] 2>/dev/null && coverage=$c
done
echo
echo "coverage: ${coverage}%   team steps: $steps   messages sent: $sent   received: $received"
echo
echo "What each agent found:"
for i in $(seq 1 "$agents"); do
    sed -n 's/^\[\(Agent[0-9]*\)\] found:/  \1:/p' "$tmp/Agent$i.out"
done
if [ "$stay" = 1 ] && [ -n "$web_pid" ]; then
    echo
    echo "== the view stays at $url; Ctrl-C to end"
    wait "$web_pid"
fi
exit $failed
