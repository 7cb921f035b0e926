"""Teachers chosen by data (paper §4.4: "the strongest validation checkpoint per benchmark category").

After every stage its per-domain validation scores enter ``scores.json`` (the checkpoint x domain matrix) and
``teachers.json`` keeps, per domain, the best checkpoint so far and its score (ties keep the earlier checkpoint,
so the SFT checkpoint stays the math teacher unless a later stage beats it - as in the paper, because the record
says so). MOPD resolves each domain's teacher slot from these files:

- ``best``: the domain's entry in teachers.json;
- ``best_of:<stage>,<stage>``: the best of those stages' checkpoints for the domain (scores.json);
- ``stage:<stage>``: that stage's checkpoint, whatever its score;
- ``branch:<name>``: a side-branch checkpoint (e.g. the paper's RLHF-from-SFT teacher), cluster backend only.
"""
from __future__ import annotations

from recipe.config.schema import STAGE_PLAN
from recipe.runs.layout import RunDir, read_json, write_json_atomic


def record_scores(run: RunDir, stage: str, scores: dict[str, float]) -> dict:
    """Add a stage's validation scores to scores.json and update teachers.json; returns the teachers."""
    matrix = read_json(run.scores_path, {"checkpoints": {}}) or {"checkpoints": {}}
    matrix["checkpoints"][stage] = scores
    order = [s for s in STAGE_PLAN if s in matrix["checkpoints"]]
    matrix["checkpoints"] = {s: matrix["checkpoints"][s] for s in order}
    matrix["domains"] = sorted({d for sc in matrix["checkpoints"].values() for d in sc})
    write_json_atomic(run.scores_path, matrix)
    teachers = best_per_domain(run, matrix["checkpoints"])
    write_json_atomic(run.teachers_path, teachers)
    return teachers


def best_per_domain(run: RunDir, checkpoints: dict[str, dict[str, float]]) -> dict:
    best: dict[str, dict] = {}
    for stage in STAGE_PLAN:  # plan order, strict '>' : ties keep the earlier checkpoint
        for d, s in checkpoints.get(stage, {}).items():
            if d not in best or s > best[d]["score"]:
                best[d] = {"stage": stage, "checkpoint": str(run.checkpoint_dir(stage)), "score": s}
    return best


def resolve_teacher(run: RunDir, domain: str, slot: str) -> dict:
    """Return {"stage", "checkpoint", "score"} for a routing slot (see module docstring)."""
    matrix = read_json(run.scores_path, {"checkpoints": {}}) or {"checkpoints": {}}
    ck = matrix["checkpoints"]
    if slot == "best":
        teachers = read_json(run.teachers_path, {}) or {}
        if domain not in teachers:
            raise ValueError(f"no teacher for domain {domain!r} in {run.teachers_path}: no earlier stage was "
                             f"validated on it (validated domains: {sorted(teachers)})")
        return teachers[domain]
    if slot.startswith("best_of:"):
        stages = [s.strip() for s in slot.split(":", 1)[1].split(",")]
        cands = [(ck[s][domain], -STAGE_PLAN.index(s), s) for s in stages if s in ck and domain in ck[s]]
        if not cands:
            raise ValueError(f"teacher slot {slot!r} for {domain!r}: none of {stages} has a validation score")
        score, _, stage = max(cands)
        return {"stage": stage, "checkpoint": str(run.checkpoint_dir(stage)), "score": score}
    if slot.startswith("stage:"):
        stage = slot.split(":", 1)[1]
        if not run.is_done(stage):
            raise ValueError(f"teacher slot {slot!r}: stage {stage!r} is not done in run {run.run_id}")
        return {"stage": stage, "checkpoint": str(run.checkpoint_dir(stage)), "score": ck.get(stage, {}).get(domain)}
    if slot.startswith("branch:"):
        raise ValueError(f"teacher slot {slot!r} (a side-branch checkpoint) is only available on the cluster backend")
    raise ValueError(f"unknown teacher slot {slot!r}: use best, best_of:<stages>, stage:<stage> or branch:<name>")


def resolve_teachers(run: RunDir, routing: dict[str, str], domains: list[str]) -> dict[str, dict]:
    missing = [d for d in domains if d not in routing]
    if missing:
        raise ValueError(f"mopd.teacher_routing has no teacher slot for domains {missing}")
    return {d: resolve_teacher(run, d, routing[d]) for d in domains}
