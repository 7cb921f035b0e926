"""Peak resident memory of the bucketed prefill that starts every decode batch, on IFEval's first prompts.

    .venv/bin/python benchmarks/bench_prefill_memory.py [--rows 128] [--caps 640 1280] [--checkpoint DIR]
                                                        [--threads 2] [--cpu-bf16]

For each cap (the new tokens the K/V buffer is sized for; full IFEval decodes 1,280) one process of its own renders
IFEval's first ``--rows`` prompts as the in-process backend does (the model's chat template, instruct mode), runs
``recipe.train.rollout.prefill_in_buckets`` on the CPU and prints the K/V buffer's size, the process's peak resident
set (``ru_maxrss``) and the seconds the prefill took. The peak is what a 128-row IFEval batch needs before its
first decode step: the joined K/V buffer for every row's prompt plus the cap, beside the buckets' prompt-only
states and the forward's activations. Each cap runs in a fresh process (``ru_maxrss`` never falls), one after the
other; nothing else should run beside it on a machine with little memory to spare.

Needs SmolLM2 (``recipe model import``) and IFEval's ``input_data.jsonl`` under ``RECIPE_BENCHMARK_MIRROR``'s
``ifeval/`` (default ../shared).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def one(rows: int, cap: int, checkpoint: str, threads: int, bf16: bool) -> dict:
    import torch

    from recipe.eval.backends.hf import HFBackend
    from recipe.train.rollout import prefill_in_buckets
    torch.set_num_threads(threads)
    mirror = Path(os.environ.get("RECIPE_BENCHMARK_MIRROR", Path(__file__).resolve().parents[2] / "shared"))
    data = mirror / "ifeval" / "input_data.jsonl"
    if not data.exists():
        raise SystemExit(f"IFEval's input_data.jsonl not found at {data}: set RECIPE_BENCHMARK_MIRROR")
    backend = HFBackend(checkpoint, device="cpu")
    prompts = [json.loads(line)["prompt"] for line in data.read_text().splitlines() if line.strip()][:rows]
    texts = [backend.render([{"role": "user", "content": p}], False) for p in prompts]
    enc = backend.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    t0 = time.perf_counter()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        state, _ = prefill_in_buckets(backend.model, enc["input_ids"], enc["attention_mask"], cap)
    kv = sum(t.numel() * t.element_size() for d in (state.keys, state.values) for t in d.values())
    return {"rows": rows, "cap": cap, "prompt_width": int(enc["input_ids"].shape[1]), "kv_gb": round(kv / 1e9, 2),
            "kv_dtype": str(next(iter(state.keys.values())).dtype).removeprefix("torch."),
            "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
            "rss_before_gb": round(before, 2), "prefill_s": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--caps", type=int, nargs="+", default=[640, 1280])
    ap.add_argument("--checkpoint", default=None, help="default: the small profile's model.name")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cpu-bf16", action="store_true", help="bf16 autocast (the K/V dtype is then chosen per CPU)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)   # the child process: this cap only
    a = ap.parse_args()
    if a.checkpoint is None:
        from recipe.config import load_config
        a.checkpoint = load_config("small").model.name
    if a.one is not None:
        print(json.dumps(one(a.rows, a.one, a.checkpoint, a.threads, a.cpu_bf16)))
        return
    print(f"{'rows':>5} {'cap':>5} {'width':>6} {'K/V GB':>7} {'dtype':>9} {'peak RSS GB':>12} {'prefill s':>10}")
    for cap in a.caps:
        cmd = [sys.executable, __file__, "--rows", str(a.rows), "--one", str(cap), "--checkpoint", a.checkpoint,
               "--threads", str(a.threads), *(["--cpu-bf16"] if a.cpu_bf16 else [])]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print(f"cap {cap}: exit {p.returncode} (killed for memory?)\n{p.stderr[-2000:]}")
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"{r['rows']:>5} {r['cap']:>5} {r['prompt_width']:>6} {r['kv_gb']:>7.2f} {r['kv_dtype']:>9} "
              f"{r['peak_rss_gb']:>12.2f} {r['prefill_s']:>10.1f}")


if __name__ == "__main__":
    main()
