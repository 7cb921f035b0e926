"""Render one cascade stage (or the whole cascade) as NeMo-RL jobs into the run layout. A dry run: nothing is
submitted here (``recipe cluster submit --submit`` does that).

For stage S of run R, ``render_stage`` writes into ``runs/R/<NN>_S/cluster/`` (or ``--out``):

* ``<job>.yaml``   NeMo-RL config: ``defaults:`` the release's base config inside the container
                   (``/opt/nemo-rl/examples/...``) plus only our overrides — every hyperparameter from the profile
                   through ``keymap``, resources from ``cluster.stages``, Gym environments and data paths from
                   ``gym``, checkpoint dir from ``resume``, ``checkpoint_must_save_by`` = time limit − margin;
                   stage N+1's ``policy.model_name`` is stage N's converted HF checkpoint (``<NN>_<prev>/checkpoint``).
* ``<job>.launch.sh``  sbatch around ``ray.sub`` (``sbatch``); ``<job>.convert.sh``  post-stage HF conversion.
* ``code/``        the code snapshot the job runs (fingerprint check + lock); ``provenance.json``.

``swe_rl`` renders two jobs, ``agentless`` then ``agentic`` (RECIPE.md §4.1 7a/7b); the agentless result is
converted into ``<NN>_swe_rl/agentless_checkpoint`` and is the agentic job's input. The stage's
``manifest.json`` (status ``pending``, backend ``cluster``) and ``run.json`` (``cluster`` provenance, container
digest) are updated; a stage whose manifest says ``done`` is refused.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from recipe.cluster import config_checks, gym, keymap, provenance, sbatch
from recipe.cluster.lock import read_lock, require_pinned
from recipe.cluster.nrl_yaml import dump_yaml
from recipe.cluster.release import BASE_CONFIGS, CONTAINER_SOURCE_DIR, ENTRY_POINTS, RELEASE_TAG, stage_kind
from recipe.cluster.resume import plan_resume
from recipe.cluster.segments import plan_segments
from recipe.config.cluster_section import parse_slurm_time
from recipe.config.schema import STAGE_PLAN
from recipe.data.gym_envs import agent_for
from recipe.runs.layout import RunDir, write_text_atomic


@dataclass
class JobRender:
    name: str                   # "if_rl" or "swe_rl_agentless"
    kind: str                   # sft | grpo | mopd
    config_path: Path
    launch_path: Path
    convert_path: Path
    overrides: dict[str, Any]   # flat dotted NeMo-RL key -> value we set
    checkpoint_dir: Path        # NeMo-RL step_N dir root
    hf_out: Path                # converted HF checkpoint
    input_model: str
    resume_step: Optional[int]
    base_config: str            # release path of the defaults parent
    sbatch_args: list[str] = field(default_factory=list)   # fixed sbatch options of a segment (launch.sh)
    log_dir: str = ""                                      # the segment's Slurm log dir (BASE_LOG_DIR)
    segments: Any = None                                   # recipe.cluster.segments.SegmentPlan


@dataclass
class RenderResult:
    run_id: str
    stage: str
    out_dir: Path
    jobs: list[JobRender]
    provenance_path: Path
    warnings: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        out = [self.provenance_path]
        for j in self.jobs:
            out += [j.config_path, j.launch_path, j.convert_path]
        return out


def must_save_by(time_limit: str, margin_min: int) -> str:
    """NeMo-RL ``checkpoint_must_save_by`` (``DD:HH:MM:SS``) = Slurm limit − margin (4 h − 20 min = 00:03:40:00)."""
    s = parse_slurm_time(time_limit) - margin_min * 60
    if s <= 0:
        raise ValueError(f"checkpoint margin {margin_min} min does not fit in time limit {time_limit}")
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d:02d}:{h:02d}:{m:02d}:{s:02d}"


def megatron_cache(hf_home: str) -> str:
    """NeMo-RL's HF->Megatron conversion cache on the shared HF cache (its own default, ``$HF_HOME/nemo_rl``)."""
    return f"{hf_home.rstrip('/')}/nemo_rl"


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError(f"key {key}: {p} is already a scalar")
        node[parts[-1]] = value
    return out


def _jobs_of(cfg, stage: str) -> list[tuple[str, Any, str]]:
    """(job name, stage section, resources key) for a stage."""
    if stage == "swe_rl":
        return [("swe_rl_agentless", cfg.swe_rl.agentless, "swe_rl_agentless"),
                ("swe_rl_agentic", cfg.swe_rl.agentic, "swe_rl_agentic")]
    return [(stage, cfg.stage(stage), stage)]


def previous_output(run: RunDir, stage: str, cfg=None) -> Path:
    """The converted HF checkpoint the stage starts from: its input stage (``<stage>.init_from``, default the stage
    before it in the plan; rlhf_branch starts from sft, mopd from multi_domain_rl)."""
    if cfg is not None:
        return run.checkpoint_dir(cfg.input_stage(stage))
    i = STAGE_PLAN.index(stage)
    return run.checkpoint_dir(STAGE_PLAN[i - 1])


def require_slurm_target(cl) -> None:
    missing = [k for k in ("account", "partition") if not getattr(cl, k)]
    if missing:
        raise ValueError(f"cluster.{' and cluster.'.join(missing)} not set: Slurm jobs need them (no placeholder is "
                         f"written). Pass e.g. --set cluster.account=<acct> --set cluster.partition=<part>, or set "
                         f"them in a site profile")
    if not cl.hf_home or not str(cl.hf_home).startswith("/"):
        raise ValueError("cluster.hf_home is not set to an absolute path: every node must share one HF cache (model "
                         "and judge weights, NeMo-RL's HF->Megatron checkpoint; ray.sub mounts no home directory). "
                         "Pass --set cluster.hf_home=/<shared fs>/hf_home, or set it in a site profile")


def render_stage(cfg, run: RunDir, stage: str, *, out: Optional[Path] = None, allow_unpinned: bool = False,
                 allow_dirty: bool = False, project_root: Path = provenance.PROJECT_ROOT,
                 apply_resume: bool = True, input_model: Optional[str] = None,
                 defer_teachers: bool = False) -> RenderResult:
    """Render ``stage`` of ``run``. ``input_model`` replaces the chained input (previous stage's converted
    checkpoint, or the base model for SFT), e.g. for the MOPD RLHF-teacher branch trained from SFT."""
    if stage not in STAGE_PLAN:
        raise KeyError(f"unknown stage {stage!r}; the plan is {', '.join(STAGE_PLAN)}")
    manifest = run.read_manifest(stage) or {}
    if manifest.get("status") == "done":
        raise RuntimeError(f"{run.manifest_path(stage)} says {stage} is done; render into a new run id instead of "
                           f"overwriting a finished stage")
    cl = cfg.cluster
    require_slurm_target(cl)
    lock_path = project_root / cl.container.lock_file
    lock = read_lock(lock_path)
    warnings = require_pinned(lock, lock_path, allow_unpinned=allow_unpinned)
    git = provenance.git_state(project_root)
    warnings += provenance.check_clean(git, allow_dirty=allow_dirty, root=project_root)

    stage_dir = run.stage_dir(stage)
    out_dir = Path(out).resolve() if out else stage_dir / "cluster"
    out_dir.mkdir(parents=True, exist_ok=True)
    snapshot = provenance.snapshot_code(out_dir / "code", state=git, root=project_root)
    snap_lock = snapshot / cl.container.lock_file
    if not snap_lock.is_file():  # the lock must travel with the snapshot (it is what the job checks against)
        snap_lock.parent.mkdir(parents=True, exist_ok=True)
        snap_lock.write_text(lock_path.read_text())
    container = cl.container.sqsh or lock.pyxis_ref  # a .sqsh built from the locked digest (containers/README.md)

    data_root = Path(cl.data_root) if cl.data_root else run.path / "nemo_rl_data"
    mounts = [f"{run.path.parent}:{run.path.parent}", *cl.mounts]
    if cl.data_root:
        mounts.append(f"{cl.data_root}:{cl.data_root}")
    mounts.append(f"{cl.hf_home}:{cl.hf_home}")
    if stage == "swe_rl" and cl.swe_container_formatter:   # Gym's swe_agents reads <folder>/<instance>.sif
        sif_dir = str(Path(cl.swe_container_formatter.replace("{instance_id}", "x")).parent)
        if sif_dir.startswith("/"):
            mounts.append(f"{sif_dir}:{sif_dir}")
    if not str(out_dir).startswith(str(run.path.parent) + "/"):
        mounts.append(f"{out_dir}:{out_dir}")

    jobs: list[JobRender] = []
    job_prov: dict[str, Any] = {}
    chained = cfg.model.name if stage == "sft" else str(previous_output(run, stage, cfg))
    input_revision = cfg.model.revision if (stage == "sft" and input_model is None) else None
    input_model = input_model or chained
    for job_name, section, res_key in _jobs_of(cfg, stage):
        judges: dict[str, Any] = {}
        n_judge_nodes = 0
        template_prov: Optional[dict[str, Any]] = None
        kind = stage_kind(stage, getattr(section, "advantage_estimator", None))
        res = cl.resources(res_key)
        phase = job_name.removeprefix(f"{stage}_") if job_name != stage else None
        nemo_dir = stage_dir / "nemo_rl" / (phase or "")
        plan = plan_resume(nemo_dir, cl.resume, apply=apply_resume)
        hf_out = (stage_dir / f"{phase}_checkpoint") if phase == "agentless" else run.checkpoint_dir(stage)
        time_limit = res.time_limit or cl.time_limit
        flat: dict[str, Any] = {}
        flat.update(keymap.stage_values(section, kind))
        flat.update(keymap.resource_overrides(res, kind))
        flat.update({
            "policy.model_name": input_model,
            "checkpointing.enabled": True,
            "checkpointing.checkpoint_dir": str(plan.checkpoint_dir),
            "checkpointing.checkpoint_must_save_by": must_save_by(time_limit, cl.checkpoint_must_save_by_margin_min),
            "checkpointing.save_optimizer": True,   # resume continues warm-up/schedule (NEMO_RL.md §7)
            "logger.log_dir": str(nemo_dir / "logs"),
            "logger.tensorboard_enabled": True,     # `recipe cluster status` reads the TensorBoard scalars
            "logger.wandb_enabled": False,
        })
        data_dir = data_root / stage / (phase or "")
        dpaths = gym.data_paths(data_dir)
        nested = nest(flat)
        deviations: list[str] = []
        agent_counts: dict[str, dict[str, int]] = {}
        if kind == "sft":
            # sft.yaml's own chat_template is a SQuAD prompt; NeMo-RL loads a *.jinja path from file, so the
            # Nemotron-Cascade 2 template is written beside the YAML and referenced: at paper scale the released
            # tokenizer's own (recipe.cluster.released_chat_template), in the tiny profile recipe.model.chat_template.
            # RL stages inherit it from the converted checkpoint's tokenizer.
            if cl.chat_template == "released":   # paper scale: the released tokenizer's template (pinned download)
                from recipe.cluster.released_chat_template import released_template

                template_text, template_prov = released_template(cfg, project_root)
            else:
                from recipe.model.chat_template import CHAT_TEMPLATE

                template_text = CHAT_TEMPLATE
                template_prov = {"source": "recipe.model.chat_template"}
            template_path = out_dir / "chat_template.jinja"
            write_text_atomic(template_path, template_text.strip() + "\n")
            flat["policy.tokenizer.chat_template"] = str(template_path)
            nested = nest(flat)
            # v0.7.0 honours _override_ on top-level keys only (nemo_rl/utils/config.py), so the whole data block
            # replaces sft.yaml's (SQuAD) block; its other keys are restated with sft.yaml's values.
            split_block = {"dataset_name": "openai_format", "chat_key": "messages", "tool_key": "tools",
                           "use_preserving_dataset": True}
            nested["data"] = {
                "_override_": True,
                "max_input_seq_length": flat["policy.max_total_sequence_length"], "shuffle": True, "num_workers": 1,
                "add_bos": True, "add_eos": True, "add_generation_prompt": False,
                "default": {"processor": "sft_processor", "prompt_file": None, "system_prompt_file": None},
                "train": {**split_block, "data_path": dpaths["train"]},
                "validation": {**split_block, "data_path": dpaths["validation"]},
                **{k: v for k, v in nested.get("data", {}).items()},
            }
        else:
            mopd = kind == "mopd"
            nested.setdefault("data", {}).update({"train": {"data_path": dpaths["train"]},
                                                  "validation": {"data_path": dpaths["validation"]}})
            nested["env"] = gym.gym_overrides(section.domains, mopd=mopd, phase=phase)
            judge_names = gym.judges_for(section.domains, phase)
            missing_j = [j for j in judge_names if j not in cl.judges]
            if missing_j:
                raise ValueError(f"{job_name} needs judge(s) {missing_j}: add cluster.judges.<name> (model, nodes, "
                                 f"tensor, data_parallel) to profiles/<profile>/cluster.yaml")
            judges = {j: cl.judges[j] for j in judge_names}
            nested["env"]["nemo_gym"].update(gym.judge_blocks(
                judges, policy_model=input_model, section=section, hf_home=cl.hf_home,
                generations_per_prompt=getattr(section, "generations_per_prompt", None)))
            n_judge_nodes = sum(j.nodes for j in judges.values())
            if phase == "agentic":
                nested["env"]["nemo_gym"].update(gym.swe_agent_blocks(cl.swe_container_formatter, dpaths))
            for p in gym.unverified(section.domains if not mopd else [], phase):
                deviations.append(f"Gym server config {p} is NEMO_RL.md §3.1's [inferred] choice, not in NVIDIA's "
                                  f"v0.7.0 configs")
            if getattr(section, "prompt_mask_max_reward", None) is not None:
                deviations.append(f"prompt_mask_max_reward={section.prompt_mask_max_reward}: NeMo-RL v0.7.0 has no "
                                  f"prompt-level max-reward loss mask; it must be applied Gym-side (not rendered)")
            expected_agents = {agent_for(d, mopd=mopd, phase=phase) for d in section.domains}
            strict = not gym.unverified(section.domains, phase)
            for split in ("train", "validation"):
                if Path(dpaths[split]).is_file():
                    agent_counts[split], row_warn = gym.check_rows(Path(dpaths[split]), expected_agents, strict=strict)
                    deviations += row_warn
                else:
                    deviations.append(f"{dpaths[split]} does not exist yet: its agent_ref names were not checked")
            if mopd:
                if defer_teachers:  # chained submission: the teacher-selection job fills these links
                    tmap, tprov = gym.deferred_teacher_map(stage_dir / "teachers", section.teacher_routing,
                                                           section.domains)
                else:
                    tmap, tprov = gym.teacher_map(run, section.teacher_routing, section.domains, cl.branches)
                opd = nested.setdefault("on_policy_distillation", {})
                opd["teacher_model_by_agent_name"] = tmap
                opd["default_teacher_alias"] = agent_for(section.domains[0], mopd=True)
                job_prov["teachers"] = tprov
        # MOPD: `nodes` counts policy + generation nodes; NeMo-RL carves the teachers out of cluster.num_nodes, so
        # one teacher node group per distinct teacher checkpoint is added (paper: 13 + 3 = 16, NEMO_RL.md §5).
        n_teacher_nodes = 0
        if kind == "mopd":
            n_teacher_nodes = len(set(nested["on_policy_distillation"]["teacher_model_by_agent_name"].values())) \
                * res.teachers.nodes_per_teacher
            nested["cluster"]["num_nodes"] = flat["cluster.num_nodes"] = res.nodes + n_teacher_nodes
        total_nodes = res.nodes + n_teacher_nodes + n_judge_nodes
        shape = config_checks.shape_problems(flat, res, policy_nodes=res.nodes - (res.generation_nodes or 0))
        if shape:
            raise ValueError(f"cluster.stages.{res_key}: " + "; ".join(shape))
        base = BASE_CONFIGS[kind]  # type: ignore[index]
        header = [f"NeMo-RL {RELEASE_TAG} config for run {run.run_id}, {job_name} ({kind}); rendered by "
                  f"`recipe cluster render` — do not edit, re-render.",
                  f"Inherits {base} from the pinned image; keys below are the recipe's overrides."]
        header += [f"WARNING: {w}" for w in warnings] + [f"DEVIATION: {d}" for d in deviations]
        text = "".join(f"# {h}\n" for h in header) + dump_yaml({"defaults": f"{CONTAINER_SOURCE_DIR}/{base}", **nested})
        cfg_path = out_dir / f"{job_name}.yaml"
        write_text_atomic(cfg_path, text)

        convert_path = out_dir / f"{job_name}.convert.sh"
        steps = getattr(section, "steps", None)
        seg = plan_segments(steps, res.step_time_s, time_limit, cl.checkpoint_must_save_by_margin_min,
                            cl.segment_startup_s)
        write_text_atomic(convert_path, sbatch.convert_script(
            checkpoint_dir=str(plan.checkpoint_dir), hf_out=str(hf_out), input_model=input_model,
            input_revision=input_revision, max_steps=steps))
        # NeMo-RL writes the HF->Megatron initial checkpoint to $NRL_MEGATRON_CHECKPOINT_DIR (policy/utils.py)
        env = {"HF_HOME": cl.hf_home, "NRL_MEGATRON_CHECKPOINT_DIR": megatron_cache(cl.hf_home)}
        spec = sbatch.LaunchSpec(
            job_name=f"recipe-{run.run_id}-{job_name}", nodes=total_nodes, gpus_per_node=res.gpus_per_node,
            time_limit=time_limit, account=cl.account, partition=cl.partition, container=container,
            mounts=mounts, snapshot_dir=str(snapshot), lock_file=str(snap_lock), entry_point=ENTRY_POINTS[kind],  # type: ignore[index]
            config_path=str(cfg_path), log_dir=str(nemo_dir / "slurm_logs"), convert_script=str(convert_path),
            env=env, warnings=warnings, allow_unpinned=allow_unpinned,
            requires_env=["HF_TOKEN"] if kind == "sft" else [], segments=seg.segments)
        launch_path = out_dir / f"{job_name}.launch.sh"
        write_text_atomic(launch_path, sbatch.launch_script(spec))
        launch_path.chmod(0o755)
        convert_path.chmod(0o755)
        jobs.append(JobRender(job_name, kind, cfg_path, launch_path, convert_path, flat, plan.checkpoint_dir,
                              hf_out, input_model, plan.resume_step, base, sbatch.segment_args(spec), spec.log_dir, seg))
        job_prov[job_name] = {
            "kind": kind, "config": str(cfg_path), "config_sha256": provenance.sha256_text(text),
            "base_config": base, "entry_point": ENTRY_POINTS[kind],  # type: ignore[index]
            "input_model": input_model, "input_revision": input_revision,
            "checkpoint_dir": str(plan.checkpoint_dir), "log_dir": str(nemo_dir / "logs"), "max_steps": steps,
            "domains": list(getattr(section, "domains", []) or []), "resume": {"policy": cl.resume, "step": plan.resume_step,
                                                                   "moved_aside": plan.moved_aside},
            "hf_checkpoint": str(hf_out), "data": {**provenance.data_revisions(data_dir), "agents": agent_counts},
            "deviations": deviations,
            "nodes": total_nodes, "teacher_nodes": n_teacher_nodes, "judge_nodes": n_judge_nodes,
            "judges": {k: v.model_dump() for k, v in judges.items()}, "chat_template": template_prov, "gpus_per_node": res.gpus_per_node, "time_limit": time_limit, "segments": seg.segments,
        }
        input_model, input_revision = str(hf_out), None  # SWE agentic continues from agentless

    from recipe.config import config_hash
    prov = {
        "rendered_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run_id": run.run_id, "stage": stage, "profile": cfg.profile,
        "git_commit": git["commit"], "git_dirty": git["dirty"], "allow_dirty": allow_dirty,
        "image": lock.image, "image_tag": lock.tag, "image_digest": lock.digest, "allow_unpinned": allow_unpinned,
        "nemo_rl": lock.nemo_rl.model_dump(), "container_fingerprint": lock.container_fingerprint,
        "released_model": lock.released_model.model_dump() if lock.released_model else None,
        "resolved_config_sha256": config_hash(cfg), "code_snapshot": str(snapshot),
        "warnings": warnings, "jobs": job_prov,
    }
    prov_path = out_dir / "provenance.json"
    run.write_json_atomic(prov_path, prov)
    manifest.update({"stage": stage, "status": manifest.get("status", "pending") if manifest.get("status") in
                     ("running",) else "pending", "backend": "cluster", "cluster": prov})
    run.write_manifest(stage, manifest)
    run_json = json.loads(run.run_json_path.read_text()) if run.run_json_path.exists() else {}
    cluster_runs = dict(run_json.get("cluster") or {})
    cluster_runs[stage] = {k: prov[k] for k in ("rendered_at", "git_commit", "git_dirty", "image_digest",
                                                 "allow_unpinned", "resolved_config_sha256")}
    cluster_runs[stage]["jobs"] = {j: {"config_sha256": v["config_sha256"], "data": v["data"]}
                                   for j, v in job_prov.items() if j != "teachers"}
    run.update_run_json(cluster=cluster_runs, container_digest=lock.digest,
                        container_image=lock.image_ref, git_commit=run_json.get("git_commit") or git["commit"])
    return RenderResult(run.run_id, stage, out_dir, jobs, prov_path, warnings)


def render_cascade(cfg, run: RunDir, *, stages: Optional[list[str]] = None, **kw) -> list[RenderResult]:
    """Render every stage of the plan in order (MOPD needs the run's teachers.json)."""
    return [render_stage(cfg, run, s, **kw) for s in (stages or list(STAGE_PLAN))]
