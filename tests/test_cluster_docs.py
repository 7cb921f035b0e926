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
