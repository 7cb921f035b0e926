"""notebooks/50_eval.ipynb runs headless under papermill with its documented parameters (checkpoint + suites + the
sampling knobs) and writes results.json per suite, the results table, per-item outcomes and sample responses."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from _tiny_checkpoint import build_tiny_checkpoint

pytestmark = pytest.mark.slow
PROJECT = Path(__file__).resolve().parents[1]


def test_50_eval_runs_under_papermill(tmp_path, shared_dir):
    import papermill
    ck = build_tiny_checkpoint(tmp_path / "ck")
    out = tmp_path / "ev"
    papermill.execute_notebook(
        str(PROJECT / "notebooks" / "50_eval.ipynb"), str(tmp_path / "50_out.ipynb"),
        parameters={"checkpoint": str(ck), "suites": ["aime25", "ifeval"], "k": 2, "temperature": 1.0, "top_p": 1.0,
                    "max_tokens": 8, "thinking": True, "limit": 2, "out": str(out)},
        kernel_name="python3", progress_bar=False, cwd=str(PROJECT),
        kernel_manager_class="recipe.pipeline.kernel.IPCKernelManager")
    for suite in ("aime25", "ifeval"):
        r = json.loads((out / suite / "results.json").read_text())
        assert r["n"] == 2 and r["k"] == 2 and r["settings"]["sampling"]["max_tokens"] == 8
        assert r["settings"]["model_sha256"] and r["settings"]["backend"] == "hf_local"
    text = (tmp_path / "50_out.ipynb").read_text()
    assert "mean_score" in text and "response" in text and "no_answer_%" in text
    nb = json.loads((PROJECT / "notebooks" / "50_eval.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c.get("outputs") for c in code), "committed output-free"
