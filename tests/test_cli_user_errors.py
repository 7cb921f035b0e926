"""What a newcomer meets, typed as README shows it, on a fresh tiny run (SFT only, a few steps): compare-to-start
works with README's set-up alone and says in one line which suite it skipped and how to provide it; `recipe eval`
takes --benchmarks DIR and -s, and exits 1 on a suite it could not run, with the fix; missing NLTK data is the cause
and the fix in a few lines, not a traceback; `recipe sandbox run` exits 1 on any verdict but ok; `recipe stage` on a
finished stage says so."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recipe.cli import app

sys.path.insert(0, str(Path(__file__).parent))
from _tiny_fast import FAST  # noqa: E402

RUN = "newcomer"
SFT_ONLY = [*FAST, "sft.steps=6", "sft.save_every=6", "domains.tiny.val_items=4",
            "domains.tiny.val_items_per_domain={long_context: 2, code: 2, swe: 2, swe_agentic: 2}"]


def _invoke(args):
    r = CliRunner().invoke(app, args)
    return r.exit_code, " ".join(r.output.split())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A fresh tiny run made as README's `recipe run` makes one, stopped after SFT; no benchmark folder, no NLTK
    data folder (README's set-up on an offline machine)."""
    mp = pytest.MonkeyPatch()
    runs = tmp_path_factory.mktemp("runs")
    mp.setenv("RECIPE_RUNS_DIR", str(runs))
    mp.delenv("RECIPE_BENCHMARK_MIRROR", raising=False)  # tests/conftest.py points it at ../shared
    code, out = _invoke(["run", "--run-id", RUN, "--until", "sft", "--no-notebooks",
                         *[a for o in SFT_ONLY for a in ("-s", o)]])
    assert code == 0, out
    yield runs / RUN
    mp.undo()


def test_compare_to_start_on_a_fresh_tiny_run_skips_the_unavailable_suite_in_one_line(tiny_run):
    code, out = _invoke(["compare-to-start", "--run-id", RUN, "--tiny-limit", "2"])
    assert code == 0, out
    assert "(before) vs sft (after)" in out
    assert "skipped ifeval: google/IFEval" in out and "no benchmark folder is set" in out
    assert "--benchmarks DIR" in out and "-s benchmarks.allow_hub=true" in out
    data = json.loads((tiny_run / "eval" / "before_after" / "comparison.json").read_text())
    rows = {r["suite"]: r for r in data["rows"]}
    assert data["complete"] and "unavailable" in rows["ifeval"]
    assert rows["tiny_math"]["before"]["n"] == rows["tiny_math"]["after"]["n"] == 2  # compared what it could
    start = Path(data["start"])  # the untrained tiny model, rebuilt as SFT built it
    assert (start / "config.json").is_file()
    assert json.loads((start / "tokenizer.json").read_text())["model"]["vocab"] == \
        json.loads((tiny_run / "01_sft" / "checkpoint" / "tokenizer.json").read_text())["model"]["vocab"]


def test_compare_to_start_names_the_cause_of_an_error(tiny_run, tmp_path):
    code, out = _invoke(["compare-to-start", "--run-id", RUN, "--start", str(tmp_path)])
    assert code == 2 and f"--start: {tmp_path} is not a Hugging Face model folder (no config.json)" in out
    code, out = _invoke(["compare-to-start", "--run-id", RUN, "--stage", "mopd"])
    assert code == 2 and f"stage mopd is not done in run {RUN} (done: sft)" in out
    code, out = _invoke(["compare-to-start", "--run-id", RUN, "--benchmarks", str(tmp_path / "absent")])
    assert code == 2 and "--benchmarks" in out and "no such folder" in out


def test_recipe_eval_takes_the_benchmark_folder_and_fails_a_suite_it_cannot_run(tiny_run, tmp_path):
    code, out = _invoke(["eval", "--suite", "ifeval", "--suite", "tiny_math", "--run-id", RUN, "--stage", "sft",
                         "--limit", "2"])
    assert code == 1 and "skipped ifeval:" in out and "--benchmarks DIR" in out
    assert (tiny_run / "eval" / "sft" / "tiny_math" / "results.json").is_file()  # the other suite ran
    empty = tmp_path / "bench"
    empty.mkdir()
    for args in (["--benchmarks", str(empty)], ["-s", f"benchmarks.mirror={empty}"]):  # one folder, two spellings
        code, out = _invoke(["eval", "--suite", "ifeval", "--run-id", RUN, "--stage", "sft", "--limit", "2", *args])
        assert code == 1 and f"the benchmark folder {empty} has no ifeval/input_data.jsonl" in out


def test_recipe_eval_reads_ifeval_from_the_benchmark_folder(tiny_run, shared_dir):
    code, out = _invoke(["eval", "--suite", "ifeval", "--run-id", RUN, "--stage", "sft", "--limit", "2",
                         "--max-tokens", "16", "--benchmarks", str(shared_dir)])
    assert code == 0, out
    r = json.loads((tiny_run / "eval" / "sft" / "ifeval" / "results.json").read_text())
    assert r["n"] == 2 and r["settings"]["source"]["via"] == "mirror"


def test_a_finished_stage_says_it_is_done_and_how_to_run_it_again(tiny_run):
    code, out = _invoke(["stage", "sft", "--run-id", RUN])
    assert code == 0 and f"stage sft of run {RUN} is already done" in out and "--force" in out


@pytest.fixture
def no_nltk_data(empty_nltk_search_path, monkeypatch):
    """No NLTK data anywhere and NLTK's server unreachable, as on an offline workstation."""
    import nltk

    def offline(*a, **k):
        raise ValueError("Error loading punkt_tab: <urlopen error no address>")
    monkeypatch.setattr(nltk, "download", offline)


def test_compare_to_start_skips_ifeval_without_nltk_data(tiny_run, tmp_path, no_nltk_data, shared_dir):
    bench = tmp_path / "bench"  # IFEval's file, but no nltk_data/ beside it
    (bench / "ifeval").mkdir(parents=True)
    lines = (shared_dir / "ifeval" / "input_data.jsonl").read_text().splitlines()
    (bench / "ifeval" / "input_data.jsonl").write_text("\n".join(
        line for line in lines if "length_constraints:number_sentences" in line) + "\n")
    # the start model in instruct mode: its answers reach the checker (in thinking mode an untrained model never
    # closes </think>, and an answer that is no answer is never checked)
    code, out = _invoke(["compare-to-start", "--run-id", RUN, "--tiny-limit", "2", "--ifeval", "2",
                         "--start-instruct", "--benchmarks", str(bench)])
    assert code == 0 and "skipped ifeval: NLTK data" in out and "Fix: point NLTK_DATA" in out, out
    assert "skipped tiny_" not in out


def test_missing_nltk_data_is_the_cause_and_the_fix_not_a_traceback(tmp_path, no_nltk_data, shared_dir):
    rows = [json.loads(line) for line in (shared_dir / "ifeval" / "input_data.jsonl").read_text().splitlines()]
    rows = [r for r in rows if any(i == "length_constraints:number_sentences"
                                   for i in r["instruction_id_list"])][:3]
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({**r, "response": "One. Two."}) + "\n" for r in rows))
    code, out = _invoke(["eval", "score", "--suite", "ifeval", "--responses", str(responses), "--out",
                         str(tmp_path / "out")])
    assert code == 2 and "Traceback" not in out and len(out) < 900, out
    assert "NLTK data" in out and "Fix: point NLTK_DATA at a folder" in out
    code, out = _invoke(["eval", "score", "--suite", "ifeval", "--responses", str(responses), "--out",
                         str(tmp_path / "out"), "--benchmarks", str(shared_dir)])  # the fix it names
    assert code == 0, out
    assert len((tmp_path / "out" / "items.jsonl").read_text().splitlines()) == len(rows)


def test_sandbox_run_exits_1_on_any_verdict_but_ok(tmp_path):
    ok, bad = tmp_path / "ok.py", tmp_path / "bad.py"
    ok.write_text("print('hi')\n")
    bad.write_text("raise SystemExit(3)\n")
    for program, code, status in ((ok, 0, "ok"), (bad, 1, "runtime_error")):
        r = CliRunner().invoke(app, ["sandbox", "run", "--time-limit", "2", "--memory-mb", "256",
                                     "--unsafe-no-isolation", "--", "python", str(program)])
        assert r.exit_code == code and json.loads(r.stdout.strip().splitlines()[-1])["status"] == status, r.output
    code, out = _invoke(["sandbox", "--help"])
    assert "Run a program in the sandbox; print its JSON verdict" in out


def test_a_pretrained_start_model_that_is_missing_names_the_import(tmp_path):
    from recipe.config import load_config
    from recipe.pipeline.start_model import StartModelUnavailable, start_model_folder
    from recipe.runs import RunDir
    cfg = load_config("small", [f"model.name={tmp_path / 'smollm2-135m-instruct-q4_1'}"])
    with pytest.raises(StartModelUnavailable, match=r"no config.json\); import it with `recipe model import --out "):
        start_model_folder(RunDir(tmp_path / "r"), cfg, tmp_path / "out")


def test_report_prints_every_score_with_its_interval(tiny_run):
    code, out = _invoke(["report", "--run-id", RUN])
    assert code == 0 and f"Run {RUN}: validation score per domain" in out and "95% CI over prompts" not in out
    code, out = _invoke(["report", "--run-id", RUN, "--ci"])
    assert code == 0 and "95% CI over prompts and n" in out
    assert re.search(r"sft \S* \d+\.\d \[\d+\.\d, \d+\.\d\] n=\d+", out), out


def test_setup_without_nltk_s_server_says_it_goes_on_and_what_to_do(no_nltk_data, capsys):
    from recipe.rewards import nltk_data
    assert nltk_data.main() == 1
    err = capsys.readouterr().err
    assert err.count("nltk.download failed") == 1 and "[nltk_data]" not in err  # one line, not NLTK's banner
    assert "WARNING: NLTK data" in err and "Fix: point NLTK_DATA" in err and "Setup goes on" in err
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    step = next(line for line in makefile.splitlines() if "recipe.rewards.nltk_data" in line and "$(PY)" in line)
    assert not step.lstrip().startswith("-") and "|| echo" in step and "harmless" in step  # no "Error 1 (ignored)"
