"""The ``small`` profile validates through the typed config and every value in it names its reason; the
``@small-smoke`` override set applies on top of it; the plain-token thinking template renders the same string in
Python and Jinja and keeps the model's own ChatML framing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from recipe.config import load_config
from recipe.config.loader import PROFILES_DIR, ConfigError

SMALL = PROFILES_DIR / "small"
_KEY_LINE = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][\w.]*):(.*)$")


def _value_lines_without_reason(path: Path) -> list[str]:
    """Lines that set a value (``key: value``, not a section opener) and carry no ``# reason`` comment."""
    bad = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = _KEY_LINE.match(line)
        if not m:
            continue
        rest = m.group(4)
        value, _, comment = rest.partition(" #")
        value = re.sub(r"^\s*&\w+\s*", "", value).strip()     # a YAML anchor on a section opener
        if value and not comment.strip():
            bad.append(f"{path.name}:{n}: {line.strip()}")
    return bad


def test_small_profile_validates_and_is_the_real_model():
    cfg = load_config("small")
    assert cfg.profile == "small"
    assert cfg.model.source == "pretrained" and cfg.model.thinking == "plain_tokens"
    assert cfg.run.backend == "local" and cfg.run.device == "auto"
    assert cfg.domains.generator == "tiny" and cfg.domains.tiny is not None
    # every stage of the plan is configured and runs locally
    assert cfg.swe_rl.implemented_locally and cfg.run.until == "swe_rl"
    for stage in cfg.stage_plan[1:]:
        assert cfg.input_stage(stage) is not None


def test_every_small_value_names_its_reason():
    files = sorted(SMALL.glob("*.yaml"))
    assert {f.name for f in files} >= {"run.yaml", "stages.yaml", "data.yaml", "benchmarks.yaml", "verify.yaml"}
    missing = [ln for f in files for ln in _value_lines_without_reason(f)]
    assert not missing, "values without a reason:\n" + "\n".join(missing)


def test_reason_check_catches_a_bare_value(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("sft:\n  lr: 1.0e-5   # why\n  steps: 3\n  judge: &j\n    kind: a  # why\n")
    assert _value_lines_without_reason(p) == ["x.yaml:3: steps: 3"]


def test_smoke_override_set_applies_and_unknown_keys_are_named(tmp_path):
    cfg = load_config("small", ["@small-smoke"])
    assert cfg.sft.steps == 2 and cfg.swe_rl.agentic.steps == 2 and cfg.run.device == "cpu"
    assert all(cfg.stage(s).steps == 2 for s in cfg.stage_plan if s not in ("sft", "swe_rl"))
    assert cfg.benchmarks.eval_phase.real_suites == {"ifeval": 4}
    # a later -s wins over the set's value
    assert load_config("small", ["@small-smoke", "sft.steps=3"]).sft.steps == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("sft.stepz: 2\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: sft.stepz.*sft.stepz: unknown key"):
        load_config("small", [f"@{bad}"])
    with pytest.raises(ConfigError, match="unknown override set 'nope'"):
        load_config("small", ["@nope"])


def test_the_cpu_sets_give_every_value_a_reason_and_train_if_rl_from_the_imported_model():
    from recipe.config.override_sets import OVERRIDES_DIR
    for name in ("small-cpu", "small-cpu-smoke"):
        missing = _value_lines_without_reason(OVERRIDES_DIR / f"{name}.yaml")
        assert not missing, "values without a reason:\n" + "\n".join(missing)
    cfg = load_config("small", ["@small-cpu"])
    assert cfg.run.until == "if_rl" and cfg.run.device == "cpu" and cfg.sft.steps == 0   # no SFT: the deviation
    assert cfg.domains.names == ["instruction_following"]
    assert cfg.domains.tiny.generators == {"instruction_following": "if_registry"}     # the decontaminated generator
    rl = cfg.if_rl
    assert rl.mode == "instruct" and rl.if_grading == "fraction" and not cfg.evaluation.thinking
    assert rl.prompts_per_step * rl.generations_per_prompt == 64 and rl.max_response_tokens == 256
    # the set's other DEVIATION: at a 256-token cap a cut answer is graded as written and masked, not rewarded 0
    assert not rl.overlong_reward_zero and rl.overlong_filtering
    assert cfg.rlhf.overlong_filtering == load_config("small").rlhf.overlong_filtering   # only IF-RL's rule changes
    assert cfg.run.train_micro_batch_size == 4 and cfg.run.logprob_batch_size == 8   # the small profile's defaults
    assert not cfg.benchmarks.eval_phase.thinking and cfg.benchmarks.compare_to_start.stages == ["if_rl"]
    smoke = load_config("small", ["@small-cpu", "@small-cpu-smoke"])
    assert smoke.if_rl.steps == 2 and smoke.sft.steps == 0 and smoke.benchmarks.compare_to_start.if_max_tokens == 8


def test_pretrained_model_needs_no_nemotron_shape_but_tiny_does():
    with pytest.raises(ConfigError, match="build_tiny needs model.architecture"):
        load_config("tiny", ["model.architecture=null"])


def test_plain_thinking_template_python_equals_jinja_and_keeps_chatml():
    from transformers.utils.chat_template_utils import render_jinja_template

    from recipe.model.chat_render import render_chat_py
    from recipe.model.plain_thinking import default_system_of, plain_thinking_system, plain_thinking_template
    smol = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
            "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
            "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
    system = default_system_of(smol)
    assert system == "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    template = plain_thinking_template(system)
    assert plain_thinking_system(template) == system
    assert plain_thinking_system(template.replace("<think>", "<reason>")) is None
    tools = [{"type": "function", "function": {"name": "add", "description": "Add.", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer", "description": "x"}}}}}]
    convs = [
        ([{"role": "user", "content": "2+2?"}], None),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
          {"role": "assistant", "content": "ok", "reasoning_content": "greet"}], None),
        ([{"role": "user", "content": "add 1 2"}, {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "add", "arguments": {"a": 1}}}]}, {"role": "tool", "content": "3"}], tools),
    ]
    for messages, tl in convs:
        for thinking in (True, False):
            for gen in (True, False):
                py = render_chat_py(messages, tl, enable_thinking=thinking, add_generation_prompt=gen,
                                    default_system=system)
                (jj,), _ = render_jinja_template(conversations=[messages], chat_template=template, tools=tl,
                                                 enable_thinking=thinking, add_generation_prompt=gen)
                assert py == jj
    (first,), _ = render_jinja_template(conversations=[convs[0][0]], chat_template=template,
                                        add_generation_prompt=True, enable_thinking=True)
    assert first == (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n"
                     "<|im_start|>assistant\n<think>\n")


def test_released_switch_splits_curated_records_by_domain(tmp_path, monkeypatch):
    """domains.generator: released reads `recipe data curate --out`'s records into the per-domain split files."""
    import json as _json

    from recipe.domains import build_tiny_splits
    from recipe.domains.data_phase import load_splits, prepare_data
    from recipe.runs import RunDir
    names = ["math", "instruction_following"]
    cfg = load_config("small", ["domains.tiny.train_items=20", "domains.tiny.val_items=10"])
    made = build_tiny_splits(cfg.domains.tiny, names, 0)
    (tmp_path / "cur" / "records").mkdir(parents=True)
    for split, key in (("train", "train"), ("validation", "val")):
        rows = [r for n in names for r in made[n][key]]
        (tmp_path / "cur" / "records" / f"{split}.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in rows))
    over = ["domains.generator=released", f"domains.released_records={tmp_path / 'cur'}",
            f"domains.names={_json.dumps(names)}", "evaluation.max_new_tokens_per_domain={}", "sft.domain_fraction={}"]
    cfg = load_config("small", over)
    run = RunDir(tmp_path / "run")
    prepare_data(run, cfg)
    splits = load_splits(run, cfg)
    for n in names:
        assert splits[n]["train"] == made[n]["train"]
        val_ids = {r["id"] for r in splits[n]["val"]}
        sel_ids = {r["id"] for r in splits[n]["select"]}
        assert val_ids and sel_ids and not val_ids & sel_ids
        assert val_ids | sel_ids == {r["id"] for r in made[n]["val"]}
    with pytest.raises(ValueError, match="no train or validation records for domain.*code"):
        prepare_data(RunDir(tmp_path / "run2"), load_config("small", [*over[:2], "domains.names=[math, code]",
                                                                      *over[3:]]))
