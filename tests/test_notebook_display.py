"""What a reader sees in the notebooks, checked without a browser: the curves (markers for single points, nothing
drawn for an empty series, no offset notation on a flat axis, smoothed lines over the raw lines' steps, every axis
labelled), the heatmap (legible teacher marks, a labelled colour bar, a caption saying how teachers were chosen), the
tables (one line per cell, text columns wrapped) and the evaluation notebook's samples (newlines, reasoning split
out, every sample's extracted answer)."""
from __future__ import annotations

import io
import json
import math

import matplotlib
import pytest

matplotlib.use("Agg")

from recipe.reporting import plots  # noqa: E402
from recipe.runs.layout import RunDir  # noqa: E402


def _metrics(run: RunDir, stage: str, rows: list[dict]) -> None:
    p = run.metrics_path(stage)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def run(tmp_path):
    return RunDir(tmp_path / "r")


def _pixels(img) -> list[tuple]:
    import numpy as np
    return [tuple(int(c) for c in p) for p in np.asarray(img.convert("RGB")).reshape(-1, 3)]


def _panels(fig) -> dict:
    return {ax.get_title(): ax for ax in fig.axes}


def test_single_point_is_a_marker_and_an_empty_series_is_a_note(run):
    _metrics(run, "swe_rl", [{"step": 9, "loss": 0.5, "grad_norm": 1.5, "reward_mean": float("nan")}])
    fig = plots.plot_stage_curves(run, "swe_rl", title="swe_rl, agentic phase")
    panels = _panels(fig)
    assert set(panels) == {"train/loss", "train/grad_norm"}  # the reward has no value: no empty panel
    for ax in panels.values():
        (line,) = ax.lines
        assert line.get_marker() == "o" and list(line.get_xdata()) == [9]
        lo, hi = ax.get_xlim()
        assert lo < 9 < hi and hi - lo >= 2
    notes = [t.get_text() for t in fig.texts]
    assert any("train/reward" in t and "no value" in t for t in notes)
    assert fig._suptitle.get_text().startswith("swe_rl, agentic phase")


def test_nothing_logged_prints_one_line_and_draws_nothing(run, capsys):
    _metrics(run, "rlhf", [{"step": 0, "reward_mean": float("nan")}])
    assert plots.plot_stage_curves(run, "rlhf") is None
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "train/reward" in out[0]


def test_flat_series_has_no_offset_and_a_readable_range(run):
    _metrics(run, "rlhf", [{"step": i, "reward_mean": 0.525 + 1e-9 * (i % 2)} for i in range(8)])
    ax = _panels(plots.plot_stage_curves(run, "rlhf"))["train/reward"]
    ax.figure.canvas.draw()
    assert ax.yaxis.get_major_formatter().get_offset() == ""
    lo, hi = ax.get_ylim()
    assert hi - lo >= 0.05 and lo < 0.525 < hi


def test_smoothed_lines_span_the_raw_steps_and_every_panel_is_labelled(run):
    rows = [{"step": i, "loss": 5 - 0.1 * i, "reward_mean": 0.1 * i,
             **({"reward/mcqa": 0.2 * i} if i % 2 else {}), "reward/math": 0.05 * i} for i in range(12)]
    _metrics(run, "multi_domain_rl", rows)
    fig = plots.plot_stage_curves(run, "multi_domain_rl")
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_legend() is not None
        for line in ax.lines:
            xs = list(line.get_xdata())
            assert xs == sorted(xs) and not any(math.isnan(y) for y in line.get_ydata())
    reward = _panels(fig)["train/reward"]
    labels = [t.get_text() for t in reward.get_legend().get_texts()]
    assert any(t.startswith("overall") for t in labels) and any(t.startswith("mcqa") for t in labels)
    mcqa = next(line for line in reward.lines if line.get_label().startswith("mcqa"))
    assert list(mcqa.get_xdata()) == [i for i in range(12) if i % 2]  # its own steps, no gaps
    loss = _panels(fig)["train/loss"]
    raw, smooth = loss.lines
    assert list(raw.get_xdata()) == list(smooth.get_xdata()) == list(range(12))
    assert fig.get_figwidth() * plots.DPI <= 960  # two columns: shown at full size in the notebook


def _scores(run: RunDir, checkpoints: dict, teachers: dict) -> None:
    run.path.mkdir(parents=True, exist_ok=True)
    domains = sorted({d for sc in checkpoints.values() for d in sc})
    run.scores_path.write_text(json.dumps({"checkpoints": checkpoints, "domains": domains}))
    (run.path / "teachers.json").write_text(json.dumps(teachers))


def test_heatmap_marks_contrast_with_their_cells_and_say_how_they_were_chosen(run):
    _scores(run, {"sft": {"mcqa": 2.0, "math": 95.0}, "if_rl": {"mcqa": 23.0, "math": 60.0},
                  "multi_domain_rl": {"mcqa": 33.0, "math": 50.0}},
            {"mopd": {"teachers": {"mcqa": {"stage": "if_rl", "slot": "select:if_rl,multi_domain_rl"},
                                   "math": {"stage": "sft", "slot": "stage:sft"}}}})
    fig = plots.plot_heatmap(run)
    marks = plots.teacher_mark_boxes(fig)
    assert {m["domain"] for m in marks} == {"mcqa", "math"}
    for m in marks:
        assert plots.contrast_ratio(m["text"], m["cell"]) >= 4.5, m
    cbar = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert cbar and cbar[0].get_ylabel()
    assert any("selection-split average" in t.get_text() for t in fig.texts)
    # the marks, measured in the PNG the notebook shows
    from PIL import Image
    png = Image.open(io.BytesIO(plots.figure_png(fig))).convert("RGB")
    assert json.loads(png.info["recipe:axes"])[0]["ylabel"]
    for m in marks:
        px = _pixels(png.crop(tuple(int(round(v)) for v in m["box"])))
        bg = max(set(px), key=px.count)
        assert sum(plots.contrast_ratio([c / 255 for c in p], [c / 255 for c in bg]) >= 4.5 for p in px) >= 8


def test_contrast_ratio_is_wcag():
    assert plots.contrast_ratio("black", "white") == pytest.approx(21.0)
    assert plots.contrast_ratio("white", "white") == pytest.approx(1.0)
    assert plots.text_colour_on((0.99, 0.9, 0.14)) == "black"  # viridis' yellow end
    assert plots.text_colour_on((0.27, 0.0, 0.33)) == "white"  # viridis' purple end


def test_tables_keep_cells_on_one_line_and_wrap_text_columns():
    import pandas as pd

    from recipe.reporting.notebook_tables import readable, score_ci
    assert score_ci({"score": 12.5, "ci_low": 3.1, "ci_high": 20.04, "n": 16}) == "12.5 [3, 20]"
    assert score_ci({"score": -1.25, "ci_low": -4.2, "ci_high": 2.0}, signed=True) == "-1.2 [-4, +2]"
    df = pd.DataFrame({"score": ["12.5 [3, 20]"], "meaning": ["a long sentence\nwith a newline"]}, index=["x"])
    html = readable(df, caption="cap", wrap=("meaning",), pre=("meaning",)).to_html()
    assert "white-space: nowrap" in html and "white-space: pre-wrap" in html and "cap" in html
    assert "a long sentence\nwith a newline" in html  # not cut, newline kept


def test_eval_samples_split_reasoning_and_keep_newlines(tmp_path):
    from recipe.pipeline import eval_notebook_api as ev
    suite = tmp_path / "aime25"
    suite.mkdir()
    samples = [{"score": 1.0 if i % 3 == 0 else 0.0, "extracted": str(i) if i != 5 else None,
                "no_answer": i == 5} for i in range(8)]
    items = [{"id": "a1", "mean_score": 0.375, "samples": samples, "finish_reasons": ["stop"] * 8,
              "responses": [{"content": "<think>step 1\nstep 2</think>The answer is\n\\boxed{0}", "reasoning": None}]},
             {"id": "a2", "mean_score": 0.0, "samples": samples, "finish_reasons": ["length"] * 8,
              "responses": [{"content": "the answer", "reasoning": "parsed\nby vLLM"}]}]
    (suite / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    out = ev.item_outcomes(tmp_path, "aime25")
    assert len(out.loc[0, "outcomes"].split()) == len(out.loc[0, "extracted"].split(" | ")) == 8
    df = ev.sample_responses(tmp_path, "aime25").data
    assert df.loc["a1", "reasoning"] == "step 1\nstep 2" and df.loc["a1", "response"] == "The answer is\n\\boxed{0}"
    assert df.loc["a2", "reasoning"] == "parsed\nby vLLM" and df.loc["a2", "response"] == "the answer"
    # thinking mode: the prompt opened the block, so a text that never closes it is all reasoning
    raw = {"content": "let me think\nabout 6+3", "reasoning": None}
    assert ev.split_reasoning(raw, thinking=True)[0] == "let me think\nabout 6+3"
    assert "never closed" in ev.split_reasoning(raw, thinking=True)[1]
    assert ev.split_reasoning(raw, thinking=False) == ("", "let me think\nabout 6+3")


def test_closing_cells_point_to_the_next_notebook_in_plan_order():
    from recipe.config.schema import STAGE_PLAN
    from recipe.reporting.phase_summaries import _shown, next_step
    assert "10_sft.ipynb" in next_step("data")
    i = STAGE_PLAN.index("mopd")
    assert "40_mopd.ipynb" in next_step(STAGE_PLAN[i - 1])
    after_mopd = STAGE_PLAN[i + 1]
    assert "30_cascade_rl_stage.ipynb" in next_step("mopd") and f'stage = "{after_mopd}"' in next_step("mopd")
    assert "90_report.ipynb" in next_step(STAGE_PLAN[-1])
    assert "50_eval.ipynb" in next_step("report") and "00_data.ipynb" in next_step("hub")
    gains, losses, unclear = _shown({"input": "sft", "a": {"score": 5.0, "ci_low": 1.0, "ci_high": 9.0},
                                     "b": {"score": -4.0, "ci_low": -8.0, "ci_high": -0.5},
                                     "c": {"score": 3.0, "ci_low": -1.0, "ci_high": 7.0}})
    assert [g.split()[0] for g in gains] == ["a"] and [x.split()[0] for x in losses] == ["b"] and len(unclear) == 1


def test_readme_heatmap_says_which_run_it_shows(run):
    """README's figure (benchmarks/bench_evidence.py --heatmap) names its run: id, seed, torch threads, commit."""
    _scores(run, {"sft": {"math": 95.0}}, {})
    run.update_run_json(profile="tiny", seed=2, git_commit="0123456789abcdef", overrides=["run.seed=2"])
    (run.path / "config.yaml").write_text("run:\n  seed: 2\n  torch_threads: 2\n")
    fig = plots.plot_heatmap(run, caption=True)
    (text,) = [t.get_text() for t in fig.texts]
    assert f"run {run.run_id}: profile tiny, seed 2, torch threads 2, overrides none, commit 0123456789" in text
    assert not plots.plot_heatmap(run).texts  # in the run's own report: no caption
