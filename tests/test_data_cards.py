"""Dataset cards: released-data cards are committed, parse, and match the generator."""
from __future__ import annotations

from huggingface_hub import DatasetCard

from recipe.config import load_config
from recipe.data.dataset_cards import released_card, size_category


def test_committed_released_cards_match_generator_and_parse(project_root):
    data = load_config("paper").data
    for rel, kind in ((data.sft_data, "sft"), (data.rl_data, "rl")):
        path = project_root / "data_cards" / "released" / (rel.repo_id.replace("/", "__") + ".md")
        text = path.read_text(encoding="utf-8")
        assert text == released_card(rel, kind), f"{path} is stale: run `recipe data card --released`"
        card = DatasetCard.load(path)
        assert card.data.license == rel.license
        assert [c["config_name"] for c in card.data.configs] == list(rel.configs)
        assert rel.revision in card.text and "Known gaps" in card.text
    sft = (project_root / "data_cards" / "released" / "nvidia__Nemotron-Cascade-2-SFT-Data.md").read_text()
    assert "**code**" in sft and "**long-context**" in sft
    assert sum(data.rl_data.configs.values()) == 73809  # RECIPE.md §7.2 total


def test_size_categories():
    assert [size_category(n) for n in (5, 5_000, 73_809, 24_824_269)] == ["n<1K", "1K<n<10K", "10K<n<100K", "10M<n<100M"]


# ---- Hugging Face dataset card layout -----------------------------------------------------

import inspect  # noqa: E402
import re  # noqa: E402

from huggingface_hub import DatasetCardData  # noqa: E402

from recipe.data.dataset_cards import CARD_SECTIONS  # noqa: E402
from recipe.domains.data_phase import tiny_domains_card_for  # noqa: E402

# configs / tags / license_name / license_link are Hub card keys that DatasetCardData keeps as extra kwargs
EXTRA_KEYS = {"configs", "tags", "license_name", "license_link"}
REQUIRED = {"pretty_name", "license", "annotations_creators", "source_datasets", "language", "task_categories",
            "size_categories", "configs"}


def _check_hf_dataset_card(text: str, where: str) -> DatasetCard:
    card = DatasetCard(text)
    meta = card.data.to_dict()
    known = set(inspect.signature(DatasetCardData.__init__).parameters) - {"self", "kwargs"}
    assert set(meta) <= known | EXTRA_KEYS, (where, set(meta) - known - EXTRA_KEYS)
    assert REQUIRED <= set(meta), (where, REQUIRED - set(meta))
    assert DatasetCardData(**meta).to_dict() == meta, where  # the Hub's metadata class takes it unchanged
    if meta["license"] == "other":
        assert meta.get("license_name") and meta.get("license_link"), f"{where}: license other needs name + link"
    assert all(isinstance(meta[k], list) and meta[k] for k in ("annotations_creators", "source_datasets")), where
    headings = re.findall(r"^## (.+)$", card.text, flags=re.M)
    assert [h for h in headings if h in CARD_SECTIONS] == list(CARD_SECTIONS), (where, headings)
    assert "arXiv" in card.text.split("## Citation", 1)[1], where
    return card


def test_committed_data_cards_follow_the_hub_layout(project_root):
    cards = sorted((project_root / "data_cards").glob("*/*.md"))
    assert len(cards) == 4, cards  # two releases + tiny domains + the small profile's domains
    for p in cards:
        _check_hf_dataset_card(p.read_text(encoding="utf-8"), str(p))
    sft = DatasetCard.load(project_root / "data_cards" / "released" / "nvidia__Nemotron-Cascade-2-SFT-Data.md")
    assert sft.data.license == "other" and sft.data.license_link.startswith("https://")


def test_tiny_domains_card_is_the_generated_truth(project_root):
    path = project_root / "data_cards" / "tiny_domains" / "README.md"
    text = path.read_text(encoding="utf-8")
    assert text == tiny_domains_card_for(load_config("tiny")), (
        f"{path} is stale: python -c \"from recipe.config import load_config; from recipe.domains.data_phase import "
        f"tiny_domains_card_for as f; print(f(load_config('tiny')), end='')\" > {path}")
    card = DatasetCard(text)
    assert card.data.license == "apache-2.0" and card.data.source_datasets == ["original"]
    assert "decontaminated" not in card.data.tags  # nothing is dropped and the 13-gram index covers no prompt
    # the measured overlap table: identical prompts between train and held-out splits, per domain
    rows = re.findall(r"^\| (\w+) \| (\d+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|$", card.text, flags=re.M)
    assert [r[0] for r in rows] == load_config("tiny").domains.names
    # every domain's splits are disjoint: no training prompt equals a held-out one (the data phase checks it)
    assert all(r[1] == "0" for r in rows), rows
    assert "report prompts equal to a training prompt of their domain (user turns, whitespace normalised): 0; " \
           "selection prompts: 0" in card.text


def test_data_phase_writes_the_card_and_its_data_files_exist(tmp_path):
    from datasets import load_dataset

    from recipe.domains.data_phase import prepare_data
    from recipe.runs import RunDir
    cfg = load_config("tiny", ["domains.tiny.train_items=30", "domains.tiny.val_items=5",
                               "domains.tiny.selection_items=4"])
    run = RunDir(tmp_path / "run")
    files = prepare_data(run, cfg)
    d = next(iter(files.values())).parent
    card = _check_hf_dataset_card((d / "README.md").read_text(encoding="utf-8"), "00_data/README.md")
    paths = [f["path"] for c in card.data.configs for f in c["data_files"]]
    assert sorted(paths) == sorted(p.name for p in files.values())
    assert all((d / p).is_file() for p in paths)
    ds = load_dataset(str(d), "math", split="validation")
    assert len(ds) == 5 and ds[0]["domain"] == "math"


def test_curated_card_follows_the_hub_layout(tmp_path):
    import json

    from recipe.data.curate import curate
    rows = [{"messages": [{"role": "user", "content": f"What is {i} plus {i + 1}? Explain briefly please."},
                          {"role": "assistant", "content": f"<think>add</think>The answer is {2 * i + 1}."}]}
            for i in range(12)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "curated"
    curate([tmp_path / "in.jsonl"], out, fmt="messages", decontaminate_against=[], config=load_config("tiny").data,
           backend=None, progress=False)
    card = _check_hf_dataset_card((out / "README.md").read_text(encoding="utf-8"), "curated README.md")
    assert "decontaminated" not in card.data.tags and "Not decontaminated" in card.text  # no evaluation set given
    assert card.data.source_datasets == ["original"]
