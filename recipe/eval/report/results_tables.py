"""Results tables: one run's suites, and ours beside the paper's Table 1 (``recipe eval report``).

The paper's values and settings live once in the paper profile (``benchmarks.suites.<name>.paper``). For every
benchmark the comparison shows our score ± SE with n and k, the paper's value, both settings (k, max tokens,
temperature / top-p, mode, judge) and flags each setting that differs -- numbers under different settings are not
the same measurement. Benchmarks without a result of ours, or without a paper value, are listed as such. A score with
fewer samples than asked (failed requests scored 0, or items short of k) is marked incomplete in every table and is
never set beside the paper's value as a comparable number.
"""
from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from recipe.console_tables import print_table

SETTING_KEYS = ("k", "max_tokens", "temperature", "top_p", "thinking", "judge")


def collect_results(paths) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for p in map(Path, paths):
        files = [p] if p.is_file() else sorted(p.glob("*/results.json")) + sorted(p.glob("results.json"))
        if not files:
            raise FileNotFoundError(f"{p}: no results.json (expected <dir>/<suite>/results.json)")
        for f in files:
            r = json.loads(f.read_text())
            out[r.get("suite", f.parent.name)] = r
    return out


def incomplete_note(r: dict) -> str | None:
    """Why a result is not a full measurement, or None when it is."""
    if r.get("complete", True):
        return None
    parts = [f"{r['failed_samples']} failed request(s) scored 0"] if r.get("failed_samples") else []
    if r.get("unequal_k"):
        parts.append(f"samples per item {r['unequal_k']}")
    if r.get("n_items_requested") not in (None, r.get("n")):
        parts.append(f"{r.get('n')} of {r['n_items_requested']} items")
    return "incomplete" + (f": {'; '.join(parts)}" if parts else "")


def our_settings(r: dict) -> dict:
    s = r.get("settings", {})
    samp = s.get("sampling", {})
    return {"k": r.get("k"), "max_tokens": samp.get("max_tokens"), "temperature": samp.get("temperature"),
            "top_p": samp.get("top_p"), "thinking": samp.get("thinking"), "judge": s.get("judge")}


def paper_comparison(results: dict[str, dict], profile: str = "paper") -> list[dict]:
    from recipe.eval.paper_values import profile_benchmarks
    bench = profile_benchmarks(profile).suites
    rows = []
    for name in sorted(set(results) | {n for n, e in bench.items() if e.paper}):
        r = results.get(name)
        paper = bench[name].paper if name in bench else None
        ours = our_settings(r) if r and "unavailable" not in r else None
        theirs = {k: getattr(paper, k) for k in SETTING_KEYS} if paper else None
        diffs = []
        if ours and theirs:
            diffs = [k for k in SETTING_KEYS if theirs[k] is not None and ours[k] != theirs[k]]
        rows.append({"benchmark": name,
                     "ours": None if not ours else {"score": r.get("score"), "stderr": r.get("stderr"), "n": r.get("n"),
                                                    "k": r.get("k"), "complete": r.get("complete", True),
                                                    "incomplete": incomplete_note(r), "note": r.get("score_note"),
                                                    "limited": bool(r.get("settings", {}).get("source", {}).get("limit"))},
                     "unavailable": r.get("unavailable") if r else None,
                     "paper": None if not paper else {"value": paper.value, "metric": paper.metric,
                                                      "citation": paper.citation},
                     "our_settings": ours, "paper_settings": theirs, "differs": diffs})
    return rows


def _fmt_settings(s: dict | None) -> str:
    if not s:
        return "-"
    mode = {True: "think", False: "no-think", None: "?"}[s.get("thinking")]
    j = f" judge={s['judge']}" if s.get("judge") else ""
    return f"k={s.get('k')} max={s.get('max_tokens')} T={s.get('temperature')}/p={s.get('top_p')} {mode}{j}"


def print_comparison(rows: list[dict], console) -> None:
    t = Table(title="Ours vs paper (Table 1, arXiv 2603.19220)")
    for c in ("benchmark", "ours (± SE, n)", "paper", "our settings", "paper settings", "differs"):
        t.add_column(c)
    for r in rows:
        o = r["ours"]
        if o:
            ours = f"{o['score']:.1f} ± {o['stderr']:.1f} (n={o['n']})" if o["score"] is not None else \
                ("no score: " + o["note"] if o.get("note") else "no items")
            if o["limited"]:
                ours += " [slice: not a score]"
            if o.get("incomplete"):
                ours = f"[red]{o['incomplete']}: not comparable[/] ({ours})"
        else:
            ours = "unavailable" if r["unavailable"] else "not run"
        paper = f"{r['paper']['value']} ({r['paper']['metric']})" if r["paper"] else "not reported"
        diff = ", ".join(r["differs"]) if r["differs"] else ("-" if not (o and r["paper"]) else "same")
        if o and o.get("incomplete") and r["paper"]:
            diff = "incomplete" + (f", {diff}" if r["differs"] else "")
        t.add_row(r["benchmark"], ours, paper, _fmt_settings(r["our_settings"]), _fmt_settings(r["paper_settings"]),
                  f"[yellow]{diff}[/]" if r["differs"] else diff)
    print_table(t, console)
    for r in rows:
        if r["unavailable"]:
            console.print(f"{r['benchmark']}: unavailable: {r['unavailable']}")


def format_results_table(results: dict[str, dict]) -> Table:
    t = Table(title="Evaluation results")
    for c in ("suite", "score", "± SE", "n", "k", "pass@k", "no answer %", "truncated %"):
        t.add_column(c)
    for name, r in results.items():
        if "unavailable" in r:
            t.add_row(name, "unavailable", "", "", "", "", "", "")
            continue
        pk = next((f"{r[x]:.1f}" for x in sorted((x for x in r if x.startswith("pass@")), key=lambda x: -int(x[5:]))), "")

        def f(x):
            return "" if x is None else f"{x:.1f}"
        note = incomplete_note(r)
        score = f(r.get("score")) + (f" [red]{note}[/]" if note else "")
        t.add_row(name, score, f(r.get("stderr")), str(r.get("n")), str(r.get("k")), pk,
                  f(r.get("no_answer_rate")), f(r.get("truncation_rate")))
    return t
