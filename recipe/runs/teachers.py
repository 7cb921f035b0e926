"""MOPD teachers, chosen by data and routed per domain (paper §4.4, RECIPE.md §6). ``mopd.teacher_routing`` maps
each domain to a slot:

- ``stage:<stage>``: that stage's final checkpoint (the paper's math teacher ``stage:sft``; the RLHF teacher
  ``stage:rlhf_branch``, RLHF trained from SFT);
- ``select:<stage>,<stage>``: ONE teacher for every domain routed to this same slot (the paper's multi-domain
  teacher for IF, MCQA, tool calls, structured output). Candidates are those stages' final checkpoints and their
  intermediate ones (``<stage>.teacher_candidate_every``), each validated on the *selection* split on all the
  group's domains (``recipe.pipeline.teacher_validation``, after the stage trains); the pick has the highest
  average over the group's domains (ties keep the earlier candidate);
- ``best``: the domain's best *report-split* checkpoint so far (``best_so_far`` in teachers.json; the old
  "best per domain" option); ``best_of:<stage>,<stage>``: the best of those stages for that domain (scores.json);
- ``branch:<name>``: a side-branch checkpoint given on the cluster backend.

``teachers.json`` holds ``best_so_far`` (updated after every stage) and ``mopd`` (written when MOPD resolves its
teachers): per domain the slot and the pick; per ``select`` group every candidate with its scores and CIs, its
average with CI, and the pick.
"""
from __future__ import annotations

from pathlib import Path

from recipe.config.schema import STAGE_PLAN
from recipe.runs.layout import RunDir, read_json, write_json_atomic
from recipe.stats import Estimate, average_ci

SELECT = "select:"


def record_scores(run: RunDir, stage: str, scores: dict[str, float]) -> dict:
    """Add a stage's validation scores to scores.json and update teachers.json's best_so_far; returns it."""
    matrix = read_json(run.scores_path, {"checkpoints": {}}) or {"checkpoints": {}}
    matrix["checkpoints"][stage] = scores
    rows = [r for s in STAGE_PLAN for r in ((s + "_agentless", s) if s == "swe_rl" else (s,))]  # + the agentless phase
    order = [s for s in rows if s in matrix["checkpoints"]]
    matrix["checkpoints"] = {s: matrix["checkpoints"][s] for s in order}
    matrix["domains"] = sorted({d for sc in matrix["checkpoints"].values() for d in sc})
    write_json_atomic(run.scores_path, matrix)
    best = best_per_domain(run, matrix["checkpoints"])
    teachers = read_teachers(run)
    teachers["best_so_far"] = best
    write_json_atomic(run.teachers_path, teachers)
    return best


def read_teachers(run: RunDir) -> dict:
    data = read_json(run.teachers_path, {}) or {}
    return data if "best_so_far" in data or "mopd" in data or not data else {"best_so_far": data}


def best_per_domain(run: RunDir, checkpoints: dict[str, dict[str, float]]) -> dict:
    best: dict[str, dict] = {}
    for stage in STAGE_PLAN:  # plan order, strict '>' : ties keep the earlier checkpoint
        for d, s in checkpoints.get(stage, {}).items():
            if d not in best or s > best[d]["score"]:
                best[d] = {"stage": stage, "checkpoint": run.relpath(run.checkpoint_dir(stage)), "score": s}
    return best


# -- candidates of select groups -----------------------------------------------------------------------------
def slot_stages(slot: str) -> list[str]:
    stages = [s.strip() for s in slot.split(":", 1)[1].split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGE_PLAN]
    if not stages or unknown:
        raise ValueError(f"teacher slot {slot!r}: name stages of the plan ({', '.join(STAGE_PLAN)})")
    return stages


def select_groups(routing: dict[str, str]) -> dict[str, list[str]]:
    """{select slot: [domains routed to it]} in routing order."""
    groups: dict[str, list[str]] = {}
    for d, slot in routing.items():
        if slot.startswith(SELECT):
            groups.setdefault(slot, []).append(d)
    return groups


def candidate_dir(run: RunDir, stage: str, step: int) -> Path:
    return run.stage_dir(stage) / "candidates" / f"step_{step:06d}"


def candidates(run: RunDir, stage: str, final_step: int) -> list[tuple[str, int, Path]]:
    """[(name, step, checkpoint)]: the intermediate candidates by step, then the final checkpoint."""
    root = run.stage_dir(stage) / "candidates"
    inter = sorted(root.glob("step_*")) if root.exists() else []
    out = [(p.name, int(p.name.split("_")[1]), p) for p in inter if int(p.name.split("_")[1]) < final_step]
    return out + [("final", final_step, run.checkpoint_dir(stage))]


def selection_path(run: RunDir, stage: str) -> Path:
    return run.stage_dir(stage) / "selection.json"


def selection_domains(routing: dict[str, str], stage: str, names: list[str]) -> list[str]:
    """Domains a stage's candidates must be scored on: every domain of every select group naming the stage."""
    doms = {d for slot, ds in select_groups(routing).items() if stage in slot_stages(slot) for d in ds}
    return [d for d in names if d in doms]




def record_selection(run: RunDir, stage: str, cands: dict[str, dict]) -> dict:
    """Store a stage's teacher candidates scored on the selection split: ``{name: {"step", "checkpoint",
    "scores": {domain: {"score", "ci_low", "ci_high", "n"}}}}`` (name ``final`` or ``step_NNNNNN``). The local
    backend calls it from ``recipe.pipeline.teacher_validation``; a cluster backend calls it with its own validation
    results, which must cover every domain of the stage's select groups (paper scale: all of IF, MCQA, tools, JSON)."""
    bad = [n for n, c in cands.items() if not {"step", "checkpoint", "scores"} <= set(c)]
    if bad:
        raise ValueError(f"{stage}: teacher candidates {bad} need step, checkpoint and scores")
    out = {n: {"stage": stage, **c, "checkpoint": run.relpath(c["checkpoint"])} for n, c in cands.items()}
    write_json_atomic(selection_path(run, stage), out)
    return out


def select_group(run: RunDir, slot: str, domains: list[str]) -> dict:
    """Every candidate of a select slot with its selection-split scores and average (CIs), and the pick."""
    cands = []
    for stage in slot_stages(slot):
        sel = read_json(selection_path(run, stage))
        if sel is None:
            raise ValueError(f"teacher slot {slot!r}: stage {stage!r} has no selection-split scores "
                             f"({selection_path(run, stage)}); run it with this routing")
        for name, c in sel.items():
            missing = [d for d in domains if d not in c["scores"]]
            if missing:
                raise ValueError(f"teacher slot {slot!r}: candidate {stage}@{name} was not scored on {missing}; "
                                 f"re-run {stage} (its candidates are scored on the group's domains)")
            avg = average_ci([Estimate(**c["scores"][d]) for d in domains])
            cands.append({"name": f"{stage}@{name}", **c, "scores": {d: c["scores"][d] for d in domains},
                          "average": avg.as_dict()})
    pick = max(cands, key=lambda c: c["average"]["score"])  # max keeps the first of equals: the earlier one
    return {"domains": domains, "candidates": cands, "pick": pick["name"], "checkpoint": pick["checkpoint"],
            "stage": pick["stage"], "step": pick["step"]}


# -- resolution -------------------------------------------------------------------------------------------------
def resolve_teacher(run: RunDir, domain: str, slot: str, group_domains: list[str] | None = None) -> dict:
    """Return {"stage", "checkpoint", "score", "slot"} for a routing slot (see module docstring). The checkpoint is
    as run files store it (``RunDir.relpath``); ``run.resolve_path`` turns it into a folder to load."""
    matrix = read_json(run.scores_path, {"checkpoints": {}}) or {"checkpoints": {}}
    ck = matrix["checkpoints"]
    if slot == "best":
        best = read_teachers(run).get("best_so_far", {})
        if domain not in best:
            raise ValueError(f"no teacher for domain {domain!r} in {run.teachers_path}: no earlier stage was "
                             f"validated on it (validated domains: {sorted(best)})")
        return {**best[domain], "slot": slot}
    if slot.startswith(SELECT):
        g = select_group(run, slot, group_domains or [domain])
        pick = next(c for c in g["candidates"] if c["name"] == g["pick"])
        return {"stage": g["stage"], "checkpoint": g["checkpoint"], "candidate": g["pick"],
                "score": pick["scores"][domain]["score"], "slot": slot}
    if slot.startswith("best_of:"):
        stages = [s.strip() for s in slot.split(":", 1)[1].split(",")]
        cands = [(ck[s][domain], -STAGE_PLAN.index(s), s) for s in stages if s in ck and domain in ck[s]]
        if not cands:
            raise ValueError(f"teacher slot {slot!r} for {domain!r}: none of {stages} has a validation score")
        score, _, stage = max(cands)
        return {"stage": stage, "checkpoint": run.relpath(run.checkpoint_dir(stage)), "score": score, "slot": slot}
    if slot.startswith("stage:"):
        stage = slot.split(":", 1)[1]
        if not run.is_done(stage):
            raise ValueError(f"teacher slot {slot!r}: stage {stage!r} is not done in run {run.run_id}")
        return {"stage": stage, "checkpoint": run.relpath(run.checkpoint_dir(stage)), "score": ck.get(stage, {}).get(domain),
                "slot": slot}
    if slot.startswith("branch:"):
        raise ValueError(f"teacher slot {slot!r} (a side-branch checkpoint) is only available on the cluster backend")
    raise ValueError(f"unknown teacher slot {slot!r}: use stage:<stage>, select:<stages>, best, best_of:<stages> "
                     f"or branch:<name>")


def resolve_teachers(run: RunDir, routing: dict[str, str], domains: list[str]) -> dict[str, dict]:
    missing = [d for d in domains if d not in routing]
    if missing:
        raise ValueError(f"mopd.teacher_routing has no teacher slot for domains {missing}")
    groups = select_groups({d: routing[d] for d in domains})
    return {d: resolve_teacher(run, d, routing[d], groups.get(routing[d])) for d in domains}


def routing_record(run: RunDir, routing: dict[str, str], domains: list[str]) -> dict:
    """teachers.json's ``mopd`` entry: the pick per domain and every select group's candidates and pick."""
    picks = resolve_teachers(run, routing, domains)
    groups = {slot: select_group(run, slot, ds) for slot, ds in select_groups({d: routing[d] for d in domains}).items()}
    return {"routing": {d: routing[d] for d in domains}, "teachers": picks, "groups": groups}


def write_routing(run: RunDir, routing: dict[str, str], domains: list[str]) -> dict:
    teachers = read_teachers(run)
    teachers["mopd"] = routing_record(run, routing, domains)
    write_json_atomic(run.teachers_path, teachers)
    return teachers["mopd"]
