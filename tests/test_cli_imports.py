"""`recipe run` through the notebooks only orchestrates: importing its modules must not load torch or transformers
(~5 s before the kernel could start). The training code runs in the notebook kernel."""
from __future__ import annotations

import subprocess
import sys


def test_the_run_command_does_not_import_torch():
    code = ("import sys, recipe.cli, recipe.pipeline.cascade_runner, recipe.reporting.run_report, recipe.pipeline.stage_inputs\n"
            "heavy = sorted(m for m in ('torch', 'transformers') if m in sys.modules)\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at `recipe run` start-up: {out}"


def test_the_data_notebook_needs_no_transformers(tmp_path):
    """The data notebook runs on a kernel of its own while the shared kernel imports the training code: its cells
    (the notebook API, the tiny domains, their curation) must not import transformers (torch comes in with
    ``datasets``' streaming reader during curation; the model code does not)."""
    code = ("import os, sys\n"
            f"os.environ['RECIPE_RUNS_DIR'] = {str(tmp_path)!r}\n"
            "from recipe.pipeline import phase_notebook_api as nb\n"
            "assert 'torch' not in sys.modules, 'notebook_api imported torch'\n"
            "nb.explain('d', 'data', 'tiny', [])\n"
            "nb.data_phase('d', 'tiny', ['domains.tiny.train_items=20', 'domains.tiny.val_items=4', "
            "'domains.tiny.selection_items=4'])\n"
            "assert 'torch' not in sys.modules, 'generating the tiny domains imported torch'\n"
            "nb.curate_data('d', [], [])\n"
            "print(','.join(sorted(m for m in ('transformers', 'recipe.model.build', 'recipe.pipeline.stage_runner')"
            " if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "", f"imported by the data notebook's calls: {out.stdout.strip()}"
