"""The CLI reports config errors with the key, exits non-zero, and refuses unimplemented stages before running."""
from __future__ import annotations

from typer.testing import CliRunner

from recipe.cli import app

runner = CliRunner()


def test_config_command_prints_resolved_yaml():
    r = runner.invoke(app, ["config", "tiny", "-s", "sft.steps=3"])
    assert r.exit_code == 0, r.output
    assert "steps: 3" in r.output


def test_bad_override_exit_code_and_message():
    r = runner.invoke(app, ["config", "tiny", "-s", "sft.nope=3"])
    assert r.exit_code == 2 and "sft.nope" in r.output


def test_unimplemented_stage_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path))
    # every tiny stage runs locally now: mark one as not implemented, as a profile may do for a backend
    r = runner.invoke(app, ["run", "--no-notebooks", "--run-id", "x", "--until", "long_context_rl",
                            "-s", "long_context_rl.implemented_locally=false"])
    assert r.exit_code == 2
    out = " ".join(r.output.split())
    assert "long_context_rl" in out and "not implement" in out
    assert not (tmp_path / "x").exists()  # nothing was written
