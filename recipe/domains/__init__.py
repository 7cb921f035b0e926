"""Tiny toy-but-real domains, generated deterministically in-process, graded by the real verifiers.

``build_tiny_splits(spec, names, seed)`` returns, per domain, disjoint ``train``, ``val`` and ``select`` lists of
normalized records (validation prompts never occur in training). ``val`` is the *report* split (every table);
``select`` is the *selection* split (choosing MOPD teachers), so a checkpoint is never picked and reported on the
same prompts. Training prompts are further assigned, by a hash of the
prompt, to an SFT pool or an RL pool (``metadata.pool``): as in the paper, RL prompts are not SFT prompts, so RL
learns from prompts the SFT model has not memorised (``spec.rl_pool_fraction``). ``to_sft_messages(record)`` gives the full conversation with
the reference answer for SFT.
"""
from __future__ import annotations

import random

from recipe.config.schema import TinyDomainSpec
from recipe.domains import (chat_domain, code_domain, if_domain, if_registry_domain, long_context_domain, math_domain,
                            mcqa_domain, swe_domain, tool_call_domain)
from recipe.domains.example import Example
from recipe.domains.held_out import normalised_prompt
from recipe.model.chat_render import render_chat
from recipe.seeding import derive_seed

GENERATORS = {
    "math": math_domain.generate,
    "instruction_following": if_domain.generate,
    "mcqa": mcqa_domain.generate,
    "tool_call": tool_call_domain.generate,
    "chat": chat_domain.generate,
    "long_context": long_context_domain.generate,
    "code": code_domain.generate,
    "swe": swe_domain.generate,
    "swe_agentic": swe_domain.generate_agentic,
}
# generators a profile picks per domain instead of the tiny one (domains.tiny.generators)
VARIANTS = {"if_registry": if_registry_domain.generate}


def _pool(seed: int, key: str, rl_fraction: float) -> str:
    return "rl" if derive_seed(seed, "pool", key, nbytes=8) % 10_000 < rl_fraction * 10_000 else "sft"


def _record(domain: str, ex: Example, split: str, idx: int, pool: str | None = None) -> dict:
    return {
        "id": f"tiny-{domain}-{split}-{idx:05d}",
        "domain": domain,
        "source": {"name": f"tiny/{domain}", "revision": None},
        "messages": [{"role": r, "content": c} for r, c in ex.prompt],
        "mode": None,
        "verifier": ex.verifier,
        "tools": list(ex.tools) if ex.tools else None,
        "metadata": {"split": split, "pool": pool, "reference": {"reasoning": ex.reasoning, "content": ex.content,
                                                   "tool_calls": list(ex.tool_calls) if ex.tool_calls else None},
                     **({"baseline": ex.metadata["baseline"]} if "baseline" in ex.metadata else {}),
                     **({"sft_messages": [{"role": r, "content": c} for r, c in ex.sft_prompt]}
                        if ex.sft_prompt is not None else {})},
        "license": "Apache-2.0",
    }


def build_tiny_splits(spec: TinyDomainSpec, names: list[str], seed: int) -> dict[str, dict[str, list[dict]]]:
    """Per domain: ``val`` and ``select`` (distinct split keys, disjoint), then ``train`` drawn outside them: no
    training example shares a held-out split key or a held-out prompt (user turns, ``held_out.normalised_prompt``).
    Domains drawn from one generator (``Example.shared_key``: swe and swe_agentic repositories) hold out across each
    other: a repository held out in one never trains the other, and none already trained on is held out later."""
    out: dict[str, dict[str, list[dict]]] = {}
    shared_held: set[str] = set()
    shared_train: set[str] = set()
    for name in names:
        if name not in GENERATORS:
            raise KeyError(f"no tiny generator for domain {name!r}; available: {', '.join(GENERATORS)}")
        gen = VARIANTS[spec.generators[name]] if name in spec.generators else GENERATORS[name]
        rng = random.Random(derive_seed(seed, "tiny-domain", name, nbytes=8))
        n_val = spec.val_items_per_domain.get(name, spec.val_items)
        n_sel = min(spec.selection_items, n_val)  # a domain with a small validation set gets a small selection set
        n_train = spec.train_items_per_domain.get(name, spec.train_items)
        val: dict[str, Example] = {}
        attempts = 0
        while len(val) < n_val:  # distinct held-out prompts
            ex = gen(rng, spec)
            if ex.shared_key is None or ex.shared_key not in shared_train:
                val.setdefault(ex.key, ex)
            attempts += 1
            if attempts > 100 * n_val:
                raise ValueError(f"domain {name}: cannot draw {n_val} distinct validation prompts")
        select: dict[str, Example] = {}
        attempts = 0
        while len(select) < n_sel:  # the selection split: held out from training, disjoint from val
            ex = gen(rng, spec)
            attempts += 1
            if ex.key not in val and (ex.shared_key is None or ex.shared_key not in shared_train):
                select.setdefault(ex.key, ex)
            if attempts > 100 * max(1, n_sel):
                raise ValueError(f"domain {name}: cannot draw {n_sel} selection prompts outside "
                                 f"val; lower domains.tiny.selection_items")
        held = [*val.values(), *select.values()]
        held_prompts = {normalised_prompt(e.prompt) for e in held}
        shared_held |= {e.shared_key for e in held if e.shared_key is not None}
        train: list[Example] = []
        attempts = 0
        while len(train) < n_train:  # training prompts never equal a validation or selection prompt
            ex = gen(rng, spec)
            attempts += 1
            if (ex.key not in val and ex.key not in select and normalised_prompt(ex.prompt) not in held_prompts
                    and ex.shared_key not in shared_held):
                train.append(ex)
            if attempts > 100 * n_train:
                raise ValueError(f"domain {name}: validation set covers the whole prompt space; lower val_items")
        shared_train |= {e.shared_key for e in train if e.shared_key is not None}
        out[name] = {"train": [_record(name, e, "train", i, _pool(seed, e.key, spec.rl_pool_fraction))
                               for i, e in enumerate(train)],
                     "val": [_record(name, e, "val", i) for i, e in enumerate(val.values())],
                     "select": [_record(name, e, "select", i) for i, e in enumerate(select.values())]}
    return out


def pool(records: list[dict], name: str) -> list[dict]:
    """Training records of one pool (``sft`` or ``rl``); records without a pool tag belong to both."""
    return [r for r in records if r.get("metadata", {}).get("pool") in (None, name)]


def to_sft_messages(record: dict, thinking: bool) -> list[dict]:
    """The prompt plus the reference answer as an assistant turn (reasoning only in thinking mode)."""
    ref = record["metadata"]["reference"]
    msg = {"role": "assistant", "content": ref["content"]}
    if thinking:
        msg["reasoning_content"] = ref["reasoning"]
    if ref.get("tool_calls"):
        msg["tool_calls"] = ref["tool_calls"]
    return [*record["messages"], msg]


def tokenizer_corpus(splits: dict, names: list[str], per_domain: int) -> list[str]:
    """Chat-rendered SFT conversations (both modes) of the first ``per_domain`` training records of each domain:
    the text the tiny tokenizer is trained on."""
    return [render_chat(to_sft_messages(r, thinking), r.get("tools"), enable_thinking=thinking)
            for d in names for r in splits[d]["train"][:per_domain] for thinking in (True, False)]


__all__ = ["GENERATORS", "build_tiny_splits", "pool", "to_sft_messages", "tokenizer_corpus"]
