"""Notebook parameters and the one runs folder: runs land under the project's runs/ whatever the
working directory, list parameters arrive from papermill's -p (a string) and -y (a list) alike, and an existing
run asked for with another profile or other overrides is refused with both values named."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from recipe.pipeline.params import as_list
from recipe.runs.layout import RunDir, runs_root
from recipe.runs.run_init import RunMismatch, init_run, open_or_init_run


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def test_runs_root_is_the_project_runs_folder_from_any_cwd(tmp_path, monkeypatch, project_root):
    monkeypatch.delenv("RECIPE_RUNS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert runs_root() == project_root / "runs"
    monkeypatch.chdir(project_root / "notebooks")
    assert runs_root() == project_root / "runs"
    assert RunDir.for_id("x").path == project_root / "runs" / "x"
    monkeypatch.setenv("RECIPE_RUNS_DIR", str(tmp_path / "elsewhere"))
    assert runs_root() == tmp_path / "elsewhere"


def test_runs_folder_is_ignored_by_git(project_root):
    paths = ["runs/x/run.json", "notebooks/.ipynb_checkpoints/a-checkpoint.ipynb", "build/docs/10_sft.html",
             "tests/artifacts/browser/01.png"]
    out = subprocess.run(["git", "check-ignore", *paths], cwd=project_root, capture_output=True, text=True)
    if out.returncode == 128:
        pytest.skip(f"not a git checkout: {out.stderr.strip()}")
    assert out.stdout.split() == paths


@pytest.mark.parametrize("value, expected", [
    ('["mopd.steps=80", "sft.lr=0.1"]', ["mopd.steps=80", "sft.lr=0.1"]),   # papermill -p (a JSON string)
    ("[mopd.steps=80]", ["mopd.steps=80"]),                                 # a YAML flow list
    (["mopd.steps=80"], ["mopd.steps=80"]),                                 # papermill -y / parameters=
    ("mopd.steps=80", ["mopd.steps=80"]),                                   # one bare key=value
    ("", []), (None, []), ([], []),
])
def test_as_list_accepts_every_form_papermill_passes(value, expected):
    assert as_list(value) == expected


@pytest.mark.parametrize("value", ['["a=1"', {"a": 1}, [["a=1"]], 3])
def test_as_list_refuses_what_is_not_a_list_of_strings(value):
    with pytest.raises(ValueError, match="overrides"):
        as_list(value)


def test_profile_mismatch_names_both_profiles(runs_dir):
    init_run("tiny", "r1", [])
    with pytest.raises(RunMismatch) as e:
        open_or_init_run("r1", "paper", [])
    assert "'tiny'" in str(e.value) and "'paper'" in str(e.value)


def test_overrides_mismatch_names_both_values(runs_dir):
    init_run("tiny", "r2", ["sft.steps=7"])
    run, cfg = open_or_init_run("r2", "tiny", [])  # none given: the run's own
    assert cfg.sft.steps == 7
    open_or_init_run("r2", "tiny", ["sft.steps=7"])  # the same: fine
    with pytest.raises(RunMismatch) as e:
        open_or_init_run("r2", "tiny", ["sft.steps=9"])
    assert "sft.steps=7" in str(e.value) and "sft.steps=9" in str(e.value)
    run, cfg = open_or_init_run("r2", "tiny", ["sft.steps=9"], reconfigure=True)  # `recipe stage --set`: on purpose
    assert cfg.sft.steps == 9


def _papermill(project_root, out, *args):
    env = {**os.environ, "PYTHONPATH": str(project_root)}
    proc = subprocess.run([sys.executable, "-m", "papermill", str(project_root / "notebooks" / "00_data.ipynb"),
                           str(out), "-k", "python3", "--no-progress-bar", *args],
                          cwd=out.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("form", ["-p", "-y"])
def test_papermill_list_parameter_as_string_and_as_yaml(runs_dir, project_root, tmp_path, form):
    items = ["domains.tiny.val_items=5", "domains.tiny.train_items=30"]
    if form == "-p":
        args = ["-p", "run_id", "pl", "-p", "overrides", '["%s", "%s"]' % tuple(items)]
    else:
        args = ["-y", yaml.safe_dump({"run_id": "pl", "overrides": items})]
    work = tmp_path / "cwd"
    work.mkdir()
    _papermill(project_root, work / "out.ipynb", *args)
    run = RunDir(runs_dir / "pl")
    assert run.read_run_json()["overrides"] == items
    assert run.read_manifest("data")["counts"]["math_val"] == 5
    assert run.read_manifest("data")["counts"]["mcqa_train"] == 30
    assert not (work / "runs").exists()  # not relative to the notebook's working directory


def test_lab_pre_save_hook_keeps_committed_notebooks_output_free(project_root):
    import nbformat

    from recipe.pipeline.lab_hooks import strip_outputs
    nb = nbformat.read(project_root / "notebooks" / "10_sft.ipynb", as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="step 3/10")]
    nb.cells[1].execution_count = 4
    model = {"type": "notebook", "content": nb}
    strip_outputs(model, path="10_sft.ipynb", contents_manager=None)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assert nb.cells[1].source  # the code itself is kept
    text = {"type": "file", "content": "x"}
    strip_outputs(text)
    assert text == {"type": "file", "content": "x"}


def test_lab_save_of_a_run_notebook_is_byte_identical_to_the_commit(project_root, tmp_path):
    """What JupyterLab sends on save after Run All (kernel metadata filled in, outputs, counts, UI cell metadata),
    through the hook and jupyter_server's writer (nbformat.write), is the committed file byte for byte; an edited
    cell is kept."""
    import nbformat

    from recipe.pipeline.lab_hooks import strip_outputs
    committed = project_root / "notebooks" / "90_report.ipynb"
    nb = nbformat.read(committed, as_version=4)
    nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python",
                                    "file_extension": ".py", "codemirror_mode": {"name": "ipython", "version": 3}}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    for i, c in enumerate(nb.cells):
        c.metadata.update({"scrolled": True, "jupyter": {"outputs_hidden": False}, "trusted": True})
        if c.cell_type == "code":
            c.execution_count = i
            c.outputs = [nbformat.v4.new_output("stream", text="x")]
    model = {"type": "notebook", "content": nb}
    strip_outputs(model, path="90_report.ipynb", contents_manager=None)
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nbformat.from_dict(model["content"]), saved, version=nbformat.NO_CONVERT)
    assert saved.read_bytes() == committed.read_bytes()
    nb.cells[-1].source += "\n# edited"
    strip_outputs(model)
    nbformat.write(nbformat.from_dict(model["content"]), saved, version=nbformat.NO_CONVERT)
    assert saved.read_bytes() != committed.read_bytes() and "# edited" in saved.read_text()
    assert nb.cells[1].metadata == {"tags": ["parameters"]}


def test_committed_notebooks_are_in_the_format_the_save_hook_writes(project_root):
    from recipe.pipeline.lab_hooks import normalize_files
    paths = sorted((project_root / "notebooks").glob("*.ipynb"))
    assert paths
    assert normalize_files(paths, check=True) == [], \
        "run `python -m recipe.pipeline.lab_hooks notebooks/*.ipynb` and commit the result"


def test_make_lab_passes_allow_root_only_as_root(project_root, tmp_path):
    """The Makefile's lab rule, with a stand-in jupyter that prints its arguments (setup not remade: -o setup)."""
    import shutil
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "jupyter").write_text('#!/bin/sh\necho "jupyter $*"\n')
    (venv / "bin" / "jupyter").chmod(0o755)
    out = subprocess.run(["make", "-s", "-o", "setup", "lab", f"VENV={venv}"], cwd=project_root, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert "--ContentsManager.pre_save_hook=recipe.pipeline.lab_hooks.strip_outputs" in lines[-1]
    if os.geteuid() == 0:
        assert "running as root" in lines[0] and "--allow-root" in lines[-1].split()
    else:
        assert len(lines) == 1 and "--allow-root" not in lines[-1].split()
