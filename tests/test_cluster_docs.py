"""docs/RUN_AT_SCALE.md states the resources the paper profile renders (no silent drift)."""
from __future__ import annotations

import re
from pathlib import Path

from recipe.config import load_config

DOC = Path(__file__).resolve().parents[1] / "docs" / "RUN_AT_SCALE.md"


def test_resource_table_matches_paper_profile():
    text = DOC.read_text()
    cl = load_config("paper").cluster
    for stage, res in cl.stages.items():
        m = re.search(rf"^\| {stage} \| (\d+) × (\d+) \| ([^|]*)\|", text, re.M)
        assert m, f"{stage} missing from the resource table"
        # MOPD: the table shows the paper's total with its 3 distinct teachers (SFT, IF/MD, RLHF branch)
        nodes = res.nodes + (3 * res.teachers.nodes_per_teacher if res.teachers else 0)
        assert (int(m.group(1)), int(m.group(2))) == (nodes, res.gpus_per_node), stage
        p = res.parallelism
        layout = f"TP{p.tensor} PP{p.pipeline} CP{p.context} EP{p.expert}"
        assert layout in m.group(3), f"{stage}: doc says {m.group(3)!r}, profile {layout}"


PROFILE = Path(__file__).resolve().parents[1] / "recipe" / "config" / "profiles" / "paper" / "stages.yaml"
GRPO_STAGES = ("if_rl", "multi_domain_rl", "rlhf_branch", "rlhf", "long_context_rl", "code_rl", "agentless", "agentic")


def _stage_lines(stage: str) -> dict[str, str]:
    """key -> its raw line (with comment) inside the stage's block of the paper stages.yaml."""
    lines = PROFILE.read_text().splitlines()
    prefix = "  " if stage in ("agentless", "agentic") else ""   # the SWE phases sit under swe_rl
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{prefix}{stage}:"))
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = {}
    for ln in lines[start + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
            break
        m = re.match(r"^\s*(\w+):", ln)
        if m and len(ln) - len(ln.lstrip()) == indent + 2:
            out[m.group(1)] = ln
    return out


def test_non_paper_values_are_marked_in_profile_and_doc():
    cited = re.compile(r"\[default\]|DEVIATION|§\d|Table \d")
    for stage in GRPO_STAGES:
        lines = _stage_lines(stage)
        for key in ("warmup_steps", "is_correction"):
            assert key in lines and cited.search(lines[key].split("#", 1)[-1]), (stage, key, lines.get(key))
    mopd_lr = _stage_lines("mopd")["lr"]
    assert "DEVIATION" in mopd_lr and "Table 8" in mopd_lr and "§4.4" in mopd_lr
    lc = _stage_lines("long_context_rl")["max_total_sequence_length"]
    assert "Table 9" in lc and load_config("paper").long_context_rl.max_total_sequence_length == 49152
    text = DOC.read_text()
    section = text.split("## Values that are not the paper's", 1)[1].split("\n## ", 1)[0]
    for item in ("MOPD learning rate", "Long-context `max_total_sequence_length`", "10-step warm-up",
                 "Importance-sampling correction"):
        row = next(ln for ln in section.splitlines() if ln.startswith(f"| {item}"))
        assert cited.search(row.rsplit("|", 2)[-2]), row
