"""Config: profiles load, paper values match RECIPE.md (our own table), bad keys/types name key and file,
overrides work, and unimplemented stages fail loudly."""
from __future__ import annotations

import re

import pytest
from pydantic import BaseModel, ValidationError

from recipe.config import STAGE_PLAN, ConfigError, load_config
from recipe.config.loader import PROFILES_DIR

# Expected paper values, typed here independently of the profile YAML (RECIPE.md §3, §4.2, §6, §10).
PAPER = {
    "sft.global_batch": 64, "sft.pack_length": 262144, "sft.lr": 5e-5, "sft.min_lr": 5e-6, "sft.lr_schedule": "cosine",
    "sft.warmup_steps": 200, "sft.planned_steps": 40000, "sft.steps": 33000, "sft.adam_betas": (0.9, 0.98),
    "sft.weight_decay": 0.1,
    "if_rl.prompts_per_step": 128, "if_rl.generations_per_prompt": 16, "if_rl.max_response_tokens": 49152,
    "if_rl.lr": 3e-6, "if_rl.steps": 180, "if_rl.temperature": 1.0, "if_rl.top_p": 1.0, "if_rl.kl_coef": 0.0,
    "if_rl.overlong_filtering": False, "if_rl.overlong_reward_zero": True, "if_rl.dynamic_filtering": True,
    "if_rl.mode": "thinking", "if_rl.adam_betas": (0.9, 0.95),
    "multi_domain_rl.prompts_per_step": 128, "multi_domain_rl.generations_per_prompt": 16,
    "multi_domain_rl.max_response_tokens": 49152, "multi_domain_rl.lr": 3e-6, "multi_domain_rl.steps": 70,
    "multi_domain_rl.overlong_filtering": True, "multi_domain_rl.kl_coef": 0.0,
    "multi_domain_rl.domain_weights": {"mcqa": 0.55, "workplace_tools": 0.30, "structured_output": 0.15},
    "mopd.prompts_per_step": 128, "mopd.generations_per_prompt": 4, "mopd.max_response_tokens": 98304,
    "mopd.lr": 2e-6, "mopd.warmup_steps": 30, "mopd.warmup_start_lr": 2e-7, "mopd.steps": 52,
    "mopd.temperature": 1.0, "mopd.top_p": 1.0, "mopd.overlong_filtering": False,
    "mopd.importance_mask_low": 0.5, "mopd.importance_mask_high": 2.0, "mopd.loss_normalization": "per_sequence",
    "mopd.advantage_estimator": "opd", "mopd.adam_betas": (0.9, 0.95), "mopd.weight_decay": 0.0,
    "mopd.teacher_routing.math": "stage:sft",
    "rlhf.prompts_per_step": 128, "rlhf.generations_per_prompt": 16, "rlhf.max_response_tokens": 16384,
    "rlhf.lr": 3e-6, "rlhf.steps": 25, "rlhf.kl_coef": 0.03, "rlhf.overlong_filtering": True, "rlhf.mode": "thinking",
    "long_context_rl.max_input_tokens": 32768, "long_context_rl.max_total_sequence_length": 49152, "long_context_rl.max_response_tokens": 49152,
    "long_context_rl.lr": 3e-6, "long_context_rl.steps": 30, "long_context_rl.overlong_filtering": True,
    "code_rl.max_response_tokens": 118784, "code_rl.top_p": 0.95, "code_rl.steps": 22, "code_rl.lr": 3e-6,
    "code_rl.prompts_per_step": 128, "code_rl.generations_per_prompt": 16,
    "swe_rl.agentless.max_total_sequence_length": 98304, "swe_rl.agentless.prompt_mask_max_reward": 0.5,
    "swe_rl.agentless.lr": 3e-6,
    "swe_rl.agentic.prompts_per_step": 16, "swe_rl.agentic.generations_per_prompt": 64,
    "swe_rl.agentic.temperature": 0.8, "swe_rl.agentic.mode": "instruct", "swe_rl.agentic.max_turns": 200,
    "swe_rl.agentic.min_lr": 0.0, "swe_rl.agentic.warmup_steps": 10,
    "model.architecture.num_experts_per_tok": 6, "model.architecture.hidden_size": 2688,
    "model.architecture.n_routed_experts": 128, "model.architecture.vocab_size": 131072,
}


def _get(cfg, dotted: str):
    node = cfg
    for part in dotted.split("."):
        node = node[part] if isinstance(node, dict) else getattr(node, part)
    return node


@pytest.mark.parametrize("key,expected", sorted(PAPER.items()))
def test_paper_profile_values(key, expected):
    got = _get(load_config("paper"), key)
    if isinstance(expected, tuple):
        got = tuple(got)
    assert got == pytest.approx(expected) if isinstance(expected, float) else got == expected, key


def test_every_paper_value_cites_a_source():
    """Each non-trivial line of the paper stage profile carries a comment (section/table/[default])."""
    text = (PROFILES_DIR / "paper" / "stages.yaml").read_text()
    headers = [l for l in text.splitlines() if l and not l.startswith(" ") and not l.startswith("#")]
    assert len(headers) >= 5 and all("#" in h for h in headers), headers


def test_stage_plan_order():
    assert STAGE_PLAN == ("sft", "if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl",
                          "swe_rl")
    for profile in ("tiny", "paper"):
        cfg = load_config(profile)
        for s in STAGE_PLAN:
            cfg.stage(s)  # every stage has a section in both profiles


def test_tiny_is_default_and_small():
    cfg = load_config()
    assert cfg.profile == "tiny" and cfg.model.source == "build_tiny" and cfg.run.until == "swe_rl"  # every stage


def _copy_tiny(tmp_path, name):
    prof = tmp_path / name
    prof.mkdir()
    for f in (PROFILES_DIR / "tiny").glob("*.yaml"):
        (prof / f.name).write_text(f.read_text())
    return prof


def test_unknown_key_names_key_and_file(tmp_path):
    prof = _copy_tiny(tmp_path, "bad")
    stages = prof / "stages.yaml"
    stages.write_text(stages.read_text().replace("sft:\n", "sft:\n  learning_rate: 1.0\n", 1))
    with pytest.raises(ConfigError) as e:
        load_config(prof)
    msg = str(e.value)
    assert "sft.learning_rate" in msg and "unknown key" in msg and str(stages) in msg


def test_wrong_type_names_key_and_file(tmp_path):
    prof = _copy_tiny(tmp_path, "bad2")
    run = prof / "run.yaml"
    run.write_text(run.read_text().replace("seed: 0", "seed: zero"))
    with pytest.raises(ConfigError) as e:
        load_config(prof)
    assert "run.seed" in str(e.value) and str(run) in str(e.value)


def _section_paths(cfg) -> dict[str, str]:
    """{section class name: the dotted path of its first instance} over the loaded config tree (dict values too)."""
    found: dict[str, str] = {}

    def walk(section, path):
        found.setdefault(type(section).__name__, path)
        for name in type(section).model_fields:
            value = getattr(section, name)
            here = f"{path}.{name}" if path else name
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, v in items:
                if isinstance(v, BaseModel):
                    walk(v, here if key is None else f"{here}.{key}")

    walk(cfg, "")
    return found


@pytest.mark.parametrize("profile", ["tiny", "paper"])
def test_every_section_refuses_a_key_it_does_not_define(profile):
    """A misspelt key is an error in every section, nested ones and dict entries included, never silently dropped."""
    paths = _section_paths(load_config(profile))
    assert {"RecipeConfig", "SFTConfig", "JudgeConfig", "SandboxSection", "Parallelism", "ProofTTSBudget"} <= set(paths)
    for path in paths.values():
        key = f"{path}.no_such_key" if path else "no_such_key"
        with pytest.raises(ConfigError, match=rf"override '{re.escape(key)}=1'.*unknown key"):
            load_config(profile, [f"{key}=1"])


def test_stage_settings_are_checked_when_set_on_a_loaded_config():
    """The stage hyperparameters and their judge refuse a bad value set after loading, as a profile's would be."""
    cfg = load_config("tiny")
    with pytest.raises(ValidationError, match="lr"):
        cfg.sft.lr = 0
    with pytest.raises(ValidationError, match="top_percentile"):
        cfg.rlhf.judge.top_percentile = 2.0
    cfg.sft.lr = 1e-4
    assert cfg.sft.lr == 1e-4


def test_section_defined_twice_is_refused(tmp_path):
    prof = _copy_tiny(tmp_path, "dup")
    (prof / "zz.yaml").write_text("sft:\n  lr: 1.0\n")
    with pytest.raises(ConfigError, match="defined in"):
        load_config(prof)


def test_overrides_apply_and_validate():
    cfg = load_config("tiny", ["sft.steps=7", "mopd.importance_mask_high=3.0", "if_rl.adam_betas=[0.8, 0.9]"])
    assert cfg.sft.steps == 7 and cfg.mopd.importance_mask_high == 3.0 and tuple(cfg.if_rl.adam_betas) == (0.8, 0.9)
    with pytest.raises(ConfigError, match=r"override 'sft.stepz=3'.*sft.stepz.*unknown key"):
        load_config("tiny", ["sft.stepz=3"])
    with pytest.raises(ConfigError, match=r"override 'sft.steps=many'"):
        load_config("tiny", ["sft.steps=many"])
    with pytest.raises(ConfigError, match="unknown key 'nosuch'"):
        load_config("tiny", ["nosuch.x=1"])
    with pytest.raises(ConfigError, match="expected key=value"):
        load_config("tiny", ["sft.steps"])


def test_semantic_validation():
    with pytest.raises(ConfigError, match="bracket 1.0"):
        load_config("tiny", ["mopd.importance_mask_low=1.5"])
    with pytest.raises(ConfigError, match="generations_per_prompt >= 2"):
        load_config("tiny", ["if_rl.generations_per_prompt=1"])
    with pytest.raises(ConfigError, match=r"sft.domain_fraction: unknown domain\(s\) longcontext"):
        load_config("tiny", ["sft.domain_fraction={longcontext: 0.5}"])
    with pytest.raises(ConfigError, match=r"domain_fraction: each value must be above 0"):
        load_config("tiny", ["sft.domain_fraction={long_context: 0.0}"])
    with pytest.raises(ConfigError, match=r"long_context_min_people \(7\) > long_context_people \(6\)"):
        load_config("tiny", ["domains.tiny.long_context_min_people=7"])


def test_sft_domain_fraction_keeps_the_first_records():
    from recipe.train.sft import sft_records
    train = [{"id": i, "metadata": {"pool": "rl" if i % 3 == 0 else "sft"}} for i in range(12)]
    sft_ids = [r["id"] for r in train if r["metadata"]["pool"] == "sft"]          # 8 records
    assert [r["id"] for r in sft_records(train)] == sft_ids
    assert [r["id"] for r in sft_records(train, 1.0)] == sft_ids
    assert [r["id"] for r in sft_records(train, 0.5)] == sft_ids[:4]
    assert [r["id"] for r in sft_records(train, 0.3)] == sft_ids[:3]           # rounded up: 2.4 -> 3
    assert [r["id"] for r in sft_records(train, 2.0)] == sft_ids * 2           # above 1: repeated
    assert [r["id"] for r in sft_records(train, 1.5)] == sft_ids + sft_ids[:4]


def test_sft_trains_on_the_sft_rendering_of_a_prompt_where_a_record_has_one():
    from recipe.train.sft import sft_records
    short = [{"role": "user", "content": "short document"}]
    train = [{"id": 0, "messages": [{"role": "user", "content": "long document"}],
              "metadata": {"pool": "sft", "sft_messages": short}},
             {"id": 1, "messages": [{"role": "user", "content": "plain"}], "metadata": {"pool": "sft"}}]
    got = sft_records(train)
    assert [r["messages"] for r in got] == [short, [{"role": "user", "content": "plain"}]]
    assert train[0]["messages"] == [{"role": "user", "content": "long document"}]  # the record itself is untouched


def test_resolved_config_round_trips(tmp_path):
    from recipe.config import config_hash, config_to_yaml
    cfg = load_config("paper", ["mopd.steps=60"])
    p = tmp_path / "config.yaml"
    p.write_text(config_to_yaml(cfg))
    again = load_config(p)
    assert config_hash(again) == config_hash(cfg) and again.mopd.steps == 60
