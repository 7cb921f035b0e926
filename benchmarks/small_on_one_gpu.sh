#!/usr/bin/env bash
# The small profile on one GPU in one script, within a wall-clock budget:
#   1. benchmarks/bench_small.py: each stage's seconds per step, tokens/s and peak memory at the profile's shapes;
#   2. `recipe run --profile small` (in process) until the budget left for step 3 is reached: a run cut short keeps
#      the stages it finished;
#   3. `recipe compare-to-start` on the last finished stage: the imported model against it, on the IFEval slice and
#      the tiny suites, with 95% CIs and paired deltas; both in thinking mode, then the imported model in its own
#      instruct mode (--start-instruct; the checkpoint's samples are reused);
#   4. `recipe report --costs` and `recipe report`: what each finished stage cost and scored.
# Everything printed goes to OUT/log.txt as well; the figures to OUT/*.json.
#
# Usage: benchmarks/small_on_one_gpu.sh OUT [BUDGET_S]      (BUDGET_S: the whole script's wall budget, default 3600)
# Knobs (environment): PYTHON (default python), RUN_ID (small-gpu), BENCH_STEPS (2), BENCH_MAX_S (BUDGET_S / 6),
# COMPARE_RESERVE_S (BUDGET_S / 5), TINY_LIMIT (64: one decode batch a suite), IFEVAL (100), RECIPE_SET (extra -s
# overrides for the run, e.g. "-s @small-smoke"). Needs the model imported first (`recipe model import`,
# docs/SMALL_PROFILE.md) and a benchmark mirror holding ifeval/ for the IFEval slice (RECIPE_BENCHMARK_MIRROR).
set -u
out=${1:?usage: small_on_one_gpu.sh OUT [BUDGET_S]}
budget=${2:-3600}
py=${PYTHON:-python}
run_id=${RUN_ID:-small-gpu}
t0=$(date +%s)
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
left() { local l=$(( budget - ($(date +%s) - t0) )); echo $(( l > 1 ? l : 1 )); }  # timeout 0 would mean none
recipe() { "$py" -m recipe.cli "$@"; }

"$py" - <<'EOF'
import torch
print("torch", torch.__version__, "| cuda", torch.cuda.is_available(),
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
EOF

# the code and SWE verifiers run untrusted programs in bubblewrap: without it the first validation stops the run,
# so say so before any GPU time is spent
"$py" -c "from recipe.sandbox.runner import Session; Session()" || {
  echo "no sandbox here: install bubblewrap (make system-deps, or apt-get install -y bubblewrap) first"; exit 2; }

bench_max=${BENCH_MAX_S:-$(( budget / 6 ))}
echo "== 1. per-stage step costs (bench_small, ${BENCH_STEPS:-2} steps a stage, at most ${bench_max} s)"
timeout -k 10 "$bench_max" "$py" benchmarks/bench_small.py --steps "${BENCH_STEPS:-2}" \
  || echo "bench_small stopped (exit $?): the rows above are the stages it finished"

reserve=${COMPARE_RESERVE_S:-$(( budget / 5 ))}
run_s=$(( $(left) - reserve )); run_s=$(( run_s > 1 ? run_s : 1 ))
echo "== 2. recipe run --profile small for at most ${run_s} s"
# shellcheck disable=SC2086  # RECIPE_SET is a list of -s options
timeout -k 15 "$run_s" "$py" -m recipe.cli run --profile small --no-notebooks --run-id "$run_id" ${RECIPE_SET:-} \
  || echo "recipe run stopped (exit $?): the stages it finished stay in runs/$run_id"

echo "== 3. compare-to-start on the last finished stage (at most $(left) s)"
timeout -k 10 "$(left)" "$py" -m recipe.cli compare-to-start --run-id "$run_id" --tiny-limit "${TINY_LIMIT:-64}" \
  --ifeval "${IFEVAL:-100}" || echo "compare-to-start stopped (exit $?)"
timeout -k 10 "$(left)" "$py" -m recipe.cli compare-to-start --run-id "$run_id" --tiny-limit "${TINY_LIMIT:-64}" \
  --ifeval "${IFEVAL:-100}" --start-instruct || echo "compare-to-start --start-instruct stopped (exit $?)"
runs=${RECIPE_RUNS_DIR:-runs}
cp "$runs/$run_id"/eval/before_after/comparison*.json "$out/" 2>/dev/null || true

echo "== 4. what each finished stage cost and scored"
recipe report --run-id "$run_id" --costs
recipe report --run-id "$run_id" --costs --json > "$out/stage_costs.json"
recipe report --run-id "$run_id"
echo "wall: $(( $(date +%s) - t0 )) s of a ${budget} s budget"
