"""What ``notebooks/50_eval.ipynb`` calls: run the evaluation, then tables of results, per-item outcomes and sample
responses as pandas DataFrames (the notebook only displays them)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from recipe.eval.api import evaluate


def run_eval(*, suites, run_id=None, stage=None, checkpoint=None, endpoint=None, model=None, out=None, k=None,
             temperature=None, top_p=None, max_tokens=None, thinking=None, limit=None, server="vllm",
             profile=None) -> tuple[Path, dict]:
    if out is None:
        if run_id and stage:
            from recipe.runs import RunDir
            out = RunDir.for_id(run_id).path / "eval" / stage
        else:
            out = Path("eval_out")
    res = evaluate(suites, out=out, run_id=run_id, stage=stage if run_id else None, checkpoint=checkpoint,
                   endpoint=endpoint, model=model, k=k, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                   thinking=thinking, limit=limit, server=server, profile=profile)
    return Path(out), res


def results_table(results: dict) -> pd.DataFrame:
    rows = []
    for name, r in results.items():
        if "unavailable" in r:
            rows.append({"suite": name, "status": "unavailable: " + r["unavailable"]})
            continue
        s = r["settings"]
        rows.append({"suite": name, "status": "complete" if r.get("complete") else "incomplete", "score": r["score"],
                     "stderr": r["stderr"], "n": r["n"], "k": r["k"],
                     **{x: r[x] for x in r if x.startswith("pass@")},
                     "no_answer_%": r.get("no_answer_rate"), "truncated_%": r.get("truncation_rate"),
                     "backend": s.get("backend"), "model": s.get("model"),
                     "T": s["sampling"]["temperature"], "top_p": s["sampling"]["top_p"],
                     "max_tokens": s["sampling"]["max_tokens"], "thinking": s["sampling"]["thinking"],
                     "scorer": s.get("scorer"), "judge": s.get("judge")})
    return pd.DataFrame(rows).set_index("suite")


def _items(out: Path, suite: str) -> list[dict]:
    p = Path(out) / suite / "items.jsonl"
    return [json.loads(x) for x in p.read_text().split("\n") if x.strip()] if p.exists() else []


def item_outcomes(out: Path, suite: str) -> pd.DataFrame:
    rows = [{"id": it["id"], "mean_score": it["mean_score"],
             "outcomes": " ".join(("1" if s["score"] >= 1 else "0") + ("?" if s.get("no_answer") else "")
                                  for s in it["samples"]),
             "extracted": [s.get("extracted") for s in it["samples"]][:4],
             "finish": it.get("finish_reasons")} for it in _items(out, suite)]
    return pd.DataFrame(rows)


def sample_responses(out: Path, suite: str, n: int = 3, chars: int = 400) -> pd.DataFrame:
    rows = []
    for it in _items(out, suite)[:n]:
        for r in it.get("responses", [])[:1]:
            rows.append({"id": it["id"], "score": it["samples"][0]["score"], "reason": it["samples"][0].get("reason"),
                         "response": (r.get("content") or "")[:chars],
                         "reasoning": (r.get("reasoning") or "")[:chars]})
    return pd.DataFrame(rows)
