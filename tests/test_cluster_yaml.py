"""recipe.cluster.nrl_yaml: NeMo-RL's defaults inheritance and interpolation rules, on a hand-written tree and
on the genuine v0.7.0 configs (../shared)."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipe.cluster.nrl_yaml import ConfigError, dump_yaml, flatten_keys, load_with_defaults, load_yaml, resolve
from recipe.cluster.release import RELEASE_CONFIGS, ReleaseTree

FIX = Path(__file__).parent / "fixtures" / "cluster" / "release"


def test_omegaconf_scalars():
    d = load_yaml("a: 1e-5\nb: 3.0e-7\nc: 00:03:40:00\nd: None\ne: True\nf: 1e3\n")
    assert d == {"a": 1e-5, "b": 3e-7, "c": "00:03:40:00", "d": "None", "e": True, "f": 1000.0}
    assert isinstance(d["a"], float)
    assert load_yaml(dump_yaml(d)) == d


def test_defaults_chain_merge_and_override():
    cfg = load_with_defaults(FIX / "examples/configs/recipes/grandchild.yaml")
    assert cfg["algo"]["steps"] == 20              # child wins
    assert cfg["algo"]["lr"] == 1e-5               # inherited
    assert cfg["algo"]["betas"] == [0.5]           # lists replaced whole
    # v0.7.0 honours _override_ on top-level keys only (nemo_rl/utils/config.py merge_with_override): a nested
    # marker is an ordinary key and the mapping deep-merges (the validator reports the leftover marker) ...
    assert cfg["algo"]["nested"] == {"a": 1, "b": 2, "_override_": True, "c": 3}
    # ... while a top-level one replaces the parent's mapping, marker removed
    assert cfg["logger"] == {"title": "replaced"}
    assert cfg["policy"]["tp"] == 4 and cfg["policy"]["model_name"] == "child-model"
    assert "defaults" not in cfg


def test_interpolation():
    cfg = resolve(load_with_defaults(FIX / "examples/configs/recipes/grandchild.yaml"))
    p = cfg["policy"]
    assert p["tokenizer"]["name"] == "child-model"
    assert p["divisible_by"] == 4 * 4 * 2
    assert p["teacher"] == {"model": "child-model", "same_level": "t", "tag": "t"}
    assert "name" not in cfg["logger"]   # replaced by the child's top-level _override_
    assert p["quoted_time"] == p["unquoted_time"] == "00:03:40:00"


def test_errors_name_the_problem():
    with pytest.raises(ConfigError, match="cycle"):
        load_with_defaults(FIX / "examples/configs/cycle_a.yaml")
    with pytest.raises(ConfigError, match="unknown resolver 'add'"):
        resolve(load_with_defaults(FIX / "examples/configs/unknown_resolver.yaml"))
    with pytest.raises(ConfigError, match="not found"):
        load_with_defaults(FIX / "nope.yaml")


def test_flatten_keys():
    assert flatten_keys({"a": {"b": 1, "c": {}}, "d": [1]}) == {"a.b": 1, "a.c": {}, "d": [1]}


def test_genuine_release_configs_load_and_resolve(shared_dir):
    tree = ReleaseTree.find(shared_dir / "fixtures/nemo_rl_configs/v0.7.0")
    assert tree is not None and tree.flattened
    assert tree.available_configs() == list(RELEASE_CONFIGS)
    for orig in RELEASE_CONFIGS:
        cfg = resolve(tree.load(orig), env={"HF_HOME": "/hf"})
        assert cfg, orig
    mopd = resolve(tree.load("examples/configs/recipes/llm/mopd-qwen3-1.7b-3n8g-megatron-pack.yaml"), env={"HF_HOME": "/hf"})
    assert mopd["grpo"]["adv_estimator"]["name"] == "opd"
    assert mopd["policy"]["megatron_cfg"]["scheduler"]["lr_warmup_iters"] == 10  # child value
    assert mopd["loss_fn"]["ratio_clip_min"] == 0.2                               # from grpo_math_1B
    assert mopd["data"]["train"]["data_path"] == "/hf/nanov3_data/train-split.jsonl"
    nano = resolve(tree.load("examples/nemo_gym/grpo_nanov3.yaml"))
    assert nano["policy"]["make_sequence_length_divisible_by"] == 16
    assert nano["policy"]["megatron_cfg"]["optimizer"]["adam_eps"] == 1e-8


def test_post_release_file_needs_newer_resolver(shared_dir):
    ultra = shared_dir / "fixtures/nemo_rl_configs/main-64cb9f98/examples__nemo_gym__nemotron-3-ultra__mopd.yaml"
    with pytest.raises(ConfigError, match="add"):
        resolve(load_with_defaults(ultra), env={})
