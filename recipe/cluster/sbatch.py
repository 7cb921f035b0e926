"""Shell scripts of a rendered stage: the Slurm launcher around NeMo-RL's ``ray.sub`` and the HF conversion.

``launch.sh`` (NEMO_RL.md §6) exports ``COMMAND``, ``CONTAINER`` (by digest, pyxis syntax), ``MOUNTS``,
``BASE_LOG_DIR`` and calls ``sbatch … ray.sub`` from a NeMo-RL checkout that must be at the pinned commit
(``NEMO_RL_CHECKOUT``). ``ray.sub`` carries ``#SBATCH --dependency=singleton``; the launcher also passes it
explicitly with a fixed ``--job-name`` so resubmitted segments queue behind the running one, and
``SEGMENTS=k`` submits k chained segments at once (default: the stage's steps × estimated step time). ``COMMAND``
first runs the fingerprint check from the code snapshot (refuses on a container/lock mismatch), then the stage's entry
point with the rendered YAML, then ``convert.sh --check`` (fails on the last segment when the stage is unfinished).
The conversion itself is a one-node job after the last segment (``convert_args``), in the same container.

``convert.sh`` (NEMO_RL.md §7) turns the newest ``step_N`` into a Hugging Face folder with the release's
Megatron converter, then copies the tokenizer (with its chat template) from ``policy/tokenizer`` and
``generation_config.json`` from the stage's input model (both are NOT copied by the converter), checks that the
folder is complete and renames it into ``<stage>/checkpoint`` atomically.

Both scripts are plain bash checked with shellcheck in the tests; neither can be executed without Slurm/GPUs.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from recipe.cluster.release import CONTAINER_SOURCE_DIR, MEGATRON_TO_HF, RELEASE_COMMIT, RELEASE_TAG


def q(s: object) -> str:
    return shlex.quote(str(s))


@dataclass
class LaunchSpec:
    job_name: str
    nodes: int
    gpus_per_node: int
    time_limit: str
    account: str | None
    partition: str | None
    container: str             # pyxis URI (digest when pinned)
    mounts: list[str]
    snapshot_dir: str          # code snapshot (inside the run dir, shared FS)
    lock_file: str             # the lock inside the snapshot
    entry_point: str           # relative to /opt/nemo-rl
    config_path: str           # rendered YAML (shared FS)
    log_dir: str
    convert_script: str
    env: dict[str, str]
    warnings: list[str]
    allow_unpinned: bool
    requires_env: list[str]    # variables the user must export (HF_TOKEN, judge endpoints)
    segments: int = 1          # default SEGMENTS: steps x estimated step time (recipe.cluster.segments)


def segment_args(s: LaunchSpec) -> list[str]:
    """The fixed ``sbatch`` options of one training segment (the launch script adds dependency and output)."""
    if not s.account or not s.partition:
        raise ValueError("launch script needs a Slurm account and partition (cluster.account / cluster.partition)")
    return [f"--job-name={s.job_name}", f"--nodes={s.nodes}", f"--gres=gpu:{s.gpus_per_node}",
            f"--time={s.time_limit}", "--exclusive", f"--account={s.account}", f"--partition={s.partition}"]


CONVERT_TIME = "02:00:00"   # one node converts a Megatron checkpoint to HF (NEMO_RL.md §7)


def convert_args(segment: list[str]) -> list[str]:
    """The conversion job's ``sbatch`` options from a segment's: one node, after the stage's last segment, not inside
    its allocation."""
    opts = dict(a[2:].split("=", 1) for a in segment if "=" in a)
    return [f"--job-name={opts['job-name']}_convert", "--nodes=1", f"--gres={opts['gres']}", f"--time={CONVERT_TIME}",
            f"--account={opts['account']}", f"--partition={opts['partition']}"]


def convert_line(segment: list[str], log_dir: str, convert_script: str) -> str:
    """The conversion job's ``sbatch`` line as the launch script runs it (``$SEGMENT`` = the last segment's id)."""
    return (f"sbatch --parsable {' '.join(q(a) for a in convert_args(segment))} --dependency=afterok:$SEGMENT "
            f"--output={q(log_dir + '/%j-convert.out')} --wrap={q(convert_wrap(convert_script))}")


def convert_wrap(convert_script: str) -> str:
    """What the conversion job runs: convert.sh in the same container and mounts (pyxis), as the final check."""
    return ('srun --no-container-mount-home --container-image="$CONTAINER" --container-mounts="$MOUNTS" '
            f"bash {q(convert_script)}")


def segment_line(args: list[str], dependency: str, log_dir: str) -> str:
    """The ``sbatch`` line the launch script runs for one segment, with ``dependency`` as it expands there
    (``singleton`` plus the chain's ``afterok:<job>``); printed by the chain's dry run."""
    return (f"sbatch --parsable {' '.join(q(a) for a in args)} --dependency={dependency} "
            f"--output={q(log_dir + '/%j-segment.out')} \"$NEMO_RL_CHECKOUT/ray.sub\"")


def launch_script(s: LaunchSpec) -> str:
    s.warnings = [w.replace("`", "'").replace("$", "") for w in s.warnings]
    warn = "".join(f"# WARNING: {w}\n" for w in s.warnings)
    echo_warn = "".join(f"echo {q('WARNING: ' + w)} >&2\n" for w in s.warnings)
    check = (f"python3 {q(s.snapshot_dir + '/recipe/cluster/fingerprint_check.py')} --lock {q(s.lock_file)}"
             + (" --allow-unpinned" if s.allow_unpinned else ""))
    command = " && ".join([
        check,
        f"cd {CONTAINER_SOURCE_DIR}",
        # a segment queued after its stage finished skips the trainer's start-up (model load, vLLM, Gym servers)
        f"{{ bash {q(s.convert_script)} --finished || uv run python {s.entry_point} --config {q(s.config_path)}; }}",
        f"bash {q(s.convert_script)} --check",
    ])
    sbatch_args = segment_args(s)
    env_lines = "".join(f"export {k}={q(v)}\n" for k, v in s.env.items())
    req = "".join(f': "${{{v}:?export {v} before launching (see docs/RUN_AT_SCALE.md)}}"\n' for v in s.requires_env)
    return f"""#!/usr/bin/env bash
{warn}# Rendered by `recipe cluster render`: job {s.job_name}. Do not edit; re-render instead.
# Submits NeMo-RL's ray.sub (NeMo-RL {RELEASE_TAG}) with the stage command. SEGMENTS=k chains k segments (default: the
# stage's steps x estimated step time; same job name + --dependency=singleton; NeMo-RL resumes from the newest step).
# The last one runs with RECIPE_FINAL_SEGMENT=1: it fails when the stage is still unfinished, so nothing after it
# (afterok) starts from a missing checkpoint.
set -euo pipefail
{echo_warn}NEMO_RL_CHECKOUT="${{NEMO_RL_CHECKOUT:?export NEMO_RL_CHECKOUT=<a NeMo-RL clone at {RELEASE_TAG}> (it provides ray.sub)}}"
SEGMENTS="${{SEGMENTS:-{s.segments}}}"
have_commit="$(git -C "$NEMO_RL_CHECKOUT" rev-parse HEAD)"
if [ "$have_commit" != {q(RELEASE_COMMIT)} ]; then
  echo "NEMO_RL_CHECKOUT=$NEMO_RL_CHECKOUT is at $have_commit, not {RELEASE_TAG} ({RELEASE_COMMIT})" >&2
  exit 1
fi
{req}export CONTAINER={q(s.container)}
# the submit directory is mounted as NeMo-RL's cluster docs do (MOUNTS="$PWD:$PWD,...")
export MOUNTS="$PWD:$PWD",{q(",".join(s.mounts))}
export BASE_LOG_DIR={q(s.log_dir)}
{env_lines}export COMMAND={q(command)}
mkdir -p "$BASE_LOG_DIR"
# DEPENDENCY (e.g. afterok:123, set by `recipe cluster submit --stage all`) is added to the singleton dependency
dep="singleton${{DEPENDENCY:+,$DEPENDENCY}}"
for ((i = 1; i <= SEGMENTS; i++)); do
  if [ "$i" -eq "$SEGMENTS" ]; then export RECIPE_FINAL_SEGMENT=1; else export RECIPE_FINAL_SEGMENT=0; fi
  jid="$(sbatch --parsable {" ".join(q(a) for a in sbatch_args)} --dependency="$dep" --output="$BASE_LOG_DIR/%j-segment.out" "$NEMO_RL_CHECKOUT/ray.sub")"
  echo "submitted ${{jid%%;*}}"
done
# The conversion is its own one-node job after the last segment (the training allocation is released first); it
# fails like a last segment when the stage is unfinished, and the chain's next stage waits for it. The job expands
# $CONTAINER and $MOUNTS (exported above) itself:
# shellcheck disable=SC2016
cjid="$(RECIPE_FINAL_SEGMENT=1 sbatch --parsable {" ".join(q(a) for a in convert_args(sbatch_args))} --dependency="afterok:${{jid%%;*}}" --output="$BASE_LOG_DIR/%j-convert.out" --wrap={q(convert_wrap(s.convert_script))})"
echo "submitted ${{cjid%%;*}}"
"""


def convert_script(*, checkpoint_dir: str, hf_out: str, input_model: str, input_revision: str | None,
                   max_steps: int | None) -> str:
    final = "" if max_steps is None else str(max_steps)
    rev = input_revision or ""
    return f"""#!/usr/bin/env bash
# Rendered by `recipe cluster render`: convert this stage's final NeMo-RL checkpoint to a Hugging Face folder
# (NEMO_RL.md §7). Runs inside the container as its own one-node job after the stage's last segment; with --check
# (the end of every training segment) it only reports whether the stage is finished.
set -euo pipefail
CKPT_ROOT={q(checkpoint_dir)}
OUT={q(hf_out)}
INPUT_MODEL={q(input_model)}
INPUT_REVISION={q(rev)}
FINAL_STEP={q(final)}
# RECIPE_FINAL_SEGMENT=1 (set by launch.sh on a stage's last segment): an unfinished stage is an error there, so the
# chain's next stage (afterok) does not start from a checkpoint that is not there.
unfinished() {{
  if [ "${{RECIPE_FINAL_SEGMENT:-0}}" = 1 ]; then
    echo "$1; this was the stage's last segment: resubmit launch.sh with SEGMENTS=<more> to finish it" >&2
    exit 1
  fi
  echo "$1; the next segment continues"
  exit 0
}}
latest=""
for d in "$CKPT_ROOT"/step_*; do
  [ -d "$d" ] || continue
  n="${{d##*/step_}}"
  if [ -z "$latest" ] || [ "$n" -gt "$latest" ]; then latest="$n"; fi
done
if [ "${{1:-}}" = --finished ]; then   # exit status only: 0 when the final step exists
  if [ -n "$latest" ] && {{ [ -z "$FINAL_STEP" ] || [ "$latest" -ge "$FINAL_STEP" ]; }}; then exit 0; fi
  exit 1
fi
if [ -z "$latest" ]; then
  unfinished "no step_N checkpoint in $CKPT_ROOT yet"
fi
if [ -n "$FINAL_STEP" ] && [ "$latest" -lt "$FINAL_STEP" ]; then
  unfinished "stage not finished: newest checkpoint step_$latest < $FINAL_STEP"
fi
if [ "${{1:-}}" = --check ]; then   # end of a training segment: the conversion job converts
  echo "stage finished at step_$latest; the conversion job converts it"
  exit 0
fi
STEP_DIR="$CKPT_ROOT/step_$latest"
# A conversion is of one checkpoint: its step dir and that dir's modification time. A re-run (resume=never,
# from_step) writes new step dirs at the same paths, so an older conversion is moved aside (never deleted) and redone.
SOURCE_ID="$STEP_DIR@$(stat -c %Y "$STEP_DIR")"
if [ -f "$OUT/nemo_rl_source.json" ] && grep -qF -- "$SOURCE_ID" "$OUT/nemo_rl_source.json"; then
  echo "already converted: $OUT (from $SOURCE_ID)"
  exit 0
fi
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
if [ -e "$OUT" ]; then
  mv "$OUT" "$OUT.replaced-$STAMP"
  echo "moved the previous conversion aside: $OUT.replaced-$STAMP"
fi
# NeMo-RL's HF->Megatron cache of this folder as the next stage's input (nemo_rl/models/megatron/setup.py:
# <NRL_MEGATRON_CHECKPOINT_DIR>/model_<path with / as _>, reused while its iter_0000000 exists): move it aside too.
MCORE_DIR="${{NRL_MEGATRON_CHECKPOINT_DIR:-${{HF_HOME:-$HOME/.cache/huggingface}}/nemo_rl}}"
for d in "$MCORE_DIR/model_${{OUT//\\//_}}" "$MCORE_DIR/model_${{OUT//\\//_}}__hfovr_"*; do
  if [ -e "$d" ]; then mv "$d" "$d.replaced-$STAMP"; echo "moved stale Megatron cache aside: $d"; fi
done
iter_dir=""
for d in "$STEP_DIR"/policy/weights/iter_*; do
  if [ -d "$d" ]; then iter_dir="$d"; fi
done
if [ -z "$iter_dir" ]; then
  echo "no Megatron iter_* directory under $STEP_DIR/policy/weights" >&2
  exit 1
fi
TMP="$OUT.tmp-$$"
rm -rf "$TMP"
cd "${{NEMO_RL_DIR:-{CONTAINER_SOURCE_DIR}}}"
uv run --extra mcore python {MEGATRON_TO_HF} --config "$STEP_DIR/config.yaml" \\
  --megatron-ckpt-path "$iter_dir" --hf-ckpt-path "$TMP"
# The converter writes weights + config.json only: copy tokenizer files (tokenizer_config.json carries the chat
# template; chat_template.jinja too when present) and generation_config.json from the input model.
cp -r "$STEP_DIR"/policy/tokenizer/. "$TMP"/
if [ -d "$INPUT_MODEL" ]; then
  gen_cfg="$INPUT_MODEL/generation_config.json"
else
  gen_cfg="$(python3 -c 'import sys; from huggingface_hub import hf_hub_download as d; print(d(sys.argv[1], "generation_config.json", revision=sys.argv[2] or None))' "$INPUT_MODEL" "$INPUT_REVISION")"
fi
cp "$gen_cfg" "$TMP/generation_config.json"
for f in config.json generation_config.json tokenizer_config.json; do
  if [ ! -f "$TMP/$f" ]; then echo "conversion incomplete: $TMP/$f missing" >&2; exit 1; fi
done
if ! ls "$TMP"/*.safetensors >/dev/null 2>&1; then echo "conversion incomplete: no safetensors in $TMP" >&2; exit 1; fi
if [ ! -f "$TMP/chat_template.jinja" ] && ! grep -q '"chat_template"' "$TMP/tokenizer_config.json"; then
  echo "conversion incomplete: no chat template in $TMP" >&2; exit 1
fi
printf '{{"source_step": %s, "source_dir": "%s", "source_id": "%s"}}\\n' "$latest" "$STEP_DIR" "$SOURCE_ID" \\
  > "$TMP/nemo_rl_source.json"
mv "$TMP" "$OUT"
echo "converted step_$latest -> $OUT"
"""
