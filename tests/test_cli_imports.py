"""`recipe run` through the notebooks only orchestrates: importing its modules must not load torch or transformers
(~5 s before the kernel could start). The training code runs in the notebook kernel."""
from __future__ import annotations

import subprocess
import sys


def test_the_run_command_does_not_import_torch():
    code = ("import sys, recipe.cli, recipe.pipeline.runner, recipe.pipeline.report, recipe.pipeline.stage_inputs\n"
            "heavy = sorted(m for m in ('torch', 'transformers') if m in sys.modules)\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at `recipe run` start-up: {out}"
