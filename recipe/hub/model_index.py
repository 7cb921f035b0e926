"""Evaluation results into a model card's ``model-index`` (``recipe hub publish``): one ``EvalResult`` per suite
evaluated on the published stage (``<run>/eval/<stage>/<suite>/results.json``), with the value, the metric and the
settings that produced it (k, n, stderr, max tokens, temperature / top-p, mode, judge, scorer, backend, model sha256)
in ``metric_args``, and the benchmark's Hub id + revision as the dataset. A slice (first N rows) is labelled as such
in the metric name and ``dataset_args``; unavailable suites are left out (nothing is written for them)."""
from __future__ import annotations

import json
from pathlib import Path


def eval_results_for_card(run, stage: str) -> list:
    from huggingface_hub import EvalResult
    root = Path(run.path) / "eval" / stage
    out = []
    for f in sorted(root.glob("*/results.json")):
        r = json.loads(f.read_text())
        if r.get("score") is None:
            continue
        s = r.get("settings", {})
        samp = s.get("sampling", {})
        src = s.get("source", {})
        limit = src.get("limit")
        name = r["suite"] + (f" (first {limit} rows: a slice, not a benchmark score)" if limit else "")
        args = {"k": r.get("k"), "n": r.get("n"), "stderr": r.get("stderr"), "max_tokens": samp.get("max_tokens"),
                "temperature": samp.get("temperature"), "top_p": samp.get("top_p"), "thinking": samp.get("thinking"),
                "judge": s.get("judge"), "scorer": s.get("scorer"), "backend": s.get("backend"),
                "model_sha256": s.get("model_sha256"), "seed": s.get("seed")}
        out.append(EvalResult(
            task_type="text-generation", task_name="Text Generation",
            dataset_type=src.get("repo_id") or f"recipe/{r['suite']}", dataset_name=r["suite"],
            dataset_revision=src.get("revision"), dataset_split=src.get("split"),
            dataset_args={"limit": limit} if limit else None,
            metric_type=str(r.get("metric") or "accuracy"), metric_name=f"{name}: {r.get('metric')} (avg@{r.get('k')})",
            metric_value=float(r["score"]), metric_args={k: v for k, v in args.items() if v is not None}))
    return out
