"""Plots for the notebooks: per-stage training curves and the checkpoint x domain heatmap (teachers marked)."""
from __future__ import annotations

import matplotlib.pyplot as plt

from recipe.pipeline.report import score_table, teacher_marks
from recipe.runs.layout import RunDir, read_json


def _smooth(xs: list[float], k: int = 5) -> list[float]:
    out, acc = [], []
    for x in xs:
        acc.append(x)
        acc = acc[-k:]
        out.append(sum(acc) / len(acc))
    return out


CURVE_TAGS = ("train/reward", "train/loss", "train/reverse_kl", "train/kl_penalty", "train/grad_norm")


def plot_stage_curves(run: RunDir, stage: str):
    """Training curves of one stage from either backend (``metrics_reader.stage_scalars``: NeMo-RL tag names)."""
    from recipe.pipeline.metrics_reader import stage_scalars
    df = stage_scalars(run, stage)
    keys = [k for k in CURVE_TAGS if k in df.columns and df[k].notna().any()]
    if not keys:
        raise ValueError(f"stage {stage}: none of {CURVE_TAGS} was logged (columns: {sorted(df.columns)})")
    steps = list(df.index)
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3), squeeze=False)
    for ax, k in zip(axes[0], keys):
        ys = [float(v) for v in df[k]]
        ax.plot(steps, ys, alpha=0.3, color="C0")
        ax.plot(steps, _smooth(ys), color="C0")
        ax.set_title(f"{stage}: {k}")
        ax.set_xlabel("step")
    dom_keys = sorted(k for k in df.columns if k.startswith("train/reward/"))
    if len(dom_keys) > 1 and keys[0] == "train/reward":
        ax = axes[0][0]
        for i, k in enumerate(dom_keys):
            ax.plot(steps, _smooth([float(v) for v in df[k]]), label=k.split("/", 2)[2], color=f"C{i + 1}", lw=1)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_heatmap(run: RunDir):
    domains, rows = score_table(run)
    if not rows:
        raise FileNotFoundError(f"no scores yet in {run.scores_path}")
    teachers = {d: {"stage": s} for d, s in teacher_marks(run).items()}
    data = [[sc.get(d, float("nan")) for d in domains] for _, sc in rows]
    fig, ax = plt.subplots(figsize=(1.6 * len(domains) + 2, 0.6 * len(rows) + 1.5))
    im = ax.imshow(data, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(domains)), domains, rotation=20)
    ax.set_yticks(range(len(rows)), [s for s, _ in rows])
    for i, (stage, sc) in enumerate(rows):
        for j, d in enumerate(domains):
            v = sc.get(d)
            is_teacher = teachers.get(d, {}).get("stage") == stage
            ax.text(j, i, "-" if v is None else f"{v:.0f}" + ("*" if is_teacher else ""), ha="center", va="center",
                    color="red" if is_teacher else "white", fontweight="bold" if is_teacher else "normal")
            if is_teacher:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2))
    ax.set_title("validation score: checkpoint x domain (red * = teacher)")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig
