#!/usr/bin/env bash
# The README's verl route as a new user runs it, cut to 3 steps, with the terminal line count of each command
# (issue #44; figures in docs/benchmarks.md "The newcomer route replayed"). While `gspo train` runs, the same live
# job is followed twice: `gspo jobs logs ID --follow` (the view `train` shows) and `--follow --raw` (the whole job
# log, what --follow streamed before). Run from the repository root after `make engine`:
#     bash benchmarks/newcomer_route.sh OUT_DIR
# Uses a fresh GSPO_HOME under /tmp and stops its embedded Ray head at the end.
set -uo pipefail
out=${1:?usage: benchmarks/newcomer_route.sh OUT_DIR}
mkdir -p "$out"
GSPO_HOME=$(mktemp -d /tmp/newcomer-home-XXXX)
export GSPO_HOME
# shellcheck disable=SC1091
source .venv-engine/bin/activate
git log --oneline -1 > "$out/commit.txt"
trap 'gspo cluster down > /dev/null 2>&1' EXIT

gspo env doctor --preset tiny-verl > "$out/doctor.txt" 2>&1; echo "doctor exit $?" >> "$out/exits.txt"
gspo prepare-data --preset tiny-verl > "$out/prepare.txt" 2>&1; echo "prepare-data exit $?" >> "$out/exits.txt"
gspo train --preset tiny-verl --run-name nc1 --set trainer.total_training_steps=3 > "$out/train.txt" 2>&1 &
train=$!
job=""
for _ in $(seq 600); do  # the job id, once train has submitted it
  job=$(gspo jobs list --json 2>/dev/null | python3 -c 'import json, sys
rows = json.load(sys.stdin)
print(next((r["job_id"] for r in rows if "-train-" in str(r.get("job_id", ""))), ""))' 2>/dev/null)
  [[ -n $job ]] && break
  sleep 2
done
gspo jobs logs "$job" --follow > "$out/follow.txt" 2>&1 & view=$!
gspo jobs logs "$job" --follow --raw > "$out/follow_raw.txt" 2>&1 & raw=$!
wait $train; echo "train exit $?" >> "$out/exits.txt"
wait $view; echo "jobs logs --follow exit $?" >> "$out/exits.txt"
wait $raw; echo "jobs logs --follow --raw exit $?" >> "$out/exits.txt"
gspo jobs logs "$job" > "$out/logs.txt" 2>&1; echo "jobs logs exit $?" >> "$out/exits.txt"
gspo eval arith --preset tiny-verl --model nc1 > "$out/eval.txt" 2>&1; echo "eval exit $?" >> "$out/exits.txt"
echo "job $job"; cat "$out/exits.txt"
wc -l "$out"/{doctor,prepare,train,follow,follow_raw,logs,eval}.txt
