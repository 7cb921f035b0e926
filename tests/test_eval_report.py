"""`recipe eval report`: ours beside the paper's Table 1 values (written once in the paper profile, each cited), with
both settings, flagging the ones that differ; benchmarks we did not run or could not load are listed as such."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from recipe.cli import app
from recipe.config import load_config
from recipe.eval.report.results_tables import paper_comparison


def _result(suite, score, k, max_tokens, T, top_p, thinking=True, limit=None):
    return {"suite": suite, "score": score, "stderr": 1.5, "n": 30, "k": k, "complete": True,
            "settings": {"sampling": {"max_tokens": max_tokens, "temperature": T, "top_p": top_p, "thinking": thinking},
                         "judge": None, "source": {"limit": limit} if limit else {}}}


def test_paper_values_are_cited_once_in_the_paper_profile():
    suites = load_config("paper").benchmarks.suites
    assert suites["aime25"].paper.value == 92.4 and suites["ifbench"].paper.value == 82.9
    cited = [e.paper.citation for e in suites.values() if e.paper]
    assert len(cited) >= 2 and all("2603.19220" in c for c in cited)
    assert not load_config("tiny").benchmarks.suites  # tiny does not repeat paper values


def test_comparison_flags_differing_settings(tmp_path):
    res = {"aime25": _result("aime25", 12.0, 8, 1024, 1.0, 1.0),
           "hmmt_feb25": _result("hmmt_feb25", 5.0, 64, 131072, 1.0, 1.0),
           "ifbench": {"suite": "ifbench", "unavailable": "no mirror"}}
    rows = {r["benchmark"]: r for r in paper_comparison(res)}
    assert rows["aime25"]["differs"] == ["k", "max_tokens"] and rows["aime25"]["paper"]["value"] == 92.4
    assert rows["hmmt_feb25"]["differs"] == []
    assert rows["ifbench"]["ours"] is None and rows["ifbench"]["unavailable"] == "no mirror"
    assert rows["livecodebench"]["ours"] is None and rows["livecodebench"]["paper"]["value"] == 87.2
    for name, r in res.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(r))
    out = CliRunner().invoke(app, ["eval", "report", str(tmp_path)], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    assert "92.4" in out.output and "12.0 ± 1.5 (n=30)" in out.output and "k, max_tokens" in out.output
    assert "not run" in out.output and "unavailable" in out.output
