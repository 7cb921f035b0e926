"""The ``recipe`` command line. Sub-command groups live in their own modules (``*_cmd.py``)."""
from __future__ import annotations

import sys

import typer

from recipe.cli import cluster_cmd, data_cmd, eval_cmd, hub_cmd, model_cmd, sandbox_cmd
from recipe.cli.pipeline_cmd import register as _register_pipeline


def _flags_take_no_value() -> None:
    """typer writes a type beside every option, ``<bool>`` beside a flag too (``--force <bool>``, ``--help <bool>``),
    which reads as if the flag took a value: a flag is shown by its name alone."""
    from typer.core import TyperOption
    shown = TyperOption.display_type_rich
    if getattr(shown, "flags_bare", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag and self.metavar is None else shown(self, ctx)
    display_type_rich.flags_bare = True
    TyperOption.display_type_rich = display_type_rich


_flags_take_no_value()
app = typer.Typer(help="Nemotron-Cascade 2 recipe: SFT, Cascade RL, MOPD and evaluation, tiny or at scale.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
_register_pipeline(app)
app.add_typer(sandbox_cmd.app, name="sandbox", help="Run untrusted code in the sandbox (JSON verdict).")
app.add_typer(data_cmd.app, name="data", help="Curate released and tiny data; write data cards.")
app.add_typer(hub_cmd.app, name="hub", help="Download NVIDIA's released artifacts; publish stages.")
app.add_typer(eval_cmd.app, name="eval", help="Evaluate on benchmark suites (HF or OpenAI-compatible server), "
              "score existing responses, compare with the paper.")
app.add_typer(model_cmd.app, name="model", help="Import a real pretrained model (SmolLM2 GGUF or Hub) as an HF folder.")
app.add_typer(cluster_cmd.app, name="cluster", help="Render, submit and monitor NeMo-RL jobs on Slurm.")


def main() -> None:  # console-script entry point
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
