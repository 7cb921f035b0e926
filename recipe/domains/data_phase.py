"""Data phase of the tiny profile: generate the tiny domains and write them into ``00_data/`` as JSONL
(normalized records) with their dataset card (``README.md``), and a manifest carrying each file's sha256. Stages read the splits from these files."""
from __future__ import annotations

import json
import time
from pathlib import Path

from recipe.config.schema import RecipeConfig
from recipe.data.dataset_cards import tiny_domains_card
from recipe.domains import build_tiny_splits, if_decontam
from recipe.domains.held_out import SPLIT_RULE, check_held_out
from recipe.runs.content_hashes import sha256_file, sha256_obj
from recipe.runs.layout import DATA_PHASE, RunDir, file_stamp, write_text_atomic

SPLITS = ("train", "val", "select")  # val = the report split, select = the teacher-selection split


def data_inputs(cfg: RecipeConfig) -> dict:
    inputs = {"domains": sha256_obj(cfg.domains.model_dump(mode="json")), "seed": cfg.run.seed,
              "split_rule": SPLIT_RULE}
    if cfg.domains.generator == "released" and cfg.domains.released_records:  # the curated files' contents
        root = Path(cfg.domains.released_records) / "records"
        inputs["released_records"] = {p.name: sha256_file(p) for p in sorted(root.glob("*.jsonl"))}
    return inputs


def prepare_data(run: RunDir, cfg: RecipeConfig, force: bool = False) -> dict[str, Path]:
    """Write ``<domain>_{train,val,select}.jsonl``; skipped when done with the same inputs. Returns the file paths."""
    if cfg.domains.generator != "tiny" and not cfg.domains.released_records:
        raise ValueError("the local data phase generates tiny domains; for released data run `recipe hub download` + "
                         "`recipe data curate --out DIR` and set domains.released_records=DIR")
    d = run.stage_dir(DATA_PHASE)
    inputs = data_inputs(cfg)
    m = run.read_manifest(DATA_PHASE)
    files = {f"{n}_{s}": d / f"{n}_{s}.jsonl" for n in cfg.domains.names for s in SPLITS}
    if (not force and m and m.get("status") == "done" and m.get("inputs") == inputs
            and all(p.exists() and sha256_file(p) == m["outputs"].get(p.name) for p in files.values())):
        return files
    t0 = time.time()
    if cfg.domains.generator == "released":
        from recipe.data.released_splits import released_splits
        splits = released_splits(cfg.domains.released_records, cfg.domains.names, cfg.run.seed)
    else:
        splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    held_out = check_held_out(splits)  # refuses a run whose report or selection prompts occur in training
    # keys in the order the records were built (deterministic): a tool call's arguments are rendered into SFT targets
    # in their stored order, and the model then writes them in that order (edit_file: path, old text, new text)
    for name, split in splits.items():
        for s in SPLITS:
            write_text_atomic(files[f"{name}_{s}"], "".join(json.dumps(r) + "\n" for r in split[s]))
    # the dataset card of these files (data_files relative to 00_data/; overlap counts measured on these splits)
    write_text_atomic(d / "README.md", tiny_domains_card(splits, cfg.data.decontam.ngram, cfg.run.seed, held_out)
                      + if_decontam.card_section(cfg, splits))  # registry IF rows: 13-grams vs IFEval / IFBench
    run.write_manifest(DATA_PHASE, {
        "stage": DATA_PHASE, "status": "done", "inputs": inputs,
        "outputs": {p.name: sha256_file(p) for p in files.values()},
        "counts": {f"{n}_{s}": len(split[s]) for n, split in splits.items() for s in SPLITS},
        "timings": {"wall_s": round(time.time() - t0, 3)}})
    return files


def tiny_domains_card_for(cfg) -> str:
    """The card ``make run`` writes for profile ``cfg`` (committed for the tiny defaults: data_cards/tiny_domains)."""
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    return tiny_domains_card(splits, cfg.data.decontam.ngram, cfg.run.seed, check_held_out(splits))


def load_splits(run: RunDir, cfg: RecipeConfig, splits: tuple[str, ...] = SPLITS) -> dict[str, dict[str, list[dict]]]:
    """{domain: {split: records}} from ``00_data/`` (``splits``: which ones to read; the train files are most of it).

    Files are parsed once per process and kept while they stay the same file (inode, size, mtime): in the shared
    kernel of ``recipe run`` every stage used to parse all ~19k records again (~1.1 s a stage). Each call returns
    new lists; the records (dicts) are shared between calls and are read-only by convention."""
    d = run.stage_dir(DATA_PHASE)
    if not run.is_done(DATA_PHASE):
        raise FileNotFoundError(f"{d}: data phase not done; run `recipe run --run-id {run.run_id}` "
                                f"(or the 00_data notebook) first")
    return {n: {s: list(_read_records(d / f"{n}_{s}.jsonl")) for s in splits} for n in cfg.domains.names}


# path -> ((inode, size, mtime_ns), records), for the files of one data directory at a time (a test session opens
# hundreds of runs: keeping every one would grow without bound)
_RECORDS: dict[Path, tuple[tuple[int, int, int], list[dict]]] = {}


def _read_records(path: Path) -> list[dict]:
    key, stamp = path.resolve(), file_stamp(path)
    if any(k.parent != key.parent for k in _RECORDS):
        _RECORDS.clear()
    hit = _RECORDS.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    _RECORDS[key] = (stamp, records)
    return records
