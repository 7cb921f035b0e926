"""Showing a run: the final table and its intervals, plots, notebook tables and phase summaries, the claims pooled
over seeds (evidence), stage costs, the capacity study's tables, and the stage explanations rendered from the
config. Running the cascade is ``recipe.pipeline``'s."""
