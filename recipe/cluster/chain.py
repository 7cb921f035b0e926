"""The whole cascade as one Slurm dependency chain (``recipe cluster submit --stage all`` / ``--from`` / ``--until``).

Every stage is rendered now and submitted with ``--dependency=afterok:<previous job>`` (plus the ``singleton`` that
chains a stage's own segments), in plan order. Teacher selection is a job of its own between the teacher stages and
MOPD: MOPD is rendered with a *deferred* teacher map (``gym.deferred_teacher_map``: one link per routing slot under
``<mopd stage>/teachers/``) and the selection job (``recipe cluster select-teachers``, a 1-node CPU job) reads the
finished stages' outputs — their converted checkpoints and the validation scalars NeMo-RL wrote to TensorBoard —
resolves every slot exactly as a direct render would, and points the links at the chosen checkpoints. It fails
(so MOPD never starts) when a slot cannot be resolved.

Dry run (``plan_chain``; the command without ``--submit``): the same renders, each job validated (NeMo-RL's config
rules where the release's configs are available, NeMo-Gym's parser rules always), the teacher-selection job's routing
slots checked, and the exact sbatch lines returned in submission order with ``$JOB_<job>`` for the ids they depend on.

Resume: stages whose manifest says ``done`` (``recipe cluster status`` sets it once the converted checkpoint exists)
are skipped, and the chain starts after the last finished stage of the requested range. ``chain.json`` in the run
directory records what was submitted with which dependency.

Validation tags: NeMo-RL v0.7.0 logs validation metrics with ``logger.log_metrics(val_metrics, step,
prefix="validation")`` (``nemo_rl/algorithms/grpo.py``; also ``sft.py``), i.e. TensorBoard tags
``validation/<metric>``; ``recipe.cluster.status`` reads exactly that prefix. Which per-agent metric names NeMo-Gym
contributes to ``val_metrics`` is not fixed by the logger and is left to ``status``'s matching by agent name.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from recipe.cluster.selection_job import SELECTION_JOB, selection_argv
from recipe.config import STAGE_PLAN
from recipe.runs.layout import RunDir

VALIDATION_TAG_PREFIX = "validation/"   # nemo_rl/algorithms/grpo.py @ v0.7.0: prefix="validation", joined with "/"


def chain_stages(run: RunDir, *, from_stage: Optional[str] = None, until: Optional[str] = None) -> list[str]:
    """Stages to submit: the plan between ``from_stage`` and ``until`` (inclusive), starting after the last one
    already done (resume)."""
    for name, s in (("--from", from_stage), ("--until", until)):
        if s is not None and s not in STAGE_PLAN:
            raise KeyError(f"{name} {s!r}: not a stage of the plan ({', '.join(STAGE_PLAN)})")
    lo = STAGE_PLAN.index(from_stage) if from_stage else 0
    hi = STAGE_PLAN.index(until) if until else len(STAGE_PLAN) - 1
    if lo > hi:
        raise ValueError(f"--from {from_stage} comes after --until {until} in the plan")
    stages = list(STAGE_PLAN[lo:hi + 1])
    done = [i for i, s in enumerate(stages) if run.is_done(s)]
    return stages[done[-1] + 1:] if done else stages


def _job_ids(stdout: str) -> list[str]:
    return [ln.split()[1] for ln in stdout.splitlines() if ln.startswith("submitted ") and len(ln.split()) > 1]


def _sbatch_selection(cfg, run: RunDir, *, dependency: Optional[str], profile: str, project_root: Path,
                      env: dict[str, str], overrides: list[str]) -> str:
    (run.stage_dir("mopd") / "teacher_selection").mkdir(parents=True, exist_ok=True)
    args = selection_argv(cfg, run, dependency=dependency, profile=profile, project_root=project_root,
                          overrides=overrides)
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env, timeout=120)
    return out.stdout.strip().split(";")[0]


def selection_problems(cfg, run: RunDir, chained: list[str]) -> list[str]:
    """Why the teacher-selection job would fail for MOPD's routing, known before anything runs: a ``branch:`` slot
    without ``cluster.branches.<name>``, or a slot naming a stage that is neither done nor chained before MOPD."""
    mopd = cfg.stage("mopd")
    before = STAGE_PLAN[:STAGE_PLAN.index("mopd")]
    out = []
    for domain in mopd.domains:
        slot = mopd.teacher_routing.get(domain)
        if slot is None:
            out.append(f"mopd.teacher_routing has no slot for domain {domain!r}")
            continue
        kind, _, arg = slot.partition(":")
        if kind == "branch":
            if arg not in cfg.cluster.branches:
                out.append(f"routing slot {slot!r} ({domain}): cluster.branches.{arg} is not set (the branch's "
                           f"converted HF checkpoint, e.g. --set cluster.branches.{arg}=<run>/04_rlhf_branch/checkpoint)")
            continue
        for s in ([a.strip() for a in arg.split(",")] if arg else []):
            if s not in before:
                out.append(f"routing slot {slot!r} ({domain}): {s!r} is not a stage before mopd ({', '.join(before)})")
            elif s not in chained and not run.is_done(s):
                out.append(f"routing slot {slot!r} ({domain}): stage {s} is neither done in run {run.run_id} nor "
                           f"chained before mopd")
    return list(dict.fromkeys(out))


@dataclass
class PlannedJob:
    """One job of a chain dry run: what would be submitted, after what, and why it would be refused (if so)."""
    stage: str
    job: str
    dependency: Optional[str]       # e.g. afterok:$JOB_if_rl (a shell variable holding the earlier job's id)
    sbatch: Optional[str]           # the exact sbatch line (None when the job could not be rendered)
    launch: Optional[str] = None    # how the chain runs it: DEPENDENCY=... bash <launch.sh>
    config: Optional[Path] = None
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)   # which rule sets were applied
    segments: str = ""                                  # how many segments, expected wall time
    convert: Optional[str] = None                       # the conversion job's sbatch line (after the last segment)

    @property
    def var(self) -> str:
        return f"JOB_{self.job}"


def _dep_expr(var: Optional[str]) -> Optional[str]:
    return f"afterok:{var}" if var else None


def _after(stage: str, prev: Optional[str], last: dict[str, str], cfg) -> Optional[str]:
    """What a stage's first job waits for: the job before it, except a side branch (``rlhf_branch``) that waits
    only for its input stage (SFT) and the teacher selection, which waits for every chained stage before MOPD."""
    if stage == "rlhf_branch":
        return last.get(cfg.input_stage(stage))
    if stage == SELECTION_JOB:
        ids = [v for s, v in last.items() if s in STAGE_PLAN[:STAGE_PLAN.index("mopd")]]
        return ":".join(dict.fromkeys(ids)) or None
    return prev


def _vars(ids: Optional[str]) -> Optional[str]:
    return ":".join(f"$JOB_{i}" for i in ids.split(":")) if ids else None


def plan_chain(cfg, run: RunDir, *, from_stage: Optional[str] = None, until: Optional[str] = None,
               profile: str = "paper", render_kw: Optional[dict] = None, project_root: Optional[Path] = None,
               overrides: Optional[list[str]] = None, tree=None, gym=None) -> list[PlannedJob]:
    """The dry run of ``submit_chain``: render every job of the range exactly as a submission would (MOPD with
    deferred teachers, the teacher-selection job before it), validate each rendered config, and return the sbatch
    lines in submission order with their dependencies (job ids as ``$JOB_<job>`` shell variables).

    Validation: with a NeMo-RL release tree (``tree``; ``ReleaseTree.find()``) every check of
    ``recipe.cluster.config_checks.check_file`` (keys, inheritance, v0.7.0 config-class types, Gym parser rules); without
    one only the Gym parser rules and NeMo-Gym needs (``gym_problems``) run, and the job says so in ``checked``."""
    from recipe.cluster import provenance
    from recipe.cluster.nrl_yaml import load_yaml
    from recipe.cluster.render import render_stage, require_slurm_target
    from recipe.cluster.sbatch import convert_line, segment_line
    from recipe.cluster.config_checks import check_file, gym_problems, release_keys, release_types

    require_slurm_target(cfg.cluster)
    project_root = project_root or provenance.PROJECT_ROOT
    stages = chain_stages(run, from_stage=from_stage, until=until)
    known = release_keys(tree) if tree is not None else None
    types = release_types(tree) if tree is not None else None
    from recipe.cluster.startup import check_jobs

    out: list[PlannedJob] = []
    prev: Optional[str] = None
    last: dict[str, str] = {}      # stage -> its last job's name ($JOB_<name>)
    for stage in stages:
        if stage == "mopd":
            dep = _dep_expr(_vars(_after(SELECTION_JOB, prev, last, cfg)))
            argv = selection_argv(cfg, run, dependency=dep, profile=profile, project_root=project_root,
                                  overrides=list(overrides or []))
            line = " ".join(a if a.startswith("--dependency=") else shlex.quote(a) for a in argv)
            out.append(PlannedJob("mopd", SELECTION_JOB, dep, line,
                                  problems=selection_problems(cfg, run, stages[:stages.index("mopd")]),
                                  checked=["teacher routing slots"]))
            prev = SELECTION_JOB
        try:
            res = render_stage(cfg, run, stage, defer_teachers=(stage == "mopd"), **(render_kw or {}))
        except (ValueError, KeyError, RuntimeError, FileNotFoundError) as e:
            out.append(PlannedJob(stage, stage, _dep_expr(_vars(_after(stage, prev, last, cfg))), None,
                                  problems=[f"not rendered: {e}"]))
            prev = last[stage] = stage
            continue
        after = _after(stage, prev, last, cfg)
        for job in res.jobs:
            dep = _dep_expr(_vars(after))
            if tree is not None:
                problems = check_file(job.config_path, tree, known=known, types=types, expected=job.overrides,
                                      gym=gym)
                checked = [f"NeMo-RL {tree.root} (keys, inheritance, MasterConfig types)", "NeMo-Gym parser rules"]
            else:
                problems = gym_problems(load_yaml(job.config_path), gym)
                checked = ["NeMo-Gym parser rules"]
            problems += check_jobs([job], gym)
            checked.append("start-up rules of the Gym servers and NeMo-RL entry points")
            line = segment_line(job.sbatch_args, "singleton" + (f",{dep}" if dep else ""), job.log_dir)
            launch = (f"DEPENDENCY={dep} " if dep else "") + f"bash {shlex.quote(str(job.launch_path))}"
            out.append(PlannedJob(stage, job.name, dep, line, launch, job.config_path, problems, checked,
                                  job.segments.describe() if job.segments else "",
                                  convert_line(job.sbatch_args, job.log_dir, str(job.convert_path))))
            prev = last[stage] = after = job.name
    return out


def submit_chain(cfg, run: RunDir, *, from_stage: Optional[str] = None, until: Optional[str] = None,
                 segments: Optional[int] = None, profile: str = "paper", render_kw: Optional[dict] = None,
                 project_root: Optional[Path] = None, overrides: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """Render and submit the stages of the range as one afterok chain; returns (and writes to ``chain.json``) one
    entry per submitted job: stage, job, Slurm ids, dependency."""
    from recipe.cluster import provenance
    from recipe.cluster.render import render_stage, require_slurm_target

    require_slurm_target(cfg.cluster)
    project_root = project_root or provenance.PROJECT_ROOT
    stages = chain_stages(run, from_stage=from_stage, until=until)
    if not stages:
        raise RuntimeError(f"nothing to submit: every stage of the range is done in run {run.run_id}")
    env = {k: v for k, v in os.environ.items() if k not in ("DEPENDENCY",)}
    if segments:   # else each launch script's own count (steps x estimated step time)
        env["SEGMENTS"] = str(segments)
    prev: Optional[str] = None
    last: dict[str, str] = {}      # stage -> its last Slurm job id
    out: list[dict[str, Any]] = []
    for stage in stages:
        if stage == "mopd":
            after = _after(SELECTION_JOB, prev, last, cfg)
            dep = f"afterok:{after}" if after else None
            jid = _sbatch_selection(cfg, run, dependency=dep, profile=profile, project_root=project_root, env=env,
                                    overrides=list(overrides or []))
            out.append({"stage": "mopd", "job": SELECTION_JOB, "job_ids": [jid], "dependency": dep})
            prev = jid
        res = render_stage(cfg, run, stage, defer_teachers=(stage == "mopd"), **(render_kw or {}))
        after = _after(stage, prev, last, cfg)
        for job in res.jobs:
            dep = f"afterok:{after}" if after else None
            jenv = {**env, **({"DEPENDENCY": dep} if dep else {})}
            p = subprocess.run(["bash", str(job.launch_path)], capture_output=True, text=True, env=jenv, timeout=300)
            if p.returncode != 0:
                raise RuntimeError(f"submitting {job.name} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
            ids = _job_ids(p.stdout)
            if not ids:
                raise RuntimeError(f"submitting {job.name}: sbatch printed no job id ({p.stdout.strip()[-300:]})")
            out.append({"stage": stage, "job": job.name, "job_ids": ids, "dependency": dep})
            prev = last[stage] = after = ids[-1]   # the next job waits for this stage's last segment
    record = {"submitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "stages": stages,
              "jobs": out}
    history = json.loads(chain_path(run).read_text()) if chain_path(run).is_file() else []
    run.write_json_atomic(chain_path(run), history + [record])
    return out


def chain_path(run: RunDir) -> Path:
    return run.path / "chain.json"


def select_teachers(cfg, run: RunDir) -> dict[str, Any]:
    """The teacher-selection job: read the finished stages' outputs, resolve MOPD's routing slots, link them.

    Reads every rendered stage's status first (converted checkpoint -> done; TensorBoard ``validation/…`` scalars ->
    validation.json, scores.json, teachers.json, as ``recipe cluster status`` does). ``select:`` slots need each
    candidate stage's selection record: on the cluster the candidates are the stages' converted final checkpoints
    (intermediate NeMo-RL steps are Megatron checkpoints, not HF), scored by their last validation; the interval is a
    normal approximation from the number of validation rows of the domain's agent (NeMo-RL logs means only)."""
    from recipe.cluster import gym
    from recipe.cluster.status import collect
    from recipe.data.gym_envs import agent_for
    from recipe.runs.teachers import record_selection, select_groups, selection_path

    mopd = cfg.stage("mopd")
    for s in STAGE_PLAN[:STAGE_PLAN.index("mopd")]:
        if (run.read_manifest(s) or {}).get("cluster"):
            collect(run, s)
    for slot, domains in select_groups({d: mopd.teacher_routing[d] for d in mopd.domains}).items():
        for s in slot.split(":", 1)[1].split(","):
            s = s.strip()
            if selection_path(run, s).is_file() or not run.is_done(s):
                continue
            scores = run.read_validation(s) or {}
            prov = (run.read_manifest(s) or {}).get("cluster", {}).get("jobs", {})
            val_counts = next(iter(prov.values()), {}).get("data", {}).get("agents", {}).get("validation", {}) if prov else {}
            cand: dict[str, Any] = {}
            for d in domains:
                if d not in scores:
                    continue
                n = int(val_counts.get(agent_for(d), 0)) or 1
                p = float(scores[d])
                half = 1.96 * (max(p * (1 - p), 0.0) / n) ** 0.5
                cand[d] = {"score": p, "ci_low": p - half, "ci_high": p + half, "n": n}
            record_selection(run, s, {"final": {"step": None, "checkpoint": str(run.checkpoint_dir(s)),
                                                "scores": cand}})
    tmap, tprov = gym.teacher_map(run, mopd.teacher_routing, mopd.domains, cfg.cluster.branches)
    teachers_dir = run.stage_dir("mopd") / "teachers"
    teachers_dir.mkdir(parents=True, exist_ok=True)
    links = {}
    for agent, ckpt in tmap.items():
        link = teachers_dir / gym.slot_key(tprov[agent]["slot"])
        tmp = link.with_name(link.name + ".tmp")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(ckpt)
        os.replace(tmp, link)
        links[str(link)] = ckpt
    result = {"selected_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "teachers": tprov,
              "links": links}
    run.write_json_atomic(teachers_dir / "selection.json", result)
    return result
