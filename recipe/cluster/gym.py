"""Stage -> NeMo-Gym wiring: environments, agent names, data paths, and the MOPD teacher map.

NeMo-RL routes each JSONL row by ``row["agent_ref"]["name"]`` and starts the Gym servers listed in
``env.nemo_gym.config_paths``, which must begin with the ``*_for_training`` vLLM model config (NEMO_RL.md §4).
``DOMAIN_GYM`` maps our domain names (``domains.names`` of the profiles) to the Gym resources-server config and
its agent. Server configs named in NVIDIA's own v0.7.0 configs (``grpo_nanov3.yaml``) are marked ``verified``;
the others (GenRM, LLM judge, SWE agents) are NEMO_RL.md §3.1's [inferred] choices and are reported as such in
every rendered header.

MOPD (RECIPE.md §6): one teacher per example, chosen by the row's agent. ``teacher_map`` turns the run's
``teachers.json`` (``{domain: {"stage", "checkpoint", "score"}}``) and ``mopd.teacher_routing`` into
``on_policy_distillation.teacher_model_by_agent_name``. Domains without a verifier in MOPD (RLHF, code) use the
replication's pass-through agents ``rlhf_opd_simple_agent`` / ``code_opd_simple_agent`` (simple_agent with
``skip_verification: true``; yifu/mopd_cascade branch, not in v0.7.0's YAML).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VLLM_FOR_TRAINING = "responses_api_models/vllm_model/configs/vllm_model_for_training.yaml"


@dataclass(frozen=True)
class GymEnv:
    config_path: str
    agent: str
    verified: bool  # the config path appears in an NVIDIA v0.7.0 config
    server: str     # resources-server name (key of env.nemo_gym.<server> overrides)


DOMAIN_GYM: dict[str, GymEnv] = {
    "math": GymEnv("resources_servers/math_with_judge/configs/math_with_judge.yaml",
                   "math_with_judge_simple_agent", True, "math_with_judge"),
    "instruction_following": GymEnv("resources_servers/instruction_following/configs/instruction_following.yaml",
                                    "instruction_following_simple_agent", True, "instruction_following"),
    "mcqa": GymEnv("resources_servers/mcqa/configs/mcqa.yaml", "mcqa_simple_agent", True, "mcqa"),
    "workplace_tools": GymEnv("resources_servers/workplace_assistant/configs/workplace_assistant.yaml",
                              "workplace_assistant_simple_agent", True, "workplace_assistant"),
    # the tiny profile's tool-call domain: tool calling is served by the same Gym environment
    "tool_call": GymEnv("resources_servers/workplace_assistant/configs/workplace_assistant.yaml",
                        "workplace_assistant_simple_agent", True, "workplace_assistant"),
    "structured_output": GymEnv("resources_servers/structured_outputs/configs/structured_outputs_json.yaml",
                                "structured_outputs_simple_agent", True, "structured_outputs"),
    "code": GymEnv("resources_servers/code_gen/configs/code_gen.yaml", "code_gen_simple_agent", True, "code_gen"),
    # RLHF / long-context: agent names as in Gym's own example rows (../shared/fixtures/real/nemo_gym);
    # config file names [inferred] from the server directories (NEMO_RL.md §3.1).
    "rlhf": GymEnv("resources_servers/genrm_compare/configs/genrm_compare.yaml",
                   "genrm_compare_agent", False, "genrm_compare"),
    "long_context": GymEnv("resources_servers/equivalence_llm_judge/configs/equivalence_llm_judge.yaml",
                           "equivalence_llm_judge_simple_agent", False, "equivalence_llm_judge"),
}

# SWE has one domain and two phases with different environments (RECIPE.md §4.1 7a/7b).
PHASE_GYM: dict[str, dict[str, GymEnv]] = {
    # agentless repair scored by an LLM judge: Gym's SWE-RL judge server [inferred]; agent name from its rows
    "agentless": {"swe": GymEnv("resources_servers/swerl_llm_judge/configs/swerl_llm_judge.yaml",
                                "swerl_llm_judge_simple_agent", False, "swerl_llm_judge")},
    # execution-based agentic (OpenHands): the agent config file is Gym's; the training agent name is [inferred]
    "agentic": {"swe": GymEnv("responses_api_agents/swe_agents/configs/swebench_openhands_training.yaml",
                              "swe_agents_train", False, "swe_agents")},
}

# MOPD pass-through agents for domains scored by no verifier (replication config, NEMO_RL.md §5).
MOPD_PASSTHROUGH = {"rlhf": "rlhf_opd_simple_agent", "code": "code_opd_simple_agent"}

# Server overrides NVIDIA's grpo_nanov3.yaml sets for servers we use (kept so the merge result is explicit).
SERVER_OVERRIDES: dict[str, dict[str, Any]] = {
    "math_with_judge": {"resources_servers": {"math_with_judge": {
        "judge_model_server": {"name": "policy_model"}, "should_use_judge": False}}},
}


def _passthrough_block(resources_server: str) -> dict[str, Any]:
    return {"responses_api_agents": {"simple_agent": {
        "entrypoint": "app.py", "skip_verification": True,
        "model_server": {"type": "responses_api_models", "name": "policy_model"},
        "resources_server": {"type": "resources_servers", "name": resources_server}}}}


def _table(phase: str | None) -> dict[str, GymEnv]:
    return {**DOMAIN_GYM, **PHASE_GYM.get(phase or "", {})}


def envs_for(domains: list[str], *, mopd: bool = False, phase: str | None = None) -> list[GymEnv]:
    table = _table(phase)
    unknown = [d for d in domains if d not in table]
    if unknown:
        raise ValueError(f"no NeMo-Gym environment for domain(s) {unknown}"
                         f"{' in phase ' + phase if phase else ''}; known: {sorted(table)} "
                         f"(add one to recipe.cluster.gym.DOMAIN_GYM or PHASE_GYM)")
    out = []
    for d in domains:
        if mopd and d in MOPD_PASSTHROUGH:
            continue  # served by a pass-through agent, no resources server of its own
        if table[d] not in out:
            out.append(table[d])
    return out


def agent_for(domain: str, *, mopd: bool, phase: str | None = None) -> str:
    if mopd and domain in MOPD_PASSTHROUGH:
        return MOPD_PASSTHROUGH[domain]
    return _table(phase)[domain].agent


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


def gym_overrides(domains: list[str], *, mopd: bool, phase: str | None = None) -> dict[str, Any]:
    """``env.*`` keys (nested) for a stage: Gym on, config paths, server overrides, MOPD pass-through agents."""
    envs = envs_for(domains, mopd=mopd, phase=phase)
    nemo_gym: dict[str, Any] = {"config_paths": [VLLM_FOR_TRAINING] + [e.config_path for e in envs]}
    for e in envs:
        if e.server in SERVER_OVERRIDES:
            nemo_gym[e.server] = SERVER_OVERRIDES[e.server]
    if mopd:
        anchor = envs[0].server if envs else "math_with_judge"
        for d in domains:
            if d in MOPD_PASSTHROUGH:
                nemo_gym[MOPD_PASSTHROUGH[d]] = _passthrough_block(anchor)
    return {"should_use_nemo_gym": True, "nemo_gym": nemo_gym}


def data_paths(data_dir: Path) -> dict[str, str]:
    """NeMo-Gym JSONL rows for a stage (NEMO_RL.md §4): ``<dir>/train.jsonl`` and ``<dir>/validation.jsonl``."""
    return {"train": str(data_dir / "train.jsonl"), "validation": str(data_dir / "validation.jsonl")}


def unverified(domains: list[str], phase: str | None = None) -> list[str]:
    table = _table(phase)
    return [table[d].config_path for d in domains if d in table and not table[d].verified]


class TeacherError(ValueError):
    """No teacher for a routed domain; the message names domain, slot and fix."""


def teacher_map(run, routing: dict[str, str], domains: list[str],
                branches: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """(agent -> teacher HF checkpoint, provenance per agent) for MOPD.

    Slots resolve exactly as in the local backend (``recipe.pipeline.teachers.resolve_teacher``: ``best`` from
    teachers.json, ``best_of:<stages>`` from scores.json, ``stage:<stage>`` a finished stage, ``select:<stages>``
    one teacher for all its domains from the stages' selection.json, see ``record_selection``); ``branch:<name>``,
    a side branch such as the RLHF-from-SFT teacher, comes from ``cluster.branches.<name>``.
    """
    from recipe.pipeline.teachers import resolve_teacher, select_groups

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
        out[agent] = str(entry["checkpoint"])
        prov[agent] = {"domain": domain, "slot": slot, **entry}
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
    return {"env": {"should_use_nemo_gym": True, "nemo_gym": {"config_paths": paths}}}


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
