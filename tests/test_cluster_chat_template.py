"""At paper scale the SFT job's chat template is the released tokenizer's own, from the pinned
`recipe hub download released-model` folder; the tiny hand-written template renders the same strings as the released
one on the shared fixture conversations wherever the released template file is present."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from recipe.cluster.released_chat_template import read_template, released_template, released_template_dir
from recipe.cluster.render import render_stage
from recipe.config import load_config
from recipe.runs.layout import RunDir

STANDIN = Path(__file__).parent / "fixtures/cluster/hub_downloads"
BASE = ["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"]


def test_paper_sft_uses_the_pinned_released_template(tmp_path):
    dl = tmp_path / "dl"
    shutil.copytree(STANDIN, dl)
    folder = dl / "nvidia/Nemotron-Cascade-2-30B-A3B"
    (folder / "chat_template.jinja").write_text("{{ 'RELEASED-TEMPLATE-MARKER' }}\n")
    cfg = load_config("paper", overrides=BASE + [f"hub.download_dir={dl}"])
    assert cfg.cluster.chat_template == "released"
    res = render_stage(cfg, RunDir(tmp_path / "r"), "sft", allow_unpinned=True, allow_dirty=True)
    written = Path(res.jobs[0].overrides["policy.tokenizer.chat_template"]).read_text()
    assert "RELEASED-TEMPLATE-MARKER" in written and "<|im_start|>" not in written   # not the tiny template
    prov = json.loads(res.provenance_path.read_text())["jobs"]["sft"]["chat_template"]
    assert prov["source"] == "released" and prov["revision"] == cfg.hub.released_model.revision
    # wrong revision in the download -> refused; no download -> refused with the command to run
    m = json.loads((folder / "download_manifest.json").read_text())
    (folder / "download_manifest.json").write_text(json.dumps({**m, "resolved_commit": "0" * 40}))
    with pytest.raises(ValueError, match="the profile pins"):
        render_stage(cfg, RunDir(tmp_path / "r2"), "sft", allow_unpinned=True, allow_dirty=True)
    cfg = load_config("paper", overrides=BASE + [f"hub.download_dir={tmp_path / 'none'}"])
    with pytest.raises(FileNotFoundError, match="recipe hub download released-model"):
        render_stage(cfg, RunDir(tmp_path / "r3"), "sft", allow_unpinned=True, allow_dirty=True)
    # the tiny profile keeps the hand-written template
    assert load_config("tiny").cluster.chat_template == "recipe"


def _released_folder() -> Path | None:
    """A real download of the released tokenizer: $RECIPE_RELEASED_MODEL_DIR or the paper profile's download dir."""
    cands = [os.environ.get("RECIPE_RELEASED_MODEL_DIR")]
    cfg = load_config("paper")
    cands.append(str(released_template_dir(cfg, Path(__file__).parents[1])))
    for c in cands:
        if c and read_template(Path(c)) is not None and "STAND-IN" not in read_template(Path(c)):
            return Path(c)
    return None


def _conversations(shared_dir: Path) -> list[list[dict]]:
    convs = []
    for f in sorted((shared_dir / "fixtures/real/nemo_gym").glob("gym_*.jsonl")):
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            msgs = (row.get("responses_create_params") or {}).get("input")
            if isinstance(msgs, list) and msgs and all(isinstance(m, dict) and isinstance(m.get("content"), str)
                                                       and m.get("role") in ("system", "user", "assistant")
                                                       for m in msgs):
                convs.append([{"role": m["role"], "content": m["content"]} for m in msgs])
    return convs


def test_tiny_template_matches_released_on_fixture_conversations(shared_dir):
    folder = _released_folder()
    if folder is None:
        pytest.skip("the released tokenizer's template is not present here (run `recipe hub download released-model "
                    "--subset config` or set RECIPE_RELEASED_MODEL_DIR); comparison not exercised")
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from recipe.model.chat_template import CHAT_TEMPLATE

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = lambda msg: (_ for _ in ()).throw(ValueError(msg))
    released, tiny = env.from_string(read_template(folder)), env.from_string(CHAT_TEMPLATE)
    convs = _conversations(shared_dir)
    assert convs
    for msgs in convs:
        for kw in ({"add_generation_prompt": True}, {"add_generation_prompt": True, "enable_thinking": False}):
            assert tiny.render(messages=msgs, **kw) == released.render(messages=msgs, **kw), (msgs[:1], kw)


def test_released_template_reader(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": [{"name": "default", "template": "T"}]}))
    assert read_template(tmp_path) == "T"
    (tmp_path / "chat_template.jinja").write_text("J")
    assert read_template(tmp_path) == "J"
