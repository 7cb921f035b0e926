"""Hub config section (both profiles) and model-card generation from the run layout (no server needed)."""
from __future__ import annotations

import json

import pytest
import yaml

from recipe.config import config_to_yaml, load_config
from recipe.config.loader import ConfigError
from recipe.config.hub_section import ARTIFACT_CLI_NAMES
from recipe.hub.model_cards import lineage, model_card
from recipe.hub.download import UNSAFE_PATTERNS, resolve_patterns
from recipe.hub.hub_errors import HubError
from recipe.runs.layout import RunDir


@pytest.mark.parametrize("profile", ["tiny", "paper"])
def test_profiles_name_the_releases(profile):
    hub = load_config(profile).hub
    assert hub.released_model.repo_id == "nvidia/Nemotron-Cascade-2-30B-A3B"
    assert set(hub.sft_data.subsets) == {"math", "science", "chat", "instruction_following", "safety",
                                         "conversational_agent", "swe", "terminal_agent"}  # RECIPE.md §7.1
    assert set(hub.rl_data.subsets) == {"IF-RL", "multi-domain-RL", "MOPD", "SWE-RL"}  # RECIPE.md §7.2
    for cli, key in ARTIFACT_CLI_NAMES.items():
        assert hub.artifact(cli) is getattr(hub, key)
        _, allow = resolve_patterns(hub.artifact(cli), None)
        assert not set(allow) & set(UNSAFE_PATTERNS)


def test_every_hub_key_reaches_the_code(tmp_path):
    cfg = load_config("tiny", overrides=["hub.rl_data.revision=" + "a" * 40, "hub.rl_data.default_subsets=[IF-RL]",
                                         "hub.max_workers=2", "hub.publish.private=false"])
    assert cfg.hub.rl_data.pinned and resolve_patterns(cfg.hub.rl_data, None) == (["IF-RL"], ["README.md", "IF-RL/*"])
    assert resolve_patterns(cfg.hub.released_model, ["weights"])[1][:3] == ["README.md", "config.json",
                                                                            "generation_config.json"]
    with pytest.raises(HubError, match="unknown subset.*MOPD"):
        resolve_patterns(cfg.hub.sft_data, ["MOPD"])
    with pytest.raises(ConfigError, match="hub.rl_data.revison: unknown key"):
        load_config("tiny", overrides=["hub.rl_data.revison=main"])
    with pytest.raises(KeyError, match="released-model"):
        cfg.hub.artifact("model")


@pytest.mark.parametrize("profile", ["tiny", "paper"])
def test_dataset_revisions_come_from_the_data_section(profile):
    from recipe.hub.download import configured_revision

    cfg = load_config(profile)
    assert cfg.hub.sft_data.revision is None and cfg.hub.rl_data.revision is None  # one place per value
    assert configured_revision(cfg, "sft-data") == (cfg.data.sft_data.revision or "main")
    assert configured_revision(cfg, "rl-data") == (cfg.data.rl_data.revision or "main")
    assert configured_revision(cfg, "released-model") == cfg.hub.released_model.revision
    over = load_config(profile, overrides=["hub.rl_data.revision=v1.0"])
    assert configured_revision(over, "rl-data") == "v1.0"


def _run(tmp_path, profile: str) -> RunDir:
    run = RunDir(tmp_path / "r")
    cfg = load_config(profile)
    run.path.mkdir(parents=True)
    run.config_path.write_text(config_to_yaml(cfg))
    run.write_json_atomic(run.run_json_path, {
        "run_id": "r", "profile": profile, "seed": 3, "config_hash": "h" * 8, "git_commit": "g" * 40,
        "started": "2026-11-29T00:00:00+00:00", "container_digest": "sha256:" + "d" * 64,
        "cluster": {"if_rl": {"jobs": {"grpo": {"data": {"source": {"dataset": "nvidia/Nemotron-Cascade-2-RL-data",
                                                                      "revision": "r" * 40}}}}}}})
    run.write_manifest("data", {"status": "done", "outputs": {"math.jsonl": "e" * 64}})
    for stage, scores in (("sft", {"math": 10.0}), ("if_rl", {"math": 12.5, "instruction_following": 40.0})):
        run.write_manifest(stage, {"status": "done"})
        run.write_validation(stage, scores)
    return run


def test_card_for_a_paper_run_names_base_data_and_scores(tmp_path):
    run = _run(tmp_path, "paper")
    text = model_card(run, "if_rl", "org/cascade", license="other")
    meta = yaml.safe_load(text.split("---")[1])
    assert meta["base_model"] == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-Base-BF16"
    assert meta["datasets"] == ["nvidia/Nemotron-Cascade-2-RL-data"]
    results = meta["model-index"][0]["results"]
    assert {r["dataset"]["name"]: r["metrics"][0]["value"] for r in results} == {
        "instruction_following (validation)": 40.0, "math (validation)": 12.5}
    for needle in ("g" * 40, "sha256:" + "d" * 64, "| 1 | `sft` | done | 10.0000 |", "| 2 | `if_rl` | done | 26.2500 |",
                   "`nvidia/Nemotron-Cascade-2-RL-data`: `" + "r" * 40, "r/00_data/math.jsonl", "revision not pinned"):
        assert needle in text, needle
    assert model_card(run, "if_rl", "org/cascade", license="other") == text  # deterministic -> idempotent publish


def test_lineage_says_not_recorded_instead_of_guessing(tmp_path):
    run = _run(tmp_path, "tiny")
    info = json.loads(run.run_json_path.read_text())
    del info["container_digest"]
    run.write_json_atomic(run.run_json_path, info)
    lin = lineage(run, "sft")
    assert lin["container_digest"] is None and [s["stage"] for s in lin["stages"]] == ["sft"]
    text = model_card(run, "sft", "org/cascade", license="other")
    assert "Container digest: `not recorded`" in text and "built from scratch" in text


def test_endpoints_are_written_without_credentials(monkeypatch):
    from recipe.hub.hub_errors import current_endpoint, public_endpoint

    assert public_endpoint("https://user:s3cret@mirror.example:8443/hf/?q=1") == "https://mirror.example:8443/hf/"
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:5/")
    assert current_endpoint() == "http://127.0.0.1:5"  # read at call time, not at import
    monkeypatch.delenv("HF_ENDPOINT")
    assert current_endpoint() == "https://huggingface.co"


def test_model_card_follows_the_hub_layout(tmp_path):
    import inspect
    import re

    from huggingface_hub import ModelCard, ModelCardData

    from hub_server.tiny import make_fake_run
    from recipe.hub.model_cards import MODEL_CARD_SECTIONS
    run = make_fake_run(tmp_path, "r", stages=("sft",))
    for license, name in (("apache-2.0", None), ("other", "not specified by the publisher")):
        card = ModelCard(model_card(run, "sft", "org/cascade", license=license))
        meta = card.data.to_dict()
        known = set(inspect.signature(ModelCardData.__init__).parameters) - {"self", "kwargs"}
        assert set(meta) - {"model-index"} <= known, set(meta) - known
        assert meta["license"] == license and {"library_name", "pipeline_tag", "tags", "model-index"} <= set(meta)
        if name:
            assert meta["license_name"].startswith(name) and meta["license_link"], meta
        else:
            assert "license_name" not in meta and "license_link" not in meta
        headings = re.findall(r"^## (.+)$", card.text, flags=re.M)
        assert [h for h in headings if h in MODEL_CARD_SECTIONS] == list(MODEL_CARD_SECTIONS), headings
        assert "2603.19220" in card.text.split("## Citation", 1)[1]
    from recipe.hub.model_cards import other_license
    assert other_license("nvidia/Nemotron-Nano-9B-v2")[0] == "NVIDIA Open Model License"
