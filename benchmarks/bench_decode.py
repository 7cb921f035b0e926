"""Generation by each decode path on the same prompts and seed, alternated, and the memory-bandwidth floor.

    .venv/bin/python benchmarks/bench_decode.py [--profile tiny|small] [--checkpoint DIR] [--device auto]
                                                [--threads 2] [--repeats 6] [--ops] [--json PATH]
                                                [--quick] [--rows N] [--cap N]

Paths: ``hf`` (Hugging Face's cached forward, ``lean_decode=False``), ``lean`` (the eager lean step,
``static_decode=False``) and, for a Llama model (``--profile small``) on CUDA, ``graph`` (the static-buffer step
replayed as a CUDA graph, sampling on the device, finished rows checked every 8 tokens; recipe.model.decode.
llama_static). Each path runs once untimed first (a graph is captured at its first use), then ``--repeats`` times,
alternating the order. For three batch shapes of the profile (IF-RL's prompts x generations at its cap: 256 rows on
the small profile; multi-domain RL's tool prompts x generations; one validation batch of math prompts x samples at
the evaluation cap; ``--quick``: the first only, on the fastest path only, ``--rows`` / ``--cap`` resize it) it
prints each path's median milliseconds a decode step (the whole ``generate`` call, prefill
included, over the decode steps run) and tokens a second.

The floor of a decode step at the IF-RL shape: the bytes one step must read, the model's weights plus the K/V of
every cached token of every row still generating (layers x 2 x kv heads x head dim x bytes a token, summed over the
run's steps and divided by them), over the memory bandwidth. On CUDA: bf16 weights and K/V (2 bytes, the autocast
dtype) over an H200's ~4.3 TB/s (HBM3e, NVIDIA's datasheet: 4.8 TB/s peak; 4.3 is what a streaming read reaches). On
the CPU: fp32 weights and K/V (4 bytes: the CPU path runs fp32) over this machine's own bandwidth, measured here as
the bytes a ``torch`` copy of a 256 MB tensor reads and writes a second (best of 5). The last line gives the fastest
path's ms a step, the floor and their ratio; ``--json`` writes them ({rows, ms_per_step, floor_ms_per_step,
tokens_per_s, path, bandwidth_gb_s}).

- ``--profile tiny`` (default): the tiny model of ``--checkpoint`` (default runs/tiny-seed0/01_sft/checkpoint);
- ``--profile small``: SmolLM2 from the small profile's ``model.name`` (``recipe model import``), on ``--device``
  (auto: CUDA when present, bf16 autocast as the trainers run it);
- ``--ops``: after the table, the 15 most expensive operators of one IF-RL batch on the fastest path
  (``torch.profiler``; CUDA time on a GPU, CPU time otherwise).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import torch

HBM_BYTES_PER_S = 4.3e12  # an H200's sustained read bandwidth (see the module docstring)
PATHS = {"hf": {"lean_decode": False}, "lean": {"static_decode": False}, "graph": {"static_decode": True}}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def weight_bytes(model, item_bytes: int = 2) -> int:
    """The model's parameters at ``item_bytes`` each (2: bf16), tied ones counted once."""
    return item_bytes * sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def kv_bytes_per_token(model, item_bytes: int = 2) -> int:
    cfg = model.config
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    kinds = getattr(cfg, "layers_block_type", None)       # NemotronH: only its attention layers keep K/V
    layers = sum(k == "full_attention" for k in kinds) if kinds else cfg.num_hidden_layers
    return layers * 2 * cfg.num_key_value_heads * d * item_bytes


def cpu_bandwidth_bytes_per_s(mb: int = 256, repeats: int = 5) -> float:
    """This machine's memory bandwidth as a ``torch`` copy sees it: bytes read + written a second, best of
    ``repeats`` copies of an ``mb`` MB float32 tensor (far larger than any cache)."""
    src = torch.ones(mb * 2**20 // 4)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.numel() * 4 / best


def floor_ms_per_step(model, ro, bytes_per_s: float = HBM_BYTES_PER_S, item_bytes: int = 2) -> float:
    """The bandwidth floor of one decode step of the rollout ``ro``: weights + the K/V its steps read, per step, at
    ``bytes_per_s`` with ``item_bytes`` a value."""
    prompt = ro.attention_mask_BS.sum(1) - ro.mask_BS.sum(1)
    n_new = ro.mask_BS.sum(1)
    steps = max(1, int(n_new.max()))
    # row b reads prompt_b + t cached tokens at its steps t = 0 .. n_new_b - 1
    kv_tokens = float((prompt * n_new + n_new * (n_new - 1) / 2).sum())
    per_step = weight_bytes(model, item_bytes) + kv_tokens * kv_bytes_per_token(model, item_bytes) / steps
    return 1e3 * per_step / bytes_per_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="tiny", choices=["tiny", "small"])
    ap.add_argument("--checkpoint", default=None, help="tiny: a checkpoint folder; small: default model.name")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--ops", action="store_true", help="profile one IF-RL batch and print the top operators")
    ap.add_argument("--json", type=Path, default=None, help="write the IF-RL shape's figures here")
    ap.add_argument("--quick", action="store_true", help="the IF-RL shape only, on the fastest path only")
    ap.add_argument("--rows", type=int, default=None, help="IF-RL shape: prompts x generations = ROWS (generations "
                    "as the profile's)")
    ap.add_argument("--cap", type=int, default=None, help="IF-RL shape: this many new tokens")
    ap.add_argument("--cpu-bf16", default="off", choices=["off", "on", "auto"],
                    help="bf16 autocast on the CPU (run.cpu_bf16; auto: where the CPU has AMX / AVX512-BF16)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from recipe.train.device import set_cpu_bf16
    cpu_bf16 = set_cpu_bf16(a.cpu_bf16)
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, pool
    from recipe.model import load_checkpoint
    from recipe.model.decode.llama import is_lean_llama
    from recipe.model.pretrained import load_pretrained
    from recipe.train.device import resolve_device
    from recipe.train.rollout import generate, render_prompt

    cfg = load_config(a.profile)
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    if a.profile == "small":
        section = cfg.model.model_copy(update={"name": a.checkpoint}) if a.checkpoint else cfg.model
        model, tok = load_pretrained(section)
    else:
        model, tok = load_checkpoint(a.checkpoint or "runs/tiny-seed0/01_sft/checkpoint")
    device = resolve_device(a.device)
    model.to(device).eval()
    paths = ["hf", "lean"] + (["graph"] if device.type == "cuda" and is_lean_llama(model) else [])
    if a.quick:
        paths = paths[-1:]
    rng = random.Random(0)
    ev = cfg.evaluation
    group = cfg.if_rl.generations_per_prompt
    shapes = [("instruction_following", max(1, a.rows // group) if a.rows else cfg.if_rl.prompts_per_step, group,
               a.cap or cfg.if_rl.max_response_tokens),
              ("tool_call", cfg.multi_domain_rl.prompts_per_step, cfg.multi_domain_rl.generations_per_prompt,
               cfg.multi_domain_rl.max_response_tokens),
              ("math", ev.batch_size, ev.samples_per_prompt, ev.cap_for("math"))][:1 if a.quick else 3]

    def prompts_for(dom: str, n: int, group: int) -> list[str]:
        records = pool(splits[dom]["train"], "rl")
        return [render_prompt(tok, r, True) for r in rng.sample(records, min(n, len(records))) for _ in range(group)]

    def run(path: str, prompts: list[str], cap: int, seed: int):
        torch.manual_seed(seed)
        _sync(device)
        t0 = time.perf_counter()
        ro = generate(model, tok, prompts, max_new_tokens=cap, temperature=1.0, top_p=1.0, **PATHS[path])
        _sync(device)
        return time.perf_counter() - t0, ro

    print(f"{a.profile} profile on {device} ({a.threads} threads), median of {a.repeats}; ms a decode step / "
          f"tokens a second")
    print(f"{'batch':<42} {'steps':>6}" + "".join(f" {p + ' ms':>10} {p + ' tok/s':>11}" for p in paths))
    first = None
    for dom, n, group, cap in shapes:
        for p in paths:                                   # untimed: graph capture, allocator, kernels' first use
            run(p, prompts_for(dom, n, group), cap, 0)
        times: dict[str, list[float]] = {p: [] for p in paths}
        steps: dict[str, list[int]] = {p: [] for p in paths}
        toks: dict[str, list[int]] = {p: [] for p in paths}
        last = None
        for rep in range(a.repeats):
            prompts = prompts_for(dom, n, group)
            for p in (paths if rep % 2 else paths[::-1]):
                s, ro = run(p, prompts, cap, rep)
                times[p].append(s)
                steps[p].append(int(ro.mask_BS.sum(1).max()))
                toks[p].append(int(ro.mask_BS.sum()))
                last = ro
        row = {p: (1e3 * statistics.median(times[p]) / max(1, statistics.median(steps[p])),
                   statistics.median(toks[p]) / statistics.median(times[p])) for p in paths}
        print(f"{dom + f' ({n} x {group}, {cap} tokens)':<42} {statistics.median(steps[paths[0]]):>6.0f}"
              + "".join(f" {row[p][0]:>10.1f} {row[p][1]:>11.0f}" for p in paths))
        if first is None:
            first = (n * group, row, last)
    rows, row, last = first
    best = min(row, key=lambda p: row[p][0])
    if device.type == "cuda":
        bw, item, what = HBM_BYTES_PER_S, 2, "bf16"
    else:   # fp32 weights are read either way (autocast casts them each step); K/V in the dtype cpu_kv_dtype picks
        bw, item, what = cpu_bandwidth_bytes_per_s(), 4, "fp32"
    floor = floor_ms_per_step(model, last, bw, item)
    from recipe.model.decode.llama import _cpu_attention_choice
    attention = (os.environ.get("RECIPE_CPU_ATTENTION") or "/".join(sorted(set(_cpu_attention_choice.values())))
                 if device.type == "cpu" else "matmul") or None
    kv_dtypes = "/".join(sorted({str(k[0]).removeprefix("torch.") for k in _cpu_attention_choice})) or None
    if device.type == "cpu" and attention:
        print(f"CPU decode attention: {attention} over a {kv_dtypes} K/V cache "
              f"(recipe.model.decode.llama.cpu_attention_path, cpu_kv_dtype)")
    print(f"IF-RL shape, {rows} rows: {best} {row[best][0]:.2f} ms a step, {row[best][1]:.0f} tokens/s; bandwidth "
          f"floor {floor:.3f} ms a step ({what} weights {weight_bytes(model, item) / 1e6:.0f} MB + K/V, at "
          f"{bw / 1e9:.1f} GB/s{'' if device.type == 'cuda' else ' measured by a torch copy here'}) -> "
          f"{row[best][0] / floor:.1f}x the floor")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "ms_per_step": round(row[best][0], 3),
                                      "floor_ms_per_step": round(floor, 4), "tokens_per_s": round(row[best][1], 1),
                                      "path": best, "device": str(device), "bandwidth_gb_s": round(bw / 1e9, 1),
                                      "threads": a.threads, "cpu_bf16": cpu_bf16,
                                      "attention": attention, "kv_dtype": kv_dtypes}, indent=1))
    if a.ops:
        dom, n, group, cap = shapes[0]
        prompts = prompts_for(dom, n, group)
        activities = [torch.profiler.ProfilerActivity.CPU] + (
            [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with torch.profiler.profile(activities=activities) as prof:
            run(best, prompts, cap, 0)
        key = "device_time_total" if device.type == "cuda" else "cpu_time_total"
        print(prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=48))


if __name__ == "__main__":
    main()
