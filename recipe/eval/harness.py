"""Run a suite: generate k samples per row through a backend, cache them, score them, write the results.

Layout of ``out_dir`` (one folder per suite):
- ``samples.jsonl`` -- the sample cache: one line per generated (item, sample), appended and flushed as each one
  finishes (for an episode suite, one line per finished episode: its turns and outcome). A re-run (after a kill, or with a larger k) reuses every line whose fingerprint (backend identity +
  sampling knobs) and prompt hash match and generates only what is missing. Failed requests are not cached: a run
  scores them 0 (``request_failed``, in the denominator) and is ``complete: false``; a re-run retries them.
- ``items.jsonl`` -- per item: id, per-sample verdicts (score, extracted answer, reason), finish reasons, usage.
  A generation cut at the length limit before its reasoning closed is no answer (``truncated``,
  ``recipe.eval.thinking``).
- ``results.json`` -- the summary (``summarize_verdicts``) plus every setting that produced it.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from pathlib import Path
from statistics import mean
from typing import Any, Iterable

from recipe.eval.backends.backend_interface import Backend, Generation, Job
from recipe.eval.benchmarks.suite_registry import Suite, Verdict
from recipe.eval.metrics import avg_at_k, pass_at_ks
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.thinking import unfinished
from recipe.rewards.extract import THINK_OPEN

SAMPLES, ITEMS, RESULTS = "samples.jsonl", "items.jsonl", "results.json"
_IDENTITY_KEYS = ("backend", "model", "model_sha256", "model_revision", "endpoint")


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def generation_fingerprint(backend_desc: dict, sampling: SamplingParams, episodes: bool = False) -> str:
    ident = {k: backend_desc.get(k) for k in _IDENTITY_KEYS}
    if backend_desc.get("serving"):  # server-side settings that change outputs (absent: the key is as before)
        ident["serving"] = backend_desc["serving"]
    if backend_desc.get("precision"):  # in-process bf16 autocast (absent, fp32: the key is as before)
        ident["precision"] = backend_desc["precision"]
    if episodes:  # a sample is a played episode, never a single response cached under the same settings
        ident["episodes"] = True
    return _digest({"backend": ident, "sampling": sampling.model_dump(exclude={"k"})})


def read_jsonl_lenient(path: Path) -> list[dict]:
    """Lines of a JSONL file; a torn last line (a killed writer) and non-object lines are skipped."""
    out = []
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict):
                out.append(d)
    return out


def load_cache(path: Path, fingerprint: str) -> dict[tuple[str, int], tuple[str, Generation]]:
    cache = {}
    for d in read_jsonl_lenient(path):
        if d.get("fp") == fingerprint and not (d.get("generation") or {}).get("error"):
            cache[(str(d["item_id"]), int(d["sample"]))] = (d.get("prompt_hash"), Generation.from_json(d["generation"]))
    return cache


def generate_samples(suite: Suite, rows: list[dict], backend: Backend, sampling: SamplingParams, out_dir: Path,
                     *, progress=None) -> tuple[dict[str, list[Generation]], dict]:
    """Every row's k generations (cached ones reused). Returns (generations by item id, generation stats).
    ``progress(job, generation)`` after each new answer; a ``progress.begin(to_generate, reused)`` is called first
    where it exists (``recipe.eval.answer_progress``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    desc = backend.describe()
    fp = generation_fingerprint(desc, sampling, episodes=suite.play is not None)
    cache_path = out_dir / SAMPLES
    cache = load_cache(cache_path, fp)
    gens: dict[str, list[Generation | None]] = {}
    rows_by_id: dict[str, dict] = {}
    jobs: list[Job] = []
    hashes: dict[str, str] = {}
    reused = 0
    for idx, row in enumerate(rows):
        iid = suite.check_row(row)
        rows_by_id[iid] = row
        msgs = suite.messages(row, sampling.thinking)
        hashes[iid] = _digest(msgs)
        gens[iid] = [None] * sampling.k
        for s in range(sampling.k):
            hit = cache.get((iid, s))
            if hit and hit[0] == hashes[iid]:
                gens[iid][s] = hit[1]
                reused += 1
            else:
                jobs.append(Job(iid, s, msgs, sampling.request_seed(idx, s), suite.tools(row) if suite.tools else None))
    errors = 0
    first_error = None
    t0 = time.monotonic()
    written = 0
    if progress is not None and hasattr(progress, "begin"):
        progress.begin(len(jobs), reused)
    if jobs:
        from recipe.eval.backends.openai_client import EndpointUnavailable
        with open(cache_path, "a", encoding="utf-8") as f:
            try:
                stream = suite.play(jobs, rows_by_id, backend, sampling) if suite.play else \
                    backend.generate(jobs, sampling)
                for job, g in stream:
                    if g.error:
                        errors += 1
                        first_error = first_error or g.error
                        continue
                    gens[job.item_id][job.sample] = g
                    f.write(json.dumps({"fp": fp, "item_id": job.item_id, "sample": job.sample,
                                        "prompt_hash": hashes[job.item_id], "generation": g.to_json()},
                                       ensure_ascii=False) + "\n")
                    f.flush()
                    written += 1
                    if progress:
                        progress(job, g)
            except EndpointUnavailable as e:
                raise EndpointUnavailable(f"{e} This run cached {written} new sample(s) ({reused} reused) of "
                                          f"{len(jobs) + reused} in {cache_path}.") from None
    # a failed request stays in its slot as an error generation: scored 0 (request_failed), never dropped
    done = {i: [g if g is not None else Generation("", error="request failed") for g in gs] for i, gs in gens.items()}
    stats = {"generated": len(jobs) - errors, "reused_from_cache": reused, "failed_requests": errors,
             "generation_wall_s": round(time.monotonic() - t0, 2), "fingerprint": fp, "first_error": first_error}
    return done, stats


def no_answer_verdict(suite: Suite, row: dict, reason: str) -> Verdict:
    """Score 0 and no answer, with the suite's own fields: its scorer grades reasoning that never closed."""
    v = suite.score(row, THINK_OPEN, True) if suite.play is None else {}
    return {**v, "score": 0.0, "no_answer": True, "reason": reason}


def score_one(suite: Suite, row: dict, response: Any, thinking: bool | None,
              finish_reason: str | None = None) -> Verdict:
    if suite.play is None and unfinished(response, finish_reason, thinking):
        return {**no_answer_verdict(suite, row, "truncated"), "truncated": True}
    return suite.score(row, response, thinking)


def score_generations(suite: Suite, rows_by_id: dict[str, dict], gens: dict[str, list[Generation]],
                      thinking: bool) -> dict[str, list[Verdict]]:
    """One verdict per generation: a failed request scores 0 (``request_failed``)."""
    def one(row, g):
        if g.error:
            return {**no_answer_verdict(suite, row, "request_failed"), "request_failed": True}
        return score_one(suite, row, g.episode if suite.play else g.response(), thinking, g.finish_reason)
    return {iid: [one(rows_by_id[iid], g) for g in gs] for iid, gs in gens.items()}


def summarize_verdicts(suite: Suite, verdicts: dict[str, list[Verdict]], finish: dict[str, list[str | None]] | None = None) -> dict:
    """Generic summary (avg@k ± SE, pass@k, no-answer and truncation rates) plus the suite's own metrics."""
    scored = {i: v for i, v in verdicts.items() if v}
    per_item = [[float(x["score"]) for x in v] for v in scored.values()]
    flat = [x for v in scored.values() for x in v]
    out = {"suite": suite.name, "metric": suite.metric, **avg_at_k(per_item), **pass_at_ks(per_item),
           "samples": len(flat),
           "no_answer_rate": round(100 * mean(bool(x.get("no_answer")) for x in flat), 4) if flat else None,
           "truncated_no_answer": sum(1 for x in flat if x.get("truncated")),
           "failed_samples": sum(1 for x in flat if x.get("request_failed"))}
    if finish is not None:
        fr = [f for i in scored for f in finish.get(i, [])]
        out["truncation_rate"] = round(100 * mean(f == "length" for f in fr), 4) if fr else None
    if len({len(v) for v in scored.values()}) > 1:
        out["unequal_k"] = sorted({len(v) for v in scored.values()})
    if suite.summarize and scored:
        out.update(suite.summarize(scored))
    return out


def write_items(path: Path, verdicts: dict[str, list[Verdict]], gens: dict[str, list[Generation]] | None = None,
                responses_kept: int = 1) -> None:
    """Per-item JSONL: verdicts of every sample; with generations, finish reasons, usage and the first responses."""
    with open(path, "w", encoding="utf-8") as f:
        for iid, vs in verdicts.items():
            rec: dict[str, Any] = {"id": iid, "mean_score": mean(float(v["score"]) for v in vs) if vs else None,
                                   "samples": vs}
            if gens is not None:
                g = gens.get(iid, [])
                rec["finish_reasons"] = [x.finish_reason for x in g]
                rec["completion_tokens"] = [x.completion_tokens for x in g]
                rec["responses"] = [{"content": x.content, "reasoning": x.reasoning} for x in g[:responses_kept]]
            f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")


def usage_totals(gens: dict[str, list[Generation]]) -> dict:
    flat = [g for gs in gens.values() for g in gs]
    pt = [g.prompt_tokens for g in flat if g.prompt_tokens is not None]
    ct = [g.completion_tokens for g in flat if g.completion_tokens is not None]
    return {"prompt_tokens": sum(pt), "completion_tokens": sum(ct),
            "mean_completion_tokens": round(mean(ct), 2) if ct else None}


def evaluate_suite(suite: Suite, rows: Iterable[dict], backend: Backend, sampling: SamplingParams, out_dir: Path,
                   *, source: dict | None = None, extra_settings: dict | None = None, progress=None) -> dict:
    """Generate (resuming from the cache), score, and write ``items.jsonl`` + ``results.json``; returns the results."""
    rows = list(rows)
    out_dir = Path(out_dir)
    rows_by_id = {suite.check_row(r): r for r in rows}
    if len(rows_by_id) != len(rows):
        raise ValueError(f"suite {suite.name}: duplicate item ids in the rows")
    gens, gstats = generate_samples(suite, rows, backend, sampling, out_dir, progress=progress)
    verdicts = score_generations(suite, rows_by_id, gens, sampling.thinking)
    summary = summarize_verdicts(suite, verdicts, {i: [g.finish_reason for g in gs if not g.error]
                                                   for i, gs in gens.items()})
    write_items(out_dir / ITEMS, verdicts, gens)
    complete = all(len(g) == sampling.k and not any(x.error for x in g) for g in gens.values())
    results = {**summary, "complete": complete, "n_items_requested": len(rows), "k_requested": sampling.k,
               "settings": {**backend.describe(), "sampling": sampling.model_dump(), "seed": sampling.seed,
                            "judge": suite.judge, "scorer": f"{suite.name}@{suite.scorer_version}",
                            "scorer_version": suite.scorer_version, "source": source or {}, **(extra_settings or {})},
               "generation": {**gstats, **usage_totals(gens)},
               "written_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    (out_dir / RESULTS).write_text(json.dumps(results, indent=2, ensure_ascii=False, default=str) + "\n")
    return results
