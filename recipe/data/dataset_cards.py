"""Hugging Face dataset cards: one per curated dataset (generated from its ``report.json``) and one per
NVIDIA release we consume (generated from the ``data`` config section and RECIPE.md §7).

Front matter (Hugging Face dataset card fields, checked against ``huggingface_hub.DatasetCardData`` in
tests/test_data_cards.py): ``license`` (with ``license_name`` + ``license_link`` when it is ``other``),
``annotations_creators``, ``source_datasets``, ``task_categories``, ``language``, ``size_categories``, ``configs``
(``data_files`` per split), ``pretty_name``, ``tags``. Every card has the sections of ``CARD_SECTIONS``. Body: sources with revisions, every curation step with its counts,
decontamination sets (with sha256), pools, and the known gaps of RECIPE.md §7.3 / §10 (e.g. the code and
long-context SFT data NVIDIA did not release). Cards are plain Markdown + YAML that
``huggingface_hub.DatasetCard`` parses (tested); nothing is uploaded here (``recipe hub publish`` does that).
"""
from __future__ import annotations

from pathlib import Path

import yaml

from recipe.config.data_section import DataSection, ReleasedDataset

# RECIPE.md §7.3 and §10: what NVIDIA did not release, and where the sources disagree.
KNOWN_GAPS_SFT = [
    "No **code** SFT config was released (paper: 1.9M Python + 1.0M C++ + 1.3M tool-integrated reasoning + "
    "1.1M scientific code); candidate source `nvidia/Nemotron-Competitive-Programming-v1`, overlap unverified.",
    "No **long-context** SFT config was released (paper: 160K + 74K samples).",
    "Card counts differ from the paper: terminal_agent 822,213 (= conversational_agent; paper 490K), swe 439,610 "
    "(paper 514K), chat 13.97M (paper about 10.6M). We trust the rows actually present and record counts per config.",
]
KNOWN_GAPS_RL = [
    "RLHF prompts (Nemotron-3-Nano RLHF blend) are not released, neither are the RLHF prompts used in MOPD; the "
    "MOPD pool's RLHF share is therefore our choice (recorded in the paper profile).",
    "Long-context RL data (`nvidia/Nemotron-3-Nano-RL-Training-Blend`, with placeholders to fill), the 3.5K "
    "Code-RL prompts and the agentless SWE-RL data (Cascade-1 releases) are not in this release.",
    "A third-party listing counts 17,592 multi-domain and 6,111 MOPD rows: the card counts minus 555 and 60 rows "
    "without a verifiable signal. We keep the card counts and report rows without a verifier.",
]
_RELEASE_TEXT = {
    "messages": ("OpenAI-style `messages` lists ending in an assistant turn (reasoning in `reasoning_content` or "
                 "inline `<think>`; tool calls in `tool_calls`); columns are not listed on the card "
                 "(NeMo-RL loader `nemo_rl/data/datasets/response_datasets/nemotron_cascade2_sft.py`)."),
    "nemo_gym": ("NeMo-Gym rows: `responses_create_params` (input messages and generation settings), `agent_ref`, "
                 "`dataset`, and per subset some of `prompt`, `instruction_id_list`, `kwargs`, `id`, `category`, "
                 "`environment_name`, `ground_truth`, `pass_rate*`, `metadata`."),
}


CARD_SECTIONS = ("Dataset Structure", "Licensing", "Limitations", "Citation")
# licenses we name with ``license: other``: where their text is
LICENSE_LINKS = {
    "NVIDIA Open Model License":
        "https://www.nvidia.com/en-us/agreements/enterprise-software/nvidia-open-model-license/",
}
CITATION = """If you use this data, cite the paper whose recipe it serves:

```bibtex
@misc{nvidia2026nemotroncascade2,
  title         = {Nemotron-Cascade 2: Post-Training LLMs with Cascade RL and Multi-Domain On-Policy Distillation},
  author        = {{NVIDIA}},
  year          = {2026},
  eprint        = {2603.19220},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2603.19220}
}
```"""


def size_category(n: int) -> str:
    for hi, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                      (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")):
        if n < hi:
            return label
    return "100M<n<1B"


def _front_matter(meta: dict) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def _licenses(report) -> tuple[str, str]:
    lic = sorted({s.get("license") or "unknown" for s in report.sources})
    if len(lic) == 1 and lic[0] != "unknown":
        return lic[0], ""
    return "other", "mixed: " + ", ".join(lic) + " (each row keeps its source's license in `license`)"


def curated_card(report, name: str) -> str:
    """Card text for a curated dataset from its :class:`~recipe.data.curate.CurationReport`."""
    configs: dict[str, list[dict]] = {}
    for rel, info in report.outputs.items():
        parts = rel.split("/")
        if len(parts) == 2 and parts[0] in ("records", "nemo_gym", "sft") and info["rows"]:
            configs.setdefault(parts[0], []).append({"split": parts[1].removesuffix(".jsonl"), "path": rel})
        elif len(parts) == 2 and parts[0] == "pools" and info["rows"]:
            configs[f"pool_{parts[1].removesuffix('.jsonl')}"] = [{"split": "train", "path": rel}]
    lic, lic_name = _licenses(report)
    meta = {"pretty_name": name, "license": lic}
    if lic_name:
        meta["license_name"] = lic_name
        meta["license_link"] = "README.md#licensing"  # mixed: each source's license is listed there
    repos = sorted({s["repo_id"] for s in report.sources if s.get("repo_id")})
    idx_items = ((report.decontamination or {}).get("index") or {}).get("items", 0)
    meta.update({"annotations_creators": ["machine-generated"],
                 "source_datasets": [f"extended|{r}" for r in repos] or ["original"],
                 "language": ["en"], "task_categories": ["text-generation"],
                 "size_categories": [size_category(report.kept)],
                 # "decontaminated" only when the evaluation index covered at least one item
                 "tags": ["nemotron-cascade-2", "curated"] + (["decontaminated"] if idx_items else []),
                 "configs": [{"config_name": c, "data_files": f} for c, f in configs.items()]})
    L = [_front_matter(meta), f"# {name}", "",
         "Curated with `recipe data curate` (Nemotron-Cascade 2 recipe reproduction, arXiv 2603.19220). "
         "Generated from `report.json`; counts reconcile: "
         f"rows in {report.rows_in:,} = kept {report.kept:,} + dropped {sum(report.dropped.values()):,} "
         f"+ quarantined {report.quarantined:,}.", "", "## Sources", "",
         "| source | revision | license | rows in | kept | contaminated | exact dup | near dup | quarantined |",
         "|---|---|---|---|---|---|---|---|---|"]
    for s in report.sources:
        L.append(f"| `{s['name']}` | {s.get('revision') or 'unpinned'} | {s.get('license') or 'unknown'} | "
                 f"{s['rows_in']:,} | {s['kept']:,} | {s['contaminated']:,} | {s['exact_duplicate']:,} | "
                 f"{s['near_duplicate']:,} | {s['quarantined']:,} |")
    d, dc = report.dedup, report.decontamination
    L += ["", "## Curation steps", "",
          f"1. **Read and normalize** (backend `{report.backend}`): {report.rows_in:,} rows "
          f"({report.blank_lines} blank lines skipped); quarantined {report.quarantined:,}"
          + (": " + ", ".join(f"{k} {v}" for k, v in sorted(report.quarantined_by_reason.items())) if report.quarantined else "") + ".",
          f"2. **Decontamination**: {dc.get('ngram')}-gram word overlap (min {dc.get('min_overlap')} shared n-gram, "
          f"text: {dc.get('fields')}); dropped {report.dropped.get('contaminated', 0):,}.",
          f"3. **Exact dedup** on normalized text (lowercase word tokens per turn): dropped "
          f"{report.dropped.get('exact_duplicate', 0):,}.",
          f"4. **Near dedup** with MinHash LSH (datasketch; {d.get('num_perm')} permutations, {d.get('shingle_words')}-word "
          f"shingles, Jaccard ≥ {d.get('threshold')}, scope {d.get('scope')}): dropped {report.dropped.get('near_duplicate', 0):,}.",
          f"5. **Split** by a hash of the prompt (the user turns, so SFT and RL rows with one prompt stay together): "
          f"train {report.splits.get('train', 0):,}, validation {report.splits.get('validation', 0):,}; prompts in "
          f"both train and validation: {report.held_out_prompt_overlap:,}.",
          f"6. **Kept** {report.kept:,} rows ({report.no_verifier_prompts:,} RL prompts carry no verifier signal).",
          "", "## Domains", "", "| domain | train | validation |", "|---|---|---|"]
    L += [f"| {k} | {v['train']:,} | {v['validation']:,} |" for k, v in report.domains.items()]
    L += ["", "## Decontamination sets", ""]
    L += decontamination_lines(dc)
    if report.pools:
        L += ["", "## Prompt pools", "", "| stage | size | per domain | missing domains |", "|---|---|---|---|"]
        for st, p in report.pools.items():
            L.append(f"| {st} | {p['size']:,} | {', '.join(f'{k} {v}' for k, v in p['counts'].items())} | "
                     f"{', '.join(p['missing_domains']) or '-'} |")
    released = any(s.get("repo_id") for s in report.sources)
    L += ["", "## Dataset Structure", "",
          "Normalized records (`recipe/data/record.py`): `id`, `domain`, `messages`, `verifier`, `license`, `source`. "
          "Configs (front matter `configs`):", ""]
    L += [f"- `{c}`: " + ", ".join(f"{f['split']} = `{f['path']}` ({report.outputs[f['path']]['rows']:,} rows)"
                                   for f in files) for c, files in configs.items()] or ["- none (no rows kept)"]
    L += ["", "## Licensing", ""]
    L += [f"- `{s['name']}`: {s.get('license') or 'unknown (not stated by the input)'}" for s in report.sources]
    L += ["", "## Limitations", ""]
    if not idx_items:
        L.append("- Not decontaminated: no evaluation item entered the n-gram index (none given, or all shorter "
                 f"than {dc.get('ngram')} words).")
    L += ["- Decontamination matches word n-grams only: paraphrased evaluation items are not caught.", "",
          "Known gaps:", ""]
    if released:
        L += [f"- {g}" for g in KNOWN_GAPS_SFT + KNOWN_GAPS_RL]
    else:
        L += ["- Built from local inputs only; the released-data gaps of RECIPE.md §7.3 apply to paper-scale runs:",
              *[f"  - {g}" for g in KNOWN_GAPS_SFT[:2] + KNOWN_GAPS_RL[:2]]]
    L += ["", "## Citation", "", CITATION]
    return "\n".join(L) + "\n"


def decontamination_lines(dc: dict) -> list[str]:
    """The card's table of benchmarks: items read, items the index cannot see, rows each removed."""
    benches = dc.get("benchmarks") or []
    if not benches:
        return ["- none given"]
    idx = dc.get("index") or {}
    per = idx.get("benchmarks") or {}
    L = ["Items are read as the evaluation reads them (`recipe.eval.decontam_items`: the user turns of each suite's "
         "prompt); n-grams shared by two items of one benchmark (its template) are not indexed.", "",
         "| benchmark | read by | file (sha256) | items | not covered (short / template only) | rows removed |",
         "|---|---|---|---|---|---|"]
    for b in benches:
        st = per.get(b["benchmark"], {})
        L.append(f"| {b['benchmark']} | {b.get('reader') or '-'} | `{Path(b.get('path') or '-').name}` "
                 f"(`{(b.get('sha256') or '-')[:16]}`) | {b['items']:,} | {st.get('too_short', 0):,} / "
                 f"{st.get('boilerplate_only', 0):,} | {b.get('rows_removed', 0):,} |")
    L += ["", f"Index: {idx.get('items', 0):,} items, {idx.get('ngrams', 0):,} n-grams."]
    return L


def write_curated_card(report, path: str | Path, name: str) -> Path:
    p = Path(path)
    p.write_text(curated_card(report, name), encoding="utf-8")
    return p


def released_card(rel: ReleasedDataset, kind: str) -> str:
    """Card for a release we consume (``kind``: ``sft`` or ``rl``), with the pinned revision and known gaps."""
    total = sum(rel.configs.values())
    meta = {"pretty_name": rel.repo_id.split("/")[-1] + " (as consumed by this recipe)", "license": rel.license}
    if rel.license_name:
        meta["license_name"] = rel.license_name
    if rel.license == "other":
        meta["license_link"] = LICENSE_LINKS[rel.license_name]
    meta.update({"annotations_creators": ["machine-generated"], "source_datasets": [f"extended|{rel.repo_id}"],
                 "language": ["en"], "task_categories": ["text-generation"], "size_categories": [size_category(total)],
                 "tags": ["nemotron-cascade-2", "upstream"],
                 "configs": [{"config_name": c, "data_files": [{"split": "train", "path": f"{c}/*"}]} for c in rel.configs]})
    L = [_front_matter(meta), f"# {rel.repo_id}", "",
         f"Upstream: https://huggingface.co/datasets/{rel.repo_id} at revision `{rel.revision or 'unpinned'}` "
         "(pinned in `recipe/config/profiles/*/data.yaml`). This card documents how the recipe reads it "
         "(RECIPE.md §7); it is not NVIDIA's card. The pinned sha comes from public third-party records and was not "
         "checked against the Hub when the profile was written; `recipe hub download` records the sha it resolves.", "", "## Configs (rows stated on the upstream card)", "",
         "| config | rows |", "|---|---|"]
    L += [f"| `{c}` | {n:,} |" for c, n in rel.configs.items()]
    L += [f"| **total** | **{total:,}** |", "", "## Dataset Structure", "", _RELEASE_TEXT[rel.format], "",
          "## How the recipe uses it", "",
          "`recipe hub download` writes a local Hub-layout copy; `recipe data curate --input <dir>` reads every config "
          "through `datasets` (streaming), normalizes rows (`recipe/data/record.py`), quarantines bad rows, "
          "decontaminates against the evaluation sets, deduplicates and writes per-stage data.", "",
          "## Licensing", "",
          f"{rel.license_name or rel.license} (upstream card" + (f"; text: {meta['license_link']}" if "license_link" in meta
                                                                 else "") + "). Rows keep it in their `license` field.",
          "", "## Limitations", "", "Known gaps:", ""]
    L += [f"- {g}" for g in (KNOWN_GAPS_SFT if kind == "sft" else KNOWN_GAPS_RL)]
    L += ["", "## Citation", "", CITATION]
    return "\n".join(L) + "\n"


def write_released_cards(data: DataSection, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rel, kind in ((data.sft_data, "sft"), (data.rl_data, "rl")):
        p = out / (rel.repo_id.replace("/", "__") + ".md")
        p.write_text(released_card(rel, kind), encoding="utf-8")
        paths.append(p)
    return paths


def _prompt_text(rec: dict) -> str:
    return "\n".join(m.get("content") or "" for m in rec.get("messages", []) if m.get("role") != "assistant")


def measure_overlap(splits: dict[str, dict[str, list[dict]]], ngram: int) -> dict[str, dict]:
    """Per domain, measured: split sizes, train prompts whose text equals a val/select prompt, and the
    ``ngram``-word decontamination of train against val + select (``recipe.data.decontam``: index coverage,
    rows hit)."""
    from recipe.data.decontam import NgramIndex
    out = {}
    for dom, sp in splits.items():
        held = [r for s in ("val", "select") for r in sp.get(s, [])]
        held_text = {_prompt_text(r) for r in held}
        train_text = [_prompt_text(r) for r in sp["train"]]
        index = NgramIndex.build(((str(r.get("id", i)), _prompt_text(r)) for i, r in enumerate(held)), n=ngram)
        hits = index.check_batch(train_text) if len(index) else [None] * len(train_text)
        out[dom] = {**{s: len(sp.get(s, [])) for s in ("train", "val", "select")},
                    "exact_prompt_overlap": sum(t in held_text for t in train_text),
                    "index": index.stats(), "ngram_hits": sum(h is not None for h in hits)}
    return out


TINY_SPLIT_NAMES = {"train": "train", "val": "validation", "select": "selection"}


def tiny_domains_card(splits: dict[str, dict[str, list[dict]]], ngram: int, seed: int,
                      held_out: dict[str, dict[str, int]] | None = None) -> str:
    """Card of the data phase's output (``runs/<id>/00_data/``: ``<domain>_{train,val,select}.jsonl``), with
    overlap counts measured on these very splits (``held_out``: the data phase's check, {domain: {split: count}})."""
    overlap = measure_overlap(splits, ngram)
    total = sum(v[s] for v in overlap.values() for s in ("train", "val", "select"))
    meta = {"pretty_name": "tiny-domains", "license": "apache-2.0",
            "annotations_creators": ["machine-generated"], "language_creators": ["machine-generated"],
            "source_datasets": ["original"], "language": ["en"], "task_categories": ["text-generation"],
            "size_categories": [size_category(total)], "tags": ["nemotron-cascade-2", "synthetic"],
            "configs": [{"config_name": d, "data_files": [{"split": TINY_SPLIT_NAMES[s], "path": f"{d}_{s}.jsonl"}
                                                          for s in ("train", "val", "select")]} for d in splits]}
    L = [_front_matter(meta), "# tiny-domains", "",
         "Synthetic tasks generated by this project (`recipe/domains/`, seed "
         f"{seed}) so that the whole cascade runs on 2 CPU cores: every row is produced by code here, none is "
         "copied from another dataset. `make run` writes these files to `runs/<id>/00_data/` with this card.", "",
         "## Dataset Structure", "",
         "One JSON record per line (`recipe/data/record.py`): `id`, `domain`, `messages` (the prompt, and for SFT "
         "rows the reference answer), `verifier` (what the reward checks), `metadata` (the pool, SFT or RL; the "
         "reference answer; for long_context, `sft_messages`: the same facts and question in a document cut short, "
         "which SFT trains on), `license`. Splits: `train` (SFT rows and the RL prompt pool), `validation` (the "
         "report split), `selection` (MOPD teacher selection).", "",
         "| domain | train | validation | selection |", "|---|---|---|---|"]
    L += [f"| {d} | {v['train']:,} | {v['val']:,} | {v['select']:,} |" for d, v in overlap.items()]
    L += ["", "## Overlap between train and held-out splits (measured)", "",
          f"Train prompts against validation + selection prompts of the same domain: identical prompt text, and "
          f"{ngram}-word n-gram decontamination (`recipe.data.decontam`; held-out prompts shorter than {ngram} "
          "words are not covered by the index). Nothing is dropped: the counts are reported as measured.", "",
          "| domain | identical prompts | held-out items | of which shorter than n (not covered) | train rows hit |",
          "|---|---|---|---|---|"]
    L += [f"| {d} | {v['exact_prompt_overlap']:,} | {v['index']['items']:,} | {v['index']['too_short']:,} | "
          f"{v['ngram_hits']:,} |" for d, v in overlap.items()]
    if held_out is not None:
        n_val, n_sel = (sum(v[s] for v in held_out.values()) for s in ("val", "select"))
        L += ["", f"Held-out check of the data phase (it refuses a run otherwise): report prompts equal to a training "
              f"prompt of their domain (user turns, whitespace normalised): {n_val}; selection prompts: {n_sel}. "
              "`swe` and `swe_agentic` draw from one repository generator and hold out by repository across "
              "the two domains."]
    L += ["", "## Licensing", "", "Apache-2.0: the data is generated by this project's code (Apache-2.0).", "",
          "## Limitations", "",
          f"- Toy tasks, one generator per domain ({', '.join(splits)}): they exercise the training and evaluation "
          "code paths and say nothing about real capability.",
          "- Short prompts: most are shorter than the n-gram length, so n-gram decontamination cannot see them; "
          "the identical-prompt count above is the meaningful overlap measure here.", "",
          "## Citation", "", CITATION]
    return "\n".join(L) + "\n"
