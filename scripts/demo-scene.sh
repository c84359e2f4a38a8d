#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo-scene.sh - the scene director: six roles take turns on a blackboard.
#
#   make demo-scene                  built-in deterministic policies, no model
#   scripts/demo-scene.sh --llm-url http://127.0.0.1:11434/v1 --llm-model llama3.1
#
# Starts parley-broker --scenario scenarios/scene, `parley-ctl watch` (which
# prints every turn: who acted, what changed, who is next) and one
# parley-agent per role file. With the built-in policies the first
# validation fails (the architect's first layout overlaps), the critic sends
# the scene back, the orchestrator routes the clipping to the architect, and
# the second validation passes: the final report closes the run.
#
# Everything runs on 127.0.0.1 with ports the broker picks, in a temporary
# directory; every process this script started is stopped on exit or
# Ctrl-C. Exit status: 0 when the workflow is done, 1 when it failed, 2 on
# a bad option, 130 on Ctrl-C.
set -u

usage() {
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF2

Options:
  --scenario DIR      scenario folder (default scenarios/scene)
  --llm-url URL       --llm-model MODEL    every role uses the model (policy llm)
  --keep              keep the temporary directory (logs)
  -h, --help          this text
EOF2
}

demo_name=demo-scene
# shellcheck source=scripts/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"
scenario=$here/scenarios/scene keep=0
llm_url=${PARLEY_LLM_URL:-} llm_model=${PARLEY_LLM_MODEL:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --scenario) scenario=$2; shift ;;
        --llm-url) llm_url=$2; shift ;;
        --llm-model) llm_model=$2; shift ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "demo-scene: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
demo_need parley-broker parley-agent parley-ctl
if [ -n "$llm_url" ] && [ -z "$llm_model" ]; then
    echo "demo-scene: --llm-model is needed with --llm-url" >&2; exit 2
fi

demo_tmp parley-scene logs

# The journal goes to the temporary directory: the broker's default,
# ./parley-data, would make the next demo replay this one's ended run.
demo_broker --scenario "$scenario" --router 'tcp://127.0.0.1:*' \
    --pub 'tcp://127.0.0.1:*' --tap off --advertise-host 127.0.0.1 --data-dir "$tmp/data" \
    --log-level warn

policy_args=()
[ -n "$llm_url" ] && policy_args=(--policy llm --llm-url "$llm_url" --llm-model "$llm_model")
echo "== Parley scene director: $(sed -n 's/^name: //p' "$scenario/scenario.yaml"), broker $router" \
     "(policies: ${llm_url:+llm $llm_model}${llm_url:-built-in})"
echo "== prompt: $(sed -n 's/.*user_prompt: { reducer: replace, value: "\(.*\)" }.*/\1/p' "$scenario/scenario.yaml")"
echo

"$bin/parley-ctl" --broker "$router" --id watch watch final_report &
watch_pid=$!
sleep 0.3                    # the watcher's SUB joins before the first turn
for file in "$scenario"/roles/*.yaml; do
    role=$(basename "$file" .yaml)
    "$bin/parley-agent" --broker "$router" --role "$file" --id "$role" --memory-dir none \
        "${policy_args[@]}" --log-level warn >"$tmp/$role.out" 2>"$tmp/$role.log" &
    pids+=($!)
done
wait "$watch_pid"; status=$?
for i in "${!pids[@]}"; do wait "${pids[$i]}" 2>/dev/null; done
pids=()
echo
echo "== Each role's own account"
cat "$tmp"/*.out | sort -t' ' -k3,3n
exit $status
