"""Curation report views for notebooks: a per-source count table and a stacked bar chart.

``report`` may be a :class:`~recipe.data.curate.CurationReport`, its dict (``report.json`` content), or a path
to ``report.json`` / the curation output directory. Columns: rows_in, kept, contaminated, exact_duplicate,
near_duplicate, quarantined; the last row is the total (which reconciles: rows_in = the other five).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

COLUMNS = ("rows_in", "kept", "contaminated", "exact_duplicate", "near_duplicate", "quarantined")


def _as_report(report: Any):
    from recipe.data.curate import CurationReport
    if isinstance(report, CurationReport):
        return report
    if isinstance(report, dict):
        return CurationReport.from_dict(report)
    if isinstance(report, (str, Path)):
        return CurationReport.load(report)
    raise TypeError(f"expected a CurationReport, a dict or a path to report.json, got {type(report).__name__}")


def report_table(report: Any) -> pd.DataFrame:
    """One row per source plus ``total``; integer counts in :data:`COLUMNS`."""
    rep = _as_report(report)
    rows = [{"source": s["name"], **{c: int(s.get(c, 0)) for c in COLUMNS}} for s in rep.sources]
    total = {"source": "total", "rows_in": rep.rows_in, "kept": rep.kept, "quarantined": rep.quarantined,
             **{r: int(rep.dropped.get(r, 0)) for r in ("contaminated", "exact_duplicate", "near_duplicate")}}
    df = pd.DataFrame(rows + [total], columns=["source", *COLUMNS]).set_index("source")
    return df


def plot_report(report: Any, ax=None):
    """Stacked horizontal bars per source: kept / contaminated / duplicates / quarantined. Returns the axes."""
    import matplotlib.pyplot as plt
    df = report_table(report).drop(index="total")
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.35 * max(len(df), 3) + 1.2))
    parts = ["kept", "contaminated", "exact_duplicate", "near_duplicate", "quarantined"]
    colors = ["#4c9f70", "#d1495b", "#edae49", "#f4d35e", "#7d7d7d"]
    left = pd.Series(0, index=df.index)
    for p, c in zip(parts, colors):
        ax.barh(df.index, df[p], left=left, color=c, label=p)
        left = left + df[p]
    ax.invert_yaxis()
    ax.set_xlabel("rows")
    rep = _as_report(report)
    ax.set_title(f"curation: {rep.rows_in:,} in, {rep.kept:,} kept")
    ax.legend(loc="lower right", fontsize="small")
    return ax
