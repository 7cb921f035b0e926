"""NeMo-Gym environments per domain: the resources-server config and the agent that serves each of our domains.

NeMo-RL routes each JSONL row by ``row["agent_ref"]["name"]`` (NEMO_RL.md §4), so the agent names are data: curation
writes them into the rows it builds (``recipe.data.stage_layout``) and the cluster backend starts the servers and maps
MOPD teachers by them (``recipe.cluster.gym``). ``DOMAIN_GYM`` maps our domain names (``domains.names`` of the
profiles) to the Gym resources-server config and its agent. Server configs named in NVIDIA's own v0.7.0 configs
(``grpo_nanov3.yaml``) are marked ``verified``; the others (GenRM, LLM judge, SWE agents) are NEMO_RL.md §3.1's
[inferred] choices and are reported as such in every rendered header.
"""
from __future__ import annotations

from dataclasses import dataclass


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
    # RLHF: genrm_compare.yaml at the pinned Gym defines genrm_simple_agent (and _reasoning_off); NVIDIA wires it
    # in examples/nemo_gym/nemotron-3-super/stage3_rlhf.yaml (server block key genrm_compare_resources_server).
    "rlhf": GymEnv("resources_servers/genrm_compare/configs/genrm_compare.yaml",
                   "genrm_simple_agent", True, "genrm_compare_resources_server"),
    # long context: Gym's equivalence LLM judge; config name [inferred] (NEMO_RL.md §3.1), judge = cluster.judges
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
                              "swe_agents_train", True, "swe_agents")},  # in NVIDIA's prefetch_super_all_envs.yaml
}


def env_table(phase: str | None) -> dict[str, GymEnv]:
    return {**DOMAIN_GYM, **PHASE_GYM.get(phase or "", {})}


def envs_for(domains: list[str], *, mopd: bool = False, phase: str | None = None) -> list[GymEnv]:
    table = env_table(phase)
    unknown = [d for d in domains if d not in table]
    if unknown:
        raise ValueError(f"no NeMo-Gym environment for domain(s) {unknown}"
                         f"{' in phase ' + phase if phase else ''}; known: {sorted(table)} "
                         f"(add one to recipe.data.gym_envs.DOMAIN_GYM or PHASE_GYM)")
    out = []
    for d in domains:
        if table[d] not in out:
            out.append(table[d])
    return out


def agent_for(domain: str, *, mopd: bool = False, phase: str | None = None) -> str:
    """The Gym agent that serves ``domain`` (the same in MOPD: no pass-through agents at the pinned Gym)."""
    return env_table(phase)[domain].agent
