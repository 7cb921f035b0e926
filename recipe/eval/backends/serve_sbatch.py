"""A Slurm job that evaluates a model at paper scale: start ``vllm serve`` from the pinned container with the model
card's serving flags, wait for ``/health``, run ``recipe eval --endpoint ...`` on the suites, stop the server.

The job writes ``serving.json`` (the exact serving command, image, flags, port) into the output folder before the
server starts, so the results are always next to how the model was served (EVAL.md §10: serving config moves scores
as much as eval config). Health wait: polls ``/health`` until ``health_timeout_s``; fails if the server dies first.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from recipe.config.benchmarks_section import ServingSection


def serving_command(serving: ServingSection, model_path: str, served_name: str) -> list[str]:
    return ["vllm", "serve", model_path, "--served-model-name", served_name, "--host", "127.0.0.1",
            "--port", str(serving.port), "--tensor-parallel-size", str(serving.tensor_parallel), *serving.flags]


def render_eval_sbatch(serving: ServingSection, *, model_path: str, served_name: str, suites: list[str], out_dir: str,
                       model_revision: str | None = None, eval_args: list[str] = (), mounts: list[str] = ()) -> str:
    if not suites:
        raise ValueError("give at least one suite")
    cmd = serving_command(serving, model_path, served_name)
    serving_json = json.dumps({"command": cmd, "image": serving.image, "flags": serving.flags, "port": serving.port,
                               "tensor_parallel": serving.tensor_parallel, "model_path": model_path,
                               "served_model_name": served_name, "model_revision": model_revision}, indent=2)
    q = shlex.quote
    sb = ["#!/bin/bash", f"#SBATCH --job-name=eval-{served_name.replace('/', '_')[:40]}",
          f"#SBATCH --nodes={serving.nodes}", f"#SBATCH --gpus-per-node={serving.gpus_per_node}",
          f"#SBATCH --time={serving.time}", "#SBATCH --exclusive"]
    if serving.partition:
        sb.append(f"#SBATCH --partition={serving.partition}")
    if serving.account:
        sb.append(f"#SBATCH --account={serving.account}")
    eval_cmd = ["recipe", "eval", "--endpoint", f"http://127.0.0.1:{serving.port}", "--model", served_name,
                "--server", "vllm", "--concurrency", str(serving.concurrency), "--out", out_dir]
    for s in suites:
        eval_cmd += ["--suite", s]
    if model_revision:
        eval_cmd += ["--model-revision", model_revision]
    eval_cmd += list(eval_args)
    mount_arg = f" --container-mounts={q(','.join(mounts))}" if mounts else ""
    body = f"""
set -euo pipefail
OUT={q(out_dir)}
mkdir -p "$OUT"
# Record how the model is served before it starts (serving.json beside results.json).
cat > "$OUT/serving.json" <<'SERVING_JSON'
{serving_json}
SERVING_JSON
SERVE_CMD=({' '.join(q(c) for c in cmd)})
srun --ntasks=1 --container-image={q(serving.image)}{mount_arg} "${{SERVE_CMD[@]}}" > "$OUT/vllm.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
deadline=$((SECONDS + {serving.health_timeout_s}))
until curl -sf "http://127.0.0.1:{serving.port}/health" > /dev/null; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "vLLM exited before becoming healthy; see $OUT/vllm.log" >&2; exit 1; fi
  if [ "$SECONDS" -ge "$deadline" ]; then echo "vLLM not healthy after {serving.health_timeout_s} s" >&2; exit 1; fi
  sleep 10
done
{' '.join(q(c) for c in eval_cmd)}
"""
    return "\n".join(sb) + "\n" + body


def write_eval_sbatch(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path
