"""``recipe compare-to-start --rows``: the start model and several checkpoints of a run, one row per suite x metric x
model, in the shape ``benchmarks/results/small_h200.json`` keeps (``before_after``):

``{"suite", "metric", "model", "stage", "score", "ci", "n", "delta", "delta_ci", "decoding"}`` -- ``metric``:
``prompt_strict``, ``inst_strict``, ``prompt_loose``, ``inst_loose`` or ``card`` (the mean of the two strict ones, as
SmolLM2's model card reports IFEval) for IFEval / IFBench, ``score`` for a tiny suite; ``model``: ``start_instruct``
(the imported model in its own mode), ``start_thinking`` or ``checkpoint`` (with its ``stage``); ``delta`` is paired
against ``start_instruct`` on the items both scored (bootstrap over items), ``vs_if_rl`` the same against the IF-RL
checkpoint for the stages after it (what the later stages did to IF-RL's gain). Scores in points (0-100) with 95%
intervals over items (``n`` = prompts): an instruction-level score is a ratio over prompts, so each prompt carries
its followed instructions x (prompts / instructions) and the mean of those is the score (the CI and the paired delta
resample prompts, keeping a prompt's instructions together). IF suites are decoded as ``if_decoding`` (greedy, the
model card's setting, with ``if_max_tokens``); tiny suites with the eval phase's sampling.

Besides ``rows.json`` it writes the last checkpoint's IFEval completions with their per-instruction strict and loose
verdicts (``ifeval_samples.jsonl``: prompt key, response, verdicts) so that anyone can re-score them.
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.stats.intervals import mean_ci, paired_bootstrap_delta

IF_METRICS = ("prompt_strict", "inst_strict", "prompt_loose", "inst_loose", "card")
START = "start_instruct"


def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def if_item_values(items: list[dict]) -> dict[str, dict[str, float]]:
    """{metric: {item id: value}} whose mean over items is the metric (0-1); samples of an item are averaged first."""
    per: dict[str, dict[str, float]] = {m: {} for m in IF_METRICS}
    n_inst = sum(len(it["samples"][0]["follow_strict"]) for it in items if it.get("samples"))
    n_items = sum(1 for it in items if it.get("samples"))
    if not n_items:
        return per
    w = n_items / n_inst  # an instruction-level score is sum(followed) / n_inst = mean over items of followed * w
    for it in items:
        vs = it.get("samples") or []
        if not vs:
            continue
        iid, k = str(it["id"]), len(vs)
        per["prompt_strict"][iid] = sum(bool(v["prompt_strict"]) for v in vs) / k
        per["prompt_loose"][iid] = sum(bool(v["prompt_loose"]) for v in vs) / k
        per["inst_strict"][iid] = sum(sum(map(bool, v["follow_strict"])) for v in vs) / k * w
        per["inst_loose"][iid] = sum(sum(map(bool, v["follow_loose"])) for v in vs) / k * w
        per["card"][iid] = (per["prompt_strict"][iid] + per["inst_strict"][iid]) / 2
    return per


def score_item_values(items: list[dict]) -> dict[str, dict[str, float]]:
    return {"score": {str(it["id"]): float(it["mean_score"]) for it in items if it.get("mean_score") is not None}}


def _round(x: float) -> float:
    return round(x, 2)


def _delta(after: dict[str, float], before: dict[str, float] | None) -> tuple[float | None, list | None]:
    if not before or not (set(after) & set(before)):
        return None, None
    d = paired_bootstrap_delta(after, before, scale=100.0)
    return _round(d.score), [_round(d.ci_low), _round(d.ci_high)]


def suite_rows(suite: str, model: str, stage: str | None, decoding: str, values: dict[str, dict[str, float]],
               start: dict[str, dict[str, float]] | None,
               if_rl: dict[str, dict[str, float]] | None = None) -> list[dict]:
    """One row per metric of one (suite, model): score with CI and n; the paired delta against ``start`` (and, given
    ``if_rl``, against the IF-RL checkpoint as ``vs_if_rl``)."""
    rows = []
    for metric, vals in values.items():
        if not vals:
            continue
        e = mean_ci(list(vals.values()), scale=100.0, bounds=(0.0, 100.0))
        delta, delta_ci = _delta(vals, (start or {}).get(metric)) if model != START else (None, None)
        row = {"suite": suite, "metric": metric, "model": model, "stage": stage, "score": _round(e.score),
               "ci": [_round(e.ci_low), _round(e.ci_high)], "n": e.n, "delta": delta, "delta_ci": delta_ci,
               "decoding": decoding}
        if if_rl is not None:
            d, dci = _delta(vals, if_rl.get(metric))
            row["vs_if_rl"] = {"delta": d, "delta_ci": dci}
        rows.append(row)
    return rows


def ifeval_samples(items: list[dict], rows_by_key: dict[str, dict], thinking: bool) -> list[dict]:
    """The IFEval completions of one model with their verdicts: what ``ifeval_samples.jsonl`` holds, one per sample
    (``response``: the raw completion; ``answer``: the text the checkers judged, after ``</think>`` in thinking mode,
    null when the thinking never closed)."""
    from recipe.rewards.instruction_following import if_answer
    out = []
    for it in items:
        responses = it.get("responses") or []
        for j, v in enumerate(it.get("samples") or []):
            r = responses[j] if j < len(responses) else {}
            row = rows_by_key.get(str(it["id"]), {})
            content = r.get("content")
            answer = if_answer(content, "thinking" if thinking else "off").answer if content is not None else None
            out.append({"key": it["id"], "prompt": row.get("prompt"), "response": content, "answer": answer,
                        "reasoning": r.get("reasoning"), "instruction_id_list": v.get("instruction_id_list"),
                        "kwargs": row.get("kwargs"), "follow_strict": v.get("follow_strict"),
                        "follow_loose": v.get("follow_loose"), "prompt_strict": v.get("prompt_strict"),
                        "prompt_loose": v.get("prompt_loose")})
    return out


def _models(run, cfg, start: Path, last: str) -> list[tuple[str, str | None, Path, bool]]:
    """[(model label, stage, folder, thinking)] in the order they are scored; stages not finished are left out."""
    ep, cs = cfg.benchmarks.eval_phase, cfg.benchmarks.compare_to_start
    out = [(START, None, start, False)]
    if cs.start_thinking:
        out.append(("start_thinking", None, start, ep.thinking))
    done = set(run.done_stages())
    for stage in [*(s for s in cs.stages if s != last), last]:
        if stage in done:
            out.append(("checkpoint", stage, run.checkpoint_dir(stage), ep.thinking))
    return out


def compare_rows(run, cfg, *, start: str | Path | None = None, last: str, if_suites: dict[str, int] | None = None,
                 tiny_limit: int | None = None, if_max_tokens: int | None = None, out: str | Path | None = None,
                 progress=print) -> dict:
    """Score every model of ``_models`` on the IF suites and the tiny suites; returns and writes
    ``out/rows.json`` (``{"start", "stages", "rows", "unavailable", "complete"}``, rewritten after every model) and
    ``out/ifeval_samples.jsonl`` (``last``'s IFEval completions)."""
    from recipe.eval.answer_progress import AnswerProgress
    from recipe.eval.api import evaluate, suite_rows as load_suite_rows
    from recipe.eval.backends.hf import HFBackend
    from recipe.train.device import set_cpu_bf16
    set_cpu_bf16(cfg.run.cpu_bf16)   # every model in the run's precision (the sample cache keys on it)
    ep, cs = cfg.benchmarks.eval_phase, cfg.benchmarks.compare_to_start
    start = Path(start or cfg.model.name)
    out = Path(out or run.path / "eval" / "before_after" / "rows")
    out.mkdir(parents=True, exist_ok=True)
    if_suites = cs.if_suites if if_suites is None else if_suites
    greedy = cs.if_decoding == "greedy"
    if_knobs = dict(k=1 if greedy else ep.k, temperature=0.0 if greedy else ep.temperature,
                    top_p=1.0 if greedy else ep.top_p, max_tokens=if_max_tokens or cs.if_max_tokens)
    tiny_knobs = dict(k=ep.k, temperature=ep.temperature, top_p=ep.top_p, limit=tiny_limit or ep.tiny_limit)
    jobs = [(s, "if", dict(limit=n, **if_knobs)) for s, n in if_suites.items()]
    jobs += [(s, "tiny", tiny_knobs) for s in (ep.tiny_suites or [f"tiny_{d}" for d in cfg.domains.names])]
    models = _models(run, cfg, start, last)
    result = {"start": str(start), "stages": [m[1] for m in models if m[1]], "rows": [], "unavailable": [],
              "complete": False}
    values: dict[tuple[str, str, str | None], dict] = {}
    for i, (label, stage, folder, thinking) in enumerate(models):
        progress(f"compare-to-start: {label}{f' ({stage})' if stage else ''}: {folder}")
        backend = HFBackend(folder, batch_size=ep.batch_size, device=cfg.run.device)
        if label != "checkpoint" and cfg.model.thinking == "plain_tokens":
            from recipe.model.plain_thinking import adopt_plain_thinking
            adopt_plain_thinking(backend.tokenizer)  # the run's thinking convention, as its checkpoints carry
        name = label if stage is None else stage
        for suite, kind, kw in jobs:
            answers = AnswerProgress(f"{suite} {name}", emit=progress)
            backend.on_decode_step = answers.decode_step     # a line between a decode batch's answers
            res = evaluate([suite], out=out / name, backend=backend, thinking=thinking, seed=cfg.run.seed, cfg=cfg,
                           run_id=run.run_id, stage=stage, progress=answers, **kw).get(suite, {})
            if "unavailable" in res:
                result["unavailable"].append({"suite": suite, "model": label, "stage": stage,
                                              "reason": res["unavailable"]})
                continue
            items = _items(out / name / suite / "items.jsonl")
            vals = if_item_values(items) if kind == "if" else score_item_values(items)
            values[suite, label, stage] = vals
            after_if_rl = stage is not None and "if_rl" in result["stages"] and stage not in ("sft", "if_rl")
            result["rows"] += suite_rows(suite, label, stage, (cs.if_decoding if kind == "if" else "sample"), vals,
                                         values.get((suite, START, None)),
                                         values.get((suite, "checkpoint", "if_rl"), {}) if after_if_rl else None)
            if suite == "ifeval" and stage == last:
                rows, _ = load_suite_rows("ifeval", cfg, limit=kw["limit"])
                samples = ifeval_samples(items, {str(r["key"]): r for r in rows}, thinking)
                (out / "ifeval_samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
        del backend
        result["complete"] = i == len(models) - 1
        (out / "rows.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def print_rows(result: dict, console=None) -> None:
    """The rows as one table: suite, metric, model / stage, score [CI] n, delta [CI], decoding."""
    from rich.table import Table

    from recipe.console_tables import print_table
    t = Table(title=f"{result['start']} (start_instruct) vs the run's checkpoints: 95% CIs; paired-bootstrap delta "
                    f"against start_instruct")
    for col in ("suite", "metric", "model", "score", "delta", "decoding"):
        t.add_column(col)
    for r in result["rows"]:
        d = "-" if r["delta"] is None else f"{r['delta']:+.1f} [{r['delta_ci'][0]:+.1f}, {r['delta_ci'][1]:+.1f}]"
        t.add_row(r["suite"], r["metric"], r["stage"] or r["model"],
                  f"{r['score']:.1f} [{r['ci'][0]:.1f}, {r['ci'][1]:.1f}] n={r['n']}", d, r["decoding"])
    for u in result["unavailable"]:
        t.add_row(u["suite"], "-", u["stage"] or u["model"], "-", f"unavailable: {u['reason']}", "-")
    print_table(t, console)
