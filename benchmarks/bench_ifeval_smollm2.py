"""IFEval on SmolLM2-135M-Instruct (the imported Q4_1 GGUF) through our harness, against the model card's 29.9.

Both backends with lighteval's settings (greedy, 1280 new tokens, the model's chat template): the vLLM server on
the full 541 prompts (or ``--limit``), in-process HF on the first ``--hf-limit`` of them (CPU time: the full set on
both backends does not fit a loaded 2-core machine; ``--hf-limit 541`` runs it), then the card metric with its
bootstrap CI and n, the difference from the card, the backends' agreement on their common prompts, and the settings
side by side. Re-runs resume from each backend's sample cache.

    .venv/bin/python benchmarks/bench_ifeval_smollm2.py [--limit N] [--hf-limit N] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from tqdm.auto import tqdm

from recipe.eval.report.published_ifeval import (backend_agreement, card_metric, hf_by_greedy_check, ifeval_rows,
                                                 ifeval_sampling, prepare_model, read_items, score_cached_prefix,
                                                 settings_table, versus_card)

ROOT = Path(__file__).resolve().parents[1]


def run_backend(kind: str, folder: Path, out: Path, limit: int | None, concurrency: int, port: int,
                kv_gib: int, reserved_cpus: int | None) -> dict:
    from recipe.eval.api import evaluate
    s = ifeval_sampling()
    n = limit or 541
    bar = tqdm(total=n, desc=f"ifeval {kind}", unit="prompt")
    kw = dict(out=out / kind, profile="paper", limit=limit, k=s.k, temperature=s.temperature, top_p=s.top_p,
              max_tokens=s.max_tokens, thinking=s.thinking, seed=s.seed, progress=lambda j, g: bar.update())
    if kind == "vllm":
        from recipe.eval.backends.openai_client import OpenAIChatClient
        from recipe.serve.vllm_server import VLLMServer
        # a fixed port: the endpoint is part of the sample cache key, so a re-run resumes
        with VLLMServer(folder, served_name="smollm2", max_model_len=4096, port=port, kv_cache_gib=kv_gib,
                        reserved_cpus=reserved_cpus) as server:
            # a request may take 1280 tokens at (server throughput / concurrency) tokens/s: the timeout must cover
            # it, or a timed-out request is aborted by the server and sent again from scratch
            client = OpenAIChatClient(server.base_url, "smollm2", concurrency=concurrency, timeout_s=3600,
                                      serving=server.settings())
            res = evaluate(["ifeval"], backend=client, **kw)["ifeval"]
    else:
        from recipe.eval.backends.hf import HFBackend
        res = evaluate(["ifeval"], backend=HFBackend(folder, batch_size=16), **kw)["ifeval"]
    bar.close()
    if "unavailable" in res:
        raise SystemExit(f"IFEval could not be evaluated on {kind}: {res['unavailable']}\n(without the Hub, point "
                         "RECIPE_BENCHMARK_MIRROR or the profile's benchmarks.mirror at a folder holding IFEval)")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", type=Path, default=ROOT / "runs" / "models" / "smollm2-135m-instruct-q4_1",
                    help="the GGUF import (default; imported on first use) or a `recipe model import --from-hub` "
                         "folder (the original weights, used as they are)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench_ifeval_smollm2")
    ap.add_argument("--limit", type=int, default=None, help="prompts for the vLLM run (default all 541)")
    ap.add_argument("--hf-limit", type=int, default=48, help="prompts for the in-process HF run (agreement subset)")
    ap.add_argument("--concurrency", type=int, default=24, help="vLLM requests in flight")
    ap.add_argument("--port", type=int, default=18731, help="vLLM server port (fixed: part of the cache key)")
    ap.add_argument("--kv-gib", type=int, default=4, help="VLLM_CPU_KVCACHE_SPACE for --concurrency sequences")
    ap.add_argument("--reserved-cpus", type=int, default=None,
                    help="cores vLLM keeps for its scheduler (default: vLLM's, one; 0 on a 2-core machine lets the "
                         "model use both)")
    ap.add_argument("--skip-hf", action="store_true", help="only the vLLM run (no agreement check)")
    ap.add_argument("--skip-vllm", action="store_true", help="only the HF run (e.g. beside a vLLM run in progress)")
    ap.add_argument("--hf-greedy-check", action="store_true",
                    help="HF on every prompt the vLLM run finished: teacher-force vLLM's completions through the HF "
                         "model and generate again only where HF's greedy path differs (recipe.eval.greedy_check)")
    ap.add_argument("--from-cache", action="store_true",
                    help="generate nothing: score each backend's cached samples on the longest prefix of IFEval "
                         "whose prompts all have one (a fixed subset, for a run stopped before the end)")
    a = ap.parse_args()
    # `kill PID` unwinds like Ctrl-C, so the vLLM server this script started is stopped on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not a.from_cache:
        prepare_model(a.model_dir)  # a --from-hub folder as it is; else the GGUF, imported once
    report: dict = {"model_dir": str(a.model_dir), "settings": settings_table(a.model_dir)}
    runs = {}
    kinds = [(k, n) for k, n, skip in (("vllm", a.limit, a.skip_vllm), ("hf", a.hf_limit, a.skip_hf)) if not skip]
    rows = ifeval_rows() if a.from_cache else None
    for kind, limit in kinds:
        if a.from_cache:
            runs[kind], st = score_cached_prefix(a.out / kind / "ifeval" / "samples.jsonl", rows)
            if not runs[kind]:
                runs.pop(kind)
                continue
            m = card_metric(runs[kind])
            report[kind] = {"card_metric": m, "versus_card": versus_card(m), "subset": f"first {st['prefix']} of "
                            f"{st['rows']} prompts ({st['cached']} cached)", "truncation_rate": st["truncation_rate"]}
            continue
        res = run_backend(kind, a.model_dir, a.out, limit, a.concurrency, a.port, a.kv_gib, a.reserved_cpus)
        runs[kind] = read_items(a.out / kind / "ifeval" / "items.jsonl")
        m = card_metric(runs[kind])
        report[kind] = {"card_metric": m, "versus_card": versus_card(m), "truncation_rate": res.get("truncation_rate"),
                        "mean_completion_tokens": res["generation"].get("mean_completion_tokens"),
                        "generation_wall_s": res["generation"].get("generation_wall_s")}
    if len(runs) == 2:
        report["agreement"] = backend_agreement(runs["vllm"], runs["hf"])
    if a.hf_greedy_check:
        rows = rows or ifeval_rows()
        bar = tqdm(desc="hf greedy check", unit="prompt")
        items, st = hf_by_greedy_check(a.out / "vllm" / "ifeval" / "samples.jsonl", rows, a.model_dir,
                                       a.out / "hf_greedy_check", progress=bar.update)
        bar.close()
        m = card_metric(items)
        report["hf_greedy_check"] = {"card_metric": m, "versus_card": versus_card(m), **st}
        if "vllm" in runs:
            report["hf_greedy_check"]["agreement"] = backend_agreement(runs["vllm"], items)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'setting':16s} | {'model card (lighteval)':52s} | ours")
    for r in report["settings"]:
        print(f"{r['setting']:16s} | {r['model card (lighteval)']:52s} | {r['ours']}")
    print()
    for kind in runs:
        v, m = report[kind]["versus_card"], report[kind]["card_metric"]
        print(f"{kind:5s} IFEval (mean of prompt/inst strict) {v['ours']:.2f} [{v['ci'][0]:.2f}, {v['ci'][1]:.2f}] "
              f"n={v['n']} (prompt {m['prompt_level_strict']:.2f}, inst {m['instruction_level_strict']:.2f}); "
              f"card {v['card']} -> difference {v['difference']:+.2f}, card inside CI: {v['card_inside_ci']}; "
              f"truncated {report[kind]['truncation_rate']}%")
    ag = report.get("agreement")
    if ag:
        print(f"agreement on {ag['n']} common prompts: {ag['identical_completions']} identical completions, "
              f"{ag['same_prompt_verdict']} same prompt-level verdict; vllm {ag['a']['score']:.2f} vs hf "
              f"{ag['b']['score']:.2f}")
    hc = report.get("hf_greedy_check")
    if hc:
        v, g = hc["versus_card"], hc["greedy_check"]
        print(f"hf (greedy check) IFEval {v['ours']:.2f} [{v['ci'][0]:.2f}, {v['ci'][1]:.2f}] n={v['n']}; "
              f"{g['identical']} of {g['n']} vLLM completions are HF's greedy path, {g['diverged']} diverge "
              f"(logit gaps there {g['divergence_gaps'][:5]}...), {g['not_judged']} not judged; "
              f"{hc['regenerated']} generated again in process ({hc['regenerated_same_text']} with vLLM's text)")
    print(f"report: {a.out / 'report.json'}")


if __name__ == "__main__":
    main()
