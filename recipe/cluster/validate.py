"""Checks of rendered NeMo-RL configs against the pinned release's own YAML files.

Used by the tests (with ../shared/fixtures/nemo_rl_configs/v0.7.0 as the release tree) and by
``config_diff`` / ``recipe cluster render --check`` where a NeMo-RL checkout is available. Three checks:

1. every key we write exists in *some* config of the release (the union over its example configs after
   ``defaults:`` resolution — not only the direct parent, which would reject valid v0.7.0 recipes, see the
   fixtures README), or in the v0.7.0 ``on_policy_distillation`` schema, or in a documented free-form map;
2. the rendered file loads with the release's ``defaults:`` rules (parent = the base config inside the image)
   and every ``${...}`` resolves;
3. after that merge every value we set is the value in the final config (no parent or interpolation hides it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from recipe.cluster.nrl_yaml import flatten_keys, get_path, load_with_defaults, resolve
from recipe.cluster.release import OPD_SCHEMA_KEYS, ReleaseTree

# Keys under these prefixes are free-form maps (agent names, Gym server blocks) rather than schema keys.
FREE_FORM_PREFIXES = (
    "on_policy_distillation.teacher_model_by_agent_name.",
    "env.nemo_gym.rlhf_opd_simple_agent.",   # replication's pass-through agents (yifu/mopd_cascade branch)
    "env.nemo_gym.code_opd_simple_agent.",
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


def unknown_keys(flat: dict[str, Any], known: set[str]) -> list[str]:
    bad = []
    for k in flat:
        k = k.replace("._override_", "")
        if k in known or k in OPD_SCHEMA_KEYS or k in DOC_KEYS or any(k.startswith(p) for p in FREE_FORM_PREFIXES):
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


def check_render(jobs, tree: ReleaseTree) -> list[str]:
    """All problems of rendered jobs (``RenderResult.jobs``) against a release tree; empty = valid."""
    known = release_keys(tree)
    problems: list[str] = []
    for job in jobs:
        from recipe.cluster.nrl_yaml import load_yaml

        flat = flatten_keys({k: v for k, v in load_yaml(job.config_path).items() if k != "defaults"})
        problems += [f"{job.name}: {k}: not a key of NeMo-RL's release configs" for k in unknown_keys(flat, known)]
        try:
            cfg = load_rendered(job.config_path, tree)
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            problems.append(f"{job.name}: does not load with the release's defaults: {e}")
            continue
        problems += [f"{job.name}: {m}" for m in value_mismatches(cfg, job.overrides)]
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
