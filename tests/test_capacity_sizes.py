"""The capacity study's model sizes: each is the tiny profile's NemotronH at another width or depth, accepted by the
typed config, built for real, and larger where it says so; a width the architecture cannot split is refused."""
from __future__ import annotations

import pytest

from recipe.config import load_config
from recipe.model.build import build_tiny
from recipe.reporting.capacity import ModelSize

CORPUS = ["the quick brown fox jumps over the lazy dog 0123456789"] * 40


def _params(size: ModelSize) -> int:
    cfg = load_config("tiny", [*size.overrides(), "model.tokenizer.vocab_size=300"])
    model, _ = build_tiny(cfg.model, CORPUS, seed=0)
    assert model.config.hidden_size == size.width
    assert model.config.hybrid_override_pattern == "ME*E" * size.depth
    return sum(p.numel() for p in model.parameters())


def test_w96_is_the_tiny_profile_and_sizes_grow():
    base = load_config("tiny").model.architecture
    at96 = load_config("tiny", ModelSize(96).overrides()).model.architecture
    assert at96 == base  # the study's w96 is the profile as it is (the size it chose)
    p48, p64, p96, p64x2 = (_params(ModelSize.parse(s)) for s in ("w48", "w64", "w96", "w64x2"))
    assert p48 < p64 < p96 and p64 < p64x2


def test_bad_sizes_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="multiple of 16"):
        ModelSize(50).overrides()
    with pytest.raises(ValueError, match="expected w<width>"):
        ModelSize.parse("wide")
    assert ModelSize.parse("w96x2") == ModelSize(96, 2) and ModelSize(96, 2).name == "w96x2"
