"""`recipe data curate --profile paper` writes the `<data_root>/<stage>/{train,validation}.jsonl`
layout that `recipe cluster render` reads (SFT: curate's sft/; SWE: swe_rl/agentless|agentic/)."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from recipe.cli.data_cmd import app
from recipe.cluster.render import render_stage
from recipe.config import load_config
from recipe.runs.layout import RunDir

RL = Path(__file__).parent / "fixtures" / "data" / "hub" / "Nemotron-Cascade-2-RL-data"


def _rows(p: Path) -> list[dict]:
    return [json.loads(ln) for ln in p.read_text().splitlines() if ln.strip()] if p.is_file() else []


def test_paper_curate_writes_the_layout_render_reads(tmp_path):
    out = tmp_path / "data_root"
    r = CliRunner().invoke(app, ["curate", "--input", str(RL), "--out", str(out), "--profile", "paper",
                                 "--backend", "inprocess", "--set", "data.split.validation_fraction=0.3",
                                 # the paper's benchmark files are not here (decontamination: test_data_decontam_suites)
                                 "--set", "data.decontam.benchmarks=[]"])
    assert r.exit_code == 0, r.output
    assert "stage layout" in r.output
    both = lambda d: _rows(d / "train.jsonl") + _rows(d / "validation.jsonl")  # noqa: E731
    for stage in ("if_rl", "multi_domain_rl", "rlhf_branch", "mopd", "rlhf", "long_context_rl", "code_rl"):
        assert (out / stage / "train.jsonl").is_file() and (out / stage / "validation.jsonl").is_file(), stage
    assert (out / "swe_rl" / "agentless" / "train.jsonl").is_file() and (out / "swe_rl" / "agentic" / "train.jsonl").is_file()
    # a released config goes to its own stage only
    if_rows, md_rows, mopd_rows = both(out / "if_rl"), both(out / "multi_domain_rl"), both(out / "mopd")
    assert len(if_rows) == 6 and {r["agent_ref"]["name"] for r in if_rows} == {"instruction_following_simple_agent"}
    assert len(md_rows) == 7
    # MOPD rows: those of the MOPD config that survived cross-config dedup (3 repeat IF-RL / multi-domain prompts)
    rep = json.loads((out / "report.json").read_text())
    kept_mopd = sum(s["kept"] for s in rep["sources"] if "MOPD" in s["name"])
    assert len(mopd_rows) == kept_mopd > 0 and "math_with_judge_simple_agent" in {r["agent_ref"]["name"] for r in mopd_rows}
    assert not any(r["agent_ref"]["name"] == "math_with_judge_simple_agent" for r in if_rows + md_rows)
    assert [r["agent_ref"]["name"] for r in both(out / "swe_rl" / "agentic")] == ["swe_agents_train"]
    assert both(out / "swe_rl" / "agentless") == []
    assert both(out / "rlhf") == []          # no RLHF prompts in this input
    # render reads them: paths, hashes and agent counts land in provenance
    cfg = load_config("paper", overrides=["cluster.account=a", "cluster.partition=p", "cluster.hf_home=/shared/hf", f"cluster.data_root={out}"])
    res = render_stage(cfg, RunDir(tmp_path / "runs" / "r"), "if_rl", allow_unpinned=True, allow_dirty=True)
    data = json.loads(res.provenance_path.read_text())["jobs"]["if_rl"]["data"]
    assert data["train"]["path"] == str(out / "if_rl" / "train.jsonl") and data["train"]["exists"]
    n = {k: sum(v.values()) for k, v in data["agents"].items()}
    assert n["train"] + n["validation"] == 6


def test_rows_built_from_scratch_name_agents_the_renderer_routes():
    """Curation names agents for rows it builds itself; they must be agents the pinned Gym has and the cluster stage
    serves (before: rlhf rows got the non-existent genrm_compare_agent)."""
    from recipe.data.formats.nemo_gym import AGENT_FOR_DOMAIN
    from recipe.data.gym_envs import agent_for

    for domain in ("math", "instruction_following", "mcqa", "workplace_tools", "structured_output", "code", "rlhf"):
        assert AGENT_FOR_DOMAIN[domain] == agent_for(domain), domain
    assert AGENT_FOR_DOMAIN["swe"] == agent_for("swe", phase="agentic")
