"""Placeholder for `recipe hub` (replaced by its owner)."""
import typer

app = typer.Typer(help="recipe hub (not available yet)", no_args_is_help=True)
