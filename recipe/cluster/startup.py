"""Start-up requirements of a rendered job: what the Gym servers and NeMo-RL entry points it runs need when the job
starts, beyond what their config parsers accept. Each rule is read from the pinned sources (NeMo-RL v0.7.0, the
NeMo-Gym commit it pins, d67ad661) and each message names the server (or the launch script), the key and that file.

Gym servers (the merged Gym config of ``env.nemo_gym``, ``gym_refs.merged_config``):

* local vLLM servers (``local_vllm_model`` and ``genrm_model``, whose ``GenRMModel`` extends ``LocalVLLMModel``):
  ``vllm_serve_env_vars`` must hold ``VLLM_RAY_DP_PACK_STRATEGY`` and ``vllm_serve_kwargs`` non-zero
  ``data_parallel_size`` / ``tensor_parallel_size`` / ``pipeline_parallel_size`` (asserted in
  ``_configure_vllm_serve``); ``strict`` / ``fill`` place one replica on one node (``STRICT_PACK``), so a replica of
  more GPUs than a node needs ``span`` (Gym's gpt-oss-120b configs say so); ``hf_home`` is the download directory, and
  unset it is ``<cwd>/.cache/huggingface`` inside the container (a per-node download in every segment), so it must be a
  mounted shared path; ``max_model_len`` and ``gpu_memory_utilization`` bound the judge as NVIDIA's
  ``stage3_rlhf.yaml`` does (60000, 0.85) instead of vLLM's defaults (the model's full context, 0.9).
* ``skip_venv_if_present: true`` (``nemo_gym/global_config.py``): otherwise every server start runs ``uv pip
  install``, which fails on compute nodes without internet; the venvs are prefetched in the image.
* ``swe_agents``: ``use_absolute_ip: true`` (``global_config.py``: servers bind 127.0.0.1 otherwise, and the SWE
  runners are spread over nodes), and the folder of the ``.sif`` images ``container_formatter`` points at
  (``responses_api_agents/swe_agents/app.py`` resolves ``dirname(container_formatter)``) mounted in the container.

NeMo-RL entry points (the launch script): ``HF_HOME`` and ``NRL_MEGATRON_CHECKPOINT_DIR`` exported on a mounted path
(``nemo_rl/models/policy/utils.py``: the HF->Megatron initial checkpoint goes to ``$NRL_MEGATRON_CHECKPOINT_DIR``,
else ``$HF_HOME/nemo_rl``, else ``~/.cache``, which ``ray.sub``'s ``--no-container-mount-home`` makes per node); and
every file path the entry point opens (input model, data, checkpoint and log dirs, chat template, teachers) under a
mount, since ``ray.sub`` runs the command in the container with ``MOUNTS`` only.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from recipe.cluster import gym_refs

GYM = f"NeMo-Gym {gym_refs.GYM_COMMIT[:8]}"
LOCAL_VLLM_SRC = f"{GYM} responses_api_models/local_vllm_model/app.py"
GLOBAL_CONFIG_SRC = f"{GYM} nemo_gym/global_config.py"
SWE_AGENTS_SRC = f"{GYM} responses_api_agents/swe_agents/app.py"
STAGE3_RLHF_SRC = "NeMo-RL v0.7.0 examples/nemo_gym/nemotron-3-super/stage3_rlhf.yaml"
POLICY_UTILS_SRC = "NeMo-RL v0.7.0 nemo_rl/models/policy/utils.py (ray.sub runs --no-container-mount-home)"
LOCAL_VLLM_IMPLS = ("local_vllm_model", "genrm_model")   # genrm_model/app.py: GenRMModel(..., LocalVLLMModel)
PARALLEL_KEYS = ("data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size")
JUDGE_BOUNDS = ("max_model_len", "gpu_memory_utilization")
LAUNCH_ENV = ("HF_HOME", "NRL_MEGATRON_CHECKPOINT_DIR")


@dataclass
class LaunchFacts:
    """What a rendered ``launch.sh`` gives the container: exported variables and mount destinations."""

    env: dict[str, str] = field(default_factory=dict)
    mounts: list[str] = field(default_factory=list)   # container-side paths

    def mounted(self, path: Optional[str]) -> bool:
        if not path or not os.path.isabs(path):
            return False
        p = os.path.normpath(path)
        return any(p == m or p.startswith(m.rstrip("/") + "/") for m in self.mounts)


def launch_facts(text: str) -> LaunchFacts:
    """Read ``export K=V`` lines of a launch script (shell quoting undone); ``MOUNTS`` becomes the destinations."""
    out = LaunchFacts()
    for line in text.splitlines():
        if not line.startswith("export ") or "=" not in line:
            continue
        key, _, raw = line[len("export "):].partition("=")
        try:
            value = "".join(shlex.split(raw))
        except ValueError:
            continue
        if key == "MOUNTS":
            for m in value.split(","):
                parts = m.split(":")
                dst = parts[1] if len(parts) > 1 else parts[0]
                if dst and not dst.startswith("$"):
                    out.mounts.append(os.path.normpath(dst))
        else:
            out.env[key] = value
    return out


def _impl(value: Any) -> tuple[Optional[str], dict]:
    models = value.get("responses_api_models") if isinstance(value, dict) else None
    if isinstance(models, dict) and len(models) == 1:
        name, block = next(iter(models.items()))
        return name, block if isinstance(block, dict) else {}
    return None, {}


def vllm_server_problems(merged: dict[str, Any], launch: Optional[LaunchFacts],
                         gpus_per_node: int = 8) -> list[str]:
    """Rules of Gym's local vLLM servers (module doc) for every such server of a merged Gym config."""
    out: list[str] = []
    for inst, value in merged.items():
        impl, block = _impl(value)
        if impl not in LOCAL_VLLM_IMPLS:
            continue
        where = f"Gym server {inst} ({impl})"
        env = block.get("vllm_serve_env_vars") or {}
        kw = block.get("vllm_serve_kwargs") or {}
        strategy = env.get("VLLM_RAY_DP_PACK_STRATEGY") if isinstance(env, dict) else None
        if strategy is None:
            out.append(f"{where}: vllm_serve_env_vars.VLLM_RAY_DP_PACK_STRATEGY is not set; Gym asserts it before "
                       f"serving ({LOCAL_VLLM_SRC}). Set strict (a replica within one node) or span")
        for k in PARALLEL_KEYS:
            if not kw.get(k):
                out.append(f"{where}: vllm_serve_kwargs.{k} is not set; Gym asserts it ({LOCAL_VLLM_SRC})")
        replica = (kw.get("tensor_parallel_size") or 1) * (kw.get("pipeline_parallel_size") or 1)
        if strategy in ("strict", "fill") and replica > gpus_per_node:
            out.append(f"{where}: vllm_serve_env_vars.VLLM_RAY_DP_PACK_STRATEGY={strategy} packs a replica on one "
                       f"node but TP*PP = {replica} GPUs > {gpus_per_node}; use span ({LOCAL_VLLM_SRC})")
        hf_home = block.get("hf_home")
        if not hf_home:
            out.append(f"{where}: hf_home is not set, so the weights go to <cwd>/.cache/huggingface inside the "
                       f"container, downloaded again on every node and segment ({LOCAL_VLLM_SRC}); set it to the "
                       f"shared cache (cluster.hf_home)")
        elif launch is not None and not launch.mounted(hf_home):
            out.append(f"{where}: hf_home {hf_home} is not under a mount of the launch script ({LOCAL_VLLM_SRC})")
        for k in JUDGE_BOUNDS:
            if kw.get(k) is None:
                out.append(f"{where}: vllm_serve_kwargs.{k} is not set (vLLM's default takes the model's full "
                           f"context / 0.9 of memory; {STAGE3_RLHF_SRC} sets 60000 and 0.85)")
    return out


def gym_startup_problems(nemo_gym: dict[str, Any], configs: Optional[gym_refs.GymConfigs] = None,
                         launch: Optional[LaunchFacts] = None, gpus_per_node: int = 8) -> list[str]:
    """Every Gym start-up rule of the module doc for one ``env.nemo_gym`` block; empty = it starts."""
    if not isinstance(nemo_gym, dict) or not nemo_gym.get("config_paths"):
        return []
    try:
        merged = gym_refs.merged_config(nemo_gym, configs or gym_refs.GymConfigs.find())
    except gym_refs.GymConfigError:
        return []   # reported by the parser rules (validate.gym_problems)
    out = vllm_server_problems(merged, launch, gpus_per_node)
    if merged.get("skip_venv_if_present") is not True:
        out.append(f"env.nemo_gym.skip_venv_if_present is not true: every server start runs `uv pip install`, which "
                   f"fails on compute nodes without internet ({GLOBAL_CONFIG_SRC}; NVIDIA's {STAGE3_RLHF_SRC} sets it)")
    swe = {inst: block for inst, v in merged.items() if isinstance(v, dict)
           for impl, block in (v.get("responses_api_agents") or {}).items() if impl == "swe_agents"}
    if swe and merged.get("use_absolute_ip") is not True:
        out.append(f"env.nemo_gym.use_absolute_ip is not true: Gym servers bind 127.0.0.1 and swe_agents' runners on "
                   f"other nodes cannot reach them ({GLOBAL_CONFIG_SRC})")
    for inst, block in swe.items():
        fmt = block.get("container_formatter") if isinstance(block, dict) else None
        if not isinstance(fmt, str) or fmt == gym_refs.MISSING:
            continue   # the parser rules report it
        folder = os.path.dirname(fmt.replace("{instance_id}", "dummy"))
        if not os.path.isabs(folder):
            out.append(f"Gym server {inst} (swe_agents): container_formatter {fmt!r} is not a path of .sif images "
                       f"({SWE_AGENTS_SRC} looks up <dirname>/<instance>.sif)")
        elif launch is not None and not launch.mounted(folder):
            out.append(f"Gym server {inst} (swe_agents): the .sif folder {folder} of container_formatter is not "
                       f"mounted by the launch script ({SWE_AGENTS_SRC})")
    return out


def launch_problems(launch: LaunchFacts) -> list[str]:
    """NeMo-RL entry-point rules of the launch script (module doc)."""
    out = []
    for k in LAUNCH_ENV:
        v = launch.env.get(k)
        if not v:
            out.append(f"launch.sh: {k} is not exported; the HF->Megatron initial checkpoint then lands in "
                       f"~/.cache per node ({POLICY_UTILS_SRC}); set cluster.hf_home")
        elif not launch.mounted(v):
            out.append(f"launch.sh: {k}={v} is not under a mount, so the nodes do not share it ({POLICY_UTILS_SRC})")
    return out


# Keys of the rendered NeMo-RL YAML whose value is a path the entry point opens inside the container.
PATH_KEYS = ("policy.model_name", "policy.tokenizer.chat_template", "checkpointing.checkpoint_dir", "logger.log_dir",
             "data.train.data_path", "data.validation.data_path")
RAY_SUB_SRC = "NeMo-RL v0.7.0 ray.sub (the command runs in the container with MOUNTS only)"


def path_problems(config: dict[str, Any], launch: LaunchFacts) -> list[str]:
    """Absolute paths of the NeMo-RL config that no mount of the launch script covers."""
    from recipe.cluster.nrl_yaml import flatten_keys

    flat = flatten_keys(config)
    keys = [k for k in flat if k in PATH_KEYS or k.startswith("on_policy_distillation.teacher_model_by_agent_name.")]
    return [f"{k}: {flat[k]} is not under a mount of the launch script ({RAY_SUB_SRC})" for k in keys
            if isinstance(flat[k], str) and flat[k].startswith("/") and not launch.mounted(flat[k])]


def job_problems(config: dict[str, Any], launch_text: str, configs: Optional[gym_refs.GymConfigs] = None,
                 gpus_per_node: int = 8) -> list[str]:
    """All start-up problems of one rendered job (its NeMo-RL YAML as loaded, its launch script's text)."""
    launch = launch_facts(launch_text)
    ng = ((config.get("env") or {}).get("nemo_gym") or {}) if isinstance(config, dict) else {}
    return (launch_problems(launch) + path_problems(config, launch)
            + gym_startup_problems(ng, configs, launch, gpus_per_node))


def check_jobs(jobs, configs: Optional[gym_refs.GymConfigs] = None) -> list[str]:
    """``job_problems`` for rendered jobs (``RenderResult.jobs``), each prefixed with the job name."""
    from recipe.cluster.nrl_yaml import load_yaml

    out = []
    for job in jobs:
        gpn = int(next((a.split("gpu:")[1] for a in job.sbatch_args if a.startswith("--gres=gpu:")), 8))
        out += [f"{job.name}: {p}" for p in job_problems(load_yaml(Path(job.config_path)),
                                                         Path(job.launch_path).read_text(), configs, gpn)]
    return out
