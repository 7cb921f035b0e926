"""Plots for the notebooks: per-stage training curves and the checkpoint x domain heatmap (teachers marked).

Every figure is shown as a PNG of a fixed size (``figure_png``: no cropping, so the pixels are where the figure's
axes put them) that fits a notebook's output area at 1440 px without being scaled down, and carries in its PNG
text chunk ``recipe:axes`` the title and axis labels of every panel, so a test can check what a reader sees.
"""
from __future__ import annotations

import io
import json
import math
import textwrap

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgb
from matplotlib.ticker import MaxNLocator

from recipe.reporting.run_report import score_table, teacher_basis, teacher_marks
from recipe.runs.layout import RunDir, read_json

DPI = 100
PANEL_W, PANEL_H = 4.7, 3.2   # inches: two panels side by side are 940 px, inside the output area at 1440 px
SMOOTH_K = 5

CURVE_TAGS = ("train/reward", "train/loss", "train/reverse_kl", "train/kl_penalty", "train/grad_norm")
Y_LABELS = {  # NeMo-RL tag -> what the y-axis holds
    "train/reward": "mean reward per response",
    "train/loss": "training loss",
    "train/reverse_kl": "reverse KL (nats / token)",
    "train/kl_penalty": "KL to reference (nats / token)",
    "train/grad_norm": "gradient L2 norm",
}


def _smooth(xs: list[float], k: int = SMOOTH_K) -> list[float]:
    """Trailing mean over the last ``k`` points: one value per input point, so the smoothed line spans exactly
    the raw line's steps."""
    out, acc = [], []
    for x in xs:
        acc.append(x)
        acc = acc[-k:]
        out.append(sum(acc) / len(acc))
    return out


def _points(series) -> tuple[list[int], list[float]]:
    s = series.dropna()
    return [int(i) for i in s.index], [float(v) for v in s]


def _flat_axis(ax, ys: list[float]) -> None:
    """No offset notation ("1e-8+5.25e-1"): a flat series gets a readable range around its value."""
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    lo, hi = min(ys), max(ys)
    if hi - lo <= 1e-6 * max(1.0, abs(hi)):
        pad = max(0.05, 0.1 * abs(hi))
        ax.set_ylim(lo - pad, hi + pad)


def _draw_series(ax, steps: list[int], ys: list[float], color: str, label: str, raw: bool = True) -> None:
    """A raw line (faint) and its trailing mean over the same steps; one or two points are drawn as markers."""
    few = len(ys) <= 2
    if raw or few:
        ax.plot(steps, ys, color=color, alpha=1.0 if few else 0.3, lw=1, marker="o" if len(ys) <= 20 else None,
                ms=5 if few else 2.5, label=f"{label} (per step)" if not few else label)
    if not few:
        ax.plot(steps, _smooth(ys), color=color, lw=1.8, label=f"{label} (mean of last {SMOOTH_K})")


def plot_stage_curves(run: RunDir, stage: str, title: str | None = None):
    """Training curves of one stage from either backend (``metrics_reader.stage_scalars``: NeMo-RL tag names), one
    panel per logged tag of ``CURVE_TAGS`` (two columns). A tag with no value is not drawn: the figure's caption
    names it. Returns None (after printing one line) when no tag has a value."""
    from recipe.reporting.metrics_reader import stage_scalars
    title = title or stage
    df = stage_scalars(run, stage)
    keys = [k for k in CURVE_TAGS if k in df.columns and df[k].notna().any()]
    empty = [k for k in CURVE_TAGS if k in df.columns and k not in keys]
    if not keys:
        print(f"{title}: no training curve to draw - {', '.join(empty) or 'none of ' + ', '.join(CURVE_TAGS)} "
              f"logged no value (columns: {', '.join(sorted(df.columns))})")
        return None
    ncols = min(2, len(keys))
    nrows = math.ceil(len(keys) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(PANEL_W * ncols, PANEL_H * nrows + 0.5), squeeze=False)
    for ax, k in zip(axes.flat, keys):
        steps, ys = _points(df[k])
        dom_keys = sorted(c for c in df.columns if c.startswith(k + "/") and df[c].notna().any())
        if k == "train/reward" and len(dom_keys) > 1:
            _draw_series(ax, steps, ys, "C0", "overall", raw=False)
            for i, dk in enumerate(dom_keys):
                ds, dy = _points(df[dk])
                _draw_series(ax, ds, dy, f"C{i + 1}", dk.split("/", 2)[2], raw=False)
            ys = ys + [v for dk in dom_keys for v in _points(df[dk])[1]]
        else:
            _draw_series(ax, steps, ys, "C0", k.split("/")[-1])
        _flat_axis(ax, ys)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if len(set(steps)) == 1:
            ax.set_xlim(steps[0] - 1, steps[0] + 1)
        ax.set_title(k, fontsize=10)
        ax.set_xlabel("training step")
        ax.set_ylabel(Y_LABELS.get(k, k.split("/")[-1]))
        ax.legend(fontsize=7, loc="best")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(keys):]:
        ax.remove()
    fig.suptitle(f"{title}: training curves", fontsize=11)
    if empty:
        fig.text(0.01, 0.005, f"not drawn (no value logged): {', '.join(empty)}", fontsize=8, color="0.3")
    fig.tight_layout(rect=(0, 0.03 if empty else 0, 1, 1))
    return fig


def plot_counts(counts):
    """The data phase's prompts per domain (rows) and split (columns) as grouped bars."""
    fig, ax = plt.subplots(figsize=(PANEL_W * 2, PANEL_H + 0.6))
    counts.plot.bar(ax=ax, rot=25)
    ax.set_title("prompts per domain and split", fontsize=11)
    ax.set_xlabel("domain")
    ax.set_ylabel("prompts")
    ax.legend(title="split", fontsize=8)
    fig.tight_layout()
    return fig


def relative_luminance(rgb) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (components in 0..1)."""
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(float(c)) for c in to_rgb(rgb))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a, b) -> float:
    """WCAG contrast ratio of two colours (1..21; 4.5 is the minimum for normal text)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_colour_on(cell_rgb) -> str:
    """Black or white, whichever contrasts more with the cell's colour."""
    return "black" if contrast_ratio(cell_rgb, "black") >= contrast_ratio(cell_rgb, "white") else "white"


def run_caption(run: RunDir) -> str:
    """Which run a figure shows: run id, seed, torch threads, overrides and commit (from ``run.json`` and the run's
    resolved ``config.yaml``)."""
    import yaml
    meta = read_json(run.run_json_path, {}) or {}
    cfg_path = run.path / "config.yaml"
    threads = (yaml.safe_load(cfg_path.read_text()) or {}).get("run", {}).get("torch_threads") if cfg_path.exists() \
        else None
    over = [o for o in meta.get("overrides", []) if not o.startswith("run.seed=")]
    return (f"run {run.run_id}: profile {meta.get('profile', '?')}, seed {meta.get('seed', '?')}, "
            f"torch threads {threads if threads is not None else '?'}, "
            f"overrides {', '.join(over) if over else 'none'}, commit {str(meta.get('git_commit') or '?')[:10]}")


def plot_heatmap(run: RunDir, caption: bool = False):
    """Checkpoint x domain validation scores; each domain's MOPD teacher is boxed and starred in the colour that
    contrasts most with its cell (the marks' ``gid`` is ``teacher:<domain>``; ``teacher_mark_boxes``).
    ``caption``: a last line saying which run it shows (``run_caption``), for a figure shown outside the run."""
    domains, rows = score_table(run)
    if not rows:
        raise FileNotFoundError(f"no scores yet in {run.scores_path}")
    teachers = teacher_marks(run)
    data = [[sc.get(d, float("nan")) for d in domains] for _, sc in rows]
    fig, ax = plt.subplots(figsize=(min(2 * PANEL_W, max(6.0, 0.8 * len(domains) + 2.6)), 0.42 * len(rows) + 2.6))
    cmap = plt.get_cmap("viridis")
    im = ax.imshow(data, cmap=cmap, vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(domains)), domains, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), [s for s, _ in rows])
    ax.set_xlabel("domain (validation, report split)")
    ax.set_ylabel("checkpoint after stage")
    for i, (stage, sc) in enumerate(rows):
        for j, d in enumerate(domains):
            v = sc.get(d)
            cell = cmap(im.norm(v))[:3] if v is not None else (1.0, 1.0, 1.0)
            colour = text_colour_on(cell)
            is_teacher = teachers.get(d) == stage
            t = ax.text(j, i, "-" if v is None else f"{v:.0f}" + ("*" if is_teacher else ""), ha="center",
                        va="center", color=colour, fontsize=10 if is_teacher else 9,
                        fontweight="bold" if is_teacher else "normal")
            if is_teacher:
                t.set_gid(f"teacher:{d}")
                ax.add_patch(plt.Rectangle((j - 0.45, i - 0.4), 0.9, 0.8, fill=False, ec=colour, lw=2.2))
    basis = teacher_basis(run)
    ax.set_title("validation score (%): checkpoint x domain", fontsize=11)
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label("score (%, avg@k, report split)")
    foot = [f"boxed * = MOPD teacher of the domain, chosen by {basis}"] if teachers else []
    if caption:
        foot.append(run_caption(run))
    if foot:
        fig.text(0.01, 0.01, "\n".join(textwrap.fill(x, 150) for x in foot), fontsize=8, color="0.15")
    fig.tight_layout(rect=(0, 0.035 * len(foot) + (0.035 if foot else 0), 1, 1))
    return fig


def teacher_mark_boxes(fig) -> list[dict]:
    """Where the heatmap's teacher marks are in ``figure_png(fig)`` (pixels, origin top left), with the colour of
    their text and of the cell under them, for a test that checks the marks in the rendered image."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    height = fig.get_figheight() * fig.dpi
    out = []
    for ax in fig.axes:
        im = ax.images[0] if ax.images else None
        for t in ax.texts:
            gid = t.get_gid() or ""
            if not gid.startswith("teacher:"):
                continue
            bb = t.get_window_extent(renderer)
            j, i = (int(round(c)) for c in t.get_position())
            cell = im.cmap(im.norm(im.get_array()[i][j]))[:3] if im is not None else (1, 1, 1)
            out.append({"domain": gid.split(":", 1)[1], "box": (bb.x0, height - bb.y1, bb.x1, height - bb.y0),
                        "text": to_rgb(t.get_color()), "cell": tuple(cell)})
    return out


def axes_labels(fig) -> list[dict]:
    """Title and axis labels of every panel of a figure (colour bars included: their label is the y label)."""
    return [{"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
             "colorbar": ax.get_label() == "<colorbar>"} for ax in fig.axes]


def figure_png(fig) -> bytes:
    """The figure as PNG bytes at ``DPI``, uncropped, with ``recipe:axes`` (``axes_labels``) in a text chunk."""
    fig.set_dpi(DPI)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"recipe:axes": json.dumps(axes_labels(fig))})
    return buf.getvalue()


def show(fig) -> None:
    """Display a figure in the notebook as ``figure_png`` at its natural size, then close it (so the inline
    backend does not show it a second time)."""
    from IPython.display import Image, display
    if fig is None:
        return
    display(Image(data=figure_png(fig), format="png"))
    plt.close(fig)
