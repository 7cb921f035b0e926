"""Execute the rendered shell scripts with stand-ins for the cluster tools (fake ``uv``, ``sbatch``, ``git`` on
PATH): the conversion's step selection, tokenizer / generation_config copy, completeness checks and atomic
rename, and the launcher's commit check and segment chaining."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from recipe.cluster.release import RELEASE_COMMIT
from recipe.cluster.sbatch import convert_script

FAKE_UV = """#!/usr/bin/env bash
# stand-in for `uv run --extra mcore python convert_megatron_to_hf.py ... --hf-ckpt-path OUT`
echo "$@" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = "--hf-ckpt-path" ]; then out="$2"; fi
  shift
done
mkdir -p "$out"
echo '{"architectures": ["NemotronHForCausalLM"]}' > "$out/config.json"
: > "$out/model.safetensors"
"""


def _bin(tmp: Path, name: str, body: str) -> None:
    p = tmp / "bin" / name
    p.parent.mkdir(exist_ok=True)
    p.write_text(body)
    p.chmod(0o755)


def _env(tmp: Path) -> dict:
    return {**os.environ, "PATH": f"{tmp / 'bin'}:{os.environ['PATH']}", "FAKE_LOG": str(tmp / "calls.log"),
            "NEMO_RL_DIR": str(tmp)}


def _ckpt(root: Path, step: int, *, template: bool = True) -> None:
    d = root / f"step_{step}"
    (d / "policy/weights/iter_0000000").mkdir(parents=True)
    tok = d / "policy/tokenizer"
    tok.mkdir(parents=True)
    cfg = {"eos_token": "<|im_end|>"}
    if template:
        cfg["chat_template"] = "{{ messages }}"
    (tok / "tokenizer_config.json").write_text(json.dumps(cfg))
    (tok / "tokenizer.json").write_text("{}")
    (d / "config.yaml").write_text("policy: {}\n")


@pytest.fixture
def setup(tmp_path):
    _bin(tmp_path, "uv", FAKE_UV)
    model = tmp_path / "prev_checkpoint"
    model.mkdir()
    (model / "generation_config.json").write_text('{"temperature": 1.0, "top_p": 0.95}')
    ckpts, out = tmp_path / "ckpts", tmp_path / "stage" / "checkpoint"
    script = tmp_path / "convert.sh"
    script.write_text(convert_script(checkpoint_dir=str(ckpts), hf_out=str(out), input_model=str(model),
                                     input_revision=None, max_steps=20))
    return tmp_path, ckpts, out, script


def _run(script, tmp):
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, env=_env(tmp))


def test_convert_waits_for_final_step_then_converts(setup):
    tmp, ckpts, out, script = setup
    p = _run(script, tmp)
    assert p.returncode == 0 and "no step_N checkpoint" in p.stderr and not out.exists()
    _ckpt(ckpts, 10)
    (ckpts / "tmp_step_20").mkdir()                       # half-written: not a step
    p = _run(script, tmp)
    assert p.returncode == 0 and "step_10 < 20" in p.stdout and not out.exists()
    _ckpt(ckpts, 20)
    p = _run(script, tmp)
    assert p.returncode == 0, p.stderr
    assert "--megatron-ckpt-path " + str(ckpts / "step_20/policy/weights/iter_0000000") in (tmp / "calls.log").read_text()
    assert json.loads((out / "generation_config.json").read_text())["top_p"] == 0.95
    assert "chat_template" in json.loads((out / "tokenizer_config.json").read_text())
    assert (out / "tokenizer.json").is_file() and (out / "model.safetensors").is_file()
    assert json.loads((out / "nemo_rl_source.json").read_text())["source_step"] == 20
    assert not list(out.parent.glob("checkpoint.tmp-*"))
    assert "already converted" in _run(script, tmp).stdout


def test_convert_refuses_without_chat_template(setup):
    tmp, ckpts, out, script = setup
    _ckpt(ckpts, 20, template=False)
    p = _run(script, tmp)
    assert p.returncode == 1 and "no chat template" in p.stderr and not out.exists()


def test_launch_checks_commit_and_chains_segments(tmp_path, monkeypatch):
    from recipe.cluster.render import render_stage
    from recipe.config import load_config
    from recipe.runs.layout import RunDir

    res = render_stage(load_config("paper", overrides=["cluster.account=a", "cluster.partition=p"]), RunDir(tmp_path / "run"), "rlhf", allow_unpinned=True, allow_dirty=True)
    _bin(tmp_path, "sbatch", '#!/usr/bin/env bash\necho "sbatch $* | $COMMAND" >> "$FAKE_LOG"\n')
    _bin(tmp_path, "git", f'#!/usr/bin/env bash\necho "${{FAKE_COMMIT:-{RELEASE_COMMIT}}}"\n')
    env = {**_env(tmp_path), "NEMO_RL_CHECKOUT": str(tmp_path / "RL"), "SEGMENTS": "2"}
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert len(calls) == 2 and all("--dependency=singleton" in c and "--job-name=recipe-run-rlhf" in c for c in calls)
    assert all(c.split(" | ")[0].endswith(str(tmp_path / "RL" / "ray.sub")) for c in calls)
    assert "fingerprint_check.py" in calls[0] and "run_grpo_nemo_gym.py" in calls[0] and "convert.sh" in calls[0]
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True,
                       env={**env, "FAKE_COMMIT": "0" * 40})
    assert p.returncode == 1 and "not v0.7.0" in p.stderr
    env.pop("NEMO_RL_CHECKOUT")
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "NEMO_RL_CHECKOUT" in p.stderr
