"""Teacher candidates validated by the local backend: each candidate checkpoint of a stage scored on the selection
split, and picked intermediate teachers scored on the report split too. The run files they fill (``selection.json``,
per-sample JSONL) and the choice itself are ``recipe.runs.teachers``; a cluster backend validates with its own jobs and
calls ``recipe.runs.teachers.record_selection``."""
from __future__ import annotations

from recipe.runs.layout import RunDir
from recipe.runs.teachers import candidates, read_teachers, record_selection, selection_domains


def validate_candidates(run: RunDir, cfg, stage: str, final_model, tokenizer, splits: dict) -> dict | None:
    """Score the stage's teacher candidates on the selection split (only the domains of the select groups that
    name the stage); per-sample JSONL per candidate; ``selection.json``. None when no group names the stage."""
    from recipe.validation.samples import samples_path, write_samples
    from recipe.validation.domain_validation import summarize, validate_samples
    from recipe.model import load_checkpoint
    doms = selection_domains(cfg.mopd.teacher_routing, stage, cfg.domains.names)
    if not doms:
        return None
    out = {}
    for name, step, path in candidates(run, stage, cfg.stage(stage).steps):
        model = final_model if name == "final" else load_checkpoint(path)[0]
        rows = validate_samples(model, tokenizer, splits, doms, cfg.evaluation, split="select", seed=cfg.run.seed)
        write_samples(samples_path(run, stage, name, "select"), rows)
        out[name] = {"step": step, "checkpoint": str(path), "scores": summarize(rows)}
    return record_selection(run, stage, out)


def validate_picks_on_report_split(run: RunDir, cfg, tokenizer, splits: dict) -> None:
    """A picked teacher that is an intermediate checkpoint was only scored on the selection split: score it on the
    report split too (its routed domains only), so every teacher appears in the report's comparisons."""
    from recipe.validation.samples import samples_path, write_samples
    from recipe.validation.domain_validation import validate_samples
    from recipe.model import load_checkpoint
    picks = read_teachers(run).get("mopd", {}).get("teachers", {})
    by_ck: dict[tuple[str, str, str], list[str]] = {}
    for d, t in picks.items():
        name = t.get("candidate", "@final").split("@", 1)[1]
        if name != "final":
            by_ck.setdefault((t["stage"], name, t["checkpoint"]), []).append(d)
    for (stage, name, path), doms in by_ck.items():
        model = load_checkpoint(run.resolve_path(path))[0]
        rows = validate_samples(model, tokenizer, splits, doms, cfg.evaluation, split="val", seed=cfg.run.seed)
        write_samples(samples_path(run, stage, name, "val"), rows)
