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


SETTINGS = ("backend", "model", "T", "top_p", "max_tokens", "thinking", "scorer", "judge")


def _settings(r: dict) -> dict:
    s = r["settings"]
    return {"backend": s.get("backend"), "model": s.get("model"), "T": s["sampling"]["temperature"],
            "top_p": s["sampling"]["top_p"], "max_tokens": s["sampling"]["max_tokens"],
            "thinking": s["sampling"]["thinking"], "scorer": s.get("scorer"), "judge": s.get("judge")}


def _ci(r: dict) -> str:
    ci = r.get("ci95")
    return f"[{ci[0]:.1f}, {ci[1]:.1f}]" if ci and None not in ci else "-"


def results_table(results: dict):
    """What a reader compares first, one row per suite: score with its 95% CI, n items, k samples, pass@k, the
    no-answer and truncation rates. The generation settings follow in a second table (``settings_table``); hover a
    suite for them too."""
    from IPython.display import display

    from recipe.reporting.notebook_tables import readable
    rows, tips = [], {}
    for name, r in results.items():
        if "unavailable" in r:
            rows.append({"suite": name, "status": "unavailable: " + r["unavailable"]})
            continue
        rows.append({"suite": name, "score": r["score"], "95% CI": _ci(r), "n": r["n"], "k": r["k"],
                     **{x: r[x] for x in r if x.startswith("pass@")},
                     "no_answer_%": r.get("no_answer_rate"), "truncated_%": r.get("truncation_rate"),
                     "status": "complete" if r.get("complete") else "incomplete"})
        tips[name] = ", ".join(f"{k}={v}" for k, v in _settings(r).items() if v is not None)
    df = pd.DataFrame(rows).set_index("suite")
    tooltips = pd.DataFrame("", index=df.index, columns=df.columns)
    for name, t in tips.items():
        tooltips.iloc[tooltips.index.get_loc(name), 0] = t
    display(readable(df, tooltips=tooltips, wrap=("status",),
                     caption="Score in % (avg@k), 95% CI over items, n items, k samples per item"))
    settings = settings_table(results)
    return None if settings is None else readable(settings, wrap=("model", "scorer", "judge"),
                                                  caption="Generation settings per suite")


def settings_table(results: dict) -> pd.DataFrame | None:
    rows = [{"suite": name, **_settings(r)} for name, r in results.items() if "unavailable" not in r]
    return pd.DataFrame(rows).set_index("suite") if rows else None


def _items(out: Path, suite: str) -> list[dict]:
    p = Path(out) / suite / "items.jsonl"
    return [json.loads(x) for x in p.read_text().split("\n") if x.strip()] if p.exists() else []


def item_outcomes(out: Path, suite: str) -> pd.DataFrame:
    """Per item: the mean score, each sample's outcome (``1``/``0``, ``?`` = no answer) and, in the same order, each
    sample's extracted answer and finish reason."""
    rows = [{"id": it["id"], "mean_score": it["mean_score"],
             "outcomes": " ".join(("1" if s["score"] >= 1 else "0") + ("?" if s.get("no_answer") else "")
                                  for s in it["samples"]),
             "extracted": " | ".join("?" if s.get("extracted") is None else str(s["extracted"])
                                     for s in it["samples"]),
             "finish": " ".join(str(f) for f in it.get("finish_reasons") or [])} for it in _items(out, suite)]
    return pd.DataFrame(rows)


def _thinking(out: Path, suite: str) -> bool | None:
    p = Path(out) / suite / "results.json"
    if not p.exists():
        return None
    return ((json.loads(p.read_text()).get("settings") or {}).get("sampling") or {}).get("thinking")


def split_reasoning(response: dict, thinking: bool | None = None) -> tuple[str, str]:
    """(reasoning, answer) of a stored response: the backend's own split when it made one (vLLM's reasoning
    parser), else the thinking block cut from the raw text the way the verifiers read it
    (``recipe.rewards.extract.parse_response``). In thinking mode the prompt opens the block, so a raw text
    without ``</think>`` is all reasoning, with no answer."""
    from recipe.rewards.extract import parse_response
    content, reasoning = response.get("content") or "", response.get("reasoning")
    if reasoning is not None:
        return reasoning, content
    parsed = parse_response(content, mode="thinking" if thinking else None)
    if not parsed.think_closed:
        return parsed.reasoning, "(no answer: the thinking block was never closed)"
    return parsed.reasoning, parsed.answer or ""


def sample_responses(out: Path, suite: str, n: int = 3, chars: int = 400):
    """The first response of the first ``n`` items: the answer and the reasoning apart, newlines kept."""
    from recipe.reporting.notebook_tables import readable

    def cut(text: str) -> str:
        text = text.strip()
        return text if len(text) <= chars else text[: chars - 1] + "…"

    rows, thinking = [], _thinking(out, suite)
    for it in _items(out, suite)[:n]:
        for r in it.get("responses", [])[:1]:
            reasoning, answer = split_reasoning(r, thinking)
            rows.append({"id": it["id"], "score": it["samples"][0]["score"], "reason": it["samples"][0].get("reason"),
                         "response": cut(answer), "reasoning": cut(reasoning) or "(none)"})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return readable(df.set_index("id"), wrap=("response", "reasoning"), pre=("response", "reasoning"),
                    caption=f"{suite}: first response of the first {n} items (cut at {chars} characters)")


def eval_summary(results: dict):
    """The notebook's closing cell: each suite's score with its CI and n, and where to go next."""
    from IPython.display import Markdown

    from recipe.reporting.phase_summaries import next_step
    lines = []
    for name, r in results.items():
        if "unavailable" in r:
            lines.append(f"- `{name}`: not run ({r['unavailable']})")
        elif r.get("score") is not None:
            lines.append(f"- `{name}`: {r['score']:.1f}% {_ci(r)} over n = {r['n']} items, k = {r['k']}"
                         + ("" if r.get("complete") else " (incomplete)"))
    return Markdown("### What this run showed\n\n" + "\n".join(lines or ["- no suite was scored"])
                    + f"\n\n{next_step('eval')}")


def smollm2_ifeval(report: Path | None = None) -> None:
    """The section on SmolLM2-135M-Instruct's IFEval against its model card: where the numbers come from, the
    settings side by side (long text wrapped, never truncated), and, once ``benchmarks/bench_ifeval_smollm2.py`` has
    written its report, our score per backend beside the card's and the backends' agreement."""
    from IPython.display import display

    from recipe.eval.report import published_ifeval
    from recipe.reporting.notebook_tables import readable
    s = published_ifeval.notebook_summary(report)
    print(s["note"])
    display(readable(s["settings"], wrap=tuple(s["settings"].columns)))
    for key in ("scores", "agreement"):
        if s[key] is not None:
            display(readable(s[key], max_cols=5))
