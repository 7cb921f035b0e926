"""What a stage needs before it runs, without loading torch: whether the local backend can run it and the inputs
that decide whether a finished stage is current (``recipe run`` skips it then). ``recipe run`` through the
notebooks imports only this; the training code (``recipe.pipeline.stage_runner``) runs in the notebook kernel."""
from __future__ import annotations

from recipe.config.schema import STAGE_PLAN, RecipeConfig
from recipe.runs.content_hashes import sha256_dir, sha256_obj
from recipe.runs.layout import DATA_PHASE, RunDir
from recipe.runs.teachers import resolve_teachers, selection_domains


class StageNotImplemented(RuntimeError):
    """A stage is in the plan but this backend cannot run it: we fail loudly instead of skipping it."""


def check_runnable(cfg: RecipeConfig, stage: str) -> None:
    if stage not in STAGE_PLAN:
        raise KeyError(f"unknown stage {stage!r}; the plan is {', '.join(STAGE_PLAN)}")
    scfg = cfg.stage(stage)
    if stage != "sft" and not getattr(scfg, "implemented_locally", True):
        raise StageNotImplemented(
            f"stage {stage!r} is in the plan but the local backend does not implement it "
            f"({stage}.implemented_locally: false in profile {cfg.profile!r}). Run up to an earlier stage "
            f"(--until), or render it for NeMo-RL with `recipe cluster render --stage {stage}`.")


def stage_inputs(run: RunDir, cfg: RecipeConfig, stage: str) -> dict:
    inputs = {"stage_config": sha256_obj(cfg.stage(stage).model_dump(mode="json")),
              "model_config": sha256_obj(cfg.model.model_dump(mode="json")),
              "evaluation": sha256_obj(cfg.evaluation.model_dump(mode="json")),
              "seed": cfg.run.seed, "data": data_hash(run)}
    prev = cfg.input_stage(stage)
    if prev is not None:
        if not run.is_done(prev):
            raise FileNotFoundError(f"stage {stage!r} starts from {prev!r}, which is not done in run {run.run_id}")
        inputs["init_checkpoint"] = {"path": run.relpath(run.checkpoint_dir(prev)),
                                    "sha256": sha256_dir(run.checkpoint_dir(prev))}
    sel = selection_domains(cfg.mopd.teacher_routing, stage, cfg.domains.names) if stage != "sft" else []
    if sel:  # a teacher candidate stage: its selection-split scoring depends on the group's domains
        inputs["selection_domains"] = sel
    if stage == "mopd":
        teachers = resolve_teachers(run, cfg.mopd.teacher_routing, cfg.mopd.domains)
        inputs["teachers"] = {d: {**t, "sha256": sha256_dir(run.resolve_path(t["checkpoint"]))} for d, t in teachers.items()}
    return inputs


def data_hash(run: RunDir) -> str:
    """The data phase's outputs (their sha256s), hashed: a stage's input."""
    m = run.read_manifest(DATA_PHASE) or {}
    return sha256_obj(m.get("outputs", {}))
