"""Placeholder for `recipe cluster` (replaced by its owner)."""
import typer

app = typer.Typer(help="recipe cluster (not available yet)", no_args_is_help=True)
