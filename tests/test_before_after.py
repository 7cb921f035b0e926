"""``recipe compare-to-start``: which checkpoint it compares when no stage is named (the last finished one, so a run
stopped early is compared at the checkpoint it has); the suites run pair by pair, the real ones first, with the
start model in the chosen mode; a comparison cut short keeps the suites it finished. The evaluation itself is
replaced by a stand-in here (tests/test_small_smoke.py runs the real one)."""
from __future__ import annotations

import pytest

from recipe.config import load_config
from recipe.pipeline.before_after import last_finished_stage
from recipe.runs import RunDir


def _finish(run: RunDir, stage: str) -> None:
    run.write_manifest(stage, {"stage": stage, "status": "done"})


def _start_folder(tmp_path):
    """A start model's folder as --start names one (the stand-in backend never loads it)."""
    (tmp_path / "start").mkdir(exist_ok=True)
    (tmp_path / "start" / "config.json").write_text("{}")
    return tmp_path / "start"


def test_the_last_done_stage_is_compared(tmp_path):
    cfg = load_config("tiny")
    run = RunDir(tmp_path / "r")
    with pytest.raises(ValueError, match="no finished stage"):
        last_finished_stage(run, cfg)
    _finish(run, "sft")
    _finish(run, "if_rl")
    run.write_manifest("multi_domain_rl", {"stage": "multi_domain_rl", "status": "running"})  # begun, not done
    assert last_finished_stage(run, cfg) == "if_rl"
    _finish(run, "swe_rl")
    assert last_finished_stage(run, cfg) == "swe_rl"
    assert last_finished_stage(run, cfg.model_copy(update={"run": cfg.run.model_copy(update={"until": "sft"})})) \
        == "sft"


class _FakeBackend:
    def __init__(self, path, **kw):
        self.path, self.tokenizer = str(path), None


def _fake_evaluate(calls: list, fail_at: str | None = None):
    """An ``evaluate`` that scores item i of a suite 1 when i is even for the checkpoint, 0 for the start model, and
    writes the items file the paired delta reads."""
    import json

    def evaluate(suites, *, out, backend, thinking, limit, **kw):
        (name,) = suites
        if name == fail_at:
            raise KeyboardInterrupt  # a run cut short at this suite
        calls.append((name, backend.path, thinking))
        after = backend.path.endswith("checkpoint")
        scores = [float(after and i % 2 == 0) for i in range(10)]
        (out / name).mkdir(parents=True)
        (out / name / "items.jsonl").write_text("".join(json.dumps({"id": i, "mean_score": s}) + "\n"
                                                        for i, s in enumerate(scores)))
        return {name: {"score": 100 * sum(scores) / 10, "ci95": [0, 100], "n": 10}}
    return evaluate


@pytest.mark.parametrize("start_instruct", [False, True])
def test_suites_run_pairwise_real_first_and_the_start_mode_is_chosen(tmp_path, monkeypatch, start_instruct):
    import json

    import recipe.eval.api as api
    import recipe.eval.backends.hf as hf
    from recipe.pipeline.before_after import compare_to_start
    cfg = load_config("tiny")
    run = RunDir(tmp_path / "r")
    _finish(run, "sft")
    run.checkpoint_dir("sft").mkdir(parents=True)
    calls: list = []
    monkeypatch.setattr(api, "evaluate", _fake_evaluate(calls))
    monkeypatch.setattr(hf, "HFBackend", _FakeBackend)
    out = tmp_path / "ba"
    comparison = compare_to_start(run, cfg, start=_start_folder(tmp_path), real_suites={"ifeval": 10}, tiny_limit=10,
                                  out=out, start_instruct=start_instruct)
    tiny = [f"tiny_{d}" for d in cfg.domains.names]
    assert [r["suite"] for r in comparison["rows"]] == ["ifeval", *tiny] and comparison["complete"]
    # each suite: the start model, then the checkpoint, before the next suite
    assert [c[0] for c in calls] == [s for s in ["ifeval", *tiny] for _ in range(2)]
    start_thinking = not start_instruct and cfg.benchmarks.eval_phase.thinking
    assert {(p.endswith("checkpoint"), t) for _, p, t in calls} == {(False, start_thinking),
                                                        (True, cfg.benchmarks.eval_phase.thinking)}
    assert comparison["start_mode"] == ("instruct" if start_instruct else "thinking")
    name = "comparison_start_instruct.json" if start_instruct else "comparison.json"
    assert json.loads((out / name).read_text()) == comparison
    row = comparison["rows"][0]
    assert row["delta"]["score"] == 50.0 and row["delta"]["n"] == 10


def test_a_comparison_cut_short_keeps_the_suites_it_finished(tmp_path, monkeypatch):
    import json

    import recipe.eval.api as api
    import recipe.eval.backends.hf as hf
    from recipe.pipeline.before_after import compare_to_start
    cfg = load_config("tiny")
    run = RunDir(tmp_path / "r")
    _finish(run, "sft")
    monkeypatch.setattr(api, "evaluate", _fake_evaluate([], fail_at="tiny_mcqa"))
    monkeypatch.setattr(hf, "HFBackend", _FakeBackend)
    with pytest.raises(KeyboardInterrupt):
        compare_to_start(run, cfg, start=_start_folder(tmp_path), real_suites={"ifeval": 10}, out=tmp_path / "ba")
    saved = json.loads((tmp_path / "ba" / "comparison.json").read_text())
    done = ["ifeval", *[f"tiny_{d}" for d in cfg.domains.names]]
    assert not saved["complete"]
    assert [r["suite"] for r in saved["rows"]] == done[: done.index("tiny_mcqa")]
