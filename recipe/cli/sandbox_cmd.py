"""Placeholder for `recipe sandbox` (replaced by its owner)."""
import typer

app = typer.Typer(help="recipe sandbox (not available yet)", no_args_is_help=True)
