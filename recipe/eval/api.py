"""What ``recipe eval``, ``notebooks/50_eval.ipynb`` and the eval phase of ``recipe run`` call.

``evaluate`` picks the model (a run's stage checkpoint, a checkpoint folder, or an OpenAI-compatible endpoint + model
name), the rows of each suite (tiny suites: the run's validation split; benchmarks: ``benchmarks.suites.<name>.source``
of the config, falling back to the paper profile's, read from the mirror or the Hub), the sampling settings (the
suite's protocol defaults, each one overridable), and writes ``<out>/<suite>/{samples.jsonl,items.jsonl,results.json}``.
A suite whose rows cannot be had is returned as ``{"unavailable": reason}``, never scored on substitute rows.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from recipe.eval.backends.backend_interface import Backend
from recipe.eval.benchmarks.longbench_swebench import ExecutionUnavailable
from recipe.eval.benchmarks.suite_registry import Suite, get_suite
from recipe.eval.harness import evaluate_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.sources import SourceUnavailable, load_rows
from recipe.runs.layout import benchmark_mirror
from recipe.rewards import nltk_data


def resolve_sampling(suite: Suite, **overrides) -> SamplingParams:
    """The suite's protocol defaults with every non-None override applied."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return suite.defaults.model_copy(update=given) if given else suite.defaults.model_copy()


def parse_serving(items: Iterable[str]) -> dict | None:
    """``KEY=VALUE`` server settings (``recipe eval --serving``) as a dict; None when none are given."""
    out = {}
    for kv in items:
        key, sep, value = kv.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--serving {kv!r}: expected KEY=VALUE, e.g. reasoning_parser=deepseek_r1")
        out[key.strip()] = value.strip()
    return out or None


def make_backend(*, checkpoint: str | Path | None = None, endpoint: str | None = None, model: str | None = None,
                 batch_size: int = 32, concurrency: int = 8, timeout_s: float = 600.0, max_retries: int = 4,
                 api_key_env: str = "OPENAI_API_KEY", model_revision: str | None = None,
                 server: str = "vllm", serving: dict | None = None) -> Backend:
    if (checkpoint is None) == (endpoint is None):
        raise ValueError("give exactly one of a checkpoint (run stage or folder) or an endpoint")
    if endpoint is not None:
        if not model:
            raise ValueError("--endpoint needs --model (the served model name)")
        from recipe.eval.backends.openai_client import OpenAIChatClient
        if server not in ("vllm", "standard"):
            raise ValueError(f"server must be vllm or standard, got {server!r}")
        return OpenAIChatClient(endpoint, model, api_key=os.environ.get(api_key_env), concurrency=concurrency,
                                timeout_s=timeout_s, max_retries=max_retries, model_revision=model_revision,
                                extended_sampling=server == "vllm", serving=serving)
    from recipe.eval.backends.hf import HFBackend
    return HFBackend(checkpoint, batch_size=batch_size)


def benchmark_source(name: str, cfg):
    entry = cfg.benchmarks.suites.get(name)
    if entry is None or entry.source is None:
        from recipe.eval.paper_values import profile_benchmarks
        entry = profile_benchmarks("paper").suites.get(name)
    if entry is None or entry.source is None:
        raise SourceUnavailable(f"no source configured for suite {name!r} (benchmarks.suites.{name}.source)")
    return entry.source


def configure_judge(cfg, *, judge_endpoint: str | None, judge_model: str | None, server: str = "vllm",
                    concurrency: int = 8, timeout_s: float = 600.0) -> None:
    """ArenaHard: the pairwise judge (an OpenAI-compatible endpoint, T 0, 16000 tokens as arena-hard v2's config)
    and each category's baseline answers (``benchmarks.suites.arena_hard_v2.baselines``). ``SourceUnavailable``
    without a judge or without any baseline; a category whose baseline cannot be had is left out before generation
    (``arena_hard.rows_with_baselines``)."""
    from recipe.eval.benchmarks import arena_hard
    from recipe.eval.backends.openai_client import OpenAIChatClient
    if not (judge_endpoint and judge_model):
        raise SourceUnavailable("arena_hard_v2 needs a judge: --judge-endpoint and --judge-model (paper: gpt-4.1)")
    entry = cfg.benchmarks.suites.get("arena_hard_v2")
    if entry is None or not entry.baselines:
        from recipe.eval.paper_values import profile_benchmarks
        entry = profile_benchmarks("paper").suites["arena_hard_v2"]
    answers: dict[str, str] = {}
    missing = []
    for category, source in entry.baselines.items():
        try:
            rows, _ = load_rows(source, benchmark_mirror(cfg), allow_hub=cfg.benchmarks.allow_hub)
        except SourceUnavailable as e:
            missing.append(f"{category}: {e}")
            continue
        answers.update(arena_hard.baselines_from_answer_rows(rows))
    if not answers:
        raise SourceUnavailable("arena_hard_v2: no baseline answers could be loaded (" + "; ".join(missing) + ")")
    client = OpenAIChatClient(judge_endpoint, judge_model, concurrency=concurrency, timeout_s=timeout_s,
                              extended_sampling=server == "vllm")
    knobs = SamplingParams(temperature=0.0, top_p=1.0, max_tokens=16000, thinking=False)

    def judge(system: str, user: str) -> str:
        g = client.chat([{"role": "system", "content": system}, {"role": "user", "content": user}], knobs)
        return "" if g.error else g.content

    arena_hard.configure(judge=judge, judge_name=judge_model, baselines=answers)


def suite_rows(name: str, cfg, *, run=None, limit: int | None = None) -> tuple[list[dict], dict]:
    """(rows, provenance) of a suite; ``SourceUnavailable`` when they cannot be had."""
    suite = get_suite(name)
    if name.startswith("tiny_"):
        if run is None:
            raise SourceUnavailable(f"suite {name} reads a run's validation rows: give --run-id")
        from recipe.domains.data_phase import load_splits
        domain = name.removeprefix("tiny_")
        splits = load_splits(run, cfg, splits=("val",))
        if domain not in splits:
            raise SourceUnavailable(f"run {run.run_id} has no domain {domain!r} (domains: {', '.join(splits)})")
        rows = splits[domain]["val"]
        if suite.adapt_rows:  # e.g. the agentic domain: one row per repository
            rows = suite.adapt_rows(rows)
        prov = {"run": run.run_id, "split": "val", "domain": domain, "rows": len(rows)}
    else:
        mirror = benchmark_mirror(cfg)
        if mirror is not None:  # a mirror may carry the NLTK data the IF checkers read (recipe/rewards/nltk_data.py)
            nltk_data.add_folder(mirror / "nltk_data")
        rows, prov = load_rows(benchmark_source(name, cfg), mirror, allow_hub=cfg.benchmarks.allow_hub)
        if suite.adapt_rows:
            rows = suite.adapt_rows(rows)
    if limit is not None:
        rows = rows[:limit]
        prov["limit"] = limit
    return rows, prov


def evaluate(suites: Iterable[str], *, out: str | Path, run_id: str | None = None, stage: str | None = None,
             checkpoint: str | Path | None = None, endpoint: str | None = None, model: str | None = None,
             profile: str | None = None, overrides: Iterable[str] = (), limit: int | None = None,
             k: int | None = None, temperature: float | None = None, top_p: float | None = None,
             max_tokens: int | None = None, thinking: bool | None = None, seed: int | None = None,
             batch_size: int = 32, concurrency: int = 8, timeout_s: float = 600.0, backend: Backend | None = None,
             server: str = "vllm", model_revision: str | None = None, judge_endpoint: str | None = None,
             judge_model: str | None = None, cfg=None, progress=None,
             serving: dict | None = None, harness_options: dict | None = None) -> dict[str, dict]:
    """``harness_options``: what a harness suite needs beyond the endpoint (``tokenizer``, ``user_endpoint``,
    ``user_model``; ``recipe.eval.harness_run``). ``cfg``: the resolved config to use (default: the run's config.yaml, else ``profile`` + ``overrides``).
    ``serving``: server-side settings that change outputs (e.g. ``{"reasoning_parser": "deepseek_r1"}``), part of
    the sample cache key of an endpoint."""
    from recipe.config import load_config
    from recipe.eval.harness_suites import is_harness_suite
    suites = list(suites)
    for s in suites:
        if not is_harness_suite(s):
            get_suite(s)  # unknown names fail before any generation
    harness = [s for s in suites if is_harness_suite(s)]
    suites = [s for s in suites if not is_harness_suite(s)]
    run = None
    if run_id is not None:
        from recipe.runs.run_init import open_run
        run, run_cfg = open_run(run_id)
        cfg = cfg or run_cfg
        if checkpoint is None and endpoint is None and backend is None:
            if not stage:
                raise ValueError("--run-id needs --stage (whose checkpoint to evaluate) or --checkpoint")
            checkpoint = run.checkpoint_dir(stage)
    elif cfg is None:
        cfg = load_config(profile or "paper", list(overrides))
    results: dict[str, dict] = {}
    if harness:
        results.update(run_harness_suites(harness, cfg=cfg, out=out, endpoint=endpoint, model=model,
                                          checkpoint=checkpoint, limit=limit, k=k, temperature=temperature,
                                          top_p=top_p, max_tokens=max_tokens, thinking=thinking,
                                          seed=seed if seed is not None else cfg.run.seed, concurrency=concurrency,
                                          timeout_s=timeout_s, server=server, **(harness_options or {})))
    if not suites:
        return results
    if backend is None:
        backend = make_backend(checkpoint=checkpoint, endpoint=endpoint, model=model, batch_size=batch_size,
                               concurrency=concurrency, timeout_s=timeout_s, server=server,
                               model_revision=model_revision, serving=serving)
    for name in suites:
        suite = get_suite(name)
        try:
            if name == "arena_hard_v2":
                configure_judge(cfg, judge_endpoint=judge_endpoint, judge_model=judge_model, server=server,
                                concurrency=concurrency, timeout_s=timeout_s)
            rows, prov = suite_rows(name, cfg, run=run, limit=limit)
            if name == "arena_hard_v2":  # a category without its baseline is left out now, not after generation
                from recipe.eval.benchmarks.arena_hard import rows_with_baselines
                rows, left_out = rows_with_baselines(rows)
                if left_out:
                    prov["left_out"] = left_out
                if not rows:
                    raise SourceUnavailable(f"arena_hard_v2: no row has a baseline answer ({left_out})")
        except SourceUnavailable as e:
            results[name] = {"suite": name, "unavailable": str(e)}
            continue
        cap = max_tokens
        if cap is None and name.startswith("tiny_"):  # a tiny suite holds a domain's validation rows: its answers
            cap = cfg.evaluation.cap_for(name.removeprefix("tiny_"))  # fit the domain's validation cap
        sampling = resolve_sampling(suite, k=k, temperature=temperature, top_p=top_p, max_tokens=cap,
                                    thinking=thinking, seed=seed if seed is not None else cfg.run.seed)
        extra = {"run_id": run_id, "stage": stage} if run_id else {}
        try:
            results[name] = evaluate_suite(suite, rows, backend, sampling, Path(out) / name, source=prov,
                                           extra_settings=extra, progress=progress)
        except ExecutionUnavailable as e:  # samples stay cached; scoring needs infrastructure at scale
            results[name] = {"suite": name, "unavailable": f"generated, not scored: {e}"}
    return results


def run_harness_suites(names: list[str], *, cfg, out, endpoint: str | None, model: str | None,
                       checkpoint: str | Path | None, **kw) -> dict[str, dict]:
    """Harness suites against ``endpoint`` (+ ``model``), or against a checkpoint that the project's vLLM server
    (``recipe.serve.vllm_server``, ``make vllm-venv``) serves for their duration; each suite's result or
    ``{"unavailable": why}``."""
    from recipe.eval.harness_run import run_harness_suite
    server = None
    if endpoint is None:
        if checkpoint is None:
            why = "harness suites run against a served model: --endpoint URL --model NAME, or a checkpoint"
            return {n: {"suite": n, "unavailable": why} for n in names}
        from recipe.serve.vllm_env import vllm_unavailable_reason
        from recipe.serve.vllm_server import ServerStartError, VLLMServer
        why = vllm_unavailable_reason()
        if why is not None:
            return {n: {"suite": n, "unavailable": f"serving {checkpoint} for the harness needs vLLM: {why}"}
                    for n in names}
        try:
            server = VLLMServer(Path(checkpoint), served_name="model").start()
        except ServerStartError as e:
            return {n: {"suite": n, "unavailable": f"vLLM did not serve {checkpoint}: {e}"} for n in names}
        endpoint, model = server.base_url, "model"
        kw.setdefault("tokenizer", str(checkpoint))
    if not model:
        raise ValueError("--endpoint needs --model (the served model name)")
    try:
        return {n: run_harness_suite(n, endpoint=endpoint, model=model, out=Path(out), mirror=benchmark_mirror(cfg),
                                     allow_hub=cfg.benchmarks.allow_hub,
                                     api_key=os.environ.get("OPENAI_API_KEY"), **kw) for n in names}
    finally:
        if server is not None:
            server.kill()
