"""Stage -> NeMo-Gym wiring: environments, agent names, data paths, and the MOPD teacher map.

NeMo-RL routes each JSONL row by ``row["agent_ref"]["name"]`` and starts the Gym servers listed in
``env.nemo_gym.config_paths``, which must begin with the ``*_for_training`` vLLM model config (NEMO_RL.md §4).
The environment and agent of each domain are ``recipe.data.gym_envs`` (curation writes the same agent names).

MOPD (RECIPE.md §6): one teacher per example, chosen by the row's agent. ``teacher_map`` turns the run's
``teachers.json`` (``{domain: {"stage", "checkpoint", "score"}}``) and ``mopd.teacher_routing`` into
``on_policy_distillation.teacher_model_by_agent_name``. Every MOPD row is routed through an agent the pinned Gym
really defines: RLHF prompts go to ``genrm_simple_agent`` (``genrm_compare.yaml``), whose agent name maps to the RLHF
teacher. The replication's ``rlhf_opd_simple_agent`` relied on ``skip_verification``, which exists only on a Gym
branch, not at the commit v0.7.0 pins: Gym ignores the unknown key, so those rows would fall through to
``math_with_judge`` and be rejected. The GenRM is therefore served in MOPD too (its reward is
computed and unused by the ``opd`` advantage).

Judges (RECIPE.md §4: the GenRM for RLHF, Qwen3-235B-A22B-Thinking-2507 trained on HelpSteer3 (paper §4.5), served as
the checkpoint NVIDIA's stage3_rlhf.yaml names; Qwen3-235B-A22B-Instruct-2507 for long context) are configured models
(``cluster.judges``) served by Gym on its own GPU nodes (``env.nemo_gym.num_gpu_nodes``, as NVIDIA's
``nemotron-3-super/stage3_rlhf.yaml`` does), never the policy. Agentless SWE serves no judge: its resources server
(``swerl_llm_judge`` at the pinned Gym) scores the ``<solution>`` letter and calls no model. Every judge is started
the way ``recipe.cluster.startup`` checks: ``VLLM_RAY_DP_PACK_STRATEGY``, bounded context and memory, weights in the
shared cache.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe.data.gym_envs import DOMAIN_GYM, PHASE_GYM, agent_for, env_table, envs_for

VLLM_FOR_TRAINING = "responses_api_models/vllm_model/configs/vllm_model_for_training.yaml"
GENRM_CONFIG = "resources_servers/genrm_compare/configs/genrm_compare.yaml"

# Which configured judge (cluster.judges.<name>) a domain / SWE phase needs, and how it is wired into Gym.
DOMAIN_JUDGE = {"rlhf": "genrm", "long_context": "long_context_judge"}
PHASE_JUDGE: dict[str, str] = {}   # agentless: swerl_llm_judge calls no model (Gym d67ad661)
# Gym's swe_agents marks container_formatter and dataset_path mandatory ('???'); both agent instances of
# swebench_openhands_training.yaml need them (NVIDIA's prefetch_super_all_envs.yaml sets dummies for the dry run).
SWE_AGENT_INSTANCES = ("swe_agents_train", "swe_agents_val")

# Server overrides NVIDIA's grpo_nanov3.yaml sets for servers we use (kept so the merge result is explicit).
SERVER_OVERRIDES: dict[str, dict[str, Any]] = {
    "math_with_judge": {"resources_servers": {"math_with_judge": {
        "judge_model_server": {"name": "policy_model"}, "should_use_judge": False}}},
}


def judges_for(domains: list[str], phase: str | None = None) -> list[str]:
    """Names of the configured judges (``cluster.judges``) a job needs, in a stable order."""
    out = [DOMAIN_JUDGE[d] for d in domains if d in DOMAIN_JUDGE]
    if phase in PHASE_JUDGE:
        out.append(PHASE_JUDGE[phase])
    return list(dict.fromkeys(out))


def check_rows(path: Path, expected_agents: set[str], *, strict: bool = True) -> tuple[dict[str, int], list[str]]:
    """Count ``agent_ref.name`` over a NeMo-Gym JSONL and refuse rows NeMo-RL could not route (NEMO_RL.md §4-§5:
    routing is by ``row["agent_ref"]["name"]``): rows without an agent always; agents the stage does not serve
    when ``strict`` (every environment's agent names are NVIDIA's own), else they come back as warnings."""
    counts: dict[str, int] = {}
    missing = 0
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not JSON ({e})") from None
            name = (row.get("agent_ref") or {}).get("name") if isinstance(row, dict) else None
            if not name:
                missing += 1
                continue
            counts[name] = counts.get(name, 0) + 1
    problems = []
    if missing:
        problems.append(f"{missing} row(s) have no agent_ref.name (prepare the data with Gym's ng_prepare_data, "
                        f"which adds agent_ref)")
    extra = sorted(set(counts) - expected_agents)
    warnings = []
    if extra:
        msg = f"agents {extra} are not served by this stage (expected {sorted(expected_agents)})"
        if strict:
            problems.append(msg)
        else:
            warnings.append(f"{path}: {msg}; the stage uses [inferred] Gym environments, so check the agent names")
    if problems:
        raise ValueError(f"{path}: " + "; ".join(problems))
    return counts, warnings


def _serve_kwargs(j) -> dict[str, Any]:
    out = {"tensor_parallel_size": j.tensor, "data_parallel_size": j.data_parallel, "pipeline_parallel_size": 1,
           "max_model_len": j.max_model_len, "gpu_memory_utilization": j.gpu_memory_utilization}
    if j.reasoning_parser:
        out["reasoning_parser"] = j.reasoning_parser
    return out


# genrm_compare.yaml (Gym d67ad661) defines two agents: genrm_simple_agent on policy_model and
# genrm_simple_agent_reasoning_off on policy_model_reasoning_off, a server no Gym config defines. Gym's parser refuses
# the whole config (ServerRefNotFoundError) unless the job defines it; NVIDIA's nemotron-3-super/stage3_rlhf.yaml
# (NeMo-RL v0.7.0) does so as a copy of the policy server with thinking off. Our rows route to genrm_simple_agent
# (thinking, RECIPE.md §4.1 row 4); the reasoning-off server is defined so the config parses, and serves no rows.
REASONING_OFF_POLICY: dict[str, Any] = {
    "_copy": "policy_model",
    "responses_api_models": {"vllm_model": {
        "chat_template_kwargs": {"enable_thinking": False, "truncate_history_thinking": False},
        "sequential_reasoning_allowed": False}},
}


def _local_vllm(j, hf_home: str | None) -> dict[str, Any]:
    """Keys every Gym local vLLM judge needs to start (``recipe.cluster.startup``): the pack strategy Gym asserts
    (``span`` when a replica is wider than a node), the shared download cache, and the serve layout."""
    strategy = "span" if j.tensor > 8 else "strict"
    return {"hf_home": hf_home, "vllm_serve_env_vars": {"VLLM_RAY_DP_PACK_STRATEGY": strategy},
            "vllm_serve_kwargs": _serve_kwargs(j)}


def judge_blocks(judges: dict[str, Any], *, policy_model: str, section: Any = None,
                 generations_per_prompt: int | None = None, hf_home: str | None = None) -> dict[str, Any]:
    """``env.nemo_gym`` entries that serve and wire the configured judges; refuses an unset judge or the policy.

    * ``genrm``: ``genrm_model_name`` (genrm_compare.yaml's ``model: ${genrm_model_name}``), the ``genrm_model``
      server's vLLM layout, and the ``genrm_compare`` settings NVIDIA's stage3_rlhf.yaml sets (rollouts per prompt
      = generations per prompt, sampling of the judge, quality gate / bonus).
    * LLM judges: a ``judge_model`` server (Gym's ``local_vllm_model``, the type NVIDIA's prefetch config bakes for
      GPU judges) and ``judge_model_name``; ``equivalence_llm_judge``'s ``judge_model_server`` points at it (its
      config defaults to ``policy_model``).
    """
    out: dict[str, Any] = {}
    for name, j in judges.items():
        if not j.model:
            raise ValueError(f"cluster.judges.{name}.model is not set: this stage needs its judge model "
                             f"(RECIPE.md §4); set it in profiles/<profile>/cluster.yaml or with "
                             f"--set cluster.judges.{name}.model=<HF id>")
        if j.model == policy_model:
            raise ValueError(f"cluster.judges.{name}.model is the policy model {policy_model!r}: the paper's judges are "
                             f"separate models (RECIPE.md §4)")
        if name == "genrm":
            out["genrm_model_name"] = j.model
            # uses_reasoning_parser follows the judge (genrm_compare.yaml's default is false; NVIDIA's
            # nemotron-3-super/stage3_rlhf.yaml serves its GenRM with true and vLLM's reasoning_parser set)
            out["genrm_model"] = {"responses_api_models": {"genrm_model": {
                "uses_reasoning_parser": j.reasoning, **_local_vllm(j, hf_home)}}}
            gs: dict[str, Any] = {}
            if generations_per_prompt:
                gs["num_rollouts_per_prompt"] = generations_per_prompt
            jc = getattr(section, "judge", None)
            if jc is not None:
                gs["genrm_responses_create_params"] = {"max_output_tokens": jc.genrm_max_output_tokens,
                                                       "temperature": jc.genrm_temperature, "top_p": jc.genrm_top_p}
                gs["top_percentile"] = jc.top_percentile
                # §4.5: all pairs compared; Gym d67ad661 supports "all_pairs" and "circular" (genrm_compare utils.py)
                gs["comparison_strategy"] = jc.comparison_strategy
                gs["answer_bonus"] = jc.answer_bonus
                # the profile's length normalisation is Gym's group-relative answer-length penalty
                # (genrm_compare app.py: group_answer_length_penalty_coeff, default 0.0)
                gs["group_answer_length_penalty_coeff"] = jc.answer_length_penalty_coeff
            out["genrm_compare_resources_server"] = {"resources_servers": {"genrm_compare": gs}}
        else:
            out["judge_model_name"] = j.model
            out["judge_model"] = {"responses_api_models": {"local_vllm_model": {
                "entrypoint": "app.py", "model": j.model, "return_token_id_information": False,
                "uses_reasoning_parser": j.reasoning, **_local_vllm(j, hf_home)}}}
            if name == "long_context_judge":
                out["equivalence_llm_judge"] = {"resources_servers": {"equivalence_llm_judge": {
                    "judge_model_server": {"type": "responses_api_models", "name": "judge_model"}}}}
    if judges:
        out["num_gpu_nodes"] = sum(j.nodes for j in judges.values())
    return out


def swe_agent_blocks(container_formatter: str | None, dataset_paths: dict[str, str]) -> dict[str, Any]:
    """``swe_agents_train`` / ``swe_agents_val`` with Gym's mandatory ``container_formatter`` and ``dataset_path``."""
    if not container_formatter:
        raise ValueError("cluster.swe_container_formatter is not set: Gym's swe_agents needs the container image "
                         "pattern of the SWE task sandboxes (mandatory '???' in swebench_openhands_training.yaml); set "
                         "it in profiles/<profile>/cluster.yaml or with "
                         "--set cluster.swe_container_formatter=<pattern with {instance_id}>")
    return {inst: {"responses_api_agents": {"swe_agents": {"container_formatter": container_formatter,
                                                           "dataset_path": dataset_paths[split]}}}
            for inst, split in zip(SWE_AGENT_INSTANCES, ("train", "validation"))}


def gym_overrides(domains: list[str], *, mopd: bool, phase: str | None = None) -> dict[str, Any]:
    """``env.*`` keys (nested) for a stage: Gym on, config paths, server overrides."""
    envs = envs_for(domains, mopd=mopd, phase=phase)
    # skip_venv_if_present: compute nodes are offline, the venvs are prefetched in the image (containers/Dockerfile);
    # use_absolute_ip: swe_agents' runners on other nodes must reach the servers (NVIDIA's stage2_swe2.yaml sets it)
    nemo_gym: dict[str, Any] = {"config_paths": [VLLM_FOR_TRAINING] + [e.config_path for e in envs],
                                "skip_venv_if_present": True}
    if any(e.server == "swe_agents" for e in envs):
        nemo_gym["use_absolute_ip"] = True
    for e in envs:
        if e.server in SERVER_OVERRIDES:
            nemo_gym[e.server] = SERVER_OVERRIDES[e.server]
    if GENRM_CONFIG in nemo_gym["config_paths"]:
        nemo_gym["policy_model_reasoning_off"] = REASONING_OFF_POLICY
    return {"should_use_nemo_gym": True, "nemo_gym": nemo_gym}


def data_paths(data_dir: Path) -> dict[str, str]:
    """NeMo-Gym JSONL rows for a stage (NEMO_RL.md §4): ``<dir>/train.jsonl`` and ``<dir>/validation.jsonl``."""
    return {"train": str(data_dir / "train.jsonl"), "validation": str(data_dir / "validation.jsonl")}


def unverified(domains: list[str], phase: str | None = None) -> list[str]:
    table = env_table(phase)
    return [table[d].config_path for d in domains if d in table and not table[d].verified]


class TeacherError(ValueError):
    """No teacher for a routed domain; the message names domain, slot and fix."""


def teacher_map(run, routing: dict[str, str], domains: list[str],
                branches: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """(agent -> teacher HF checkpoint, provenance per agent) for MOPD.

    Slots resolve exactly as in the local backend (``recipe.runs.teachers.resolve_teacher``: ``best`` from
    teachers.json, ``best_of:<stages>`` from scores.json, ``stage:<stage>`` a finished stage, ``select:<stages>``
    one teacher for all its domains from the stages' selection.json, see ``record_selection``); ``branch:<name>``,
    a side branch such as the RLHF-from-SFT teacher, comes from ``cluster.branches.<name>``.
    """
    from recipe.runs.teachers import resolve_teacher, select_groups

    out: dict[str, str] = {}
    prov: dict[str, Any] = {}
    missing = [d for d in domains if d not in routing]
    if missing:
        raise TeacherError(f"mopd.teacher_routing has no slot for domain(s) {missing}")
    groups = select_groups({d: routing[d] for d in domains})  # select:<stages> = one teacher for its domains
    for domain in domains:
        slot = routing[domain]
        agent = agent_for(domain, mopd=True)
        if slot.startswith("branch:"):
            name = slot.split(":", 1)[1]
            if name not in branches:
                raise TeacherError(
                    f"MOPD: no teacher for domain {domain!r} (routing slot {slot!r}): set cluster.branches.{name} to "
                    f"the branch's converted HF checkpoint (e.g. --set cluster.branches.{name}=<run>/05_rlhf/checkpoint)")
            entry = {"stage": f"branch:{name}", "checkpoint": branches[name], "score": None}
        else:
            try:
                entry = resolve_teacher(run, domain, slot, groups.get(slot))
            except ValueError as e:
                raise TeacherError(f"MOPD: no teacher for domain {domain!r} (routing slot {slot!r}): {e}") from None
        out[agent] = str(run.resolve_path(entry["checkpoint"]))
        prov[agent] = {"domain": domain, "slot": slot, **entry}
    return out, prov


def slot_key(slot: str) -> str:
    """File-name form of a routing slot (``select:if_rl,multi_domain_rl`` -> ``select-if_rl-multi_domain_rl``)."""
    return slot.replace(":", "-").replace(",", "-").replace("/", "-")


def deferred_teacher_map(teachers_dir: Path, routing: dict[str, str],
                         domains: list[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """MOPD teacher map rendered before the teachers are known (``recipe cluster submit --stage all``): each agent
    points at ``<teachers_dir>/<slot>``, a link the teacher-selection job creates once the earlier stages' validation
    is read (``recipe.cluster.chain.select_teachers``). One path per distinct slot, so NeMo-RL's
    ``deduplicate_shared_teacher_checkpoints`` and the node count see the same teacher groups as a direct render."""
    missing = [d for d in domains if d not in routing]
    if missing:
        raise TeacherError(f"mopd.teacher_routing has no slot for domain(s) {missing}")
    out, prov = {}, {}
    for d in domains:
        agent = agent_for(d, mopd=True)
        out[agent] = str(Path(teachers_dir) / slot_key(routing[d]))
        prov[agent] = {"domain": d, "slot": routing[d], "deferred": True, "checkpoint": out[agent]}
    return out, prov


def prefetch_config(domains: list[str]) -> dict[str, Any]:
    """NeMo-RL config holding only an ``env.nemo_gym`` block with every Gym server the cascade uses: the input of
    ``examples/nemo_gym/prefetch_venvs.py`` in ``containers/Dockerfile`` (it takes NeMo-RL configs, not Gym
    server configs). ``containers/gym_envs.yaml`` is this function's output; a test keeps them equal."""
    envs = [DOMAIN_GYM[d] for d in domains if d in DOMAIN_GYM]
    envs += [t[d] for t in PHASE_GYM.values() for d in domains if d in t]
    missing = [d for d in domains if d not in DOMAIN_GYM and not any(d in t for t in PHASE_GYM.values())]
    if missing:
        raise ValueError(f"no NeMo-Gym environment for domain(s) {missing}")
    paths = [VLLM_FOR_TRAINING] + sorted({e.config_path for e in envs})
    nemo_gym: dict[str, Any] = {"config_paths": paths}
    # Dummy interpolation values for the bundled configs during the venv dry run, as NVIDIA's
    # examples/nemo_gym/prefetch_super_all_envs.yaml sets them (genrm_compare.yaml reads ${genrm_model_name};
    # swe_agents marks container_formatter / dataset_path mandatory).
    nemo_gym["genrm_model_name"] = "dummy-genrm"
    nemo_gym["judge_model_name"] = "dummy-judge"
    # The LLM judges' server (local_vllm_model) is no config_paths entry: the block is what makes its venv prefetched
    # (the jobs set skip_venv_if_present and build none; genrm_compare.yaml brings genrm_model's).
    nemo_gym["judge_model"] = {"responses_api_models": {"local_vllm_model": {
        "entrypoint": "app.py", "model": "dummy-judge", "vllm_serve_env_vars": {"VLLM_RAY_DP_PACK_STRATEGY": "strict"},
        "vllm_serve_kwargs": {"data_parallel_size": 1, "tensor_parallel_size": 1, "pipeline_parallel_size": 1}}}}
    if GENRM_CONFIG in paths:   # Gym's parser runs in the dry run too: genrm_compare.yaml's reasoning-off agent
        nemo_gym["policy_model_reasoning_off"] = REASONING_OFF_POLICY
    if any(e.server == "swe_agents" for e in envs):
        for inst in SWE_AGENT_INSTANCES:
            nemo_gym[inst] = {"responses_api_agents": {"swe_agents": {"container_formatter": "dummy",
                                                                      "dataset_path": "/dev/null"}}}
    return {"env": {"should_use_nemo_gym": True, "nemo_gym": nemo_gym}}


PREFETCH_HEADER = ("# Generated by `python -m recipe.cluster.gym` from prefetch_config(paper domains.names); do not edit.\n"
                   "# Input of examples/nemo_gym/prefetch_venvs.py in containers/Dockerfile (pre-builds the Gym venvs).\n")


def prefetch_text() -> str:
    from recipe.cluster.nrl_yaml import dump_yaml
    from recipe.config import load_config

    return PREFETCH_HEADER + dump_yaml(prefetch_config(load_config("paper").domains.names))


if __name__ == "__main__":  # regenerate containers/gym_envs.yaml
    target = Path(__file__).resolve().parents[2] / "containers" / "gym_envs.yaml"
    target.write_text(prefetch_text())
    print(f"wrote {target}")
