"""Run one harness suite (``recipe.eval.harness_suites``) against an OpenAI-compatible endpoint and write the same
``results.json`` / ``items.jsonl`` as every other suite.

The harness runs as a subprocess (``nemo-evaluator run_eval`` from ``.venv-evals``, or ``python -m lm_eval run``)
against a loopback ``RecordingProxy`` in front of the endpoint, so every request and answer lands in ``items.jsonl``;
its own output stays under ``<out>/<suite>/harness/``. The score and its standard error are the harness's own
(nemo-evaluator's ``results.yml``; lm-eval's results JSON); the 95% CI is score +- 1.96 SE, or, where the harness
reports no SE, the normal interval with the Bernoulli variance p(1-p)/n, the largest a mean of [0, 1] scores can have
(``ci_method`` says which). A suite whose harness or data is missing is returned as ``{"unavailable": reason}``: the
caller reports it skipped, never 0.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import shlex
import subprocess
from importlib import metadata
from pathlib import Path

import yaml

from recipe.eval.harness_suites import (HARNESS_SUITES, MIRROR_HF_HOME, HarnessSuite, data_status, evals_venv,
                                        harness_unavailable)
from recipe.eval.recording_proxy import RecordingProxy

RESULTS, ITEMS = "results.json", "items.jsonl"


def paper_settings(suite: HarnessSuite) -> dict:
    """The row's repeats and sampling from the paper profile (EVAL.md §2); the harness's defaults where it has none."""
    out: dict = {"k": suite.extra.get("n_samples", 1), "temperature": None, "top_p": None, "max_tokens": None,
                 "thinking": None}
    if suite.row:
        from recipe.eval.paper_values import profile_benchmarks
        entry = profile_benchmarks("paper").suites.get(suite.row)
        p = entry.paper if entry is not None else None
        if p is not None:
            for key in ("temperature", "top_p", "max_tokens", "thinking"):
                if getattr(p, key, None) is not None:
                    out[key] = getattr(p, key)
            if p.k and "n_samples" not in suite.extra:
                out["k"] = p.k
    return out


def resolve_settings(suite: HarnessSuite, **given) -> dict:
    s = paper_settings(suite)
    s.update({k: v for k, v in given.items() if v is not None})
    return s


def _version(dist: str, python: Path | None = None) -> str | None:
    if python is None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None
    r = subprocess.run([str(python), "-c", f"from importlib.metadata import version; print(version({dist!r}))"],
                       capture_output=True, text=True)
    return r.stdout.strip() or None


def nemo_evaluator_command(suite: HarnessSuite, *, url: str, model: str, out_dir: Path, settings: dict,
                           limit: int | None, concurrency: int, timeout_s: float, tokenizer: str | None = None,
                           user_endpoint: str | None = None, user_model: str | None = None) -> list[str]:
    params = {"parallelism": concurrency, "request_timeout": int(timeout_s)}
    for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("max_tokens", "max_new_tokens")):
        if settings.get(ours) is not None:
            params[theirs] = settings[ours]
    if limit is not None:
        params["limit_samples"] = limit
    extra = dict(suite.extra)
    if suite.package != "nvidia-long-context-eval":
        extra["n_samples"] = settings["k"]
    if "tokenizer" in suite.needs:
        extra["tokenizer"] = tokenizer
    if "user_simulator" in suite.needs:
        extra.update({"user.url": user_endpoint.rstrip("/") + "/v1/chat/completions"
                      if not user_endpoint.rstrip("/").endswith("/chat/completions") else user_endpoint,
                      "user.model_id": user_model, "cache.cache_dir": str(out_dir / "llm_cache")})
    overrides = [f"config.params.{k}={v}" for k, v in params.items()]
    overrides += [f"config.params.extra.{k}={v}" for k, v in extra.items()]
    return [str(evals_venv() / "bin" / "nemo-evaluator"), "run_eval", "--eval_type", suite.task, "--model_type", "chat",
            "--model_url", f"{url}/v1/chat/completions", "--model_id", model, "--output_dir", str(out_dir),
            "--overrides", ",".join(overrides)]


def lm_eval_command(suite: HarnessSuite, *, url: str, model: str, out_dir: Path, settings: dict, limit: int | None,
                    concurrency: int, timeout_s: float, seed: int) -> list[str]:
    if settings["k"] != 1:
        raise ValueError(f"{suite.name}: lm-eval's {suite.task} draws one sample an item; -k {settings['k']} is not "
                         "supported (the paper's MMLU-Redux is one sample)")
    gen = [f"{theirs}={settings[ours]}" for ours, theirs in
           (("temperature", "temperature"), ("top_p", "top_p"), ("max_tokens", "max_gen_toks"))
           if settings.get(ours) is not None]
    if settings.get("temperature"):
        gen.append("do_sample=True")
    cmd = [str(evals_venv() / "bin" / "python"), "-m", "lm_eval", "run", "--model", "local-chat-completions", "--model_args",
           f"model={model},base_url={url}/v1/chat/completions,num_concurrent={concurrency},max_retries=3,"
           f"timeout={int(timeout_s)},tokenized_requests=False", "--tasks", suite.task, "--apply_chat_template",
           "--output_path", str(out_dir), "--log_samples", "--seed", str(seed)]
    if gen:
        cmd += ["--gen_kwargs", ",".join(gen)]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    return cmd


def harness_env(mirror: Path | None, allow_hub: bool, data_present: bool) -> dict:
    env = {**os.environ, "NEMO_EVALUATOR_TELEMETRY_LEVEL": "0"}   # nemo-evaluator reports usage unless told not to
    env["PATH"] = f"{evals_venv() / 'bin'}{os.pathsep}{env.get('PATH', '')}"   # harness commands call `python`
    env.pop("VIRTUAL_ENV", None)                                                 # and their scripts from PATH
    in_mirror = mirror is not None and (Path(mirror) / MIRROR_HF_HOME).is_dir()
    if in_mirror:
        env["HF_HOME"] = str(Path(mirror) / MIRROR_HF_HOME)
    # the mirror first, as for every suite (recipe.eval.sources): data prepared there is read without asking the Hub
    if not allow_hub or (in_mirror and data_present):
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    return env


def primary_score(results_yml: dict, level: str, metric: str) -> tuple[str, float, float | None, list[dict]]:
    """(name, value in [0, 1], stderr or None, every score) from nemo-evaluator's results.yml: the first score of
    ``metric`` at ``level`` (``tasks`` or ``groups``; the suite's ``score``); every score is recorded beside it."""
    res = results_yml.get("results") or {}
    flat = []
    for lvl in ("groups", "tasks"):
        for tname, t in (res.get(lvl) or {}).items():
            for mname, m in ((t or {}).get("metrics") or {}).items():
                for sname, sc in ((m or {}).get("scores") or {}).items():
                    flat.append({"level": lvl, "metric": mname, "name": f"{tname}/{mname}/{sname}",
                                 "value": sc.get("value"), "stderr": (sc.get("stats") or {}).get("stderr")})
    pick = [f for f in flat if f["level"] == level and f["metric"] == metric and f["value"] is not None]
    if not pick:
        raise ValueError(f"results.yml holds no {level} score named {metric!r} (it has: "
                         f"{', '.join(f['name'] for f in flat) or 'none'})")
    return pick[0]["name"], float(pick[0]["value"]), pick[0]["stderr"], flat


def tau2_items(harness_dir: Path) -> tuple[int, list[dict]]:
    """(tasks, one record per task with every trial's reward) from tau2-bench's simulations file."""
    sims = [p for p in harness_dir.glob("*.json") if not p.name.endswith(("_results.json", "_summary.json"))
            and p.name != "eval_factory_metrics.json"]
    if not sims:
        return 0, []
    data = json.loads(sims[0].read_text())
    items: dict[str, dict] = {}
    for sim in data.get("simulations", []):
        rec = items.setdefault(str(sim.get("task_id")), {"id": str(sim.get("task_id")), "samples": []})
        reward = (sim.get("reward_info") or {}).get("reward")
        rec["samples"].append({"trial": sim.get("trial"), "score": reward, "termination": sim.get("termination_reason"),
                               "turns": len(sim.get("messages") or [])})
    for rec in items.values():
        scored = [x["score"] for x in rec["samples"] if x["score"] is not None]
        rec["mean_score"] = sum(scored) / len(scored) if scored else None
    return len(items), sorted(items.values(), key=lambda r: r["id"])


def items_from_exchanges(exchanges: list[dict]) -> list[dict]:
    """One record per distinct prompt (its repeats grouped), in first-seen order: the request's messages, and every
    answer with its finish reason and token counts."""
    items: dict[str, dict] = {}
    for ex in exchanges:
        req = ex.get("request") or {}
        msgs = req.get("messages")
        key = hashlib.sha256(json.dumps(msgs, sort_keys=True).encode()).hexdigest()[:16]
        rec = items.setdefault(key, {"id": key, "mean_score": None, "messages": msgs, "samples": []})
        resp = ex.get("response") or {}
        choice = (resp.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        rec["samples"].append({"content": msg.get("content"), "reasoning": msg.get("reasoning_content"),
                               "tool_calls": msg.get("tool_calls"), "finish_reason": choice.get("finish_reason"),
                               "usage": resp.get("usage"), "status": ex.get("status"), "error": ex.get("error")})
    return list(items.values())


def _ci(score: float, stderr: float | None, n: int) -> tuple[float | None, float | None, float | None, str]:
    if stderr is not None:
        return stderr, score - 1.96 * stderr, score + 1.96 * stderr, "harness stderr"
    if n <= 0:
        return None, None, None, "none (no items)"
    se = math.sqrt(max(score * (1 - score), 0.0) / n)
    return se, score - 1.96 * se, score + 1.96 * se, "normal, Bernoulli variance p(1-p)/n (the largest for [0,1] scores)"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = [x for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return " | ".join(x.strip()[:200] for x in text[-lines:])


def run_harness_suite(name: str, *, endpoint: str, model: str, out: Path, mirror: Path | None, allow_hub: bool,
                      limit: int | None = None, k: int | None = None, temperature: float | None = None,
                      top_p: float | None = None, max_tokens: int | None = None, thinking: bool | None = None,
                      seed: int = 0, concurrency: int = 8, timeout_s: float = 600.0, tokenizer: str | None = None,
                      user_endpoint: str | None = None, user_model: str | None = None, server: str = "vllm",
                      api_key: str | None = None, progress=print) -> dict:
    suite = HARNESS_SUITES[name]
    why = harness_unavailable(suite)
    present, where = data_status(suite, mirror)   # once: it globs the mirror (and reads lm-eval's task files)
    if why is None and not present and (mirror is not None or not allow_hub):
        why = where
    if why is None and "tokenizer" in suite.needs and not tokenizer:
        why = f"{name} builds its items with the served model's tokenizer: give --tokenizer PATH (a local folder)"
    if why is None and "user_simulator" in suite.needs and not (user_endpoint and user_model):
        why = f"{name} needs a user simulator: --user-endpoint URL --user-model NAME (an OpenAI-compatible server)"
    if why is not None:
        return {"suite": name, "unavailable": why}
    settings = resolve_settings(suite, k=k, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                thinking=thinking)
    out_dir = Path(out) / name
    harness_dir = out_dir / "harness"
    harness_dir.mkdir(parents=True, exist_ok=True)
    env = harness_env(mirror, allow_hub, present)
    started = dt.datetime.now(dt.timezone.utc)
    # the row's thinking switch only where the server reads chat_template_kwargs (vLLM); a standard server gets the
    # harness's requests as they are
    thinking = settings.get("thinking") if server == "vllm" else None
    with RecordingProxy(endpoint, thinking=thinking, timeout_s=timeout_s, api_key=api_key) as proxy:
        if suite.harness == "lm-eval":
            cmd = lm_eval_command(suite, url=proxy.url, model=model, out_dir=harness_dir, settings=settings,
                                  limit=limit, concurrency=concurrency, timeout_s=timeout_s, seed=seed)
            version = {"lm-eval": _version("lm-eval", evals_venv() / "bin" / "python")}
        else:
            cmd = nemo_evaluator_command(suite, url=proxy.url, model=model, out_dir=harness_dir, settings=settings,
                                         limit=limit, concurrency=concurrency, timeout_s=timeout_s,
                                         tokenizer=tokenizer, user_endpoint=user_endpoint, user_model=user_model)
            py = evals_venv() / "bin" / "python"
            version = {"nemo-evaluator": _version("nemo-evaluator", py), suite.package: _version(suite.package, py)}
        progress(f"{name}: {suite.package} against {endpoint} ({model}), log {harness_dir / 'harness.log'}")
        with open(harness_dir / "harness.log", "w") as log:
            rc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=harness_dir).returncode
        exchanges = list(proxy.exchanges)
    shown = shlex.join(cmd).replace(proxy.url, "{proxy}")
    if rc != 0:
        return {"suite": name, "unavailable": f"{suite.package} exited {rc} (log {harness_dir / 'harness.log'}): "
                                              f"{_tail(harness_dir / 'harness.log')}", "command": shown}
    items = items_from_exchanges(exchanges)
    if suite.harness == "lm-eval":
        score, stderr, n, per_item, raw = read_lm_eval(harness_dir, suite.task)
        items = per_item or items
    else:
        ry = yaml.safe_load((harness_dir / "results.yml").read_text())
        metric, score, stderr, raw = primary_score(ry, *suite.score)
        # n: items scored. simple-evals asks each repeat as its own prompt (choices permuted), so its distinct prompts
        # are items x k; elsewhere a distinct opening is one item (a RULER prompt, a tau2 episode's first turn)
        n = len(items) // settings["k"] if suite.repeats_reshuffle else len(items)
        if "user_simulator" in suite.needs:   # tau2: a task is an item; its trials' rewards are the samples
            n, episodes = tau2_items(harness_dir)
            (out_dir / "exchanges.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in items))
            items = episodes
    se, lo, hi, method = _ci(score, stderr, n)
    pct = lambda x: None if x is None else round(100 * x, 4)   # noqa: E731  (points, as every suite)
    with open(out_dir / ITEMS, "w", encoding="utf-8") as f:
        for rec in items:
            f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
    failed = sum(1 for e in exchanges if e.get("status") != 200)
    results = {"suite": name, "metric": metric if suite.harness != "lm-eval" else f"{suite.task}/exact_match",
               "score": pct(score), "stderr": pct(se), "ci_low": pct(lo), "ci_high": pct(hi), "ci_method": method,
               "n": n, "k": settings["k"], "complete": failed == 0, "per_item_scores": bool(suite.per_item_scores),
               "harness": {"name": suite.harness, "package": suite.package, "task": suite.task, "version": version,
                           "command": shown, "output": str(harness_dir), "scores": raw},
               "settings": {"endpoint": endpoint, "model": model, "server": server, "sampling": settings,
                            "limit": limit, "seed": seed, "data": where},
               "generation": {"requests": len(exchanges), "failed_requests": failed},
               "started_at": started.isoformat(timespec="seconds"),
               "written_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    (out_dir / RESULTS).write_text(json.dumps(results, indent=2, ensure_ascii=False, default=str) + "\n")
    return results


def read_lm_eval(harness_dir: Path, task: str) -> tuple[float, float | None, int, list[dict], dict]:
    """lm-eval's group score, its stderr, n and one record per document (its exact_match is the item's score)."""
    res_files = sorted(harness_dir.rglob("results_*.json"))
    if not res_files:
        raise FileNotFoundError(f"lm-eval wrote no results_*.json under {harness_dir}")
    res = json.loads(res_files[-1].read_text())
    top = res["results"][task]
    score = float(top["exact_match,default"])
    se = top.get("exact_match_stderr,default")
    se = float(se) if isinstance(se, (int, float)) else None
    items = []
    for f in sorted(harness_dir.rglob("samples_*.jsonl")):
        sub = f.name.removeprefix("samples_").rsplit("_", 1)[0]
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            s = json.loads(line)
            items.append({"id": f"{sub}/{s.get('doc_id')}", "mean_score": float(s.get("exact_match", 0.0)),
                          "target": s.get("target"), "samples": [{"score": float(s.get("exact_match", 0.0)),
                                                                   "response": (s.get("resps") or [[None]])[0][0],
                                                                   "extracted": (s.get("filtered_resps") or [None])[0]}]})
    n = len(items) or int(sum((res.get("n-samples") or {}).get(t, {}).get("effective", 0)
                              for t in res.get("n-samples") or {}))
    return score, se, n, items, {"results": res["results"].get(task), "n-samples": res.get("n-samples")}
