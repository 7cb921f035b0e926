"""Placeholder for `recipe data` (replaced by its owner)."""
import typer

app = typer.Typer(help="recipe data (not available yet)", no_args_is_help=True)
