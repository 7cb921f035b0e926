"""Tables as a reader sees them in a notebook: what is compared first in the cells, one line per cell, the rest in
a caption or a hover tooltip, long text wrapped inside a bounded column instead of truncated or pushed off the edge.

``readable(df, ...)`` returns a pandas ``Styler`` (rendered as HTML by JupyterLab, papermill and nbconvert alike);
its ``.data`` is the DataFrame for code that wants the numbers.
"""
from __future__ import annotations

import math

import pandas as pd

WRAP_WIDTH = "34em"  # a text column wraps at this width (a few of them still fit the output area at 1440 px)


class TableGroup:
    """A wide table shown as consecutive tables of at most ``max_cols`` columns each (the same rows), so every
    cell stays on one line and every column inside the output area; ``frames`` are the parts' DataFrames."""

    def __init__(self, stylers: list):
        self.stylers = stylers
        self.frames = [s.data for s in stylers]
        self.data = pd.concat(self.frames, axis=1)

    def _repr_html_(self) -> str:
        return "\n".join(s.to_html() for s in self.stylers)


def readable(df: pd.DataFrame, caption: str | None = None, wrap: tuple[str, ...] = (),
             tooltips: pd.DataFrame | None = None, pre: tuple[str, ...] = (), cell_css: pd.DataFrame | None = None,
             max_cols: int | None = None):
    """``df`` styled for reading: every cell on one line except the ``wrap`` columns (wrapped at ``WRAP_WIDTH``;
    the ``pre`` ones also keep their newlines), an optional caption above, hover ``tooltips`` and per-cell
    ``cell_css`` (DataFrames of strings aligned with ``df``; empty strings add nothing). With ``max_cols`` and more
    columns than that, a ``TableGroup`` of column slices of about equal width."""
    if max_cols and len(df.columns) > max_cols:
        parts = math.ceil(len(df.columns) / max_cols)
        size = math.ceil(len(df.columns) / parts)
        cols = [list(df.columns[i:i + size]) for i in range(0, len(df.columns), size)]
        return TableGroup([readable(df[c], caption if i == 0 else None, wrap, None if tooltips is None else
                                    tooltips.reindex(index=df.index, columns=c), pre,
                                    None if cell_css is None else cell_css.reindex(index=df.index, columns=c))
                           for i, c in enumerate(cols)])
    styler = df.style.format(_cell, na_rep="-")
    styler = styler.set_table_styles([
        {"selector": "th, td", "props": [("white-space", "nowrap"), ("text-align", "right"), ("padding", "2px 8px")]},
        {"selector": "caption", "props": [("caption-side", "top"), ("text-align", "left"), ("white-space", "normal"),
                                          ("color", "#333"), ("padding-bottom", "4px")]},
    ], overwrite=False)
    wrapped = {col: [{"selector": "td", "props": [
        ("white-space", "pre-wrap" if col in pre else "normal"), ("text-align", "left"), ("min-width", "12em"),
        ("max-width", WRAP_WIDTH), ("overflow-wrap", "anywhere")]}] for col in wrap if col in df.columns}
    if wrapped:  # per column (an id + element + class selector: it overrides the table-wide nowrap)
        styler = styler.set_table_styles(wrapped, overwrite=False)
    if caption:
        styler = styler.set_caption(caption)
    if cell_css is not None:
        css = cell_css.reindex(index=df.index, columns=df.columns).fillna("")
        styler = styler.apply(lambda _: css, axis=None)
    if tooltips is not None:
        styler = styler.set_tooltips(tooltips.reindex(index=df.index, columns=df.columns).fillna(""))
    return styler


def _cell(v) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.4g}" if abs(v) < 1e-3 and v else f"{v:,.3f}".rstrip("0").rstrip(".")
    return str(v)


def score_ci(e: dict, signed: bool = False) -> str:
    """``12.5 [3, 20]``: the score (1 decimal) and its 95% CI (integers: enough to judge an overlap)."""
    fmt = "{:+.1f}" if signed else "{:.1f}"
    if e.get("score") is None:
        return "-"
    if e.get("ci_low") is None:
        return fmt.format(e["score"])
    b = "{:+.0f}" if signed else "{:.0f}"
    return f"{fmt.format(e['score'])} [{b.format(e['ci_low'])}, {b.format(e['ci_high'])}]"


def exact_ci(e: dict) -> str:
    """The tooltip of a ``score_ci`` cell: the CI to two decimals and n."""
    if e.get("ci_low") is None:
        return ""
    return f"95% CI [{e['ci_low']:.2f}, {e['ci_high']:.2f}], n = {e.get('n')}"
