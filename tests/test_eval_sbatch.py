"""The paper-scale eval job: vllm serve from the pinned container with the model card's flags, health wait, then
recipe eval against the endpoint; the serving command is recorded next to the results. Checked with shellcheck."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

from typer.testing import CliRunner

from recipe.cli import app


def test_rendered_job_serves_waits_evaluates_and_records(tmp_path):
    script = tmp_path / "eval.sbatch"
    res = CliRunner().invoke(app, ["eval", "sbatch", "--model-path", "nvidia/Nemotron-Cascade-2-30B-A3B",
                                   "--served-name", "cascade2", "--suite", "aime25", "--suite", "ifbench",
                                   "--out-dir", "/lustre/eval/cascade2", "--script", str(script),
                                   "--model-revision", "abc123"])
    assert res.exit_code == 0, res.output
    text = script.read_text()
    serve = re.search(r"^SERVE_CMD=\((.*)\)$", text, re.M).group(1)
    for flag in ("--trust-remote-code", "--mamba-ssm-cache-dtype float32", "--reasoning-parser nemotron_v3",
                 "--tool-call-parser qwen3_coder", "--max-model-len 262144", "--tensor-parallel-size 8"):
        assert flag in serve, flag
    assert "--container-image=vllm/vllm-openai:v0.17.1" in text
    assert text.index("serving.json") < text.index("srun") < text.index("/health") < text.index("recipe eval")
    line = next(x for x in text.splitlines() if x.startswith("recipe eval"))
    assert "--endpoint http://127.0.0.1:8000 --model cascade2 --server vllm" in line
    assert "--suite aime25 --suite ifbench" in line and "--model-revision abc123" in line
    recorded = json.loads(text.split("<<'SERVING_JSON'\n")[1].split("SERVING_JSON")[0])
    assert recorded["command"][:3] == ["vllm", "serve", "nvidia/Nemotron-Cascade-2-30B-A3B"]
    assert recorded["image"] == "vllm/vllm-openai:v0.17.1" and recorded["model_revision"] == "abc123"
    sc = shutil.which("shellcheck") or str(__import__("pathlib").Path(sys.executable).parent / "shellcheck")
    out = subprocess.run([sc, "-s", "bash", str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
