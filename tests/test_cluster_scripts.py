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


def _run(script, tmp, **env):
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, env={**_env(tmp), **env})


def test_convert_waits_for_final_step_then_converts(setup):
    tmp, ckpts, out, script = setup
    p = _run(script, tmp)
    assert p.returncode == 0 and "no step_N checkpoint" in p.stdout and not out.exists()
    _ckpt(ckpts, 10)
    (ckpts / "tmp_step_20").mkdir()                       # half-written: not a step
    p = _run(script, tmp)
    assert p.returncode == 0 and "step_10 < 20" in p.stdout and not out.exists()
    # the stage's last segment ends unfinished: that fails, so the next stage (afterok) never starts
    p = _run(script, tmp, RECIPE_FINAL_SEGMENT="1")
    assert p.returncode == 1 and "step_10 < 20" in p.stderr and "last segment" in p.stderr and not out.exists()
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


def test_a_rerun_is_converted_again_and_its_stale_caches_moved_aside(setup):
    """resume=never / from_step write new step dirs at the same paths: the old HF folder and NeMo-RL's HF->Megatron
    cache of it (the next stage's input, reused while iter_0000000 exists) must not survive."""
    tmp, ckpts, out, script = setup
    _ckpt(ckpts, 20)
    assert _run(script, tmp).returncode == 0 and (out / "config.json").is_file()
    (out / "marker").write_text("first attempt")
    mcore = tmp / "hf" / "nemo_rl"
    cache = mcore / ("model_" + str(out).replace("/", "_")) / "iter_0000000"
    cache.mkdir(parents=True)
    env = {"NRL_MEGATRON_CHECKPOINT_DIR": str(mcore)}
    assert "already converted" in _run(script, tmp, **env).stdout and cache.is_dir()   # same checkpoint: kept
    import shutil
    import time

    shutil.rmtree(ckpts / "step_20")           # the re-run's own step_20 (a new directory, a later mtime)
    _ckpt(ckpts, 20)
    later = time.time() + 5
    os.utime(ckpts / "step_20", (later, later))
    p = _run(script, tmp, **env)
    assert p.returncode == 0, p.stderr
    assert "already converted" not in p.stdout and "converted step_20" in p.stdout
    assert not (out / "marker").exists()                                    # a fresh conversion ...
    aside = list(out.parent.glob("checkpoint.replaced-*"))
    assert len(aside) == 1 and (aside[0] / "marker").read_text() == "first attempt"   # ... the old one kept aside
    assert not cache.exists() and list(mcore.glob("model_*.replaced-*/iter_0000000"))
    assert (tmp / "calls.log").read_text().count("--megatron-ckpt-path") == 2


def test_convert_refuses_without_chat_template(setup):
    tmp, ckpts, out, script = setup
    _ckpt(ckpts, 20, template=False)
    p = _run(script, tmp)
    assert p.returncode == 1 and "no chat template" in p.stderr and not out.exists()


def test_launch_checks_commit_and_chains_segments(tmp_path, monkeypatch):
    from recipe.cluster.render import render_stage
    from recipe.config import load_config
    from recipe.runs.layout import RunDir

    res = render_stage(load_config("paper", overrides=["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"]), RunDir(tmp_path / "run"), "rlhf", allow_unpinned=True, allow_dirty=True)
    _bin(tmp_path, "sbatch", '#!/usr/bin/env bash\necho "sbatch $* | $COMMAND | final=$RECIPE_FINAL_SEGMENT" >> "$FAKE_LOG"\n'
                              'wc -l < "$FAKE_LOG"\n')   # job id = call number
    _bin(tmp_path, "git", f'#!/usr/bin/env bash\necho "${{FAKE_COMMIT:-{RELEASE_COMMIT}}}"\n')
    env = {**_env(tmp_path), "NEMO_RL_CHECKOUT": str(tmp_path / "RL"), "SEGMENTS": "2"}
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    # the conversion is its own one-node job after the last segment, in the same container
    convert = calls.pop()
    assert "--job-name=recipe-run-rlhf_convert --nodes=1 " in convert and "--dependency=afterok:2 " in convert
    assert "--container-image=" in convert and "rlhf.convert.sh" in convert and convert.endswith("final=1")
    assert "submitted 3" in p.stdout
    assert len(calls) == 2 and all("--dependency=singleton" in c and "--job-name=recipe-run-rlhf" in c for c in calls)
    assert all(c.split(" | ")[0].endswith(str(tmp_path / "RL" / "ray.sub")) for c in calls)
    assert "fingerprint_check.py" in calls[0] and "run_grpo_nemo_gym.py" in calls[0] and "convert.sh --check" in calls[0]
    assert "rlhf.convert.sh --finished || uv run python examples/nemo_gym/run_grpo_nemo_gym.py" in calls[0]
    assert [c.rsplit("final=", 1)[1] for c in calls] == ["0", "1"]   # only the last segment may not end unfinished
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True,
                       env={**env, "FAKE_COMMIT": "0" * 40})
    assert p.returncode == 1 and "not v0.7.0" in p.stderr
    env.pop("NEMO_RL_CHECKOUT")
    p = subprocess.run(["bash", str(res.jobs[0].launch_path)], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "NEMO_RL_CHECKOUT" in p.stderr


def test_segments_per_stage_follow_steps_and_the_profiles_step_time(tmp_path):
    import math

    from recipe.cluster.render import render_stage
    from recipe.config import load_config
    from recipe.config.cluster_section import parse_slurm_time
    from recipe.runs.layout import RunDir

    base = ["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf"]
    counts = {}
    for steps in (25, 250):
        cfg = load_config("paper", overrides=base + [f"rlhf.steps={steps}"])
        job = render_stage(cfg, RunDir(tmp_path / f"r{steps}"), "rlhf", allow_unpinned=True, allow_dirty=True).jobs[0]
        cl, res = cfg.cluster, cfg.cluster.stages["rlhf"]
        usable = parse_slurm_time(cl.time_limit) - cl.checkpoint_must_save_by_margin_min * 60 - cl.segment_startup_s
        assert job.segments.segments == math.ceil(steps * res.step_time_s / usable)
        assert f'SEGMENTS="${{SEGMENTS:-{job.segments.segments}}}"' in job.launch_path.read_text()
        counts[steps] = job.segments.segments
    assert counts[250] > counts[25] >= 1
    # a stage whose step does not fit a segment is refused with the fix named
    cfg = load_config("paper", overrides=base + ["cluster.stages.rlhf.step_time_s=20000"])
    with pytest.raises(ValueError, match="raise the stage's time_limit"):
        render_stage(cfg, RunDir(tmp_path / "x"), "rlhf", allow_unpinned=True, allow_dirty=True)


def test_a_segments_check_reports_without_converting(setup):
    tmp, ckpts, out, script = setup

    def finished() -> int:
        return subprocess.run(["bash", str(script), "--finished"], capture_output=True, env=_env(tmp)).returncode

    assert finished() == 1                                  # no step yet: the segment trains
    _ckpt(ckpts, 10)
    assert finished() == 1
    _ckpt(ckpts, 20)
    assert finished() == 0                                  # a segment after the final step skips the trainer
    p = subprocess.run(["bash", str(script), "--check"], capture_output=True, text=True, env=_env(tmp))
    assert p.returncode == 0 and "conversion job converts it" in p.stdout and not out.exists()
    assert not (tmp / "calls.log").exists()                 # no converter ran inside the training allocation
