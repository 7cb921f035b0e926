"""Dataset cards (issue #4 item 6): released-data cards are committed, parse, and match the generator."""
from __future__ import annotations

from huggingface_hub import DatasetCard

from recipe.config import load_config
from recipe.data.cards import released_card, size_category


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
