"""Run one stage of the local backend into the run layout.

Order inside a stage: resolve inputs (previous checkpoint, data, teachers) -> hash them -> skip if the manifest is
``done`` with the same inputs -> manifest ``running`` -> train (resuming from the stage's step state when the
inputs match) -> save the Hugging Face checkpoint -> validate every domain (or reuse the input's rows when the
checkpoint is the input unchanged) -> scores.json / teachers.json -> manifest ``done``, written last and atomically.
"""
from __future__ import annotations

import copy
import datetime as dt
import shutil
import time
import warnings
from pathlib import Path

import torch

from recipe.config.schema import RecipeConfig
from recipe.domains import tokenizer_corpus
from recipe.domains.data_phase import load_splits
from recipe.model import build_tiny, load_checkpoint, save_checkpoint
from recipe.pipeline.stage_inputs import check_runnable, stage_inputs
from recipe.pipeline.teacher_validation import validate_candidates, validate_picks_on_report_split
from recipe.runs.content_hashes import sha256_dir
from recipe.runs.layout import RunDir
from recipe.runs.teachers import record_scores, write_routing
from recipe.train.context import StageContext
from recipe.train.device import StageMeter, resolve_device, set_cpu_bf16, stage_tokens
from recipe.train.generation_caps import GenerationCapWarning, cap_shortfalls
from recipe.train.rl import train_rl
from recipe.train.sft import train_sft
from recipe.train.state import clear_state
from recipe.validation.samples import read_samples, samples_path, write_samples
from recipe.validation.domain_validation import summarize, validate_samples


class PhaseRunDir(RunDir):
    """The run seen from one phase of a two-phase stage (``swe_rl``: agentless, then agentic): the phase's
    metrics, step state and manifest live in ``<NN>_<stage>/<phase>/``."""

    def __init__(self, run: RunDir, phase: str):
        super().__init__(run.path)
        self.phase = phase

    def stage_dir(self, stage: str):
        return super().stage_dir(stage) / self.phase


def validate_checkpoint(cfg: RecipeConfig, model, tok, splits: dict, checkpoint_sha256: str,
                        input_sha256: str | None, input_samples: Path | None) -> tuple[list[dict], str | None]:
    """Report-split validation rows of a stage's checkpoint, and where they were reused from (else None).

    A stage that made no update (every group filtered out, e.g. agentic SWE RL on the tiny profile) saves the very
    checkpoint it started from; its validation would repeat the input's sample for sample (sampling is seeded by
    run seed, split and domain only), so the input's rows are reused when the two checkpoints hash the same."""
    if input_sha256 == checkpoint_sha256 and input_samples is not None and input_samples.exists():
        return read_samples(input_samples), str(input_samples)
    rows = validate_samples(model, tok, splits, cfg.domains.names, cfg.evaluation, split="val", seed=cfg.run.seed)
    return rows, None


def agentless_checkpoint(run: RunDir) -> Path:
    """Where the agentless phase's checkpoint goes (the cluster renderer's name, ``recipe.cluster.render``)."""
    return run.stage_dir("swe_rl") / "agentless_checkpoint"


def _swe_agentless_phase(run: RunDir, cfg: RecipeConfig, inputs: dict, splits: dict, progress: bool) -> dict:
    """Agentless SWE RL from the previous stage's checkpoint into ``agentless_checkpoint``; skipped when done
    with the same inputs. Returns the phase's manifest (its validation is a row of scores.json)."""
    phase_run = PhaseRunDir(run, "agentless")
    m = phase_run.read_manifest("swe_rl") or {}
    if m.get("status") == "done" and m.get("inputs") == inputs and agentless_checkpoint(run).exists():
        return m
    if m.get("inputs") != inputs:
        clear_state(phase_run.stage_dir("swe_rl") / "state")
        phase_run.truncate_metrics("swe_rl", 0)
    phase_run.write_manifest("swe_rl", {"stage": "swe_rl", "phase": "agentless", "status": "running", "inputs": inputs})
    t0 = time.time()
    model, tok = load_checkpoint(run.checkpoint_dir(cfg.input_stage("swe_rl")))
    model.to(resolve_device(cfg.run.device))
    ctx = StageContext(run=phase_run, stage="swe_rl", cfg=cfg, model=model, tokenizer=tok, splits=splits,
                       progress=progress)
    summary = train_rl(ctx, cfg.swe_rl.agentless)
    save_checkpoint(model, tok, agentless_checkpoint(run))
    sha = sha256_dir(agentless_checkpoint(run))
    rows, reused = validate_checkpoint(cfg, model, tok, splits, sha, inputs["init_checkpoint"]["sha256"],
                                       samples_path(run, cfg.input_stage("swe_rl"), "final", "val"))
    write_samples(samples_path(phase_run, "swe_rl", "final", "val"), rows)
    ci = summarize(rows)
    scores = {d: e["score"] for d, e in ci.items()}
    phase_run.write_validation("swe_rl", scores, ci=ci, split="val", reused_from=reused and run.relpath(reused),
                               samples=run.relpath(samples_path(phase_run, "swe_rl", "final", "val")))
    record_scores(run, "swe_rl_agentless", scores)
    m = {"stage": "swe_rl", "phase": "agentless", "status": "done", "inputs": inputs,
         "outputs": {"checkpoint": run.relpath(agentless_checkpoint(run)), "checkpoint_sha256": sha},
         "metrics_summary": {**summary, "validation": scores}, "timings": {"total_s": round(time.time() - t0, 2)}}
    phase_run.write_manifest("swe_rl", m)
    return m


def run_stage(run: RunDir, cfg: RecipeConfig, stage: str, *, progress: bool = True, force: bool = False) -> dict:
    """Run (or skip, or resume) one stage; returns its manifest."""
    check_runnable(cfg, stage)
    torch.set_num_threads(cfg.run.torch_threads)
    set_cpu_bf16(cfg.run.cpu_bf16)
    inputs = stage_inputs(run, cfg, stage)
    manifest = run.read_manifest(stage) or {}
    if not force and manifest.get("status") == "done" and manifest.get("inputs") == inputs:
        manifest["skipped"] = True
        return manifest
    ctx_state = run.stage_dir(stage) / "state"
    if force or manifest.get("inputs") != inputs:  # a previous attempt with other inputs: start clean
        clear_state(ctx_state)
        run.truncate_metrics(stage, 0)
        shutil.rmtree(run.stage_dir(stage) / "candidates", ignore_errors=True)
    started = (manifest.get("started") if manifest.get("inputs") == inputs else None) \
        or dt.datetime.now(dt.timezone.utc).isoformat()  # a resumed attempt keeps its start time
    run.write_manifest(stage, {"stage": stage, "status": "running", "inputs": inputs, "started": started})
    t0 = time.time()
    splits = load_splits(run, cfg)
    try:
        if stage == "sft" and cfg.model.source == "pretrained":  # a local folder (the small profile's SmolLM2)
            from recipe.model.pretrained import load_pretrained
            model, tok = load_pretrained(cfg.model)
        elif stage == "sft":
            corpus = tokenizer_corpus(splits, cfg.domains.names, cfg.model.tokenizer.corpus_examples // 2)
            model, tok = build_tiny(cfg.model, corpus, cfg.run.seed)
        elif stage == "swe_rl":  # agentless phase (own checkpoint), then agentic from it
            phase = _swe_agentless_phase(run, cfg, inputs, splits, progress)
            model, tok = load_checkpoint(agentless_checkpoint(run))
        else:
            model, tok = load_checkpoint(run.checkpoint_dir(cfg.input_stage(stage)))
        # SFT (the tokenizer is new): every cap of the plan and of validation; later stages: their own caps
        short = [str(s) for s in cap_shortfalls(cfg, tok, splits, stages=None if stage == "sft" else [stage],
                                                evaluation=stage == "sft")]
        for msg in short:
            warnings.warn(msg, GenerationCapWarning, stacklevel=2)
        device = resolve_device(cfg.run.device)
        model.to(device)
        meter = StageMeter(device)
        ctx = StageContext(run=run, stage=stage, cfg=cfg, model=model, tokenizer=tok, splits=splits,
                           progress=progress)
        scfg = cfg.swe_rl.agentic if stage == "swe_rl" else cfg.stage(stage)
        if stage == "sft":
            summary = train_sft(ctx, scfg)
        else:
            teachers, ref = None, None
            if scfg.advantage_estimator == "opd":
                cache: dict[str, object] = {}
                teachers = {}
                for d, t in inputs["teachers"].items():
                    if t["checkpoint"] not in cache:
                        cache[t["checkpoint"]] = load_checkpoint(run.resolve_path(t["checkpoint"]))[0].to(device)
                    teachers[d] = cache[t["checkpoint"]]
            if scfg.kl_coef > 0:
                ref = copy.deepcopy(model).eval()
            summary = train_rl(ctx, scfg, teachers=teachers, ref_model=ref)
            if stage == "swe_rl":
                summary = {**summary, "agentless": phase["metrics_summary"]}
        runtime = meter.record(stage_tokens(run.read_metrics(stage), getattr(scfg, "generations_per_prompt", None)))
        save_checkpoint(model, tok, run.checkpoint_dir(stage))
        t_train = time.time() - t0
        sha = sha256_dir(run.checkpoint_dir(stage))
        if stage == "swe_rl":   # the agentic phase starts from the agentless phase's checkpoint
            src = (phase["outputs"]["checkpoint_sha256"],
                   samples_path(PhaseRunDir(run, "agentless"), "swe_rl", "final", "val"))
        elif stage == "sft":
            src = (None, None)
        else:
            src = (inputs["init_checkpoint"]["sha256"], samples_path(run, cfg.input_stage(stage), "final", "val"))
        rows, reused = validate_checkpoint(cfg, model, tok, splits, sha, *src)
        write_samples(samples_path(run, stage, "final", "val"), rows)
        ci = summarize(rows)
        scores = {d: e["score"] for d, e in ci.items()}
        run.write_validation(stage, scores, ci=ci, split="val", reused_from=reused and run.relpath(reused),
                             samples=run.relpath(samples_path(run, stage, "final", "val")))
        if stage != "sft":
            validate_candidates(run, cfg, stage, model, tok, splits)  # MOPD teacher candidates, selection split
        if stage == "mopd":
            write_routing(run, cfg.mopd.teacher_routing, cfg.mopd.domains)
            validate_picks_on_report_split(run, cfg, tok, splits)
        teachers_now = record_scores(run, stage, scores)
    except BaseException as e:
        m = run.read_manifest(stage) or {}
        m.update(status="failed", error=f"{type(e).__name__}: {e}")
        run.write_manifest(stage, m)
        raise
    clear_state(ctx_state)
    manifest = {
        "stage": stage, "status": "done", "inputs": inputs, "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(),
        "outputs": {"checkpoint": run.relpath(run.checkpoint_dir(stage)), "checkpoint_sha256": sha,
                    "metrics": run.relpath(run.metrics_path(stage)),
                    "validation": run.relpath(run.validation_path(stage)),
                    "validation_reused_from": reused and run.relpath(reused)},
        "generation_cap_shortfalls": short,
        "metrics_summary": {**summary, "validation": scores,
                            "average": round(sum(scores.values()) / len(scores), 2)},
        "teachers_after": teachers_now,
        "runtime": runtime,  # device, dtype, peak memory, tokens/s of the training loop (recipe.train.device)
        "timings": {"train_s": round(t_train, 2), "total_s": round(time.time() - t0, 2)},
    }
    run.write_manifest(stage, manifest)  # written last: the stage is done only now
    return manifest
