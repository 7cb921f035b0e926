"""``recipe eval``: evaluate a checkpoint or a served model on benchmark suites; ``recipe eval score`` scores existing
responses; ``recipe eval report`` sets results beside the paper's Table 1; ``recipe eval suites`` lists the suites.

``recipe eval --suite aime25 --endpoint http://host:8000 --model NAME --out DIR`` (served model) or
``recipe eval --suite tiny_math --run-id tiny-seed0 --stage mopd`` (a run's checkpoint) or ``--checkpoint FOLDER``.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import List, Literal, Optional

import typer
from rich.console import Console
from rich.markup import escape

from recipe.cli.options import benchmarks_option, set_option, with_benchmarks
from recipe.cli.user_errors import fail, user_errors

console = Console()
app = typer.Typer(no_args_is_help=False, invoke_without_command=True, pretty_exceptions_enable=False,
                  help="Evaluate on benchmark suites; score existing responses; compare with the paper.")


_fail = partial(fail, console)


def _user_errors():
    from recipe.eval.sources import SourceUnavailable
    from recipe.eval.benchmarks.suite_registry import UnknownSuiteError
    from recipe.eval.backends.openai_client import EndpointUnavailable
    from recipe.rewards.nltk_data import NltkDataMissing
    return user_errors(console, ValueError, FileNotFoundError, UnknownSuiteError, SourceUnavailable,
                       EndpointUnavailable, NltkDataMissing)


@app.callback()
def eval_(
    ctx: typer.Context,
    suite: List[str] = typer.Option([], "--suite", help="Suite name (repeatable); `recipe eval suites` lists them."),
    run_id: Optional[str] = typer.Option(None, help="Run id (with --stage: that stage's checkpoint; tiny suites read "
                                                    "the run's validation rows)."),
    stage: Optional[str] = typer.Option(None, help="Stage whose checkpoint to evaluate (with --run-id)."),
    checkpoint: Optional[str] = typer.Option(None, help="A checkpoint folder (in-process Hugging Face generation)."),
    endpoint: Optional[str] = typer.Option(None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8000 (vLLM)."),
    model: Optional[str] = typer.Option(None, help="Served model name (with --endpoint)."),
    out: Optional[str] = typer.Option(None, help="Output folder (default: <run>/eval/<stage>, else eval_out)."),
    profile: Optional[str] = typer.Option(None, help="Profile for benchmark sources without a run (default paper)."),
    limit: Optional[int] = typer.Option(None, help="Only the first N rows of each suite (a smoke test, not a score)."),
    k: Optional[int] = typer.Option(None, "-k", help="Samples per item (default: the suite's protocol)."),
    temperature: Optional[float] = typer.Option(None, help="Sampling temperature (default: the suite's protocol)."),
    top_p: Optional[float] = typer.Option(None, help="Nucleus sampling top-p (default: the suite's protocol)."),
    max_tokens: Optional[int] = typer.Option(None, help="New tokens per answer (default: the suite's protocol)."),
    thinking: Optional[bool] = typer.Option(None, "--thinking/--no-thinking", help="Generate in thinking or "
                                            "instruct mode (default: the suite's protocol)."),
    seed: Optional[int] = typer.Option(None, help="Sampling seed (default: the run's, else the profile's)."),
    concurrency: int = typer.Option(8, help="Requests in flight (endpoint)."),
    timeout: float = typer.Option(600.0, help="Per-request timeout in seconds (endpoint)."),
    batch_size: int = typer.Option(32, help="Prompts per generation batch (checkpoint)."),
    server: str = typer.Option("vllm", help="Endpoint kind: vllm (sends top_k/min_p/repetition_penalty) or standard "
                                            "(OpenAI fields only, e.g. transformers serve)."),
    model_revision: Optional[str] = typer.Option(None, help="Revision/sha of the served model (recorded)."),
    judge_endpoint: Optional[str] = typer.Option(None, help="OpenAI-compatible judge server (arena_hard_v2)."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model name (paper: gpt-4.1)."),
    serving: List[str] = typer.Option([], "--serving", help="KEY=VALUE server setting that changes outputs, e.g. "
                                      "reasoning_parser=deepseek_r1 (repeatable; part of the sample cache key)."),
    tokenizer: Optional[str] = typer.Option(None, help="Tokenizer folder of the served model (ruler_4k builds its "
                                                       "items with it; default: --checkpoint)."),
    user_endpoint: Optional[str] = typer.Option(None, help="OpenAI-compatible server of tau2-bench's user simulator."),
    user_model: Optional[str] = typer.Option(None, help="Model name of tau2-bench's user simulator."),
    benchmarks: Optional[str] = benchmarks_option(),
    set_: List[str] = set_option("key=value override of the run's config (or --profile's), e.g. "
                                 "benchmarks.allow_hub=true (repeatable)."),
) -> None:
    """Generate and score: writes <out>/<suite>/{results.json, items.jsonl, samples.jsonl}; re-runs resume. A suite
    whose rows cannot be had is skipped with the reason and the fix, and the command exits 1 after the others."""
    if ctx.invoked_subcommand is not None:
        return
    if not suite:
        _fail("give at least one --suite (see `recipe eval suites`)")
    from recipe.eval.api import evaluate, parse_serving
    from recipe.eval.report.results_tables import format_results_table
    with _user_errors():
        if out is None:
            if run_id and stage:
                from recipe.runs import RunDir
                out = str(RunDir.for_id(run_id).path / "eval" / stage)
            else:
                out = "eval_out"
        overrides = with_benchmarks(set_, benchmarks)
        cfg = None
        if overrides and run_id:  # the run's own config with the overrides (without a run: --profile's, below)
            from recipe.config import load_config
            from recipe.runs import RunDir
            cfg = load_config(RunDir.for_id(run_id).config_path, overrides)
        res = evaluate(suite, out=out, run_id=run_id, stage=stage, checkpoint=checkpoint, endpoint=endpoint,
                       model=model, profile=profile, overrides=overrides, cfg=cfg, limit=limit, k=k, temperature=temperature, top_p=top_p,
                       max_tokens=max_tokens, thinking=thinking, seed=seed, concurrency=concurrency,
                       timeout_s=timeout, batch_size=batch_size, server=server, model_revision=model_revision,
                       judge_endpoint=judge_endpoint, judge_model=judge_model,
                       serving=parse_serving(serving),
                       harness_options={k: v for k, v in (("tokenizer", tokenizer), ("user_endpoint", user_endpoint),
                                                          ("user_model", user_model)) if v is not None})
    console.print(format_results_table(res))
    for n, r in res.items():
        g = r.get("generation") or {}
        if g.get("failed_requests"):
            console.print(f"[yellow]{n}: {g['failed_requests']} request(s) failed, scored 0: the score is incomplete "
                          f"(not cached; a re-run retries them): {g['first_error']}[/]")
    typer.echo(json.dumps({"out": out, "suites": {n: (r.get("unavailable") and {"unavailable": r["unavailable"]})
                                                  or {"score": r.get("score"), "stderr": r.get("stderr"), "n": r.get("n"),
                                                      "k": r.get("k"), "complete": r.get("complete")}
                                                  for n, r in res.items()}}, indent=2))
    skipped = {n: r["unavailable"] for n, r in res.items() if r.get("unavailable")}
    for n, why in skipped.items():
        Console(stderr=True).print(f"[bold red]skipped {n}:[/] {escape(why)}", soft_wrap=True, highlight=False)
    if skipped:
        raise typer.Exit(1)


_OLYMPIAD = "Olympiad suites (imo-answer, imo-proof, ioi, icpc)"
_IOI_ICPC = "Olympiad suites: ioi, icpc"
_IMO = "Olympiad suites: imo-answer, imo-proof"


@app.command("score")
def score(
    suite: str = typer.Option(..., help="Suite whose scorer to use (olympiad suites: imo-answer, imo-proof, ioi, icpc, "
                                        "with their own options below)."),
    responses: Optional[Path] = typer.Option(None, help="JSONL: the benchmark's row fields + `response` per line."),
    out: Optional[Path] = typer.Option(None, help="Output folder: items.jsonl and summary.json (required)."),
    judge_endpoint: Optional[str] = typer.Option(None, help="OpenAI-compatible judge server (arena_hard_v2, imo-answer, "
                                                            "imo-proof)."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model name (paper: gpt-4.1 for arena_hard_v2; the "
                                                         "profile's olympiad judge_model for the IMO suites)."),
    thinking: Optional[str] = typer.Option(None, help="How the responses were generated: auto (a closed <think> block is "
                                              "removed, an unclosed one is no answer, text without think tags is "
                                              "graded whole), on (thinking mode: only text after </think>), off "
                                              "(graded whole). Default auto. A line's own `thinking` field wins."),
    no_thinking: bool = typer.Option(False, "--no-thinking", help="Same as --thinking off."),
    allow_malformed: bool = typer.Option(False, "--allow-malformed", help="Exit 0 even when lines were malformed "
                                                                          "(else exit 1 after writing the results)."),
    benchmarks: Optional[str] = typer.Option(None, "--benchmarks", metavar="DIR", help="Local folder of benchmark "
                                             "files; its nltk_data/ is searched for the IF checkers' NLTK data."),
    profile: str = typer.Option("paper", help="Profile whose `olympiad` section gives the settings flags do not set.",
                                rich_help_panel=_OLYMPIAD),
    task: Optional[str] = typer.Option(None, help="IOI task package (CMS layout).", rich_help_panel=_IOI_ICPC),
    support: Optional[str] = typer.Option(None, help="Folder with graders/ and checker/ code for the task (fixtures "
                                                     "carry data only).", rich_help_panel=_IOI_ICPC),
    submissions: Optional[str] = typer.Option(None, help="IOI: folder of .cpp files; ICPC: folder of per-problem "
                                                         "submissions.", rich_help_panel=_IOI_ICPC),
    problems: Optional[str] = typer.Option(None, help="ICPC: folder of Kattis packages, one per problem.",
                                           rich_help_panel=_IOI_ICPC),
    time_scale: Optional[float] = typer.Option(None, help="IOI: multiplies every task time limit (default: the "
                                                          "profile's).", rich_help_panel=_IOI_ICPC),
    year: Optional[int] = typer.Option(None, help="IOI year for the medal cut-offs.", rich_help_panel=_IOI_ICPC),
    select: bool = typer.Option(False, "--select", help="IOI: the folder holds generations; choose <= 50 legal "
                                "submissions from public-test results (else every file is a submission, in name "
                                "order).", rich_help_panel=_IOI_ICPC),
    oracle: bool = typer.Option(False, "--oracle", help="IOI --select: also judge every generation on hidden tests for "
                                "the oracle upper bound (reported apart, never used to select).",
                                rich_help_panel=_IOI_ICPC),
    data: Optional[str] = typer.Option(None, help="IMO-Bench folder with the CSVs (a checkout of the IMO-Bench "
                                                  "repository).", rich_help_panel=_IMO),
    version: Optional[str] = typer.Option(None, help="Benchmark version: imo-answer v1|v2|v2-pr18, imo-proof v1|v2 "
                                                     "(default: the profile's).", rich_help_panel=_IMO),
    judge_prompt: Optional[str] = typer.Option(None, help="The benchmark's judge prompt file (YAML with 'user:' or "
                                                          "text).", rich_help_panel=_IMO),
    judge_api_key_env: Optional[str] = typer.Option(None, help="Name of the env var holding the judge API key.",
                                                    rich_help_panel=_IMO),
    judge_server: Literal["vllm", "standard"] = typer.Option("vllm", help="vllm also sends top_k/min_p/"
                                                             "repetition_penalty; standard sends OpenAI fields only.",
                                                             rich_help_panel=_IMO),
    samples: Optional[int] = typer.Option(None, help="imo-proof: judge samples per proof.", rich_help_panel=_IMO),
    aggregation: Optional[Literal["zero_if_any_zero", "mean"]] = typer.Option(
        None, help="imo-proof: how one proof's grades combine (default: the profile's).", rich_help_panel=_IMO),
) -> None:
    """Score existing responses from any system; malformed lines are reported with their line number, and make the
    command exit 1 (after every good line's verdict is written) unless --allow-malformed."""
    from recipe.eval.olympiad.score_suites import SUITES as OLYMPIAD, ScoreOptions, run_score
    from recipe.eval.thinking import thinking_flag
    thinking = thinking or ("off" if no_thinking else None)
    olympiad = ScoreOptions(profile=profile, task=task, support=support, submissions=submissions, problems=problems,
                            time_scale=time_scale, year=year, select=select, oracle=oracle, data=data,
                            version=version, judge_prompt=judge_prompt, judge_endpoint=judge_endpoint,
                            judge_model=judge_model, judge_api_key_env=judge_api_key_env, judge_server=judge_server,
                            samples=samples, aggregation=aggregation, thinking=thinking)
    with _user_errors():
        mode = thinking_flag(thinking)
        if benchmarks:
            from recipe.rewards import nltk_data
            nltk_data.add_folder(Path(with_benchmarks([], benchmarks)[0].partition("=")[2]) / "nltk_data")
    if suite in OLYMPIAD:  # IOI/ICPC packages, IMO judges (recipe.eval.olympiad.score_suites)
        if out is None:
            _fail("--out DIR is required (where items.jsonl and summary.json go)")
        with _user_errors():
            typer.echo(json.dumps(run_score(suite, olympiad, out=out, responses=responses), indent=2, default=str))
        return
    if olympiad.olympiad_only_given():
        _fail(f"{' '.join(olympiad.olympiad_only_given())}: option(s) of the olympiad suites ({', '.join(OLYMPIAD)}), "
              f"not of {suite}")
    if responses is None or out is None:
        _fail("--responses FILE.jsonl and --out DIR are required")
    from recipe.eval.score_file import score_responses
    with _user_errors():
        if judge_endpoint or judge_model:
            from recipe.config import load_config
            from recipe.eval.api import configure_judge
            configure_judge(load_config("paper"), judge_endpoint=judge_endpoint, judge_model=judge_model)
        s = score_responses(suite, responses, out, thinking=mode)
    for m in s["malformed"]:
        console.print(f"[yellow]line {m['line']}:[/] {m['error']}")
    keys = [k for k in s if k not in ("malformed", "settings")]
    typer.echo(json.dumps({k: s[k] for k in keys} | {"malformed_lines": [m["line"] for m in s["malformed"]]}, indent=2))
    if s["malformed"] and not allow_malformed:
        console.print(f"[bold red]{len(s['malformed'])} malformed line(s)[/] (listed in {out / 'summary.json'}; "
                      "every other line was scored). --allow-malformed exits 0.")
        raise typer.Exit(1)


@app.command("prove")
def prove(
    data: str = typer.Option(..., help="IMO-Bench folder with the ProofBench CSVs."),
    endpoint: str = typer.Option(..., help="OpenAI-compatible server of the prover, e.g. http://127.0.0.1:8000."),
    model: str = typer.Option(..., help="Served prover model name."),
    out: Path = typer.Option(..., help="Output folder: tts.jsonl (every proof and verification; a re-run resumes it) "
                                       "and responses.jsonl (the final proofs)."),
    verifier_endpoint: Optional[str] = typer.Option(None, help="Verifier server (default: the prover's)."),
    verifier_model: Optional[str] = typer.Option(None, help="Verifier model name (default: the prover)."),
    api_key_env: Optional[str] = typer.Option(None, help="Name of the env var holding the API key."),
    server: Literal["vllm", "standard"] = typer.Option("vllm", help="vllm also sends top_k/min_p/repetition_penalty; "
                                                      "standard sends OpenAI fields only."),
    version: Optional[str] = typer.Option(None, help="ProofBench version v1|v2 (default: the profile's)."),
    profile: str = typer.Option("paper", help="Profile whose olympiad.proof_tts budget the loop follows."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N problems (a smoke test, not a score)."),
    concurrency: int = typer.Option(4, min=1, help="Problems proved at once."),
    set_: List[str] = set_option("key=value override of the profile, e.g. olympiad.proof_tts.generations=8."),
) -> None:
    """IMO-ProofBench proofs by generate -> verify -> refine (docs/OLYMPIAD.md); grade them with
    `recipe eval score --suite imo-proof --responses OUT/responses.jsonl`."""
    from recipe.config import load_config
    from recipe.eval.olympiad.imo.proof_tts import prove_proofbench
    with _user_errors():
        olympiad = load_config(profile, set_).olympiad
        res = prove_proofbench(data, out, olympiad.proof_tts, version=version or olympiad.imo_proof.version,
                               endpoint=endpoint, model=model, verifier_endpoint=verifier_endpoint,
                               verifier_model=verifier_model, api_key_env=api_key_env, server=server, limit=limit,
                               concurrency=concurrency)
    typer.echo(json.dumps(res, indent=2, default=str))


@app.command("suites")
def suites(benchmarks: Optional[str] = benchmarks_option(),
           set_: List[str] = set_option("key=value override of the paper profile, e.g. benchmarks.mirror=DIR.")) -> None:
    """List every suite `recipe eval --suite` accepts with its protocol defaults and where its data comes from (and
    whether it is present), the suites that NVIDIA's harnesses score, then the olympiad suites that
    `recipe eval score --suite` scores."""
    from recipe.config import load_config
    from recipe.eval.benchmarks.suite_registry import get_suite, suite_names
    from recipe.eval.harness_run import resolve_settings
    from recipe.eval.harness_suites import HARNESS_SUITES, data_status, harness_unavailable
    from recipe.eval.olympiad.score_suites import SUITES as OLYMPIAD
    from recipe.runs.layout import benchmark_mirror
    cfg = load_config("paper", with_benchmarks(set_, benchmarks))
    mirror = benchmark_mirror(cfg)
    for domain in load_config("tiny").domains.names:  # tiny_<domain> suites are made on first use: all of them
        get_suite(f"tiny_{domain}")
    for n in suite_names():
        s = get_suite(n)
        d = s.defaults
        typer.echo(f"{n:28s} k={d.k} T={d.temperature} top_p={d.top_p} max_tokens={d.max_tokens} "
                   f"thinking={d.thinking}  {s.description}")
        typer.echo(f"{'':28s} data: {_suite_data(n, cfg, mirror)}")
    typer.echo("scored by NVIDIA's harnesses (make evals-venv) or lm-eval, against --endpoint or a served --checkpoint:")
    for n, hs in HARNESS_SUITES.items():
        st = resolve_settings(hs)
        present, where = data_status(hs, mirror)
        missing = harness_unavailable(hs)
        typer.echo(f"{n:28s} k={st['k']} T={st['temperature']} top_p={st['top_p']} max_tokens={st['max_tokens']} "
                   f"thinking={st['thinking']}  {hs.description}")
        typer.echo(f"{'':28s} harness: {missing or hs.package + ' ' + hs.task}")
        typer.echo(f"{'':28s} data: {'present' if present else 'ABSENT'}: {where}")
    typer.echo("scored from existing responses by `recipe eval score --suite S` (options: recipe eval score --help):")
    for n in OLYMPIAD:
        typer.echo(f"{n:28s} olympiad rules (docs/OLYMPIAD.md)")


def _suite_data(name: str, cfg, mirror) -> str:
    """Where a suite's rows come from and whether they are here: a run's split, the mirror's file, or the Hub."""
    if name.startswith("tiny_"):
        return "a run's validation split (--run-id)"
    from recipe.eval.api import benchmark_source
    from recipe.eval.sources import SourceUnavailable
    try:
        src = benchmark_source(name, cfg)
    except SourceUnavailable as e:
        return f"ABSENT: {e}"
    hub = f"Hub {src.repo_id}@{src.revision}:{src.file}"
    if mirror is not None and src.mirror_file and (Path(mirror) / src.mirror_file).is_file():
        return f"present: {Path(mirror) / src.mirror_file} (else {hub})"
    where = f"no {src.mirror_file} in {mirror}" if mirror is not None and src.mirror_file else "no mirror file"
    return f"{'from the Hub' if cfg.benchmarks.allow_hub else 'ABSENT'}: {hub} ({where})"


@app.command("fetch-data")
def fetch_data(
    suite: List[str] = typer.Option(..., "--suite", help="Harness suite whose datasets to prepare (repeatable)."),
    benchmarks: Optional[str] = benchmarks_option(),
) -> None:
    """Prepare a harness suite's datasets in the benchmark mirror (DIR/hf_home), where the Hub (or $HF_ENDPOINT) is
    reachable, so that `recipe eval --suite S --benchmarks DIR` runs offline afterwards."""
    from recipe.config import load_config
    from recipe.eval.harness_data import fetch_suite_data
    from recipe.eval.harness_suites import HARNESS_SUITES
    from recipe.runs.layout import benchmark_mirror
    if benchmarks:   # the folder to fill may not exist yet
        Path(benchmarks).mkdir(parents=True, exist_ok=True)
    with _user_errors():
        mirror = benchmark_mirror(load_config("paper", with_benchmarks([], benchmarks)))
    if mirror is None:
        _fail("give the benchmark mirror to fill: --benchmarks DIR (or $RECIPE_BENCHMARK_MIRROR)")
    unknown = [s for s in suite if s not in HARNESS_SUITES]
    if unknown:
        _fail(f"not a harness suite: {', '.join(unknown)} (harness suites: {', '.join(HARNESS_SUITES)})")
    failed = {s: fetch_suite_data(HARNESS_SUITES[s], mirror, progress=typer.echo) for s in suite}
    bad = {s: f for s, f in failed.items() if f}
    for s, f in bad.items():
        Console(stderr=True).print(f"[bold red]{s}:[/] {escape('; '.join(f))}", soft_wrap=True, highlight=False)
    if bad:
        raise typer.Exit(1)


@app.command("report")
def report(
    results: List[Path] = typer.Argument(..., help="Result folders (with <suite>/results.json) or results.json files."),
    profile: str = typer.Option("paper", help="Profile holding the paper's values (benchmarks.suites.*.paper)."),
) -> None:
    """Print ours vs the paper's Table 1 for every benchmark, with both settings; flags differing settings."""
    from recipe.eval.report.results_tables import collect_results, paper_comparison, print_comparison
    with _user_errors():
        rows = paper_comparison(collect_results(results), profile)
    print_comparison(rows, Console())  # a fresh console reads the terminal width (COLUMNS) now, not at import


@app.command("sbatch")
def sbatch(
    model_path: str = typer.Option(..., help="Model folder or Hub id as vLLM should load it."),
    served_name: str = typer.Option(..., help="--served-model-name (what recipe eval sends as model)."),
    suite: List[str] = typer.Option(..., "--suite", help="Suites to evaluate (repeatable)."),
    out_dir: str = typer.Option(..., help="Results folder on the cluster."),
    script: Path = typer.Option(..., help="Where to write the sbatch script."),
    model_revision: Optional[str] = typer.Option(None, help="Model revision/sha (recorded)."),
    profile: str = typer.Option("paper", help="Profile holding benchmarks.serving."),
    set_: List[str] = typer.Option([], "--set", "-s", help="key=value override, e.g. benchmarks.serving.time=4:00:00"),
) -> None:
    """Render a Slurm job: vllm serve (pinned container, model-card flags) -> health -> recipe eval --endpoint."""
    from recipe.config import load_config
    from recipe.eval.backends.serve_sbatch import render_eval_sbatch, write_eval_sbatch
    with _user_errors():
        cfg = load_config(profile, set_)
        text = render_eval_sbatch(cfg.benchmarks.serving, model_path=model_path, served_name=served_name,
                                  suites=suite, out_dir=out_dir, model_revision=model_revision,
                                  mounts=cfg.cluster.mounts)
        write_eval_sbatch(script, text)
    typer.echo(str(script))


@app.command("launcher-config")
def launcher_config(
    checkpoint: str = typer.Option(..., help="Checkpoint folder on the cluster (vLLM serves it as /checkpoint)."),
    out: Path = typer.Option(..., help="Where to write the nemo-evaluator-launcher config (YAML)."),
    served_name: str = typer.Option("nemotron-cascade-2", help="--served-model-name of the deployment."),
    hf_home: Optional[str] = typer.Option(None, help="A filled Hugging Face cache on the cluster: mounted and used "
                                                     "offline (HF_*_OFFLINE=1) by the server and every harness."),
    hostname: Optional[str] = typer.Option(None, help="Slurm login node (else ??? to fill)."),
    account: Optional[str] = typer.Option(None, help="Slurm account (else ???)."),
    output_dir: Optional[str] = typer.Option(None, help="Absolute results folder seen by the compute nodes (else ???)."),
    partition: Optional[str] = typer.Option(None, help="Slurm partition (default: the launcher's)."),
    walltime: str = typer.Option("08:00:00", help="Slurm time limit of each task's job."),
    tensor_parallel: Optional[int] = typer.Option(None, help="vLLM tensor parallel size (default: benchmarks.serving)."),
    profile: str = typer.Option("paper", help="Profile holding the paper's settings and benchmarks.serving."),
) -> None:
    """Write a NeMo Evaluator launcher config (Slurm + vLLM) for every Table 1 row NVIDIA's task list covers, with
    the paper's repeats and sampling; rows no task covers are listed in its header. Check it with
    `nel run --config FILE --dry-run` (in .venv-evals: make evals-venv)."""
    from recipe.eval.launcher_config import write_launcher_config
    with _user_errors():
        info = write_launcher_config(out, checkpoint, served_name=served_name, hf_home=hf_home, hostname=hostname,
                                     account=account, output_dir=output_dir, partition=partition, walltime=walltime,
                                     tensor_parallel=tensor_parallel, profile=profile)
    console.print(f"{info['path']}: {info['tasks']} tasks for {len(info['rows'])} Table 1 rows; "
                  f"{len(info['not_covered'])} rows no launcher task covers (listed in the file's header)")
