"""NeMo-Gym's own rules for the ``env.nemo_gym`` block of a rendered job: server references must resolve.

NeMo-RL v0.7.0 hands ``env.nemo_gym`` to Gym as the initial global config (``nemo_rl/environments/nemo_gym.py``:
``RunHelper.start`` with ``initial_global_config_dict``). Gym's ``GlobalConfigDictParser.parse`` (``nemo_gym/
global_config.py`` at the commit v0.7.0 pins, d67ad661) then

1. loads every file of ``config_paths`` (and the ``config_paths`` those files list) and merges them in order,
   the initial dict last (it wins);
2. applies ``_copy`` / ``_inherit_from`` (a mapping with ``_copy: <dotted path>`` becomes a copy of that path with
   its own keys merged on top; ``_inherit_from`` also removes the source);
3. refuses any value still ``???`` (``ConfigMissingValuesError``);
4. takes as *server instances* the top-level mappings with exactly one of ``responses_api_models`` /
   ``resources_servers`` / ``responses_api_agents`` holding exactly one implementation with an ``entrypoint``
   (a resources server also needs a ``domain``); a mapping that looks like a server but fails that is an
   "almost-server" and refused (``AlmostServerError``);
5. for every instance, every direct field of its implementation block shaped ``{type: <server type>, name: <str>}``
   (``model_server``, ``resources_server``, ``judge_model_server``, ``genrm_model_server`` …) must name a defined
   instance of that type, else ``ServerRefNotFoundError``.

This module applies the same rules to our renders without Gym installed. The Gym config files come from a Gym
checkout when one is found (``$RECIPE_NEMO_GYM_DIR``, or the release image's ``/opt/nemo-rl/3rdparty/Gym-workspace/
Gym``; a directory of flattened ``a__b__c.yaml`` copies works too), otherwise from ``PINNED_GYM_CONFIGS``: the
server skeleton (instances, entrypoints, domains, references, mandatory ``???`` fields) of each Gym config file the
recipe and NVIDIA's v0.7.0 Gym examples use, transcribed from Gym d67ad661.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from recipe.cluster.release import CONTAINER_SOURCE_DIR

GYM_COMMIT = "d67ad6611cfe21dbaeb301c59e59df32ce22ec50"   # NeMo-RL v0.7.0: 3rdparty/Gym-workspace/Gym submodule
CONTAINER_GYM_DIR = f"{CONTAINER_SOURCE_DIR}/3rdparty/Gym-workspace/Gym"
SERVER_TYPES = ("responses_api_models", "resources_servers", "responses_api_agents")
MISSING = "???"
# Top-level keys Gym reserves (nemo_gym/global_config.py NEMO_GYM_RESERVED_TOP_LEVEL_KEYS): never server instances.
RESERVED_KEYS = frozenset({
    "config_paths", "entrypoint", "default_host", "head_server", "disallowed_ports", "head_server_deps",
    "python_version", "pip_install_verbose", "use_absolute_ip", "uv_pip_set_python", "skip_venv_if_present",
    "hf_token", "ray_head_node_address", "port_range_low", "port_range_high", "dry_run", "uv_cache_dir",
    "uv_venv_dir", "_inherit_from", "_copy", "nemo_gym_log_dir", "verbose", "json", "query"})


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"type": kind, "name": name}


_POLICY = _ref("responses_api_models", "policy_model")


def _resources(instance: str, impl: str, domain: str, **fields: Any) -> dict[str, Any]:
    return {instance: {"resources_servers": {impl: {"entrypoint": "app.py", "domain": domain, **fields}}}}


def _agent(instance: str, resources: str | None, impl: str = "simple_agent", **fields: Any) -> dict[str, Any]:
    refs = {"resources_server": _ref("resources_servers", resources)} if resources else {}
    return {instance: {"responses_api_agents": {impl: {"entrypoint": "app.py", **refs, "model_server": _POLICY,
                                                       **fields}}}}


def _env(server: str, domain: str, agent: str, **fields: Any) -> dict[str, Any]:
    """The common shape: one resources server and its simple agent on the policy model."""
    return {**_resources(server, server, domain, **fields), **_agent(agent, server)}


# Server skeletons of the Gym config files at d67ad661 (what the parser's reference and '???' rules read).
PINNED_GYM_CONFIGS: dict[str, dict[str, Any]] = {
    "responses_api_models/vllm_model/configs/vllm_model_for_training.yaml": {
        "policy_model": {"responses_api_models": {"vllm_model": {
            "entrypoint": "app.py", "base_url": "${policy_base_url}", "api_key": "${policy_api_key}",
            "model": "${policy_model_name}", "return_token_id_information": True, "uses_reasoning_parser": True}}}},
    "resources_servers/math_with_judge/configs/math_with_judge.yaml":
        _env("math_with_judge", "math", "math_with_judge_simple_agent", judge_model_server=_POLICY),
    "resources_servers/instruction_following/configs/instruction_following.yaml":
        _env("instruction_following", "instruction_following", "instruction_following_simple_agent"),
    "resources_servers/mcqa/configs/mcqa.yaml": _env("mcqa", "knowledge", "mcqa_simple_agent"),
    "resources_servers/workplace_assistant/configs/workplace_assistant.yaml":
        _env("workplace_assistant", "agent", "workplace_assistant_simple_agent"),
    "resources_servers/structured_outputs/configs/structured_outputs_json.yaml":
        _env("structured_outputs", "instruction_following", "structured_outputs_simple_agent"),
    "resources_servers/code_gen/configs/code_gen.yaml": _env("code_gen", "coding", "code_gen_simple_agent"),
    "resources_servers/equivalence_llm_judge/configs/equivalence_llm_judge.yaml":
        _env("equivalence_llm_judge", "knowledge", "equivalence_llm_judge_simple_agent", judge_model_server=_POLICY),
    "resources_servers/swerl_llm_judge/configs/swerl_llm_judge.yaml":
        _env("swerl_llm_judge", "coding", "swerl_llm_judge_simple_agent"),
    "resources_servers/genrm_compare/configs/genrm_compare.yaml": {
        **_resources("genrm_compare_resources_server", "genrm_compare", "rlhf",
                     genrm_model_server=_ref("responses_api_models", "genrm_model")),
        "genrm_model": {"responses_api_models": {"genrm_model": {
            "entrypoint": "app.py", "model": "${genrm_model_name}", "uses_reasoning_parser": False, "hf_home": None,
            "vllm_serve_env_vars": {"VLLM_RAY_DP_PACK_STRATEGY": "strict"},
            "vllm_serve_kwargs": {"data_parallel_size": 2, "data_parallel_size_local": 2, "tensor_parallel_size": 4,
                                  "pipeline_parallel_size": 1, "gpu_memory_utilization": 0.9}}}},
        **_agent("genrm_simple_agent", "genrm_compare_resources_server"),
        "genrm_simple_agent_reasoning_off": {"responses_api_agents": {"simple_agent": {
            "entrypoint": "app.py", "resources_server": _ref("resources_servers", "genrm_compare_resources_server"),
            "model_server": _ref("responses_api_models", "policy_model_reasoning_off")}}},
    },
    "resources_servers/single_step_tool_use_with_argument_comparison/configs/"
    "single_step_tool_use_with_argument_comparison.yaml": {
        **_resources("single_step_tool_use_with_argument_comparison_resources_server",
                     "single_step_tool_use_with_argument_comparison", "agent"),
        **_agent("single_step_tool_use_with_argument_comparison_agent",
                 "single_step_tool_use_with_argument_comparison_resources_server", impl="tool_simulation_agent"),
    },
    "responses_api_agents/swe_agents/configs/swebench_openhands_training.yaml": {
        inst: {"responses_api_agents": {"swe_agents": {"entrypoint": "app.py", "model_server": _POLICY,
                                                       "container_formatter": MISSING, "dataset_path": MISSING}}}
        for inst in ("swe_agents_train", "swe_agents_val")},
}


@dataclass(frozen=True)
class GymConfigs:
    """Where Gym config files are read from: a checkout / flattened copy (``root``), else the pinned skeletons."""

    root: Optional[Path] = None

    @classmethod
    def find(cls, explicit: Path | str | None = None) -> "GymConfigs":
        for cand in (explicit, os.environ.get("RECIPE_NEMO_GYM_DIR"), CONTAINER_GYM_DIR):
            if cand and Path(cand).is_dir():
                return cls(Path(cand))
        return cls(None)

    def file(self, config_path: str) -> Optional[Path]:
        if self.root is None:
            return None
        for p in (self.root / config_path, self.root / config_path.replace("/", "__")):
            if p.is_file():
                return p
        # a flattened directory may prefix the files with their Gym commit's folder name
        return next(iter(sorted(self.root.glob(f"*/{config_path.replace('/', '__')}"))), None)

    def load(self, config_path: str) -> dict[str, Any]:
        """The config file's mapping; KeyError when neither the checkout nor the pinned table has it."""
        f = self.file(config_path)
        if f is not None:
            from recipe.cluster.nrl_yaml import load_yaml

            return load_yaml(f) or {}
        if config_path in PINNED_GYM_CONFIGS:
            return copy.deepcopy(PINNED_GYM_CONFIGS[config_path])
        raise KeyError(config_path)

    def describe(self) -> str:
        return str(self.root) if self.root else f"the recipe's table of Gym {GYM_COMMIT[:8]} server configs"


def deep_merge(base: Any, top: Any) -> Any:
    """OmegaConf.merge for plain data: mappings merge key by key, anything else is replaced by ``top``."""
    if isinstance(base, dict) and isinstance(top, dict):
        out = dict(base)
        for k, v in top.items():
            out[k] = deep_merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(top)


class GymConfigError(ValueError):
    """A rule of Gym's config parser fails; the message names the server, field and missing name."""


def merged_config(nemo_gym: dict[str, Any], configs: GymConfigs) -> dict[str, Any]:
    """Gym's merged global config for an ``env.nemo_gym`` block (steps 1-2 of the module doc)."""
    paths = list(nemo_gym.get("config_paths") or [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise GymConfigError(f"config_paths must be a list of paths, got {paths!r}")
    loaded = []
    for p in paths:   # Gym appends the config_paths a loaded file lists, so the list grows while it is read
        try:
            cfg = configs.load(p)
        except KeyError:
            raise GymConfigError(f"config_paths entry {p!r} is not a config of NeMo-Gym {GYM_COMMIT[:8]} "
                                 f"(looked in {configs.describe()})") from None
        for extra in cfg.get("config_paths") or []:
            if extra not in paths:
                paths.append(extra)
        loaded.append(cfg)
    merged: dict[str, Any] = {}
    for cfg in loaded + [nemo_gym]:
        merged = deep_merge(merged, cfg)
    merged["config_paths"] = paths
    return _swap(merged)


def _lookup(cfg: dict[str, Any], dotted: str) -> Any:
    node: Any = cfg
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise GymConfigError(f"_copy/_inherit_from path {dotted!r} does not exist in the merged config")
        node = node[part]
    return node


def _swap(cfg: dict[str, Any]) -> dict[str, Any]:
    frozen = copy.deepcopy(cfg)

    def walk(node: dict[str, Any]) -> None:
        for k, v in list(node.items()):
            if isinstance(v, dict):
                walk(v)
            if isinstance(v, dict) and ("_copy" in v or "_inherit_from" in v):
                v = dict(v)
                inherit = "_copy" not in v
                src = v.pop("_inherit_from") if inherit else v.pop("_copy")
                node[k] = deep_merge(copy.deepcopy(_lookup(frozen, src)), v)
            elif isinstance(v, str) and (v.startswith("${copy:") or v.startswith("${inherit_from:")):
                inherit = v.startswith("${inherit_from:")
                src = v.split(":", 1)[1].rstrip("}")
                node[k] = copy.deepcopy(_lookup(frozen, src))
            else:
                continue
            if inherit:   # _inherit_from moves the value: its source is removed (a copy keeps it)
                parent, _, leaf = src.rpartition(".")
                holder = _lookup(cfg, parent) if parent else cfg
                if isinstance(holder, dict):
                    holder.pop(leaf, None)

    walk(cfg)
    return cfg


def _missing_paths(node: Any, prefix: str = "") -> list[str]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _missing_paths(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _missing_paths(v, f"{prefix}[{i}]")]
    return [prefix] if node == MISSING else []


def _instance(value: Any) -> tuple[Optional[tuple[str, str, dict]], Optional[str]]:
    """((type, implementation, its block), None) for a server instance; (None, why) for an almost-server;
    (None, None) for anything else."""
    if not isinstance(value, dict):
        return None, None
    kinds = [t for t in SERVER_TYPES if t in value]
    if not kinds:
        return None, None
    looks = any(isinstance(inner, dict) and any(isinstance(c, dict) and "entrypoint" in c for c in inner.values())
                for t in kinds for inner in [value[t]])
    if len(kinds) > 1:
        return None, (f"has more than one server type ({', '.join(kinds)})" if looks else None)
    kind = kinds[0]
    inner = value[kind]
    if not isinstance(inner, dict) or len(inner) != 1:
        return None, (f"{kind} must hold exactly one implementation, has {len(inner) if isinstance(inner, dict) else 0}"
                      if looks else None)
    impl, block = next(iter(inner.items()))
    if not isinstance(block, dict) or not isinstance(block.get("entrypoint"), str):
        return None, None
    if kind == "resources_servers" and not block.get("domain"):
        return None, "a resources server needs a domain"
    return (kind, impl, block), None


def _as_ref(value: Any) -> Optional[tuple[str, str]]:
    if isinstance(value, dict) and value.get("type") in SERVER_TYPES and isinstance(value.get("name"), str):
        return value["type"], value["name"]
    return None


def problems(nemo_gym: dict[str, Any], configs: Optional[GymConfigs] = None) -> list[str]:
    """Every refusal of Gym's parser (steps 1-5 of the module doc) for one ``env.nemo_gym`` block; empty = parses."""
    configs = configs or GymConfigs.find()
    try:
        merged = merged_config(nemo_gym, configs)
    except GymConfigError as e:
        return [str(e)]
    out = [f"{p}: still '???' after Gym merges its configs (ConfigMissingValuesError)"
           for p in _missing_paths(merged)]
    instances: dict[str, tuple[str, str, dict]] = {}
    for name, value in merged.items():
        if name in RESERVED_KEYS:
            continue
        inst, why = _instance(value)
        if inst:
            instances[name] = inst
        elif why:
            out.append(f"'{name}' looks like a server but {why} (AlmostServerError)")
    defined = {(kind, name) for name, (kind, _, _) in instances.items()}
    for name, (_, _, block) in instances.items():
        for field, value in block.items():
            ref = _as_ref(value)
            if ref and ref not in defined:
                same = sorted(n for k, n in defined if k == ref[0])
                out.append(f"In server instance '{name}', field '{field}' references {ref[0]}/'{ref[1]}', which is not "
                           f"defined in the merged config (ServerRefNotFoundError; defined {ref[0]}: "
                           f"{', '.join(same) or 'none'})")
    return out
