"""Checks of rendered NeMo-RL configs against the pinned release (its config classes and its own YAML files).

Used by the tests (with genuine copies of the release's example configs as the release tree) and by
``config_diff`` / ``recipe cluster render --check`` where a NeMo-RL checkout is available. Three checks:

1. every key we write exists in *some* config of the release (the union over its example configs after
   ``defaults:`` resolution — not only the direct parent, which would reject valid v0.7.0 recipes, see the
   fixtures README), or in the v0.7.0 ``on_policy_distillation`` schema, or in a documented free-form map;
2. the rendered file loads with the release's ``defaults:`` rules (parent = the base config inside the image)
   and every ``${...}`` resolves;
3. after that merge every value we set is the value in the final config (no parent or interpolation hides it);
4. types: every key of the merged, resolved config that v0.7.0's config classes type (``recipe.cluster.nrl_schema``,
   transcribed from the v0.7.0 source) has a value of that type, and every rendered key outside that table has the
   type of the release's own example value (a ``null`` where v0.7.0 wants a number is refused);
5. no unresolved ``???`` anywhere (OmegaConf's mandatory marker: NeMo-Gym fails when a server reads it);
6. no ``_override_`` below the top level: v0.7.0 honours it on top-level keys only, so a nested marker would leave
   the parent's keys merged in unseen;
7. ``env.nemo_gym`` passes NeMo-Gym's own config parser rules (``recipe.cluster.gym_refs``): after Gym merges the
   files of ``config_paths`` with the block, every server reference (``model_server``, ``resources_server``,
   judge servers) names a defined server and nothing is left ``???``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from recipe.cluster import gym_refs, nrl_schema
from recipe.cluster.nrl_yaml import flatten_keys, get_path, load_with_defaults, load_yaml, resolve
from recipe.cluster.release import OPD_SCHEMA_KEYS, ReleaseTree

# Keys under these prefixes are free-form maps (agent names, Gym server blocks) rather than schema keys.
# (NeMo-Gym's env.nemo_gym block is free-form too: nrl_schema.OPEN_PREFIXES.)
FREE_FORM_PREFIXES = (
    "on_policy_distillation.teacher_model_by_agent_name.",
    "policy.tokenizer.chat_template_kwargs.",  # kwargs for the chat template (null in the release; its comment
                                                # names enable_thinking=true as the example)
)
# OpenAI-format SFT dataset keys: documented in NeMo-RL docs/guides/sft.md and commented in sft.yaml (v0.7.0),
# not present as live YAML keys.
DOC_KEYS = frozenset(f"data.{split}.{k}" for split in ("train", "validation")
                     for k in ("chat_key", "tool_key", "use_preserving_dataset", "data_path"))


def _prefixes(keys: Iterable[str]) -> set[str]:
    out = set()
    for k in keys:
        parts = k.split(".")
        out.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return out


def release_keys(tree: ReleaseTree) -> set[str]:
    """Every dotted key (and prefix) of every release config after inheritance."""
    keys: set[str] = set()
    for orig in tree.available_configs():
        keys |= _prefixes(flatten_keys(tree.load(orig)))
    return keys


def release_types(tree: ReleaseTree) -> dict[str, set[str]]:
    """Dotted key -> the kinds (``nrl_schema.kind_of``) of its values across the release's resolved example configs."""
    out: dict[str, set[str]] = {}
    for orig in tree.available_configs():
        for k, v in flatten_keys(resolve(tree.load(orig), env={"HF_HOME": "/hf"})).items():
            out.setdefault(k, set()).add(nrl_schema.kind_of(v))
    return out


def _open(key: str) -> bool:
    return any(key.startswith(p) for p in nrl_schema.OPEN_PREFIXES)


def type_problems(resolved: dict, rendered_keys: Iterable[str] = (),
                  release: dict[str, set[str]] | None = None) -> list[str]:
    """Type errors of a merged + resolved NeMo-RL config (checks 4-6 of the module doc); empty = valid."""
    out: list[str] = []
    flat = flatten_keys(resolved)
    for key, val in flat.items():
        if isinstance(val, str) and val.strip() == nrl_schema.MISSING:
            out.append(f"{key}: unresolved '???' (a mandatory value nobody set)")
        parts = key.split(".")
        if "_override_" in parts[1:]:
            out.append(f"{key}: _override_ below the top level is not honoured by NeMo-RL v0.7.0 "
                       f"(nemo_rl/utils/config.py merges that mapping into the parent's instead of replacing it)")
    # a key of the schema may be a leaf or a mapping/null: look it up in the nested config
    for key, spec in nrl_schema.SCHEMA.items():
        try:
            val = get_path(resolved, key)
        except KeyError:
            continue  # NotRequired, or required but supplied by code paths we do not render
        if not nrl_schema.type_ok(val, spec):
            out.append(f"{key}: {val!r} ({type(val).__name__}) is not {spec} (NeMo-RL v0.7.0 config classes)")
    if release is not None:
        for key in rendered_keys:
            key = key.replace("._override_", "")
            if key in nrl_schema.SCHEMA or _open(key) or key not in flat:
                continue
            have = nrl_schema.kind_of(flat[key])
            kinds = release.get(key)
            if not kinds or "None" in kinds or have in kinds:
                continue
            out.append(f"{key}: {flat[key]!r} is a {have}, the release's configs have {sorted(kinds)}")
    return out


# Keys that exist only on NeMo-Gym branches, not at the commit NeMo-RL v0.7.0 pins: Gym ignores them silently
# (MOPD's pass-through agents once relied on skip_verification, which Gym at the pin does not know).
GYM_KEYS_NOT_AT_PIN = ("skip_verification", "skip_verification_reward")
GENRM_CONFIG = "resources_servers/genrm_compare/configs/genrm_compare.yaml"
SWE_AGENTS_CONFIG = "responses_api_agents/swe_agents/configs/swebench_openhands_training.yaml"
LLM_JUDGE_CONFIG = "resources_servers/equivalence_llm_judge/configs/equivalence_llm_judge.yaml"


def gym_problems(resolved: dict, gym: gym_refs.GymConfigs | None = None) -> list[str]:
    """What the Gym server configs named in ``env.nemo_gym.config_paths`` need from the NeMo-RL config: the GenRM's
    ``${genrm_model_name}``, swe_agents' mandatory ``container_formatter`` / ``dataset_path`` for both agent instances,
    an LLM judge that is not the policy; no key the pinned Gym does not have; and Gym's own parser rules (every server
    reference defined, nothing ``???``: ``gym_refs.problems``)."""
    ng = (resolved.get("env") or {}).get("nemo_gym") or {}
    if not isinstance(ng, dict):
        return []
    out = [f"env.nemo_gym: {p}" for p in gym_refs.problems(ng, gym)] if ng.get("config_paths") else []
    paths = ng.get("config_paths") or []
    for key in flatten_keys(ng):
        if any(part in GYM_KEYS_NOT_AT_PIN for part in key.split(".")):
            out.append(f"env.nemo_gym.{key}: not a key of the NeMo-Gym commit v0.7.0 pins (Gym ignores it silently)")
    if GENRM_CONFIG in paths and not (isinstance(ng.get("genrm_model_name"), str) and ng["genrm_model_name"]):
        out.append("env.nemo_gym.genrm_model_name is not set: genrm_compare.yaml serves model ${genrm_model_name}")
    if SWE_AGENTS_CONFIG in paths:
        for inst in ("swe_agents_train", "swe_agents_val"):
            a = ((ng.get(inst) or {}).get("responses_api_agents") or {}).get("swe_agents") or {}
            for k in ("container_formatter", "dataset_path"):
                if not a.get(k) or a.get(k) == nrl_schema.MISSING:
                    out.append(f"env.nemo_gym.{inst}.responses_api_agents.swe_agents.{k} is not set (mandatory in Gym)")
    if LLM_JUDGE_CONFIG in paths:
        srv = (((ng.get("equivalence_llm_judge") or {}).get("resources_servers") or {}).get("equivalence_llm_judge")
               or {}).get("judge_model_server") or {}
        if srv.get("name", "policy_model") == "policy_model":
            out.append("equivalence_llm_judge judges with policy_model (Gym's default): configure a judge model")
    return out


def unknown_keys(flat: dict[str, Any], known: set[str]) -> list[str]:
    bad = []
    for k in flat:
        k = k.replace("._override_", "")
        if (k in known or k in OPD_SCHEMA_KEYS or k in DOC_KEYS or any(k.startswith(p) for p in FREE_FORM_PREFIXES)
                or _open(k)):
            continue
        bad.append(k)
    return sorted(bad)


def load_rendered(path: Path, tree: ReleaseTree, env: dict[str, str] | None = None) -> dict:
    """Load a rendered YAML as NeMo-RL would inside the image (its defaults mapped into ``tree``) and resolve it."""
    merged = load_with_defaults(Path(path), resolve_path=tree.defaults_resolver())
    return resolve(merged, env=env or {})


def value_mismatches(resolved: dict, expected: dict[str, Any]) -> list[str]:
    out = []
    for key, want in expected.items():
        try:
            have = get_path(resolved, key)
        except KeyError:
            out.append(f"{key}: missing after inheritance (wanted {want!r})")
            continue
        if isinstance(want, tuple):
            want = list(want)
        if have != want:
            out.append(f"{key}: {have!r} != {want!r}")
    return out


def config_diff_text(rendered: Path, base_original: str, ours: dict[str, Any], tree: ReleaseTree | None) -> str:
    """Lines ``key: release default -> ours`` for each key we set (``(not in base)`` for new keys)."""
    lines = [f"# {rendered.name} vs NeMo-RL {base_original}"]
    base_flat: dict[str, Any] | None = None
    if tree is not None:
        base_flat = flatten_keys(resolve(tree.load(base_original), env={}))
    else:
        lines.append("# release configs not found (set RECIPE_NEMO_RL_DIR to a NeMo-RL v0.7.0 checkout): "
                     "showing our values only")
    for key in sorted(ours):
        val = ours[key]
        if base_flat is None:
            lines.append(f"{key}: {val!r}")
            continue
        if key in base_flat:
            if base_flat[key] != (list(val) if isinstance(val, tuple) else val):
                lines.append(f"{key}: {base_flat[key]!r} -> {val!r}")
        else:
            sub = {k: v for k, v in base_flat.items() if k.startswith(key + ".")}
            lines.append(f"{key}: {'<mapping>' if sub else '(not in base)'} -> {val!r}")
    return "\n".join(lines) + "\n"


def check_render(jobs, tree: ReleaseTree, gym: gym_refs.GymConfigs | None = None) -> list[str]:
    """All problems of rendered jobs (``RenderResult.jobs``) against a release tree; empty = valid."""
    known = release_keys(tree)
    types = release_types(tree)
    problems: list[str] = []
    for job in jobs:
        problems += [f"{job.name}: {p}" for p in check_file(job.config_path, tree, known=known, types=types,
                                                             expected=job.overrides, gym=gym)]
    return problems


def check_file(path: Path, tree: ReleaseTree, *, known: set[str] | None = None,
               types: dict[str, set[str]] | None = None, expected: dict[str, Any] | None = None,
               env: dict[str, str] | None = None, gym: gym_refs.GymConfigs | None = None) -> list[str]:
    """Every check of the module doc for one NeMo-RL YAML (ours or the release's own); empty = valid."""
    known = release_keys(tree) if known is None else known
    types = release_types(tree) if types is None else types
    flat = flatten_keys({k: v for k, v in load_yaml(Path(path)).items() if k != "defaults"})
    problems = [f"{k}: not a key of NeMo-RL's release configs" for k in unknown_keys(flat, known)]
    try:
        cfg = load_rendered(Path(path), tree, env=env)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        return problems + [f"does not load with the release's defaults: {e}"]
    problems += value_mismatches(cfg, expected or {})
    problems += type_problems(cfg, flat, types)
    problems += gym_problems(cfg, gym)
    return problems


def shape_problems(flat: dict[str, Any], res, *, policy_nodes: int) -> list[str]:
    """Static layout checks NeMo-RL/Megatron would otherwise fail at start-up on a GPU cluster [Megatron rules]:
    policy GPUs divisible by TP·PP·CP (data parallel size DP), experts by EP, the global batch by DP, sequence
    lengths by ``make_sequence_length_divisible_by``, vLLM TP within a node."""
    p = res.parallelism
    out = []
    gpus = policy_nodes * res.gpus_per_node
    model_par = p.tensor * p.pipeline * p.context
    if policy_nodes < 1:
        return [f"no policy nodes left ({res.nodes} nodes minus generation/teacher nodes)"]
    if gpus % model_par:
        out.append(f"{gpus} policy GPUs are not divisible by TP{p.tensor}·PP{p.pipeline}·CP{p.context} = {model_par}")
        return out
    dp = gpus // model_par
    if (gpus // p.pipeline) % p.expert:
        out.append(f"EP{p.expert} does not divide the {gpus // p.pipeline} GPUs of a pipeline stage")
    gbs = flat.get("policy.train_global_batch_size")
    if isinstance(gbs, int) and gbs % dp:
        out.append(f"policy.train_global_batch_size {gbs} is not divisible by data-parallel size {dp}")
    div = flat.get("policy.make_sequence_length_divisible_by")
    seq = flat.get("policy.max_total_sequence_length")
    if isinstance(div, int) and isinstance(seq, int) and seq % div:
        out.append(f"policy.max_total_sequence_length {seq} is not divisible by {div} (2·TP·CP)")
    if p.vllm_tensor > res.gpus_per_node:
        out.append(f"vLLM TP{p.vllm_tensor} exceeds {res.gpus_per_node} GPUs per node")
    return out
